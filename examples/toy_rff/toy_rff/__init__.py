"""Antithetic random Fourier features, a kernelbench plug-in in one module.

The rows come in antithetic pairs (w_j, -w_j), w_j ~ N(0, I_d), weights 1/D: the
estimate is unbiased, as for i.i.d. rows (Rahimi & Recht 2007), since each row is
N(0, I_d) marginally. For the Gaussian kernel cos(w.(x - y)) is even in w, so a pair
repeats one term and the estimate has the variance of D/2 i.i.d. rows; for the
arc-cosine kernels the pair carries two different terms.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelbench.blocks import row_products
from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap

#: configs/method/toy_rff.yaml (and an experiment grid), found by kernelbench's Hydra
CONFIG_DIR = Path(__file__).parent / "configs"


@FEATURE_MAPS.register("toy_rff")
class AntitheticRFF(RandomFeatureMap):
    """Rows w_1, -w_1, w_2, -w_2, ... with w_j ~ N(0, I_d) i.i.d.; weights a_j^2 = 1/D."""

    paper_label = "A"

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        half = rng.standard_normal(((D + 1) // 2, d))
        self.W_ = np.stack([half, -half], axis=1).reshape(-1, d)[:D]
        return np.full(D, 1.0 / D), 0.0

    def _project(self, X: np.ndarray) -> np.ndarray:
        # X W^T in fixed row blocks: a row's bits do not depend on its batch
        return row_products(X, self.W_)
