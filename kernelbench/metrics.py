"""Matrix norms and approximation errors used by the protocols."""

from __future__ import annotations

import numpy as np

#: Relative residual at which :func:`spectral_norm` accepts its Ritz value.
SPECTRAL_RTOL = 1e-13
#: alpha or beta below this times the largest so far: a (near) breakdown of Golub-Kahan.
BREAKDOWN = 1e3 * np.finfo(np.float64).eps


def spectral_norm(A: np.ndarray) -> float:
    """The largest singular value of A, deterministically, without a full SVD.

    Golub-Kahan-Lanczos bidiagonalisation (Golub & Van Loan, Alg. 10.4.1) from the
    fixed start (1, ..., 1) / sqrt(n), fully reorthogonalised, stopped when the residual
    |beta_k p_k| of B_k's top triplet is below ``SPECTRAL_RTOL`` sigma. Small matrices,
    no convergence within min(m, n) steps and a near breakdown (below ``BREAKDOWN``:
    e.g. an RBF K with a huge gamma on duplicate rows) use LAPACK's subset eigensolver
    on the smaller Gram matrix.
    """
    A = np.asarray(A, dtype=np.float64)
    if A.size == 0 or not np.any(A):
        return 0.0
    if A.shape[1] > A.shape[0]:
        A = A.T
    m, n = A.shape
    if n > 32:
        top = _golub_kahan_top(A)
        if top is not None:
            return top
    return _gram_top(A)


def _golub_kahan_top(A: np.ndarray, check_every: int = 4) -> float | None:
    """The top singular value by Golub-Kahan-Lanczos, or None without convergence."""
    m, n = A.shape
    k_max = min(m, n)
    V = np.empty((k_max + 1, n))
    U = np.empty((k_max, m))
    alpha = np.empty(k_max)
    beta = np.empty(k_max)
    V[0] = 1.0 / np.sqrt(n)
    u = A @ V[0]
    scale = 0.0
    for j in range(k_max):
        a = float(np.linalg.norm(u))
        if a == 0.0:  # an invariant subspace: A V_{j+1} = U_j [B_j | beta_{j-1} e_j]
            return _bidiag_top(np.append(alpha[:j], 0.0), beta[:j])[0] if j else None
        if a <= BREAKDOWN * scale:  # near breakdown: 1/a would amplify rounding
            return None
        scale = max(scale, a)
        alpha[j] = a
        U[j] = u / a
        r = A.T @ U[j] - a * V[j]
        r -= V[: j + 1].T @ (V[: j + 1] @ r)  # full reorthogonalisation
        b = float(np.linalg.norm(r))
        if 0.0 < b <= BREAKDOWN * scale:
            return None
        scale = max(scale, b)
        beta[j] = b
        last = j + 1 == k_max or b == 0.0
        if last or (j + 1) % check_every == 0:
            sigma, p_last = _bidiag_top(alpha[: j + 1], beta[:j])
            if last or abs(b * p_last) <= SPECTRAL_RTOL * sigma:
                return sigma if (b == 0.0 or abs(b * p_last) <= SPECTRAL_RTOL * sigma) else None
        V[j + 1] = r / b
        u = A @ V[j + 1] - b * U[j]
        u -= U[: j + 1].T @ (U[: j + 1] @ u)
    return None  # pragma: no cover - the loop returns at j = k_max - 1


def _bidiag_top(alpha: np.ndarray, beta: np.ndarray) -> tuple[float, float]:
    """Top singular value of the upper bidiagonal B (alpha on, beta above the diagonal)
    and the last entry alpha_k q_k / sigma of its left singular vector, from the top
    eigenpair of the tridiagonal B^T B."""
    from scipy.linalg import eigh_tridiagonal

    k = len(alpha)
    b = np.zeros(k)
    b[1:] = beta[: k - 1]
    diag = alpha**2 + b**2
    off = alpha[:-1] * b[1:]
    if k == 1:
        return float(abs(alpha[0])), 1.0
    w, v = eigh_tridiagonal(diag, off, select="i", select_range=(k - 1, k - 1))
    sigma = float(np.sqrt(max(float(w[0]), 0.0)))
    return sigma, float(alpha[-1] * v[-1, 0] / sigma) if sigma > 0 else 0.0


def _gram_top(A: np.ndarray) -> float:
    """sqrt of the top eigenvalue of A^T A (LAPACK's subset eigensolver)."""
    from scipy.linalg import eigh

    G = A.T @ A
    k = G.shape[0]
    top = eigh(G, eigvals_only=True, subset_by_index=[k - 1, k - 1], driver="evr")
    return float(np.sqrt(max(float(top[0]), 0.0)))
