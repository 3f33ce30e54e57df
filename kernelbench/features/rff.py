"""Random Fourier features (Rahimi & Recht 2007): i.i.d. Gaussian projections."""

from __future__ import annotations

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap, sample_factor
from kernelbench.transforms import row_products


class DenseFeatureMap(RandomFeatureMap):
    """A feature map whose projections are a stored dense D x d matrix ``W_``: X W^T is
    a BLAS GEMM (``batch_invariant``: in fixed row blocks, :func:`row_products`)."""

    blas_rows = True

    def _project(self, X: np.ndarray) -> np.ndarray:
        return self._rows_times(X, self.W_)

    def _rows_times(self, X: np.ndarray, W: np.ndarray) -> np.ndarray:
        """X W^T in X's dtype: one GEMM, or with ``batch_invariant`` batch-independent."""
        if self.batch_invariant:
            return row_products(X, W)
        return X @ (W if X.dtype == np.float64 else W.astype(X.dtype)).T


@FEATURE_MAPS.register("rff")
class RFF(DenseFeatureMap):
    """Monte Carlo rule: rows w_j ~ N(0, I_d), weights a_j^2 = 1/D.

    k_hat(x, y) = (c/D) sum_j phi(w_j . x~) . phi(w_j . y~) (Rahimi & Recht 2007).
    """

    paper_label = "G"
    draw_family = "rff"

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        self.W_ = rng.standard_normal((D, d))
        return np.full(D, 1.0 / D), 0.0

    def supports_sample_space(self, n_points: int, d: int) -> bool:
        """Sample-space draws where the points span less than R^d (m < d)."""
        return n_points < d

    def _draw_sample_space(
        self, rng: np.random.Generator, As: np.ndarray, D: int
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """A~ W^T = R^T G, G = (W Q)^T: Q^T w_j ~ N(0, I_m) independently, so G is i.i.d.
        N(0, 1) and R^T G has the law of A~ W^T (Rahimi & Recht 2007, Eq. 2)."""
        R = sample_factor(As)
        G = rng.standard_normal((R.shape[0], D))
        return R.T @ G, np.full(D, 1.0 / D), 0.0
