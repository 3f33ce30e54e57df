"""Orthogonal random features (Yu et al. 2016) and the published-code variant."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap, n_projections, sample_factor
from kernelbench.features.rff import DenseFeatureMap
from kernelbench.transforms import (
    HOUSEHOLDER_PANEL,
    HouseholderProduct,
    WideReflectors,
    block_product,
    chi_norms,
    haar_orthogonal,
    reflector_scalars,
    row_block,
    row_blocks,
    scale_columns_into,
    wy_factor_from_gram,
)
from kernelbench.validation import Interval, StrOptions, check_bool

CONSTRUCTIONS = ("stacked", "tall_qr")
#: A truncated last block of at most this many rows is mapped through its formed rows
#: (formed in fit: 2 r d^2 flops) instead of the whole block's panels.
SHORT_BLOCK_ROWS = 16
#: A map fitted on at least this many rows applies its panels as
#: :class:`~kernelbench.transforms.WideReflectors` (per call 1.5-2x faster from 100 rows
#: on at d = 3072; forming them costs about 0.27 CPU-s in fit there, repaid after about
#: 300 mapped rows); fewer keep the drawn 64-reflector panels (as fast for a few rows a
#: call: their V stays in cache). Chosen in fit: every call then takes the same form.
WIDE_FIT_ROWS = 256
#: The panels map rows in tiles of at most this many bytes of input (the workspace's
#: bound). Without ``batch_invariant`` a row's last bits may depend on the rows of its
#: tile, as on those of its call (:data:`kernelbench.transforms.ROWS_IN_N_MAX`).
ROW_TILE_BYTES = 32 * 2**20


@FEATURE_MAPS.register("orf")
@dataclass(eq=False, repr=False)
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

    ``dense_limit_mb``, ``dense_budget_mb``, ``map_rows``: when ``fit`` forms the
    dense W (:meth:`_forms_w`; docs/performance.md). ``tall_qr_sample_space``: let
    tall_qr (D >= d) draw the projections of m < d points directly
    (:func:`tall_qr_projections`; on in ``configs/method/orf_tallqr.yaml``).
    """

    paper_label = "Gort"
    #: X W^T is a BLAS GEMM, or the panels' GEMMs (``batch_invariant``: the wide panels
    #: in fixed row blocks, :func:`kernelbench.transforms.row_blocks`).
    blas_rows = True
    _parameter_constraints = {
        "construction": [StrOptions(CONSTRUCTIONS)],
        "dense_limit_mb": [Interval(float, 0)],
        "tall_qr_sample_space": [check_bool],
        "dense_budget_mb": [None, Interval(float, 0)],
        "map_rows": [None, Interval(int, 0)],
    }

    construction: str = "stacked"
    dense_limit_mb: float = 64.0
    tall_qr_sample_space: bool = False
    dense_budget_mb: float | None = None
    map_rows: int | None = None

    def claimed(self) -> frozenset[str]:
        """The published tall-QR construction is biased for the odd (arc-cosine) kernels
        (LAPACK's signs, no Haar correction): it does not claim ``unbiased``."""
        claims = super().claimed()
        return claims - ({"unbiased"} if self.construction == "tall_qr" else set())

    def _forms_w(self, d: int, D: int) -> str | None:
        """How ``fit`` forms W: ``"dorgqr"`` under ``dense_limit_mb``; ``"gemm"`` above
        it where the map will transform N >= d rows (``map_rows``, else the fit
        rows) and W fits the budget (``dense_budget_mb``); None: not formed."""
        mib = D * d * 8 / 2**20
        if mib <= self.dense_limit_mb:
            return "dorgqr"
        if self.dense_limit_mb == 0:  # never
            return None
        budget = dense_budget_mb() if self.dense_budget_mb is None else self.dense_budget_mb
        rows = getattr(self, "fit_rows_", 0) if self.map_rows is None else self.map_rows
        return "gemm" if rows >= d and mib <= budget else None

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        if self.construction == "stacked":
            blocks = []
            for _ in range(-(-D // d)):
                Q = HouseholderProduct.gaussian(rng, d)
                S = chi_norms(rng, d, d)
                blocks.append((Q, S))
            self.blocks_ = blocks
        else:  # the published code: no sign correction, chi(D) row norms
            self.blocks_ = [(HouseholderProduct.gaussian(rng, max(D, d), min(D, d)), None)]
            self.row_norms_ = chi_norms(rng, D, D)
        self.fit_rows_ = len(self._fit_data[0])
        route = self._forms_w(d, D)
        self.W_ = None if route is None else self._dense(d, D, gemm=route == "gemm")
        self.short_rows_ = None
        wide = self.fit_rows_ >= WIDE_FIT_ROWS or self.batch_invariant  # rows in BLAS's M
        if self.W_ is None and wide:  # docs/performance.md
            r = D - (len(self.blocks_) - 1) * d
            if self.construction == "stacked" and r < d and r <= SHORT_BLOCK_ROWS:
                Q, S = self.blocks_[-1]  # its rows S_r Q_r diag(sign R), as _dense forms them
                rows = Q.apply_rows(np.eye(r, d), transpose=True) * Q.r_signs[None, :]
                self.short_rows_ = rows * S[:r, None]
                self.blocks_ = self.blocks_[:-1] + [(None, None)]
            t = self.construction == "tall_qr" and D < d  # it maps through Q^T
            wide = [(None if Q is None else WideReflectors.of(Q, t), S) for Q, S in self.blocks_]
            self.blocks_ = wide
        return np.full(D, 1.0 / D), 0.0

    def supports_sample_space(self, n_points: int, d: int) -> bool:
        """Sample-space draws where m < d points span less than R^d: the stacked
        construction's blocks from Haar frames; the published tall-QR construction
        (D >= d) from its reflectors held in a reduced form (:func:`tall_qr_projections`;
        LAPACK's signs kept). tall_qr with D < d draws W."""
        if n_points >= d:
            return False
        if self.construction == "stacked":
            return True
        return bool(self.tall_qr_sample_space) and n_projections(self.n, d) >= d

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
        if self.construction == "tall_qr":
            P = tall_qr_projections(rng, As, D)
            return P, np.full(D, 1.0 / D), 0.0
        m, d = As.shape
        R = sample_factor(As)
        P = np.empty((m, D))
        for b in range(-(-D // d)):
            lo, hi = b * d, min(D, (b + 1) * d)
            V = haar_orthogonal(rng, d, m)
            S = chi_norms(rng, d, d)
            P[:, lo:hi] = (R.T @ V[: hi - lo].T) * S[None, : hi - lo]
        return P, np.full(D, 1.0 / D), 0.0

    def _dense(self, d: int, D: int, gemm: bool = False) -> np.ndarray:
        """The D x d matrix W of :meth:`_panels` (up to rounding) by ``dorgqr``, or with
        ``gemm`` by the panels' GEMMs (a truncated block's r < 2d/3 rows as Q^T e_i)."""
        if self.construction == "stacked":
            W = np.empty((D, d))
            for b, (Q, S) in enumerate(self.blocks_):
                lo, hi = b * d, min(D, (b + 1) * d)
                r = hi - lo
                if not gemm:
                    rows = Q.reduced()[:r]
                elif 3 * r < 2 * d:  # Q[:r] = I[:r] Q
                    rows = Q.apply_rows(np.eye(r, d), transpose=True)
                else:
                    rows = Q.reduced_rows().T[:r]  # (Q^T)^T
                # rows S_r Q_r diag(sign R)
                W[lo:hi] = rows * Q.r_signs[None, :]
                W[lo:hi] *= S[:r, None]
            return W
        Q = self.blocks_[0][0]
        if gemm:  # Q[:, :k]^T
            W = np.array(Q.reduced_rows().T if D >= d else Q.reduced_rows(), order="C")
        else:
            Qk = Q.reduced()
            W = np.array(Qk if D >= d else Qk.T, order="C")
        W *= self.row_norms_[:, None]  # D >= d: S Q[:, :d]; else S Q[:, :D]^T
        return W

    def _project(self, X: np.ndarray) -> np.ndarray:
        if self.W_ is not None:  # formed in fit: one GEMM
            return DenseFeatureMap._rows_times(self, X, self.W_)
        if self.batch_invariant:  # the wide panels on fixed blocks of rows
            D, d = self.n_projections_, X.shape[1]
            return row_blocks(X, lambda Xb: self._panels(Xb).T, D, row_block(d, D))
        return self._panels(X)

    def _panels(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """X W^T by applying the Householder panels (W never formed), in row tiles of at
        most :data:`ROW_TILE_BYTES`, each written into ``out`` (N x D; a new array if
        None); a short last block through its formed rows."""
        N, d = X.shape
        D = self.n_projections_
        dt = X.dtype
        if out is None:
            out = np.empty((N, D), dtype=dt)
        exact = {"gemm_only": True} if self.batch_invariant else {}  # WideReflectors
        tile = max(64, ROW_TILE_BYTES // (X.itemsize * max(d, 1)))
        if N > tile:
            for lo in range(0, N, tile):
                self._panels(X[lo : lo + tile], out[lo : lo + tile])
            return out
        if self.construction == "stacked":
            for b, (Q, S) in enumerate(self.blocks_):
                lo, hi = b * d, min(D, (b + 1) * d)
                if Q is None:  # a short last block: its formed rows
                    if self.batch_invariant:  # the rows in BLAS's M dimension
                        out[:, lo:hi] = block_product(self.short_rows_, X).T
                    else:
                        out[:, lo:hi] = X @ self.short_rows_.astype(dt, copy=False).T
                    continue
                # rows S Q diag(sign R): x -> Q diag(sign R) x (the signs applied in the
                # copy that starts the product), then the chi norms into out
                Y = Q.apply_rows(X, col_scale=Q.r_signs.astype(dt), **exact)
                scale_columns_into(Y[:, : hi - lo], S[: hi - lo], out[:, lo:hi])
            return out
        Q = self.blocks_[0][0]
        if D >= d:  # W x = S Q [x; 0]
            Xp = np.zeros((N, D), dtype=dt)
            Xp[:, :d] = X
            Y = Q.apply_rows(Xp, **exact)
        elif isinstance(Q, WideReflectors):  # W x = S (Q^T x)[:D] (Q^T held)
            Y = Q.apply_rows(X, **exact)[:, :D]
        else:  # W x = S (Q^T x)[:D]
            Y = Q.apply_rows(X, transpose=True)[:, :D]
        return scale_columns_into(Y, self.row_norms_, out)


def dense_budget_mb() -> float:
    """The default memory budget of a formed W: 1/16 of the physical memory (MiB), a
    constant of the machine (the free memory would make reruns choose differently)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 16 / 2**20
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1024.0


def tall_qr_projections(
    rng: np.random.Generator, As: np.ndarray, D: int, panel: int = HOUSEHOLDER_PANEL
) -> np.ndarray:
    """A~ W^T (m x D) for the published tall-QR W = diag(chi(D)) Q[:, :d] (D >= d), W
    never formed; the same law as ``fit`` then ``projections`` (LAPACK's signs kept).

    Q = H_0 ... H_{d-1} is drawn reflector by reflector (Stewart 1980, as
    :meth:`HouseholderProduct.gaussian`): reflector i from a fresh Gaussian vector
    of length D - i, split into its top (coordinates i..d-1) and its bottom
    (coordinates d..D-1). The bottoms form a (D - d) x d Gaussian matrix G_b =
    F R+ (QR with R+ >= 0 on the diagonal): R+ has Bartlett's law (chi(D - d - i)
    diagonal, N(0, 1) above it) and F, Haar, is independent of R+ (Muirhead 1982,
    Thm. 3.2.14). A reflector depends on its bottom only through the column norms
    ||G_b e_i|| = ||R+ e_i||, and Q [A~^T; 0] has bottom rows G_b C for a d x m matrix
    C built from the tops and R+ (:func:`tall_qr_reduced`). So the bottom rows are
    F E with E = R+ C, and F E = (F Q_E) R_E (E = Q_E R_E), with F Q_E a Haar
    (D - d) x m frame independent of everything else: O(d^2 m + D m^2) and d^2
    Gaussian numbers instead of O(D d m) and D d. Draw order: the panels of
    reflectors from the last (tops, then R+ columns), the frame, the chi(D) row norms.
    """
    m, d = As.shape
    nb = D - d
    if nb < 0:
        raise ValueError(f"the tall-QR sample-space draw needs D >= d, got D={D}, d={d}")
    k = min(nb, d)

    def tops(i0: int, i1: int) -> np.ndarray:
        return np.tril(rng.standard_normal((d - i0, i1 - i0)))

    def rplus(i0: int, i1: int) -> np.ndarray:
        r1 = min(i1, k)
        Rb = np.triu(rng.standard_normal((r1, i1 - i0)), k=-i0)
        for c in range(max(0, min(i1, k) - i0)):  # the diagonal R+_ii ~ chi(nb - i)
            Rb[i0 + c, c] = np.sqrt(rng.chisquare(nb - i0 - c))
        return Rb

    Yt, E = tall_qr_reduced(np.asarray(As, dtype=np.float64).T, tops, rplus, k, panel)
    P = np.empty((m, D))
    P[:, :d] = Yt.T
    if nb:
        if m < k:  # F E = (F Q_E) R_E: a Haar (D - d) x m frame times R_E
            R_E = np.linalg.qr(E, mode="r")  # LAPACK's R, as mode="reduced" gives it
            P[:, d:] = (haar_orthogonal(rng, nb, m) @ R_E).T
        else:
            P[:, d:] = (haar_orthogonal(rng, nb, k) @ E).T
    P *= chi_norms(rng, D, D)[None, :]
    return P


def tall_qr_reduced(At, tops, rplus, k: int, panel: int = HOUSEHOLDER_PANEL):
    """(Y_top, E): Q [A~^T; 0] = [Y_top; F E] for Q = H_0 ... H_{d-1} whose reflector i
    comes from the vector (top_i, G_b e_i), G_b = F R+ (F: orthonormal columns, R+:
    k x d upper trapezoidal). ``tops(i0, i1)``: the (d - i0) x (i1 - i0) lower
    trapezoidal block of the tops of reflectors i0..i1-1 (column c starts on row c);
    ``rplus(i0, i1)``: R+[:min(i1, k), i0:i1]. Panels of reflectors are applied in
    compact WY form (I - V T V^T, V^T V from the tops and R+^T R+), from the last;
    the bottom rows are kept as G_b C, i.e. as E = R+ C (k x m)."""
    d, m = At.shape
    Yt = np.array(At, dtype=np.float64, order="C")
    E = np.zeros((k, m))
    starts = list(range(0, d, panel))
    for i0 in reversed(starts):
        i1 = min(d, i0 + panel)
        b = i1 - i0
        Tb = tops(i0, i1)
        Rb = rplus(i0, i1)
        idx = np.arange(b)
        alpha = Tb[idx, idx].copy()
        Tb[idx, idx] = 0.0
        xnorm = np.sqrt(np.einsum("ij,ij->j", Tb, Tb) + np.einsum("ij,ij->j", Rb, Rb))
        _, tau, scale = reflector_scalars(alpha, xnorm)
        V = Tb * scale[None, :]  # the top rows i0..d-1 of the panel's reflectors
        V[idx, idx] = 1.0
        VtV = V.T @ V + scale[:, None] * (Rb.T @ Rb) * scale[None, :]
        T = wy_factor_from_gram(VtV, tau)
        r1 = Rb.shape[0]
        Z = V.T @ Yt[i0:] + scale[:, None] * (Rb.T @ E[:r1])  # V^T Y (b x m)
        U = T @ Z
        Yt[i0:] -= V @ U
        E[:r1] -= Rb @ (scale[:, None] * U)
    return Yt, E
