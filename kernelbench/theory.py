"""Variance of Gaussian-kernel estimates from RFF and ORF (Yu et al. 2016, Sec. 3, App. A).

Conventions of Yu et al.: k(x, y) = exp(-||x - y||^2 / (2 sigma^2)), the
distance in bandwidth units ``z = ||x - y|| / sigma`` (in kernelbench's
``gamma`` parametrisation, ``z = sqrt(2 gamma) ||x - y||``), ``D`` features
(the estimate ``(1/D) sum_i cos(w_i . (x - y))``, i.e. kernelbench's ``rff``
and ``orf`` maps with D projections) and input dimension ``d``.

* :func:`rff_variance` - Lemma 1: Var K_RFF = (1 - e^{-z^2})^2 / (2D), exact.
* :func:`orf_variance_ratio` - Eq. (3): Var K_ORF / Var K_RFF ~ 1 - (D - 1) e^{-z^2}
  z^4 / (d (1 - e^{-z^2})^2), the main term of Theorem 1 (D <= d) and Lemma 3 (D a
  multiple of d). The dropped remainder f(z)/d^2 is O(1/d) relative to the ratio and
  dominates as z -> 0 (Eq. (3) tends to 1/d, the exact ratio to 3/(d + 2) for D = d).
* :func:`orf_variance_ratio_exact` - the exact ratio for ``orf`` (stacked Haar blocks,
  chi(d) row norms): App. A.3's Taylor expansion summed to all orders.

O(K^2) per call with K = 64 series terms, independent of d.
"""

from __future__ import annotations

import math

import numpy as np

from kernelbench.errors import KernelbenchError

#: Series terms of :func:`orf_pair_covariance` (for z <= Z_SERIES the largest
#: neglected term is below e^{-80}).
N_TERMS = 64
#: Largest z summed by the series (beyond: cancellation, so Gauss-Legendre quadrature).
Z_SERIES = 3.5


def _checked(z: float | np.ndarray, d: int, D: int | None) -> tuple[np.ndarray, int, int]:
    """z as a float64 array (finite, >= 0), d and D (default d), integers >= 1."""
    from kernelbench.validation import check_int

    z = np.asarray(z, dtype=np.float64)
    if not np.all(np.isfinite(z)) or np.any(z < 0):
        raise KernelbenchError("z = ||x - y|| / sigma must be finite and >= 0")
    d = check_int("d", d, 1)
    return z, d, d if D is None else check_int("D", D, 1)


def _one_minus_exp(z2: np.ndarray) -> np.ndarray:
    return -np.expm1(-z2)


def rff_variance(z: float | np.ndarray, D: int) -> np.ndarray:
    """Var K_RFF(x, y) = (1 - e^{-z^2})^2 / (2 D) for D i.i.d. features (Lemma 1, exact)."""
    z, _, D = _checked(z, 1, D)
    return _one_minus_exp(z * z) ** 2 / (2.0 * D)


def _pairs_per_feature(d: int, D: int) -> float:
    """Ordered pairs of rows in one block of d rows (the last truncated) / D: D - 1 when
    D <= d (Theorem 1), d - 1 when D is a multiple of d (Lemma 3)."""
    full, rest = divmod(D, d)
    return (full * d * (d - 1) + rest * (rest - 1)) / D


def _leading_factor(z: np.ndarray) -> np.ndarray:
    """e^{-z^2} z^4 / (1 - e^{-z^2})^2, with its limit 1 at z = 0."""
    z2 = z * z
    small = z2 < 1e-4
    safe = np.where(small, 1.0, z2)
    value = np.exp(-safe) * safe**2 / _one_minus_exp(safe) ** 2
    return np.where(small, 1.0 - z2**2 / 12.0, value)  # Taylor: 1 - z^4/12 + O(z^6)


def orf_variance_ratio(z: float | np.ndarray, d: int, D: int | None = None) -> np.ndarray:
    """Var K_ORF / Var K_RFF of Yu et al. 2016, Eq. (3) (the large-d main term).

    1 - (D - 1)/d e^{-z^2} z^4 / (1 - e^{-z^2})^2 for D <= d (Theorem 1); (D - 1)
    becomes (d - 1) for independent blocks (Lemma 3), r(r - 1) / D more for a last
    block of r rows. ``D`` defaults to d.
    """
    z, d, D = _checked(z, d, D)
    return 1.0 - _pairs_per_feature(d, D) / d * _leading_factor(z)


def orf_variance(z: float | np.ndarray, d: int, D: int | None = None) -> np.ndarray:
    """Theorem 1's main term of Var K_ORF: (1/2D) ((1 - e^{-z^2})^2 - (D - 1)/d e^{-z^2}
    z^4) for D <= d (without the f(z)/d^2 remainder)."""
    z, d, D = _checked(z, d, D)
    return rff_variance(z, D) * orf_variance_ratio(z, d, D)


def _log_rho(d: int, n_terms: int) -> np.ndarray:
    """log rho_kl = log(d^(k) d^(l) / d^(k+l)), d^(k) = d (d + 2) ... (d + 2k - 2), as
    sum_{i<l} log1p(-k / (a + k + i)), a = d/2 (no cancelling log-gammas)."""
    a = d / 2.0
    k = np.arange(n_terms, dtype=np.float64)
    i = np.arange(n_terms - 1, dtype=np.float64)
    steps = np.log1p(-k[:, None] / (a + k[:, None] + i[None, :]))  # [k, i]
    out = np.zeros((n_terms, n_terms))
    out[:, 1:] = np.cumsum(steps, axis=1)
    return out


def orf_pair_covariance(z: float | np.ndarray, d: int) -> np.ndarray:
    """Cov(cos(w_1 . u), cos(w_2 . u)) for two rows of one ORF block, ||u|| = z.

    w_i = s_i q_i, q_1 perpendicular to q_2 Haar-distributed, s_i ~ chi(d) independent
    (Yu et al. 2016, Sec. 3). Expanding both cosines as in App. A.3 (E s^{2k} = d^(k),
    E v_1^{2k} v_2^{2l} = (2k-1)!! (2l-1)!! / d^(k+l) on the sphere) gives
    E[cos(w_1 . u) cos(w_2 . u)] = sum_{k,l} x^{k+l} / (k! l!) rho_kl, x = -z^2/2; the
    covariance is the same series with rho_kl - 1 (k = l = 1: -z^4 / (2 (d + 2))),
    summed with math.fsum for z <= Z_SERIES, else by :func:`_pair_cosine_quadrature`.
    """
    z, d, _ = _checked(z, d, None)
    flat = z.ravel()
    out = np.empty_like(flat)
    k = np.arange(N_TERMS, dtype=np.float64)
    log_fact = np.array([math.lgamma(v + 1.0) for v in k])
    rho_m1 = np.expm1(_log_rho(d, N_TERMS))
    total = k[:, None] + k[None, :]
    sign = np.where(total % 2 == 0, 1.0, -1.0)
    for idx, zi in enumerate(flat):
        if zi == 0.0:
            out[idx] = 0.0
        elif zi <= Z_SERIES:
            log_x = math.log(zi * zi / 2.0)
            mag = np.exp(total * log_x - log_fact[:, None] - log_fact[None, :])
            out[idx] = math.fsum((sign * mag * rho_m1).ravel())
        else:
            out[idx] = _pair_cosine_quadrature(float(zi), d) - math.exp(-zi * zi)
    return out.reshape(z.shape)


def _pair_cosine_quadrature(z: float, d: int) -> float:
    """E[cos(w_1 . u) cos(w_2 . u)] by Gauss-Legendre quadrature (d >= 2): E cos(z t
    sin(theta)), t ~ chi(2d), theta of density ~ cos^{d-2}(theta) on [-pi/2, pi/2]
    (s_1 v_1 +- s_2 v_2 has the law of t v_1 by rotation invariance)."""
    from scipy.special import roots_legendre
    from scipy.stats import chi

    if d < 2:
        return math.exp(-z * z)  # no second row in a block; never used
    theta_max = min(math.pi / 2.0, 14.0 / math.sqrt(max(d - 2, 1)))
    centre = math.sqrt(2.0 * d)
    t_lo, t_hi = max(0.0, centre - 10.0), centre + 10.0
    phase = z * t_hi * math.sin(theta_max)
    n_nodes = int(40 + 2.0 * phase)
    x, w = roots_legendre(n_nodes)
    theta = theta_max * (x + 1.0) / 2.0
    log_wt = np.log(w) + (d - 2) * np.log(np.cos(theta))
    t = t_lo + (t_hi - t_lo) * (x + 1.0) / 2.0
    log_wt_t = np.log(w) + chi.logpdf(t, 2 * d)
    w_theta = np.exp(log_wt - log_wt.max())
    w_t = np.exp(log_wt_t - log_wt_t.max())
    w_theta /= w_theta.sum()
    w_t /= w_t.sum()
    values = np.cos(z * t[:, None] * np.sin(theta)[None, :])
    return float(w_t @ values @ w_theta)


def orf_variance_exact(z: float | np.ndarray, d: int, D: int | None = None) -> np.ndarray:
    """Var K_ORF of the stacked ORF: (1/D) Var_1 + (pairs / D^2) Cov, Var_1 = (1 -
    e^{-z^2})^2 / 2 (Lemma 1), Cov :func:`orf_pair_covariance` (blocks independent)."""
    z, d, D = _checked(z, d, D)
    var1 = _one_minus_exp(z * z) ** 2 / 2.0
    return var1 / D + _pairs_per_feature(d, D) / D * orf_pair_covariance(z, d)


def orf_variance_ratio_exact(z: float | np.ndarray, d: int, D: int | None = None) -> np.ndarray:
    """Exact Var K_ORF / Var K_RFF = 1 + (pairs / D) Cov / Var_1; at z = 0 its limit
    1 - (pairs / D) / (d + 2) (3 / (d + 2) when D = d)."""
    z, d, D = _checked(z, d, D)
    pairs = _pairs_per_feature(d, D)
    z2 = z * z
    small = z2 < 1e-6
    safe = np.where(small, 1.0, z)
    var1 = _one_minus_exp(safe * safe) ** 2 / 2.0
    ratio = 1.0 + pairs * orf_pair_covariance(safe, d) / var1
    return np.where(small, 1.0 - pairs / (d + 2.0), ratio)
