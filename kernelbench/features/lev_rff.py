"""Leverage-weighted random Fourier features (Liu et al. 2020, Sec. 2 and 5).

Both data-dependent samplers of Liu et al. 2020 share one scheme
(:class:`ResampledRFF`): pre-sample l frequencies w_1..w_l from the spectral
measure p(w) (the rows of RFF), score each on the training set, re-sample the
s = D frequencies of the map from the multinomial (p_1/L, ..., p_l/L),
L = sum_i p_i, and weight each by the importance weight sqrt(p(w)/q(w)) of Eq. (9).

With the empirical q(w_i) = l p_i / L relative to p (the pre-sampled points are
an empirical version of p), the weight of a re-sampled w_i is a_i^2 = L / (s l p_i),
so E_q[k_hat] equals the RFF estimate with the l pre-sampled frequencies, whose
mean is k: the map stays unbiased whatever the scores.

``lev_rff`` (leverage-RFF of Table 3, Li et al. 2019): the scores are the empirical
ridge leverage scores of Eq. (3) with K approximated by the pre-sampled features,

    p_i = [Z_l^T Z_l (Z_l^T Z_l + n lambda I)^{-1}]_{ii},

an l x l inverse (O(n l^2 + l^3)). The Gaussian kernel gives each frequency a
cos and a sin column; the score of a frequency is the sum over its two columns
(the complex feature of Eq. (2) is one column).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.linalg import blas, cho_factor, cho_solve
from sklearn.utils.validation import validate_data

from kernelbench.errors import KernelbenchError
from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import check_real
from kernelbench.features.rff import DenseFeatureMap
from kernelbench.kernels import get_kernel
from kernelbench.trig import scaled_cos_sin

#: Rows of X turned into features at once while scoring (memory O(chunk * l)).
SCORE_CHUNK_ROWS = 4096


def check_labels(y: Any, n_rows: int) -> np.ndarray:
    """Labels as a float64 vector of length ``n_rows`` (one line otherwise)."""
    if y is None:
        raise KernelbenchError("this feature map is supervised: fit(X, y) needs the labels y")
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != n_rows:
        raise KernelbenchError(f"y must be a vector of {n_rows} labels, got shape {y.shape}")
    if not np.issubdtype(y.dtype, np.number) or not np.all(np.isfinite(y)):
        raise KernelbenchError("y must hold finite numbers")
    return y.astype(np.float64)


def gram_upper(Z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``out`` + Z^T Z, upper triangle only (BLAS syrk; the lower one is left as is).

    ``out`` (s x s, float64) is updated in place when it is Fortran-ordered.
    """
    Zf = np.ascontiguousarray(Z, dtype=np.float64)
    if out is None:
        out = np.zeros((Zf.shape[1], Zf.shape[1]), order="F")
    if Zf.shape[0] == 0:
        return out
    # Z^T Z = A A^T with A = Z^T, Fortran-ordered view of a C-ordered Z (no copy)
    res = blas.dsyrk(1.0, Zf.T, beta=1.0, c=out, trans=0, lower=0, overwrite_c=1)
    if res is not out:
        out[...] = res
    return out


def symmetrize_upper(G: np.ndarray) -> np.ndarray:
    """The full symmetric matrix from its upper triangle (in place)."""
    il = np.tril_indices_from(G, -1)
    G[il] = G.T[il]
    return G


class ResampledRFF(DenseFeatureMap):
    """RFF re-sampled by scores of the pre-sampled frequencies (see the module docstring).

    ``presample``: l = ceil(presample * s) pre-sampled frequencies (Liu et al.'s
    Table 3: l = s, presample 1). ``fit(X, y)`` is supervised (labels are used by
    ``slw_rff``; ``lev_rff`` reads only X). Attributes: ``scores_`` (p_i of the l
    pre-sampled frequencies), ``n_presampled_`` (l), ``indices_`` (which of them the
    map uses), ``W_`` and ``weights_`` (a_i^2 = L / (s l p_i)).
    """

    paper_label = ""
    #: whether fit needs the labels y
    _needs_labels = True

    def __init__(
        self,
        kernel: str = "rbf",
        n: float = 1,
        gamma: float | None = None,
        random_state: Any = None,
        presample: float = 1.0,
    ) -> None:
        super().__init__(kernel=kernel, n=n, gamma=gamma, random_state=random_state)
        self.presample = presample

    def _check_params(self) -> None:
        if get_kernel(self.kernel).name != "rbf":
            raise KernelbenchError(
                f"{type(self).__name__.lower()} needs a shift-invariant kernel (rbf), "
                f"got kernel {self.kernel!r}"
            )
        check_real("presample", self.presample, 1, strict=False, hint=" (l >= s)")

    def fit(self, X: Any, y: Any = None) -> ResampledRFF:
        """Pre-sample, score on (X, y), re-sample (Liu et al. 2020, Algorithm 1)."""
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
        self._fit_data = (X, check_labels(y, X.shape[0]) if self._needs_labels else y)
        try:
            return super().fit(X, y)
        finally:
            del self._fit_data

    def _scores(self, X: np.ndarray, y: Any, W: np.ndarray, d: int) -> np.ndarray:
        """The score p_i >= 0 of each pre-sampled frequency (row of W)."""
        raise NotImplementedError

    def _presampled_features(self, X: np.ndarray, W: np.ndarray, d: int):
        """The pre-sampled features of X in row chunks, unscaled: (start, cos block, sin
        block), each n_chunk x l (times 1/sqrt(l) they are Z_l of Eq. (2))."""
        scale = get_kernel(self.kernel).input_scale(d, self.gamma)
        Ws = W.T * scale
        l = W.shape[0]
        ones = np.ones(l)
        for start in range(0, X.shape[0], SCORE_CHUNK_ROWS):
            P = X[start : start + SCORE_CHUNK_ROWS].astype(np.float64) @ Ws
            Z = scaled_cos_sin(P, ones)
            yield start, Z[:, :l], Z[:, l:]

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        X, y = self._fit_data
        l = max(D, int(math.ceil(float(self.presample) * D - 1e-9)))
        W = rng.standard_normal((l, d))
        scores = np.asarray(self._scores(X, y, W, d), dtype=np.float64)
        scores = np.maximum(scores, 0.0)
        total = float(scores.sum())
        if not total > 0 or not math.isfinite(total):  # no signal: plain RFF weights
            scores = np.ones(l)
            total = float(l)
        prob = scores / total
        idx = rng.choice(l, size=D, replace=True, p=prob)
        self.n_presampled_ = l
        self.scores_ = scores
        self.indices_ = idx
        self.W_ = W[idx]
        # a_i^2 = (1/s) p(w)/q(w) with q(w_i)/p(w_i) = l prob_i
        return 1.0 / (D * l * prob[idx]), 0.0


@FEATURE_MAPS.register("lev_rff")
class LevRFF(ResampledRFF):
    """Leverage-RFF: re-sampled by empirical ridge leverage scores (Liu et al. 2020, Eq. (3)).

    ``ridge``: the lambda of Eq. (3), scaled by n (Z^T Z + n lambda I); default 0.05,
    the value of the public code of Liu et al. (the smallest of the Table 3 grid).
    Cost O(n l^2 + l^3) time, O(l^2 + chunk l) memory.
    """

    paper_label = "leverage-RFF"
    _needs_labels = False

    def __init__(
        self,
        kernel: str = "rbf",
        n: float = 1,
        gamma: float | None = None,
        random_state: Any = None,
        presample: float = 1.0,
        ridge: float = 0.05,
    ) -> None:
        super().__init__(
            kernel=kernel, n=n, gamma=gamma, random_state=random_state, presample=presample
        )
        self.ridge = ridge

    def _check_params(self) -> None:
        super()._check_params()
        check_real("ridge", self.ridge, 0, strict=True)

    def _scores(self, X: np.ndarray, y: Any, W: np.ndarray, d: int) -> np.ndarray:
        l = W.shape[0]
        G = np.zeros((2 * l, 2 * l), order="F")
        for _, C, S in self._presampled_features(X, W, d):
            gram_upper(np.hstack([C, S]), out=G)
        G /= l  # Z_l = [cos, sin] / sqrt(l)
        symmetrize_upper(G)
        A = G.copy()
        A[np.diag_indices_from(A)] += X.shape[0] * float(self.ridge)
        # diag(G (G + n lambda I)^{-1}) = diag((G + n lambda I)^{-1} G) (they commute)
        M = cho_solve(cho_factor(A, lower=False, check_finite=False), G, check_finite=False)
        lev = np.diag(M)
        return lev[:l] + lev[l:]
