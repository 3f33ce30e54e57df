"""Nystroem features with uniform landmarks (Williams & Seeger 2001): a data-dependent
reference row that none of the four papers reports.

With m landmarks L drawn uniformly without replacement from the rows the map is
fitted on, the Nystroem estimate of the kernel is

    k_hat(x, y) = k(x, L) K_LL^+ k(L, y),     K_LL = k(L, L),

and its explicit features are z(x) = k(x, L) K_LL^{+1/2} (m features), so that
z(x) . z(y) = k_hat(x, y). The budget: m = the feature count of a random map at the
same n, ``n_outputs * D`` with D = 2 n (d + 1) (2D for the Gaussian kernel's
[cos, sin] pairs, D for the arc-cosine kernels), capped at the number of fitted rows.
At m >= N every fitted row is a landmark: K_hat(X, Y) = K_XX K_XX^+ K_XY = K_XY up to
rounding wherever K_XX has full rank, which is what the wide datasets' budgets give
in Munkhoeva et al.'s Fig. 1 (docs/nystrom.md).

The pseudo-inverse square root drops the eigenvalues of K_LL below
``m * eps * lambda_max`` (a rank-deficient K_LL: repeated landmarks, or a kernel of
low rank such as arccos0 on few directions), where scikit-learn's ``Nystroem`` floors
them at 1e-12; on a well-conditioned K_LL the two are equal to rounding
(tests/test_nystrom.py compares them on the same landmarks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import FLOATS, RandomFeatureMap


@FEATURE_MAPS.register("nystrom")
class Nystrom(RandomFeatureMap):
    """Nystroem map: m uniform landmarks of the fitted rows, z(x) = k(x, L) K_LL^{+1/2}.

    Not a random projection map: ``transform`` evaluates the exact kernel against the
    landmarks (O(N m d) + the m x m eigendecomposition in ``fit``, O(m^3)). Attributes
    after ``fit``: ``landmark_indices_`` (rows of the fitted X, in draw order),
    ``landmarks_``, ``normalization_`` (K_LL^{+1/2}, m x m), ``rank_``.
    """

    #: Not in any of the papers: the label marks it as an extra row in figures and tables.
    paper_label = "Nystrom (no paper)"

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
        X = validate_data(self, X, dtype=FLOATS, reset=False)
        Z = self._kernel(X.astype(np.float64, copy=False)) @ self.normalization_
        return Z.astype(X.dtype, copy=False)

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
