"""Nystroem features with uniform landmarks (Williams & Seeger 2001): a data-dependent
reference row that none of the four papers reports.

m landmarks L drawn uniformly without replacement from the fitted rows give k_hat(x, y)
= k(x, L) K_LL^+ k(L, y) and z(x) = k(x, L) K_LL^{+1/2}. The budget m is a random map's
feature count at the same n (``n_outputs * D``), capped at the fitted rows: at m >= N,
K_hat = K up to rounding where K_XX has full rank (the wide datasets of Fig. 1;
docs/nystrom.md). Eigenvalues of K_LL below ``m * eps * lambda_max`` are dropped
(scikit-learn's ``Nystroem`` floors them at 1e-12; tests/test_nystrom.py compares).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap
from kernelbench.kernels import sq_norms
from kernelbench.transforms import block_product, row_block, row_blocks


@FEATURE_MAPS.register("nystrom")
class Nystrom(RandomFeatureMap):
    """Nystroem map: m uniform landmarks of the fitted rows, z(x) = k(x, L) K_LL^{+1/2}.

    ``transform`` evaluates the exact kernel against the landmarks (O(N m d); ``fit``
    O(m^3)). Attributes: ``landmark_indices_`` (in draw order), ``landmarks_``,
    ``normalization_`` (K_LL^{+1/2}), ``rank_``.
    """

    paper_label = "Nystrom (no paper)"
    data_dependent = True
    #: Data-dependent: no random-feature estimate of K (not ``unbiased``), min(N,
    #: n_outputs D) features (not ``exact_D`` nor the shapes of ``dtype_shapes``);
    #: k(X, L) K_LL^{+1/2} is a BLAS GEMM (``batch_independent`` with
    #: ``batch_invariant``).
    claims = frozenset({"seeded", "batch_independent", "sklearn"})
    blas_rows = True

    def fit(self, X: Any, y: Any = None) -> Nystrom:
        """Draw m landmarks uniformly without replacement from the rows of X."""
        X, rng, d, D = self._start_fit(X)
        N = X.shape[0]
        m = min(N, self.kernel_.n_outputs * D)
        idx = rng.choice(N, size=m, replace=False)
        self.landmark_indices_ = idx
        self.landmarks_ = np.array(X[idx], dtype=np.float64)
        K_LL = self._kernel(self.landmarks_)
        vals, vecs = np.linalg.eigh(K_LL)
        keep = vals > m * np.finfo(np.float64).eps * max(vals[-1], 0.0)
        self.rank_ = int(keep.sum())
        vecs = vecs[:, keep]
        # K_LL^{+1/2} = V diag(lambda^-1/2) V^T (symmetric: z z^T = k_hat whatever V)
        self.normalization_ = (vecs / np.sqrt(vals[keep])) @ vecs.T
        self.n_projections_ = int(D)
        self.weights_ = np.full(m, 1.0 / m)
        self.zero_weight_ = 0.0
        self.constant_ = 0.0
        self.n_features_out_ = m
        return self

    def _kernel(self, X: np.ndarray) -> np.ndarray:
        """k(X, L) in float64, the kernel's own gamma (1/d when None)."""
        return self.kernel_.exact(X, self.landmarks_, gamma=self.gamma)

    def transform(self, X: Any) -> np.ndarray:
        """z(X) = k(X, L) K_LL^{+1/2} (N x m), in the dtype of X."""
        check_is_fitted(self, "normalization_")
        X = self._rows(X)
        if self.batch_invariant:
            return self._blocks(X)
        Z = self._kernel(X.astype(np.float64, copy=False)) @ self.normalization_
        return Z.astype(X.dtype, copy=False)

    def _blocks(self, X: np.ndarray) -> np.ndarray:
        """z(X) in fixed row blocks X_b as the columns (K_LL^{+1/2})^T k(L, X_b) (k
        symmetric), every product with the block's rows in BLAS's M dimension, so a
        row's bits do not depend on its batch (:func:`row_blocks`)."""
        L, Nt = self.landmarks_, self.normalization_.T
        if len(L) == 1:  # a zero second landmark: k(L, X_b) stays a GEMM, not GEMV
            L = np.vstack([L, np.zeros_like(L)])
        m, d = Nt.shape[0], X.shape[1]

        def columns(Xb: np.ndarray) -> np.ndarray:
            K = self.kernel_._exact_block(L, Xb, sq_norms(Xb), self.gamma)[:m]
            return block_product(Nt, K.T)

        return row_blocks(X, columns, m, row_block(d + m, m))

    def projections(self, X: Any) -> np.ndarray:
        """Nystroem has no projections X W^T: its features come from :meth:`transform`."""
        from kernelbench.errors import KernelbenchError

        raise KernelbenchError("nystrom has no projections W; use transform")

    def weight_matrix(self) -> np.ndarray:
        """Nystroem holds landmarks, not a projection matrix W."""
        return self.projections(None)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names ``nystrom<i>``, one per landmark."""
        check_is_fitted(self, "normalization_")
        return np.asarray([f"nystrom{i}" for i in range(self.n_features_out_)], dtype=object)
