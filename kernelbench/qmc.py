"""Box discrepancy and adaptive QMC point sets (Yang, Sindhwani, Avron & Mahoney 2014).

For frequencies S = {w_1..w_s} in R^d and the box []b = {u : |u_j| <= b_j}, the box
discrepancy D(S) (Definition 7) measures how well (1/s) sum_l f(w_l) integrates
f_u(w) = exp(-i u.w), u in []b, against p = N(0, diag(sigma_j^-2)):

* :func:`box_discrepancy_sq` - D(S)^2 in closed form, Corollary 10, with sinc_b of
  Eq. 20. Its constant C carries (2 pi)^-d; Theorem 6 prints pi^-d, which does not
  follow from Proposition 4 (Eq. 17): we implement Corollary 10.
* :func:`box_discrepancy_gradient` - Proposition 11 (Eq. 24).
* :func:`mean_squared_error` - Theorem 9: E_{u ~ U([]b)} |error of f_u|^2 = pi^d /
  prod_j b_j D(S)^2 (the paper prints (2 pi)^d; pi^d is the mean over the volume
  prod_j 2 b_j, as in the authors' slides; tests check it by Monte Carlo). Scale free,
  so it is the objective minimised (Sec. 6.2's normalised discrepancy is 2^d times it).
* :func:`adaptive_points` - Sec. 5 / 6.2: nonlinear CG on it from a (Halton) start.

One evaluation costs O(s^2 d) time (one compiled pass over the pairs), O(s d) memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from scipy.special import erf, wofz

from kernelbench.errors import KernelbenchError
from kernelbench.validation import check_int, check_real


def _check_vector(name: str, value: Any, d: int) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    v = np.full(d, v) if v.ndim == 0 else v
    if v.shape != (d,):
        raise KernelbenchError(f"{name} must be a scalar or a vector of length d={d}")
    if not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise KernelbenchError(f"{name} must be finite and > 0 in every dimension")
    return np.ascontiguousarray(v, dtype=np.float64)


def _checked(points: Any, b: Any, sigma: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The points (s x d), b and sigma (length d), checked."""
    W = np.asarray(points, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1 or not np.all(np.isfinite(W)):
        raise KernelbenchError(
            f"points must be a finite s x d array with s, d >= 1, got shape {np.shape(points)}"
        )
    d = W.shape[1]
    return np.ascontiguousarray(W), _check_vector("b", b, d), _check_vector("sigma", sigma, d)


@numba.njit(cache=True, nogil=True)
def _sinc_pairs(W, b, want_grad, grad):  # pragma: no cover - compiled
    """sum_{l<m} prod_j sinc(b_j (w_lj - w_mj)) and, optionally, its gradient into grad
    (leave-one-out products from prefix and suffix products: no division by a zero)."""
    s, d = W.shape
    t = np.empty(d)
    dt = np.empty(d)
    prefix = np.empty(d + 1)
    total = 0.0
    for l in range(s):
        for m in range(l + 1, s):
            for j in range(d):
                x = b[j] * (W[l, j] - W[m, j])
                if abs(x) < 1e-2:
                    x2 = x * x
                    t[j] = 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0))
                    dt[j] = -x / 3.0 * (1.0 - x2 / 10.0 * (1.0 - x2 / 28.0))
                else:
                    sx = math.sin(x)
                    cx = math.cos(x)
                    t[j] = sx / x
                    dt[j] = (cx - sx / x) / x
            prefix[0] = 1.0
            for j in range(d):
                prefix[j + 1] = prefix[j] * t[j]
            total += prefix[d]
            if want_grad:
                suffix = 1.0
                for j in range(d - 1, -1, -1):
                    g = b[j] * dt[j] * prefix[j] * suffix
                    grad[l, j] += g
                    grad[m, j] -= g
                    suffix *= t[j]
    return total


def _g_normalised(W: np.ndarray, b: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pi / b_j) g_j(w_lj) and its derivative (Proposition 11's g_j, g'_j).

    g_j(x) = c_j e^{-sigma^2 x^2 / 2} Re erf(b / (sigma sqrt2) - i sigma x / sqrt2),
    c_j = sigma_j / sqrt(2 pi), evaluated with the Faddeeva function w (no overflow):
    c_j [e^{-y^2} - e^{-B^2} Re(e^{i b x} w(y + i B))], y = sigma x / sqrt2, B = b /
    (sigma sqrt2); g'_j(x) = -sigma^2 x g_j(x) + sqrt(2/pi) c_j sigma e^{-B^2} sin(b x).
    """
    c = sigma / math.sqrt(2.0 * math.pi)
    y = W * (sigma / math.sqrt(2.0))
    B = b / (sigma * math.sqrt(2.0))
    tail = np.exp(-(B**2))
    g = c * (np.exp(-(y**2)) - tail * np.real(np.exp(1j * b * W) * wofz(y + 1j * B)))
    dg = -(sigma**2) * W * g + math.sqrt(2.0 / math.pi) * c * sigma * tail * np.sin(b * W)
    scale = math.pi / b
    return g * scale, dg * scale


def _loo_products(F: np.ndarray) -> np.ndarray:
    """prod_{q != j} F[l, q] for every (l, j), without division (prefix x suffix)."""
    s, d = F.shape
    prefix = np.ones((s, d))
    suffix = np.ones((s, d))
    if d > 1:
        prefix[:, 1:] = np.cumprod(F[:, :-1], axis=1)
        suffix[:, :-1] = np.cumprod(F[:, :0:-1], axis=1)[:, ::-1]
    return prefix * suffix


def _constant_normalised(b: np.ndarray, sigma: np.ndarray) -> float:
    """prod_j (pi / b_j) sigma_j / (2 sqrt pi) erf(b_j / sigma_j) (Corollary 10's C)."""
    return float(np.prod(math.sqrt(math.pi) * sigma * erf(b / sigma) / (2.0 * b)))


def _objective(
    W: np.ndarray, b: np.ndarray, sigma: np.ndarray, want_grad: bool
) -> tuple[float, np.ndarray | None]:
    """pi^d / prod b * D(S)^2 (Theorem 9's mean squared error) and its gradient."""
    s, d = W.shape
    grad = np.zeros((s, d)) if want_grad else np.zeros((1, 1))
    pairs = _sinc_pairs(W, b, want_grad, grad)
    G, dG = _g_normalised(W, b, sigma)
    prod_g = np.prod(G, axis=1)
    value = (2.0 * pairs + s) / s**2 + _constant_normalised(b, sigma) - 2.0 / s * prod_g.sum()
    if not want_grad:
        return float(value), None
    grad *= 2.0 / s**2
    grad -= 2.0 / s * dG * _loo_products(G)
    return float(value), grad


def mean_squared_error(points: Any, b: Any, sigma: Any = 1.0) -> float:
    """E_{u ~ U([]b)} |int f_u p - (1/s) sum_l f_u(w_l)|^2 = pi^d / prod_j b_j D(S)^2
    (Theorem 9); ``b``, ``sigma``: scalars or length-d vectors, > 0."""
    return _objective(*_checked(points, b, sigma), False)[0]


def box_discrepancy_sq(points: Any, b: Any, sigma: Any = 1.0) -> float:
    """D(S)^2 of Corollary 10: prod_j (b_j / pi) times :func:`mean_squared_error` (the
    factor under- or overflows for large d)."""
    W, bb, ss = _checked(points, b, sigma)
    return _objective(W, bb, ss, False)[0] * math.exp(float(np.sum(np.log(bb / math.pi))))


def box_discrepancy(points: Any, b: Any, sigma: Any = 1.0) -> float:
    """The box discrepancy D(S) (Definition 7): the square root of :func:`box_discrepancy_sq`."""
    return math.sqrt(max(box_discrepancy_sq(points, b, sigma), 0.0))


def box_discrepancy_gradient(points: Any, b: Any, sigma: Any = 1.0) -> np.ndarray:
    """d D(S)^2 / d w_lj, Proposition 11 (Eq. 24); an s x d array."""
    W, bb, ss = _checked(points, b, sigma)
    grad = _objective(W, bb, ss, True)[1]
    assert grad is not None
    return grad * math.exp(float(np.sum(np.log(bb / math.pi))))


@dataclass
class AdaptiveResult:
    """The optimised points, the objective (:func:`mean_squared_error`) per iteration and
    (when kept) the points after each; [0] is the start."""

    points: np.ndarray
    trace: np.ndarray
    n_iter: int
    message: str
    iterates: list[np.ndarray] = field(default_factory=list)


def adaptive_points(
    start: Any,
    b: Any,
    sigma: Any = 1.0,
    max_iter: int = 20,
    tol: float = 0.0,
    keep_iterates: bool = False,
) -> AdaptiveResult:
    """Minimise the box discrepancy from ``start`` with nonlinear CG (Yang et al., Secs. 5, 6.2).

    scipy's CG on :func:`mean_squared_error` with Proposition 11's gradient, stopped after
    ``max_iter`` iterations (Sec. 6.2 stops early: the kernel error can rise again while
    the discrepancy falls), when one gains less than ``tol`` relatively, or at
    convergence. Memory O(s d), plus O(max_iter s d) with ``keep_iterates``.
    """
    from scipy.optimize import minimize

    W0, bb, ss = _checked(start, b, sigma)
    s, d = W0.shape
    max_iter = check_int("max_iter", max_iter, 0)
    check_real("tol", tol, 0, strict=False)
    value0, _ = _objective(W0, bb, ss, False)
    trace = [value0]
    iterates = [W0.copy()] if keep_iterates else []
    if max_iter == 0:
        return AdaptiveResult(W0.copy(), np.asarray(trace), 0, "max_iter=0", iterates)

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = _objective(x.reshape(s, d), bb, ss, True)
        assert grad is not None
        return value, grad.ravel()

    def callback(intermediate_result: Any) -> None:
        previous = trace[-1]
        trace.append(float(intermediate_result.fun))
        if keep_iterates:
            iterates.append(np.asarray(intermediate_result.x).reshape(s, d).copy())
        if tol > 0 and previous - trace[-1] < tol * abs(previous):
            raise StopIteration

    result = minimize(
        fun,
        W0.ravel(),
        jac=True,
        method="CG",
        callback=callback,
        options={"maxiter": max_iter, "gtol": 0.0},
    )
    points = np.asarray(result.x).reshape(s, d)
    return AdaptiveResult(points, np.asarray(trace), len(trace) - 1, str(result.message), iterates)
