"""Surrogate leverage weighted RFF (Liu et al. 2020, Algorithm 1).

The surrogate score of Eq. (13)-(15) replaces the ridge leverage by the alignment of
each pre-sampled feature with the labels, p_i ~ |sum_j y_j z_p(w_i, x_j)|^2 = (y^T cos)^2
+ (y^T sin)^2 (the complex feature of Eq. (2)). O(n l d) time, O(chunk l) memory.
Re-sampling and weights: :class:`kernelbench.features.lev_rff.ResampledRFF`.
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

    def _scores(self, X: np.ndarray, y: Any, W: np.ndarray) -> np.ndarray:
        zy = self._alignment(X, y, W, None)
        yc, ys = zy[: len(W)], zy[len(W) :]
        return (yc * yc + ys * ys) / len(W)  # Z_l = [cos, sin] / sqrt(l)

    def _column_scores(self, X: np.ndarray, y: Any, W: np.ndarray, b: np.ndarray):
        """(z_c^T y)^2 of each of the 2s columns (``SERLSRFF.m``)."""
        zy = self._alignment(X, y, W, b)
        return zy * zy / len(W)  # Z = sqrt(1/s) [cos, sin]

    def _alignment(self, X: np.ndarray, y: Any, W: np.ndarray, b: Any) -> np.ndarray:
        """y^T [cos, sin](X W^T [+ b]), unscaled (2l)."""
        l = W.shape[0]
        zy = np.zeros(2 * l)
        for start, C, S in self._presampled_features(X, W, phase=b):
            yy = y[start : start + C.shape[0]]
            zy[:l] += yy @ C
            zy[l:] += yy @ S
        return zy
