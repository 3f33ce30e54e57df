"""Subsampled dense grid of Gauss-Hermite nodes (Dao, De Sa & Re 2017)."""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.rff import DenseFeatureMap
from kernelbench.validation import Interval


def gauss_hermite(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and normalised weights of the n-point Gauss-Hermite rule for N(0, 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    return x, w / w.sum()


@FEATURE_MAPS.register("gq")
@dataclass(eq=False, repr=False)
class GQ(DenseFeatureMap):
    """Each coordinate w_ji drawn i.i.d. from the 1-D Gauss-Hermite nodes, P = weights.

    Its mean is the full tensor-product Gauss-Hermite quadrature (Dao et al. 2017, Sec.
    4.1): biased by design. ``n_nodes=2`` (+-1 entries): Munkhoeva et al.'s code.
    """

    paper_label = "GQ"
    #: Biased by design: its mean is the tensor-product Gauss-Hermite rule, not K.
    claims = DenseFeatureMap.claims - {"unbiased"}
    _parameter_constraints = {"n_nodes": [Interval(int, 1, 100)]}

    n_nodes: int = 2

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        nodes, probs = gauss_hermite(int(self.n_nodes))
        self.W_ = choose_nodes(rng, nodes, probs, (D, d))
        return np.full(D, 1.0 / D), 0.0


def choose_nodes(
    rng: np.random.Generator, nodes: np.ndarray, probs: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    """``nodes[rng.choice(len(nodes), size=shape, p=probs)]``, bit for bit and with the
    same draws: numpy's choice takes ``random(shape)`` uniforms u and the index
    searchsorted(cdf, u, side="right") of the normalised cumulative probabilities; here
    the uniforms are replaced by their nodes in place, in one compiled pass."""
    cdf = np.cumsum(probs, dtype=np.float64)
    cdf /= cdf[-1]
    W = rng.random(shape)
    _nodes_of_uniforms(W.reshape(-1), cdf, np.asarray(nodes, dtype=np.float64))
    return W


@numba.njit(cache=True, nogil=True)
def _nodes_of_uniforms(u, cdf, nodes):  # pragma: no cover - compiled
    """u[i] <- nodes[k], k the number of cdf entries <= u[i] (searchsorted, "right")."""
    m = cdf.shape[0]
    for i in range(u.shape[0]):
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] <= u[i]:
                lo = mid + 1
            else:
                hi = mid
        u[i] = nodes[min(lo, m - 1)]  # lo < m: u < 1 = cdf[-1]
