"""Vectorised float64 cos/sin features with the feature scaling folded in.

numpy's float64 cos and sin (libm, one value at a time) dominate a map's time at small
d for the Gaussian kernel's z(x) = a_j [cos(w_j . x~), sin(w_j . x~)] (Rahimi & Recht
2007, Eq. 2; Munkhoeva et al. 2018, Eq. 3). :func:`scaled_cos_sin` computes both in one
branch-free SIMD pass: a Cody-Waite reduction r = x - k pi/2 with pi/2 in three 33-bit
parts and a tail (fdlibm's ``pio2_1..3``, ``pio2_3t``; about one ulp of r), then
fdlibm's ``__kernel_sin`` / ``__kernel_cos`` on |r| <= pi/4, by quadrant k mod 4.
The values agree with numpy's to a few ulp (tested); |x| > :data:`MAX_ABS` or
non-finite projections go to numpy, entry by entry.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

#: Largest |projection| handled by the Cody-Waite reduction (|k| < 2^20 needs < 1.6e6).
MAX_ABS = 1.0e5

#: float64 projections go to the compiled kernel (False: all to numpy, for comparisons).
USE_COMPILED = True

_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e00  # first 33 bits of pi/2
_PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
_PIO2_3 = 2.02226624871116645580e-21  # next 33 bits
_PIO2_3T = 8.47842766036889956997e-32  # pi/2 - (_PIO2_1 + _PIO2_2 + _PIO2_3)

_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _scaled_cos_sin_row(p, a, zc, zs):  # pragma: no cover - compiled
    """The row's entries into zc, zs; returns how many are beyond MAX_ABS or not finite
    (their values here are not used: :func:`_cos_sin` recomputes them with numpy)."""
    far = 0
    for j in range(p.shape[0]):
        x = p[j]
        far += not (abs(x) <= MAX_ABS)  # NaN too
        k = np.rint(x * _TWO_OVER_PI)
        r = (((x - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3) - k * _PIO2_3T
        z = r * r
        # fdlibm __kernel_sin (tail y = 0)
        v = z * r
        ps = _S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))
        s = r + v * (_S1 + z * ps)
        # fdlibm __kernel_cos (tail y = 0)
        pc = z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
        hz = 0.5 * z
        w = 1.0 - hz
        c = w + (((1.0 - w) - hz) + z * pc)
        # quadrant q = k mod 4: (cos, sin) = (c, s), (-s, c), (-c, -s), (s, -c)
        q = k - 4.0 * np.floor(0.25 * k)
        odd = (q == 1.0) | (q == 3.0)
        sn = c if odd else s
        cs = s if odd else c
        sign_sin = -1.0 if q >= 2.0 else 1.0
        sign_cos = -1.0 if ((q == 1.0) | (q == 2.0)) else 1.0
        zc[j] = (sign_cos * cs) * a[j]
        zs[j] = (sign_sin * sn) * a[j]
    return far


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _scaled_cos_sin(P, a, Z):  # pragma: no cover - compiled
    N, D = P.shape
    far = 0
    for i in range(N):  # row by row: a simple loop the compiler vectorises
        far += _scaled_cos_sin_row(P[i], a, Z[i, :D], Z[i, D:])
    return far


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _scaled_cos_sin_split(P, a, Z):  # pragma: no cover - compiled
    N, D2 = P.shape
    D = D2 // 2
    junk = np.empty(D, dtype=np.float64)
    far = 0
    for i in range(N):  # cos of the left half, sin of the right half
        far += _scaled_cos_sin_row(P[i, :D], a[:D], Z[i, :D], junk)
        far += _scaled_cos_sin_row(P[i, D:], a[D:], junk, Z[i, D:])
    return far


def scaled_cos_sin_split(P: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """[cos(P_l) * scale_l, sin(P_r) * scale_r] for P = [P_l, P_r] and scale = [scale_l,
    scale_r] (``lev_rff``'s re-weighted columns), as :func:`scaled_cos_sin` computes."""
    if P.shape[1] % 2:
        raise ValueError(f"P needs an even number of columns, got {P.shape[1]}")
    return _cos_sin(P, scale, P.shape[1] // 2, _scaled_cos_sin_split)


def scaled_cos_sin(P: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """[cos(P) * scale, sin(P) * scale] (N x 2D) for projections P (N x D): float64 from
    the compiled kernel, entries beyond :data:`MAX_ABS` (or not finite) and float32 from
    numpy."""
    return _cos_sin(P, np.concatenate([scale, scale]), P.shape[1], _scaled_cos_sin)


def _cos_sin(P: np.ndarray, scale: np.ndarray, D: int, compiled: Any) -> np.ndarray:
    """[cos(P[:, :D]), sin(P[:, -D:])] * scale (N x 2D); ``compiled`` takes the
    unconcatenated scale where it takes P.

    Which routine computes an entry depends on that entry alone (float64 within
    :data:`MAX_ABS`: compiled; else numpy), never on the other rows of P: a row's
    features are the same bits alone or in any batch (issue: trig switched on the
    batch's size and range).
    """
    if P.dtype == np.float64 and USE_COMPILED:
        P = np.ascontiguousarray(P)
        Z = np.empty((P.shape[0], 2 * D), dtype=np.float64)
        a = np.ascontiguousarray(scale[: P.shape[1]], dtype=np.float64)
        if compiled(P, a, Z):  # entries beyond MAX_ABS, counted in the same pass
            rows, cols = np.nonzero(~(np.abs(P) <= MAX_ABS))  # NaN too
            cos_part = cols < D
            r, c = rows[cos_part], cols[cos_part]
            Z[r, c] = np.cos(P[r, c]) * scale[c]
            off = P.shape[1] - D  # sin of column c of P goes to column D + c - off
            sin_part = cols >= off
            r, c = rows[sin_part], cols[sin_part]
            Z[r, D + c - off] = np.sin(P[r, c]) * scale[D + c - off]
        return Z
    Z = np.empty((P.shape[0], 2 * D), dtype=P.dtype)
    np.cos(P[:, :D], out=Z[:, :D])
    np.sin(P[:, P.shape[1] - D :], out=Z[:, D:])
    Z *= scale
    return Z
