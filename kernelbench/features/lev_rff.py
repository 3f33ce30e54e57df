"""Leverage-weighted random Fourier features (Liu et al. 2020, Sec. 2 and 5).

Both samplers of Liu et al. 2020 share :class:`ResampledRFF`: pre-sample l frequencies
w_1..w_l from p(w) (the rows of RFF), score each on the training set, re-sample the
s = D frequencies of the map from the multinomial (p_1/L, ..., p_l/L), L = sum_i p_i,
and weight each by sqrt(p(w)/q(w)) (Eq. (9)): with the empirical q(w_i) = l p_i / L,
a_i^2 = L / (s l p_i), so E_q[k_hat] is the RFF estimate on the l pre-sampled
frequencies: unbiased whatever the scores.

``lev_rff`` (leverage-RFF of Table 3, Li et al. 2019): the ridge leverage scores of
Eq. (3), p_i = [Z_l^T Z_l (Z_l^T Z_l + n lambda I)^{-1}]_{ii}, summed over the cos and
sin columns of a frequency (the complex feature of Eq. (2) is one column).

``mode``: ``resample`` is Algorithm 1 as printed; ``reweight`` is the authors' public
MATLAB code (every one of the 2s columns scored, kept and re-weighted: docs/liu2020.md),
no unbiased estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import blas, cho_factor, cho_solve

from kernelbench.errors import KernelbenchError
from kernelbench.features import FEATURE_MAPS
from kernelbench.features.rff import DenseFeatureMap
from kernelbench.trig import scaled_cos_sin, scaled_cos_sin_split
from kernelbench.validation import Interval, StrOptions

#: Rows of X turned into features at once while scoring (memory O(chunk * l)).
SCORE_CHUNK_ROWS = 4096
#: How the scores are used: Algorithm 1 (multinomial re-sampling with importance
#: weights) or the public code's re-weighting of every column (module docstring).
MODES = ("resample", "reweight")


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


def gram_upper(Z: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out`` + Z^T Z, upper triangle only (BLAS syrk), in place for a Fortran ``out``."""
    Zf = np.ascontiguousarray(Z, dtype=np.float64)
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


def _usable(scores: Any) -> tuple[np.ndarray, float]:
    """(scores clipped at 0, their sum); all ones without signal (plain RFF weights)."""
    scores = np.maximum(np.asarray(scores, dtype=np.float64), 0.0)
    total = float(scores.sum())
    if not total > 0 or not math.isfinite(total):
        return np.ones(len(scores)), float(len(scores))
    return scores, total


@dataclass(eq=False, repr=False)
class ResampledRFF(DenseFeatureMap):
    """RFF re-sampled by scores of l = ceil(presample * s) pre-sampled frequencies
    (Table 3: l = s); ``fit(X, y)`` (``lev_rff`` reads only X). Attributes: ``scores_``,
    ``n_presampled_`` (l), ``indices_``, ``W_``, ``weights_`` (a_i^2 = L / (s l p_i));
    ``reweight`` (presample 1): scores and order of the 2s columns, ``phase_`` (b),
    ``column_W_`` (2s x d), ``column_scale_`` (sqrt(1/s) sqrt(1/q_c)).
    """

    paper_label = ""
    needs_labels = True
    data_dependent = True
    #: draws its frequencies as RFF does (a shared draw gives both the same W)
    draw_family = "rff"
    _parameter_constraints = {
        "presample": [Interval(float, 1, hint=" (l >= s)")],
        "mode": [StrOptions(MODES)],
    }

    presample: float = 1.0
    mode: str = "resample"

    def _cross_check(self) -> None:
        self._require_rbf(type(self).__name__.lower())
        if self.mode == "reweight" and float(self.presample) != 1.0:
            raise KernelbenchError(
                f"presample must be 1 with mode 'reweight' (it scores the s drawn "
                f"frequencies themselves), got {self.presample!r}"
            )

    def _scores(self, X: np.ndarray, y: Any, W: np.ndarray) -> np.ndarray:
        """The score p_i >= 0 of each pre-sampled frequency (row of W): by default its
        cos and sin columns' scores summed."""
        scores = self._column_scores(X, y, W, None)
        return scores[: len(W)] + scores[len(W) :]

    def _column_scores(self, X: np.ndarray, y: Any, W: np.ndarray, b: np.ndarray):
        """The score >= 0 of each of the 2s columns (``reweight``)."""
        raise NotImplementedError

    def _presampled_features(self, X: np.ndarray, W: np.ndarray, phase: np.ndarray | None = None):
        """(start, cos, sin) blocks of cos/sin(X W^T [+ b]) in row chunks, unscaled
        (times 1/sqrt(l) they are Z_l of Eq. (2))."""
        Ws = W.T * self.input_scale_
        l = W.shape[0]
        ones = np.ones(l)
        for start in range(0, X.shape[0], SCORE_CHUNK_ROWS):
            P = X[start : start + SCORE_CHUNK_ROWS].astype(np.float64) @ Ws
            if phase is not None:
                P += phase
            Z = scaled_cos_sin(P, ones)
            yield start, Z[:, :l], Z[:, l:]

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        """Pre-sample, score on (X, y), re-sample (Liu et al. 2020, Algorithm 1)."""
        X, y = self._fit_data
        if self.needs_labels:
            y = check_labels(y, X.shape[0])
        if self.mode == "reweight":
            return self._draw_reweight(rng, X, y, d, D)
        l = max(D, int(math.ceil(float(self.presample) * D - 1e-9)))
        W = rng.standard_normal((l, d))
        scores, total = _usable(self._scores(X, y, W))
        prob = scores / total
        idx = rng.choice(l, size=D, replace=True, p=prob)
        self.n_presampled_ = l
        self.scores_ = scores
        self.indices_ = idx
        self.W_ = W[idx]
        # a_i^2 = (1/s) p(w)/q(w) with q(w_i)/p(w_i) = l prob_i
        return 1.0 / (D * l * prob[idx]), 0.0

    def _draw_reweight(self, rng: np.random.Generator, X: np.ndarray, y: Any, d: int, D: int):
        """The public code's map (module docstring): W as RFF draws it, then b."""
        W = rng.standard_normal((D, d))
        b = rng.uniform(0.0, 2.0 * np.pi, D)
        scores, total = _usable(self._column_scores(X, y, W, b))
        # a column with score 0 would get an infinite weight: floor q at the smallest
        # positive q (the code divides by zero there)
        q = scores / total
        q = np.maximum(q, q[q > 0].min())
        weight = np.sqrt(1.0 / q)
        order = np.argsort(weight, kind="stable")  # MATLAB's sort(..., 'ascend')
        self.n_presampled_ = D
        self.scores_ = scores
        self.indices_ = order
        self.W_ = W
        self.phase_ = b
        self.column_W_ = W[order % D]
        self.column_scale_ = np.sqrt(1.0 / D) * weight[order]
        return self.column_scale_[:D] ** 2, 0.0

    def _project(self, X: np.ndarray) -> np.ndarray:
        if self.mode != "reweight":
            return super()._project(X)
        P = self._rows_times(X, self.column_W_)
        P += np.concatenate([self.phase_, self.phase_]).astype(X.dtype)
        return P

    def transform(self, X: Any) -> np.ndarray:
        """z(x); ``reweight``: [cos(x W_c^T + b), sin(x W_s^T + b)] sqrt(1/s) sqrt(1/q)."""
        if self.mode != "reweight":
            return super().transform(X)
        P = self.projections(X)
        return scaled_cos_sin_split(P, self.column_scale_.astype(P.dtype))

    def weight_matrix(self) -> np.ndarray:
        """The dense matrix of projections (``reweight``: 2s x d, one row per column)."""
        if self.mode != "reweight":
            return super().weight_matrix()
        return self.column_W_


@FEATURE_MAPS.register("lev_rff")
@dataclass(eq=False, repr=False)
class LevRFF(ResampledRFF):
    """Leverage-RFF: re-sampled by empirical ridge leverage scores (Liu et al. 2020, Eq. (3)).

    ``ridge``: the lambda of Z^T Z + n lambda I; default 0.05, the public code's (the
    smallest of the Table 3 grid). O(n l^2 + l^3) time, O(l^2 + chunk l) memory.
    """

    paper_label = "leverage-RFF"
    needs_labels = False
    _parameter_constraints = {"ridge": [Interval(float, 0, strict=True)]}

    ridge: float = 0.05

    def _column_scores(self, X: np.ndarray, y: Any, W: np.ndarray, b: Any):
        """diag(G (G + n lambda I)^{-1}), G = Z^T Z, Z = [cos, sin](X W^T [+ b]) / sqrt(l)
        (``leverageRFF.m``); = diag((G + n lambda I)^{-1} G): they commute."""
        l = W.shape[0]
        G = np.zeros((2 * l, 2 * l), order="F")
        for _, C, S in self._presampled_features(X, W, phase=b):
            gram_upper(np.hstack([C, S]), out=G)
        G /= l
        symmetrize_upper(G)
        A = G.copy()
        A[np.diag_indices_from(A)] += X.shape[0] * float(self.ridge)
        return np.diag(cho_solve(cho_factor(A, lower=False, check_finite=False), G))
