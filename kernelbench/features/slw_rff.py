"""Surrogate leverage weighted RFF (Liu et al. 2020, Algorithm 1).

The surrogate score of Eq. (13)-(15) replaces the ridge leverage (and its l x l
inverse) by the alignment of each pre-sampled feature with the labels,

    p_i proportional to (y^T (Z_l)_i)^2 = |sum_j y_j z_p(w_i, x_j)|^2,

the squared modulus of the complex feature of Eq. (2): (y^T cos)^2 + (y^T sin)^2
for the cos and sin columns of frequency w_i. Cost O(n l d) time, O(chunk l)
memory. Re-sampling and importance weights: :class:`kernelbench.features.lev_rff.ResampledRFF`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.lev_rff import ResampledRFF


@FEATURE_MAPS.register("slw_rff")
class SlwRFF(ResampledRFF):
    """Surrogate leverage weighted RFF: p_i ~ (y^T z_i)^2 (Liu et al. 2020, Eq. (15)).

    Supervised: ``fit(X, y)`` with real labels (Table 3: +-1). ``presample``: l =
    ceil(presample * s) pre-sampled frequencies (Table 3: l = s).
    """

    paper_label = "Ours (SLW-RFF)"

    def _scores(self, X: np.ndarray, y: Any, W: np.ndarray, d: int) -> np.ndarray:
        l = W.shape[0]
        yc = np.zeros(l)
        ys = np.zeros(l)
        for start, C, S in self._presampled_features(X, W, d):
            yy = y[start : start + C.shape[0]]
            yc += yy @ C
            ys += yy @ S
        return (yc * yc + ys * ys) / l  # Z_l = [cos, sin] / sqrt(l)

    def _column_scores(self, X: np.ndarray, y: Any, W: np.ndarray, b: np.ndarray, d: int):
        """(z_c^T y)^2 of each of the 2s columns (``SERLSRFF.m``)."""
        s = W.shape[0]
        zy = np.zeros(2 * s)
        for start, C, S in self._presampled_features(X, W, d, phase=b):
            yy = y[start : start + C.shape[0]]
            zy[:s] += yy @ C
            zy[s:] += yy @ S
        return zy * zy / s  # Z = sqrt(1/s) [cos, sin]
