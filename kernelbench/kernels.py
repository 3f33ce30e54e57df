"""Exact kernels and their Gaussian integral representations.

k(x, y) = c E_{w ~ N(0, I)}[phi(w . x~) . phi(w . y~)] (Munkhoeva et al. 2018, Eq. 3),
x~ = s x, with f(0) = phi(0) . phi(0) for rules with a node at w = 0:

======== ====================================== ============ ===== ======
id       k(x, y)                                phi          c     f(0)
======== ====================================== ============ ===== ======
rbf      exp(-gamma ||x - y||^2), x~=sqrt(2g)x  [cos, sin]   1     1
arccos0  1 - theta / pi                         Heaviside    2     1/4
arccos1  ||x|| ||y|| (sin t + (pi - t) cos t)/pi ReLU         2     0
======== ====================================== ============ ===== ======
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from kernelbench.errors import KernelbenchError
from kernelbench.registry import Registry

KERNELS: Registry[Kernel] = Registry("kernel")

#: Rows of X processed at once by the exact kernels (bounds temporary memory).
CHUNK_ROWS = 2048


def _as_float(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if X.ndim != 2:
        raise KernelbenchError(f"expected a 2-D array, got shape {X.shape}")
    return X


def sq_norms(X: np.ndarray) -> np.ndarray:
    """||x||^2 of each row."""
    return np.einsum("ij,ij->i", X, X)


def sq_distances(X: np.ndarray, Y: np.ndarray, nx: np.ndarray, ny: np.ndarray) -> np.ndarray:
    """||x - y||^2 = ||x||^2 + ||y||^2 - 2 x.y for rows of X, Y (norms nx, ny), clipped at 0."""
    sq = nx[:, None] + ny[None, :] - 2.0 * (X @ Y.T)
    np.maximum(sq, 0.0, out=sq)
    return sq


@dataclass(frozen=True)
class Kernel:
    """A kernel with its Gaussian integral representation (see the module docstring)."""

    name: str
    paper_label: str
    constant: float  # c
    f0: float  # phi(0) . phi(0)
    even: bool  # f_xy(w) == f_xy(-w) for every x, y
    n_outputs: int  # phi maps a projection to this many features

    def input_scale(self, d: int, gamma: float | None = None) -> float:
        """The scalar s with x~ = s x (sqrt(2 gamma) for rbf, 1 otherwise)."""
        return 1.0

    def phi(self, P: np.ndarray) -> np.ndarray:
        """Apply the nonlinearity to projections P (N x D) -> N x (n_outputs * D)."""
        raise NotImplementedError

    def features(self, P: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """phi(P) with each projection's outputs multiplied by scale (length D).

        May overwrite P (a temporary of the caller); avoids extra passes.
        """
        Z = self.phi(P)
        Z *= np.tile(scale, self.n_outputs)[None, :]
        return Z

    def exact(self, X: np.ndarray, Y: np.ndarray, gamma: float | None = None) -> np.ndarray:
        """The exact Gram matrix k(X, Y), computed in row chunks."""
        X = _as_float(X)
        Y = _as_float(Y)
        if X.shape[1] != Y.shape[1]:
            raise KernelbenchError(
                f"X and Y have different numbers of features: {X.shape[1]} != {Y.shape[1]}"
            )
        dtype = np.result_type(X.dtype, Y.dtype)
        out = np.empty((X.shape[0], Y.shape[0]), dtype=dtype)
        ny = sq_norms(Y.astype(np.float64))
        for start in range(0, X.shape[0], CHUNK_ROWS):
            xs = X[start : start + CHUNK_ROWS].astype(np.float64)
            out[start : start + CHUNK_ROWS] = self._exact_block(xs, Y.astype(np.float64), ny, gamma)
        return out

    def _exact_block(
        self, X: np.ndarray, Y: np.ndarray, ny: np.ndarray, gamma: float | None
    ) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class RBFKernel(Kernel):
    """Gaussian kernel exp(-gamma ||x - y||^2); gamma defaults to 1/d."""

    def input_scale(self, d: int, gamma: float | None = None) -> float:
        return math.sqrt(2.0 * resolve_gamma(gamma, d))

    def phi(self, P: np.ndarray) -> np.ndarray:
        return np.concatenate([np.cos(P), np.sin(P)], axis=1)

    def features(self, P: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """[cos P, sin P], each scaled (:func:`kernelbench.trig.scaled_cos_sin`)."""
        from kernelbench.trig import scaled_cos_sin

        return scaled_cos_sin(P, scale)

    def _exact_block(self, X, Y, ny, gamma):
        g = resolve_gamma(gamma, X.shape[1])
        return np.exp(-g * sq_distances(X, Y, sq_norms(X), ny))


def _cos_theta(X, Y, ny):
    nx = np.sqrt(sq_norms(X))
    nyy = np.sqrt(ny)
    denom = nx[:, None] * nyy[None, :]
    dot = X @ Y.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(denom > 0, dot / np.where(denom > 0, denom, 1.0), 1.0)
    return np.clip(cos, -1.0, 1.0), denom


@dataclass(frozen=True)
class ArcCos0Kernel(Kernel):
    """Arc-cosine kernel of order 0 (Cho & Saul 2009): 1 - theta/pi.

    The angle is undefined for a zero vector; there the integral representation
    gives the value: w . 0 = 0 and Heaviside(0) = 1/2, so 2 E[H(w.x) / 2] = 1/2.
    """

    def phi(self, P: np.ndarray) -> np.ndarray:
        return np.heaviside(P, 0.5).astype(P.dtype, copy=False)

    def _exact_block(self, X, Y, ny, gamma):
        cos, denom = _cos_theta(X, Y, ny)
        K = 1.0 - np.arccos(cos) / np.pi
        # A zero vector: 2 E[H(w.x) H(0)] = E[H(w.x)] = 1/2 (also when x = 0 too).
        zero = denom == 0
        if np.any(zero):
            K = np.where(zero, 0.5, K)
        return K


@dataclass(frozen=True)
class ArcCos1Kernel(Kernel):
    """Arc-cosine kernel of order 1: ||x|| ||y|| (sin t + (pi - t) cos t) / pi."""

    def phi(self, P: np.ndarray) -> np.ndarray:
        return np.maximum(P, 0)

    def features(self, P: np.ndarray, scale: np.ndarray) -> np.ndarray:
        np.maximum(P, 0, out=P)
        P *= scale
        return P

    def _exact_block(self, X, Y, ny, gamma):
        cos, denom = _cos_theta(X, Y, ny)
        theta = np.arccos(cos)
        sin = np.sqrt(np.maximum(1.0 - cos * cos, 0.0))
        return denom * (sin + (np.pi - theta) * cos) / np.pi


def resolve_gamma(gamma: float | None, d: int) -> float:
    """gamma, or the papers' default 1/d when it is None."""
    if gamma is None:
        return 1.0 / d
    ok = isinstance(gamma, numbers.Real) and not isinstance(gamma, bool)
    if not ok or not 0 < gamma < math.inf:
        raise KernelbenchError(
            f"gamma must be > 0 and finite, got {float(gamma) if ok else gamma!r}"
        )
    return float(gamma)


KERNELS.add("rbf", RBFKernel("rbf", "Gaussian", 1.0, 1.0, True, 2))
KERNELS.add("arccos0", ArcCos0Kernel("arccos0", "Arc-cos 0", 2.0, 0.25, False, 1))
KERNELS.add("arccos1", ArcCos1Kernel("arccos1", "Arc-cos 1", 2.0, 0.0, False, 1))


def get_kernel(name: str | Kernel) -> Kernel:
    """Look a kernel up by id; unknown ids raise one line naming the valid ones."""
    if isinstance(name, Kernel):
        return name
    return KERNELS.get(name)


def exact_kernel(
    kernel: str, X: np.ndarray, Y: np.ndarray | None = None, gamma: float | None = None
) -> np.ndarray:
    """Exact Gram matrix k(X, Y) (k(X, X) when Y is None) for a registered kernel."""
    return get_kernel(kernel).exact(X, X if Y is None else Y, gamma=gamma)
