"""Matrix norms and approximation errors used by the protocols."""

from __future__ import annotations

import numpy as np


def spectral_norm(A: np.ndarray) -> float:
    """The largest singular value of A, deterministically, without a full SVD.

    Implicitly restarted Lanczos (ARPACK ``svds``, k = 1) from a fixed start
    vector, so reruns are bit-identical; small matrices, and the rare case where
    ARPACK does not converge, use LAPACK's subset eigensolver on the smaller
    Gram matrix instead.
    """
    from scipy.linalg import eigh
    from scipy.sparse.linalg import ArpackError, svds

    A = np.asarray(A, dtype=np.float64)
    if A.size == 0 or not np.any(A):
        return 0.0
    if min(A.shape) > 32:
        v0 = np.full(min(A.shape), 1.0 / np.sqrt(min(A.shape)))
        try:
            top = svds(A, k=1, v0=v0, return_singular_vectors=False, solver="arpack")
            return float(top[0])
        except ArpackError:  # pragma: no cover - rare (no convergence)
            pass
    G = A.T @ A if A.shape[1] <= A.shape[0] else A @ A.T
    m = G.shape[0]
    top = eigh(G, eigvals_only=True, subset_by_index=[m - 1, m - 1], driver="evr")
    return float(np.sqrt(max(float(top[0]), 0.0)))
