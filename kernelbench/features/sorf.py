"""Structured orthogonal random features (Yu et al. 2016): S-Rademacher HD blocks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap
from kernelbench.transforms import hd_blocks_rows, next_pow2, rademacher
from kernelbench.validation import Interval


@FEATURE_MAPS.register("sorf")
@dataclass(eq=False, repr=False)
class SORF(RandomFeatureMap):
    """W = sqrt(d') H D_1 H D_2 H D_3 per block (Yu et al. 2016, Eq. 7; ROM, Choromanski 2017).

    H the normalised Walsh-Hadamard matrix, D_i Rademacher diagonals, d' the next power
    of two >= d (zero-padded); independent blocks stacked to D rows (the last truncated),
    applied by the fast transform, O(d' log d'). Nearly unbiased (Yu et al., Thm. 3).
    """

    paper_label = "ROM"
    #: Only nearly unbiased (Yu et al. 2016, Thm. 3: the bias vanishes as d grows).
    claims = RandomFeatureMap.claims - {"unbiased"}
    _parameter_constraints = {"n_blocks": [Interval(int, 1, 3)]}

    n_blocks: int = 3

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        self.padded_dim_ = next_pow2(d)
        n_stack = -(-D // self.padded_dim_)
        # signs_[b, i] is the diagonal of D_{i+1} in block b (int8: O(d') per block)
        self.signs_ = rademacher(rng, (n_stack, int(self.n_blocks), self.padded_dim_))
        return np.full(D, 1.0 / D), 0.0

    def _project(self, X: np.ndarray) -> np.ndarray:
        return hd_blocks_rows(X, self.signs_, self.n_projections_)
