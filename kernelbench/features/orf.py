"""Orthogonal random features (Yu et al. 2016) and the published-code variant."""

from __future__ import annotations

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import (
    RandomFeatureMap,
    check_choice,
    check_real,
    sample_factor,
)
from kernelbench.transforms import HouseholderProduct

CONSTRUCTIONS = ("stacked", "tall_qr")


@FEATURE_MAPS.register("orf")
class ORF(RandomFeatureMap):
    """W = S Q (Yu et al. 2016, Sec. 3): Q Haar-orthogonal, S = diag(chi(d) norms).

    ``construction="stacked"`` (default, Yu et al.): ceil(D/d) independent d x d
    Haar blocks, each row scaled by an independent chi(d) norm, truncated to D
    rows; every row is then marginally N(0, I), so the estimate is unbiased.
    A block is Q diag(sign R) for the Householder QR Q R of a d x d Gaussian
    matrix (Mezzadri 2006, Sec. 5).

    ``construction="tall_qr"`` (the code published with Munkhoeva et al. 2018):
    the D x d factor Q of the QR of a D x d Gaussian matrix (orthonormal
    *columns*, LAPACK's signs, no sign correction, as published), rows scaled by
    chi(D) norms (for D < d: the transposed d x D factor). It reproduces the
    paper's Gort numbers but is not Yu et al.'s construction for D > d.

    Both keep Q as its Householder reflectors, drawn from fresh Gaussian vectors
    (:class:`kernelbench.transforms.HouseholderProduct`: the same law as the
    dense QR of a Gaussian matrix, Stewart 1980) and applied in compact WY
    blocks: the draw is O(D d) instead of a QR's O(D d^2), and mapping N points
    costs O(N D d) as a dense W would, without forming Q.

    ``dense_limit_mb``: where the D x d float64 matrix W takes at most this many MiB,
    ``fit`` forms it once from the reflectors (LAPACK ``dorgqr``, O(D d^2)) and
    ``transform`` is one GEMM, as for rff; the numbers are the same up to rounding.
    Forming W costs about as much as mapping d/2 points through the panels, so the
    default (64 MiB: d <= 784 at every n of Munkhoeva et al.'s Fig. 1) leaves the wide
    datasets (CIFAR-100, LEUKEMIA: 20-100 points per map) on the panels. 0: never.
    """

    paper_label = "Gort"

    def __init__(
        self,
        kernel="rbf",
        n=1,
        gamma=None,
        random_state=None,
        construction: str = "stacked",
        dense_limit_mb: float = 64.0,
    ) -> None:
        super().__init__(kernel=kernel, n=n, gamma=gamma, random_state=random_state)
        self.construction = construction
        self.dense_limit_mb = dense_limit_mb

    def _check_params(self) -> None:
        check_choice("construction", self.construction, CONSTRUCTIONS)
        check_real("dense_limit_mb", self.dense_limit_mb, 0, strict=False)

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        if self.construction == "stacked":
            blocks = []
            for _ in range(-(-D // d)):
                Q = HouseholderProduct.gaussian(rng, d)
                S = np.sqrt(rng.chisquare(d, size=d))
                blocks.append((Q, S))
            self.blocks_ = blocks
        elif D >= d:  # the published code: no sign correction, chi(D) row norms
            self.blocks_ = [(HouseholderProduct.gaussian(rng, D, d), None)]
            self.row_norms_ = np.sqrt(rng.chisquare(D, size=D))
        else:
            self.blocks_ = [(HouseholderProduct.gaussian(rng, d, D), None)]
            self.row_norms_ = np.sqrt(rng.chisquare(D, size=D))
        self.W_ = self._dense(d, D) if D * d * 8 <= self.dense_limit_mb * 2**20 else None
        return np.full(D, 1.0 / D), 0.0

    def supports_sample_space(self, n_points: int, d: int) -> bool:
        """Sample-space draws for the stacked construction where m < d points span
        less than R^d (the published tall-QR code keeps LAPACK's signs, whose law is
        not rotation invariant: it draws W)."""
        return self.construction == "stacked" and n_points < d

    def _draw_sample_space(
        self, rng: np.random.Generator, As: np.ndarray, D: int
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """A~ W^T block by block from random orthonormal d x m frames.

        Block b of W is S H (first rows), H = Q diag(sign R) Haar on O(d) and S the
        chi(d) norms. With A~^T = Q_A R_A (:func:`sample_factor`), A~ H^T =
        R_A^T (H Q_A)^T, and H Q_A (d x m) has the law of the first m columns of a
        Haar matrix (right invariance of the Haar measure: H Q_A = (H U) E for an
        orthogonal completion U of Q_A): a Haar frame V, the Q factor of the QR of a
        d x m Gaussian matrix with the sign fix (Mezzadri 2006, Sec. 5). So block b
        is R_A^T V[:rows]^T diag(S[:rows]), blocks independent and truncated to D
        rows as in :meth:`_draw` (Yu et al. 2016, Sec. 3).
        """
        m, d = As.shape
        R = sample_factor(As)
        P = np.empty((m, D))
        for b in range(-(-D // d)):
            lo, hi = b * d, min(D, (b + 1) * d)
            V, T = np.linalg.qr(rng.standard_normal((d, m)))
            V *= np.where(np.diagonal(T) < 0.0, -1.0, 1.0)[None, :]
            S = np.sqrt(rng.chisquare(d, size=d))
            P[:, lo:hi] = (R.T @ V[: hi - lo].T) * S[None, : hi - lo]
        return P, np.full(D, 1.0 / D), 0.0

    def _dense(self, d: int, D: int) -> np.ndarray:
        """The D x d matrix W of :meth:`_panels` (the same W up to rounding), formed once
        from the reflectors (``HouseholderProduct.reduced``)."""
        if self.construction == "stacked":
            W = np.empty((D, d))
            for b, (Q, S) in enumerate(self.blocks_):
                lo, hi = b * d, min(D, (b + 1) * d)
                # rows S_r Q_r diag(sign R)
                W[lo:hi] = Q.reduced()[: hi - lo] * Q.r_signs[None, :]
                W[lo:hi] *= S[: hi - lo, None]
            return W
        Q = self.blocks_[0][0]
        Qk = Q.reduced()
        W = np.array(Qk if D >= d else Qk.T, order="C")  # D >= d: S Q[:, :d]; else S Q[:, :D]^T
        W *= self.row_norms_[:, None]
        return W

    def _project(self, X: np.ndarray) -> np.ndarray:
        if self.W_ is not None:  # formed in fit: one GEMM
            W = self.W_ if X.dtype == np.float64 else self.W_.astype(X.dtype)
            return X @ W.T
        return self._panels(X)

    def _panels(self, X: np.ndarray) -> np.ndarray:
        """X W^T by applying the Householder panels (W never formed)."""
        N, d = X.shape
        D = self.n_projections_
        dt = X.dtype
        if self.construction == "stacked":
            out = np.empty((N, D), dtype=dt)
            for b, (Q, S) in enumerate(self.blocks_):
                lo, hi = b * d, min(D, (b + 1) * d)
                # rows S Q diag(sign R): sign-correct the input, then x -> Q x
                Y = Q.apply_rows(X * Q.r_signs.astype(dt)[None, :])
                out[:, lo:hi] = Y[:, : hi - lo] * S[: hi - lo].astype(dt)[None, :]
            return out
        Q = self.blocks_[0][0]
        S = self.row_norms_.astype(dt)[None, :]
        if D >= d:  # W x = S Q [x; 0]
            Xp = np.zeros((N, D), dtype=dt)
            Xp[:, :d] = X
            return Q.apply_rows(Xp) * S
        return Q.apply_rows(X, transpose=True)[:, :D] * S  # W x = S (Q^T x)[:D]
