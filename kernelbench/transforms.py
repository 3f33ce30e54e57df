"""Structured orthogonal transforms applied in O(d log d) without dense matrices.

* :func:`haar_orthogonal` - a Haar-distributed orthogonal matrix (dense, O(d^2)).
* :class:`HouseholderProduct` - the Q of a Householder QR of a Gaussian matrix, drawn
  as reflectors from fresh Gaussian vectors (Stewart 1980) and applied in blocks,
  without forming Q.
* :func:`fwht_rows` - the normalised fast Walsh-Hadamard transform of each row.
* :class:`Butterfly` - random butterfly rotations (Genz 1998) for any d.
* :func:`simplex_rows` - inner products with the vertices of a regular simplex.
* :func:`circulant_rows` - products with a circulant matrix by the real FFT.
* :func:`chi_norms`, :func:`rademacher` - the row norms and sign diagonals of the
  structured maps.

The public ones are gathered, documented, in :mod:`kernelbench.blocks`.

Row convention: a batch of vectors is an N x d array ``X`` whose rows are the
vectors, and "apply M to every vector" returns ``X @ M.T``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numba
import numpy as np
from scipy.linalg.blas import dtrsm as _trsm
from scipy.linalg.blas import get_blas_funcs


def next_pow2(d: int) -> int:
    """The smallest power of two >= d."""
    return 1 << max(0, int(d - 1).bit_length())


def chi_norms(rng: np.random.Generator, dof: int, size: int | tuple[int, ...]) -> np.ndarray:
    """Independent chi(``dof``) variates: the norms of standard Gaussian vectors in R^dof.

    A row s v, v uniform on the unit sphere and s ~ chi(d) independent of it, is N(0, I_d)
    (Yu et al. 2016, Sec. 3, the S of ORF; Le et al. 2013, Eq. 7, the S of Fastfood).
    """
    return np.sqrt(rng.chisquare(dof, size=size))


def rademacher(rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
    """Independent signs +-1 with probability 1/2 each (int8): the diagonals D_i of
    SORF (Yu et al. 2016, Eq. 7), B of Fastfood (Le et al. 2013, Eq. 7) and the row
    signs of signed circulant features (Feng et al. 2015)."""
    return rng.choice(np.array([-1, 1], dtype=np.int8), size=shape)


#: A frame of at most ``d / CHOLESKY_QR_ASPECT`` columns is orthonormalised by Cholesky
#: QR: a d x k Gaussian G then has condition number about (1 + sqrt(k/d)) / (1 -
#: sqrt(k/d)) <= 2.1, and Q = G C^-1 is orthonormal to about cond(G)^2 eps (Stathopoulos
#: & Wu 2002), as LAPACK's Householder QR is to about eps.
CHOLESKY_QR_ASPECT = 8


def haar_orthogonal(rng: np.random.Generator, d: int, cols: int | None = None) -> np.ndarray:
    """A d x d orthogonal matrix (d x ``cols`` frame) from the Haar measure: the Q of
    the QR of a Gaussian matrix with the signs of diag R moved in (Mezzadri 2006, Sec. 5).

    That Q is G R^-1 with R upper triangular, positive diagonal and R^T R = G^T G: the
    Cholesky factor of G^T G. A frame of ``cols <= d / CHOLESKY_QR_ASPECT`` columns is
    computed so, by one Gram product and one triangular solve (2 d k^2 flops against a
    Householder QR's 4 d k^2 and its level-2 panels): the same matrix up to rounding.
    """
    k = d if cols is None else cols
    G = rng.standard_normal((d, k))
    if k * CHOLESKY_QR_ASPECT <= d:
        L = np.linalg.cholesky(G.T @ G)  # G^T G = L L^T, L = R^T
        Qt = _trsm(1.0, L, G.T, side=0, lower=1, trans_a=0, overwrite_b=1)  # L^-1 G^T
        return Qt.T  # C-ordered d x k
    Q, R = np.linalg.qr(G)
    Q *= np.where(np.diagonal(R) < 0.0, -1.0, 1.0)[None, :]
    return Q


# ------------------------------------------------------------- batch-independent rows
#: Multiply-adds of one block's product, which sets :func:`row_block`'s rows B: 128
#: rows for a W of fewer than 2^17 entries, else 64 (docs/performance.md,
#: "Batch-independent BLAS products").
ROW_BLOCK_WORK = 2**23
#: The fewest and most rows of a block: powers of two, so a multiple of every OpenBLAS
#: kernel's row unroll. Fewer rows re-pack W more often (1.7-3x the plain product on
#: large batches at 16 rows), more make the transposes and a call of few rows dearer.
ROW_BLOCK_MIN, ROW_BLOCK_MAX = 64, 128
#: Bytes of results (and of padded input) that :func:`row_products` computes in one
#: stacked call (numpy's matmul over a stack of blocks: one GEMM per block).
ROW_CHUNK_BYTES = 2**20


def row_block(d: int, width: int) -> int:
    """Rows B of every block of :func:`row_products` and :func:`row_blocks` for rows of
    length d and ``width`` outputs: the power of two in [:data:`ROW_BLOCK_MIN`,
    :data:`ROW_BLOCK_MAX`] nearest above ``ROW_BLOCK_WORK / (d width)``, a function of
    the fitted map's shape only, never of the call."""
    rows = ROW_BLOCK_WORK / max(1, d * width)
    return int(min(ROW_BLOCK_MAX, max(ROW_BLOCK_MIN, next_pow2(int(np.ceil(rows))))))


def row_blocks(
    X: np.ndarray, columns: Callable[[np.ndarray], np.ndarray], width: int, block: int
) -> np.ndarray:
    """f(x) for every row x of X (N x width, X's dtype), where ``columns(Xb)`` gives the
    width x B matrix whose columns are the f(x) of the rows of a block Xb.

    Every call of ``columns`` gets a C-contiguous float64 block of exactly ``block``
    rows (the last one padded with zero rows), so each BLAS product in it has one shape
    and one code path for any N, a single row included (numpy would send a one-row
    product to GEMV). With the rows as the columns of every product (BLAS's M dimension,
    which its kernels unroll; ``block`` a multiple of the unroll), OpenBLAS gives a row
    the same bits at every place in a block whatever the other rows hold (measured,
    docs/performance.md): so a row's f(x) does not depend on its batch. In float64
    whatever X's dtype (OpenBLAS's Haswell SGEMM gives float32 rows other bits by
    their place in a block of more than 16 rows), rounded to X's dtype at the end.
    """
    N, d = X.shape
    out = np.empty((N, width), dtype=X.dtype)
    if N == 0:
        return out
    Xb = np.zeros((block, d))  # one buffer: every block alike
    for lo in range(0, N, block):
        hi = min(N, lo + block)
        Xb[: hi - lo] = X[lo:hi]
        if hi - lo < block:
            Xb[hi - lo :] = 0.0
        out[lo:hi] = columns(Xb)[:, : hi - lo].T
    return out


def block_product(W: np.ndarray, Xb: np.ndarray) -> np.ndarray:
    """W Xb^T (D x B, float64) for one block Xb of :func:`row_blocks`: the block's rows in
    BLAS's M dimension; a one-row W gets a zero second row (numpy would call GEMV)."""
    return (gemm_rows(W) @ Xb.T)[: len(W)]


def gemm_rows(W: np.ndarray) -> np.ndarray:
    """W in float64 with a zero second row when it has one row: a product W X^T of it
    stays a GEMM (numpy would send a one-row product to GEMV), of one code path."""
    W = np.asarray(W, dtype=np.float64)
    return np.vstack([W, np.zeros_like(W)]) if len(W) == 1 else W


def row_products(X: np.ndarray, W: np.ndarray, block: int | None = None) -> np.ndarray:
    """X W^T (N x D for W D x d, in X's dtype) with each row's bits independent of the
    batch: W X_b^T in float64 on fixed blocks X_b of ``block`` (default
    :func:`row_block`) rows, the last one padded with zero rows, as :func:`row_blocks`
    does, the blocks of a chunk in one stacked matmul (numpy calls GEMM once per block,
    the same shape each time; no Python loop per block). A one-row W gets a zero
    second row: numpy would send W X_b^T to GEMV."""
    D, d = W.shape
    N = X.shape[0]
    B = row_block(d, D) if block is None else int(block)
    Wp = gemm_rows(W)
    out = np.empty((N, D), dtype=X.dtype)
    step = B * max(1, ROW_CHUNK_BYTES // (8 * B * (len(Wp) + d)))  # rows per chunk
    for lo in range(0, N, step):
        hi = min(N, lo + step)
        nb, full = -(-(hi - lo) // B), (hi - lo) // B
        Xs = np.zeros((nb * B, d))
        Xs[: hi - lo] = X[lo:hi]
        R = np.matmul(Wp, Xs.reshape(nb, B, d).transpose(0, 2, 1))  # nb x D x B
        dst = out[lo : lo + full * B].reshape(full, B, D)
        np.copyto(dst, R[:full, :D].transpose(0, 2, 1), casting="same_kind")
        if full < nb:
            out[lo + full * B : hi] = R[full, :D, : hi - lo - full * B].T
    return out


# -------------------------------------------------------------------- Householder
#: Reflectors per panel of a :class:`HouseholderProduct` (compact WY blocks).
HOUSEHOLDER_PANEL = 64
#: Reflectors per panel where a drawn product is applied to many rows
#: (:meth:`HouseholderProduct.merged`; docs/performance.md, "orf at any shape").
APPLY_PANEL = 256
#: :meth:`WideReflectors.apply_rows` maps a call of at most this many rows with the rows
#: in BLAS's N dimension (Z row-major, Z[:, o:] -= (Z[:, o:] U^T) V^T), more rows with
#: them in M: at d = 3072 a 3072-wide block takes 1.04 of a dense block's GEMM for 10
#: rows (1.47 with the rows in M: OpenBLAS's 16-row micro-tile pads them), 1.17 for 100
#: (1.31); from about 500 rows on the rows in M are faster (docs/performance.md).
ROWS_IN_N_MAX = 256


@dataclass(frozen=True)
class HouseholderProduct:
    """Q = H_1 H_2 ... H_k (m x m), H_i = I - tau_i v_i v_i^T acting on coordinates i..m-1.

    This is the Q of a Householder QR factorisation G = Q R of an m x k matrix in
    LAPACK's convention (``dgeqrf``/``dlarfg``: v_i[i] = 1, R_ii = ``beta[i]``, and
    H_i = I when the column below the diagonal is zero); the reduced factor
    is the first k columns of Q. The reflectors are stored as compact WY panels
    (Schreiber & Van Loan 1989): ``panels[j] = (offset, V, T)`` with V the
    (m - offset) x b unit lower-trapezoidal reflector block and T the b x b upper
    triangular factor, so that H_offset ... H_offset+b-1 = I - V T V^T. Storage is
    the reflectors' k m - k^2 / 2 numbers plus k b; applying Q or Q^T to N vectors
    costs about 2 N m k (two GEMMs per panel), as a dense m x k product would.
    """

    m: int
    k: int
    panels: tuple[tuple[int, np.ndarray, np.ndarray], ...]
    beta: np.ndarray

    @classmethod
    def gaussian(
        cls, rng: np.random.Generator, m: int, k: int | None = None, panel: int = HOUSEHOLDER_PANEL
    ) -> HouseholderProduct:
        """The Q of the QR of an m x k standard Gaussian matrix, drawn reflector by reflector.

        In a Householder QR of a Gaussian G, the i-th reflector is built from the
        trailing part of column i after H_1..H_{i-1}, which is a standard Gaussian
        vector of length m - i independent of them (rotation invariance), so drawing
        each reflector from a fresh Gaussian vector gives Q (and diag R) the same law
        as ``np.linalg.qr(G)`` (Stewart 1980). O(m k) draws, no m x k matrix G; the
        draws (and so Q, up to rounding) do not depend on ``panel``.
        """
        k = m if k is None else int(k)
        if not 0 <= k <= m:
            raise ValueError(f"need 0 <= k <= m, got m={m}, k={k}")
        panels = []
        betas = []
        for off in range(0, k, panel):
            b = min(panel, k - off)
            G = np.zeros((m - off, b))
            for c in range(b):  # reflector off + c: a fresh N(0, I) vector of length m - off - c
                G[c:, c] = rng.standard_normal(m - off - c)
            panels.append(_wy_panel(off, G, betas))
        beta = np.concatenate(betas) if betas else np.zeros(0)
        return cls(int(m), int(k), tuple(panels), beta)

    @classmethod
    def from_qr(cls, a: np.ndarray, tau: np.ndarray, panel: int = HOUSEHOLDER_PANEL):
        """The product stored by LAPACK's ``dgeqrf`` (``a`` below the diagonal, ``tau``)."""
        m, k = a.shape[0], len(tau)
        panels = []
        for off in range(0, k, panel):
            b = min(panel, k - off)
            V = np.tril(a[off:, off : off + b], -1)
            V[np.arange(b), np.arange(b)] = 1.0
            T = wy_factor_from_gram(V.T @ V, np.asarray(tau[off : off + b], dtype=float))
            panels.append((off, V, T))
        return cls(int(m), int(k), tuple(panels), np.diag(a)[:k].copy())

    @property
    def r_signs(self) -> np.ndarray:
        """sign(diag R) (+1 where it is 0): the Haar sign correction (Mezzadri 2006)."""
        s = np.sign(self.beta)
        s[s == 0] = 1.0
        return s

    def apply_rows(
        self, X: np.ndarray, transpose: bool = False, col_scale: np.ndarray | None = None
    ) -> np.ndarray:
        """X @ Q^T (every row x becomes Q x), or X @ Q with ``transpose``; in place on
        a C-contiguous copy of X (N x m), in X's dtype. ``col_scale``: X's columns
        multiplied by it in that copy (x becomes Q diag(col_scale) x)."""
        if X.shape[1] != self.m:
            raise ValueError(f"rows must have length {self.m}, got {X.shape[1]}")
        X = _scaled_copy(X, col_scale)
        dt = X.dtype
        order = self.panels if transpose else self.panels[::-1]
        for off, V, T in order:
            V = V.astype(dt, copy=False)
            T = T.astype(dt, copy=False)
            Xs = X[:, off:]
            Y = Xs @ V
            Y = Y @ T if transpose else Y @ T.T
            Xs -= Y @ V.T
        return X

    def merged(self, width: int) -> HouseholderProduct:
        """The same reflectors in compact WY panels of ``width`` (a multiple of the
        stored panels' width): each joined panel's T from its parts' by LAPACK
        ``dlarft``'s recursion, T = [[T1, -T1 (V1^T V2) T2], [0, T2]] (Schreiber & Van
        Loan 1989). Q is unchanged; applying it takes fewer, wider GEMMs (their
        rounding differs from the stored panels')."""
        joined = []
        panels = list(self.panels)
        step = max(1, width // max(1, panels[0][1].shape[1])) if panels else 1
        for g in range(0, len(panels), step):
            group = panels[g : g + step]
            off0 = group[0][0]
            b = sum(V.shape[1] for _, V, _ in group)
            V = np.zeros((self.m - off0, b))
            T = np.zeros((b, b))
            c = 0
            for off, Vp, Tp in group:
                bp = Vp.shape[1]
                V[off - off0 :, c : c + bp] = Vp
                if c:
                    T[:c, c : c + bp] = -(T[:c, :c] @ (V[:, :c].T @ V[:, c : c + bp])) @ Tp
                T[c : c + bp, c : c + bp] = Tp
                c += bp
            joined.append((off0, V, T))
        return HouseholderProduct(self.m, self.k, tuple(joined), self.beta)

    def matrix(self) -> np.ndarray:
        """The dense m x m matrix Q (for tests and inspection only)."""
        return self.apply_rows(np.eye(self.m)).T

    def reduced_rows(self) -> np.ndarray:
        """The transpose of :meth:`reduced`, Q[:, :k]^T (k x m, C order), formed with the
        panels' GEMMs: each panel, from the last, applied to the rows of the identity's
        first k rows that it reaches (panel j changes only rows and columns >= its
        offset, the rest stay those of I): about the flops of ``dorgqr``, at the speed
        of the GEMMs (8x faster than scipy's ``dorgqr`` at m = k = 3072, one thread).
        Equal to ``reduced().T`` up to rounding."""
        R = np.zeros((self.k, self.m))
        R[np.arange(self.k), np.arange(self.k)] = 1.0
        for off, V, T in self.panels[::-1]:
            Rs = R[off:, off:]
            Rs -= ((Rs @ V) @ T.T) @ V.T
        return R

    def reduced(self) -> np.ndarray:
        """The first k columns of Q (m x k, Fortran order), formed by LAPACK ``dorgqr``
        from the stored reflectors: about (4/3) k^2 (3m - k) / 2 flops, equal to
        ``matrix()[:, :k]`` up to rounding."""
        from scipy.linalg import lapack

        a = np.zeros((self.m, self.k), order="F")
        tau = np.zeros(self.k)
        for off, V, T in self.panels:
            b = V.shape[1]
            a[off:, off : off + b] = V  # dorgqr reads the part below the diagonal only
            tau[off : off + b] = np.diag(T)
        if self.k == 0:
            return a
        q, _, info = lapack.dorgqr(a, tau, lwork=max(1, 64 * self.k), overwrite_a=1)
        if info != 0:  # pragma: no cover - LAPACK argument errors only
            raise RuntimeError(f"dorgqr failed (info={info})")
        return q


@dataclass(frozen=True)
class WideReflectors:
    """A :class:`HouseholderProduct`'s Q (or Q^T) held to be applied to many vectors:
    its reflectors in panels of :data:`APPLY_PANEL` (:meth:`HouseholderProduct.merged`),
    each as (offset, V, U) with U = T V^T (T^T V^T for Q^T), so that a panel maps a
    block of vectors Z (as columns) to Z - V (U Z): two GEMMs, the second accumulated
    in place (BLAS ``gemm`` with beta = 1). About the reflectors' storage twice: for a
    d x d block d^2 + 256 d numbers, a dense block's d^2 plus a panel's width."""

    m: int
    transpose: bool
    panels: tuple[tuple[int, np.ndarray, np.ndarray], ...]
    r_signs: np.ndarray
    #: the panels in another dtype (float32 input), converted once
    cast: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, Q: HouseholderProduct, transpose: bool = False) -> WideReflectors:
        """Q (``transpose``: Q^T) of ``Q``'s reflectors, merged into wide panels."""
        panels = []
        for off, V, T in Q.merged(APPLY_PANEL).panels:
            U = (T.T if transpose else T) @ V.T
            panels.append((off, V, np.ascontiguousarray(U)))
        return cls(Q.m, transpose, tuple(panels), Q.r_signs)

    def apply_rows(
        self, X: np.ndarray, gemm_only: bool = False, col_scale: np.ndarray | None = None
    ) -> np.ndarray:
        """X @ Q^T (every row x becomes Q x; Q^T x if ``transpose``), in X's dtype; a new
        array. Up to :data:`ROWS_IN_N_MAX` rows: row-major, the rows in BLAS's N
        dimension; more: F order, the rows in BLAS's M dimension of both products of a
        panel, its triangular top blocks by TRMM (:meth:`_apply_columns_triangular`).
        ``gemm_only`` (batch_invariant's fixed row blocks): F order whatever the rows,
        plain GEMMs, a one-reflector panel's first product by GEMM too (numpy's matmul
        would call GEMV; :func:`row_blocks`). ``col_scale``: X's columns multiplied by
        it in the copy that starts the product (x becomes Q diag(col_scale) x)."""
        if X.shape[1] != self.m:
            raise ValueError(f"rows must have length {self.m}, got {X.shape[1]}")
        panels = self.panels
        dt = X.dtype
        if dt != np.float64 and X.size:
            if dt not in self.cast:
                self.cast[dt] = tuple((o, V.astype(dt), U.astype(dt)) for o, V, U in panels)
            panels = self.cast[dt]
        order = panels if self.transpose else panels[::-1]
        if not gemm_only and len(X) <= ROWS_IN_N_MAX:
            Z = _scaled_copy(X, col_scale)  # C order: Z[:, off:] is a BLAS matrix (ld m)
            for off, V, U in order if Z.size else ():
                Zs = Z[:, off:]
                Zs -= (Zs @ U.T) @ V.T
            return Z
        Zt = _columns_copy(X, col_scale)  # the vectors as columns: Zt[off:] contiguous
        gemm = get_blas_funcs("gemm", (Zt,))
        if not gemm_only:
            return self._apply_columns_triangular(Zt, order, gemm)
        for off, V, U in order if Zt.size else ():
            Zs = Zt[off:]
            if len(U) == 1:  # W^T = Zs^T U^T, rows in M
                W = gemm(1.0, Zs.T, U.T).T
            else:
                W = U @ Zs  # b x N
            # Zs -= V W, in place: in BLAS's column order Zs^T -= W^T V^T
            gemm(-1.0, W.T, V.T, beta=1.0, c=Zs.T, overwrite_c=1)
        return Zt.T

    def _apply_columns_triangular(
        self, Zt: np.ndarray, order: tuple[tuple[int, np.ndarray, np.ndarray], ...], gemm: Callable
    ) -> np.ndarray:
        """:meth:`apply_rows` on the vectors as columns Zt (m x N, C order), the rows
        in BLAS's M dimension, each panel's top b x b blocks by TRMM: V's is unit lower
        triangular, and U = T V^T's upper triangular for Q (T upper; not for Q^T's
        T^T V^T). The panels' flops are then Q's, not 1.08-1.11 of them at d = 2048-3072
        (the zero triangles); the products round otherwise than GEMM's alone."""
        trmm = get_blas_funcs("trmm", (Zt,))
        for off, V, U in order if Zt.size else ():
            b = V.shape[1]
            top, rest = Zt[off : off + b], Zt[off + b :]  # C order: their .T are BLAS's
            if self.transpose:
                Wt = (U @ Zt[off:]).T  # N x b
            else:  # W^T = Z1^T U1^T + Z2^T U2^T, U1 upper triangular
                Wt = trmm(1.0, U[:, :b], top.T, side=1, lower=0, trans_a=1)
                if len(rest):
                    Wt = gemm(1.0, rest.T, U[:, b:].T, beta=1.0, c=Wt, overwrite_c=1)
            # Z1^T -= W^T V1^T (V1 unit lower triangular); Z2^T -= W^T V2^T in place
            top.T[...] -= trmm(1.0, V[:b], Wt, side=1, lower=1, trans_a=1, diag=1)
            if len(rest):
                gemm(-1.0, Wt, V[b:].T, beta=1.0, c=rest.T, overwrite_c=1)
        return Zt.T


def _scaled_copy(X: np.ndarray, scale: np.ndarray | None) -> np.ndarray:
    """A C-contiguous copy of X in X's dtype, times ``scale`` (broadcast) if given:
    one pass over X."""
    Z = np.empty(X.shape, dtype=X.dtype)
    if scale is None:
        np.copyto(Z, X)
    else:
        np.multiply(X, scale.astype(X.dtype, copy=False), out=Z)
    return Z


def _columns_copy(X: np.ndarray, scale: np.ndarray | None) -> np.ndarray:
    """(X diag(scale))^T as a C-contiguous m x N array in X's dtype (X: N x m): one
    tiled transposing pass (:func:`_transpose_scaled`); scale None multiplies by 1."""
    Zt = np.empty(X.shape[::-1], dtype=X.dtype)
    s = np.ones(X.shape[1], X.dtype) if scale is None else scale.astype(X.dtype, copy=False)
    _transpose_scaled(X, s, Zt, False)
    return Zt


def scale_columns_into(Y: np.ndarray, s: np.ndarray, out: np.ndarray) -> np.ndarray:
    """out = Y diag(s) (N x r), written into ``out``; where Y is held in F order (the
    vectors as columns) and ``out`` row-major, by one tiled transposing pass
    (:func:`_transpose_scaled`) instead of numpy's strided one. The same products."""
    s = s.astype(out.dtype, copy=False)
    columns = Y.flags.f_contiguous and not Y.flags.c_contiguous
    if Y.size and columns and out.strides[1] == out.itemsize:
        _transpose_scaled(Y.T, s, out, True)
    else:
        np.multiply(Y, s[None, :], out=out)
    return out


#: Side of the square tiles of a transposing copy: two 32 x 32 tiles of float64 (16 KiB)
#: stay in L1 while one is read by rows and the other written by columns.
TRANSPOSE_TILE = 32


@numba.njit(cache=True, nogil=True)
def _transpose_scaled(A, s, out, by_row):  # pragma: no cover - compiled
    """out[j, i] = A[i, j] * s[i] (``by_row``) or A[i, j] * s[j], in square tiles of
    :data:`TRANSPOSE_TILE`: numpy's transposing copy walks one of the two arrays
    across cache lines (2.2x slower at 3000 x 2048, one thread)."""
    n, m = A.shape
    t = TRANSPOSE_TILE
    for i0 in range(0, n, t):
        i1 = min(n, i0 + t)
        for j0 in range(0, m, t):
            j1 = min(m, j0 + t)
            for j in range(j0, j1):
                for i in range(i0, i1):
                    out[j, i] = A[i, j] * (s[i] if by_row else s[j])


def _wy_panel(off: int, G: np.ndarray, betas: list[np.ndarray]):
    """Reflectors of ``dlarfg`` from the columns of G ((m - off) x b), column c from
    its entries c.. (a fresh Gaussian vector of length m - off - c); appends beta."""
    rows, b = G.shape
    idx = np.arange(b)
    below = np.tril(G, -1)
    alpha = G[idx, idx]
    beta, tau, scale = reflector_scalars(alpha, np.linalg.norm(below, axis=0))
    V = below * scale[None, :]
    V[idx, idx] = 1.0
    betas.append(beta)
    return off, V, wy_factor_from_gram(V.T @ V, tau)


def reflector_scalars(
    alpha: np.ndarray, xnorm: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(beta, tau, scale) of ``dlarfg`` for vectors (alpha, x) with ||x|| = xnorm:
    H (alpha, x) = (beta, 0), beta = -sign(alpha) ||(alpha, x)||, H = I - tau v v^T
    with v = (1, scale x); H = I (tau = 0) where x = 0."""
    trivial = xnorm == 0.0  # H = I (a vector of length 1, or a zero tail)
    beta = np.where(trivial, alpha, -np.copysign(np.hypot(alpha, xnorm), alpha))
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(trivial, 0.0, (beta - alpha) / beta)
        scale = np.where(trivial, 0.0, 1.0 / (alpha - beta))
    return beta, tau, scale


def wy_factor_from_gram(VtV: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """T of H_1 ... H_b = I - V T V^T (LAPACK ``dlarft``, forward, columnwise) from the
    Gram matrix V^T V of the reflectors (also for reflectors held in a reduced form)."""
    b = len(tau)
    T = np.zeros((b, b))
    for i in range(b):
        T[i, i] = tau[i]
        if i:
            T[:i, i] = -tau[i] * (T[:i, :i] @ VtV[:i, i])
    return T


# --------------------------------------------------------------------------- FWHT
#: Columns of a tile (rows held transposed) stored to the output rows at a time.
STORE_BLOCK = 8


@numba.njit(cache=True, nogil=True)
def _fwht_inplace(x):  # pragma: no cover - compiled
    """Unnormalised FWHT of one contiguous vector, stages h = 1, 2, 4, ... in order.

    The first three stages are done together on groups of 8 entries (in registers),
    the later ones two at a time (radix 4) as contiguous loops over slices (SIMD).
    Every entry sees the same additions and subtractions in the same order as stage
    by stage, so the result is the same bit for bit; only the memory passes change.
    """
    m = x.shape[0]
    h = 1
    if m >= 8:
        for i in range(0, m, 8):
            a0 = x[i] + x[i + 1]
            a1 = x[i] - x[i + 1]
            a2 = x[i + 2] + x[i + 3]
            a3 = x[i + 2] - x[i + 3]
            a4 = x[i + 4] + x[i + 5]
            a5 = x[i + 4] - x[i + 5]
            a6 = x[i + 6] + x[i + 7]
            a7 = x[i + 6] - x[i + 7]
            b0 = a0 + a2
            b1 = a1 + a3
            b2 = a0 - a2
            b3 = a1 - a3
            b4 = a4 + a6
            b5 = a5 + a7
            b6 = a4 - a6
            b7 = a5 - a7
            x[i] = b0 + b4
            x[i + 1] = b1 + b5
            x[i + 2] = b2 + b6
            x[i + 3] = b3 + b7
            x[i + 4] = b0 - b4
            x[i + 5] = b1 - b5
            x[i + 6] = b2 - b6
            x[i + 7] = b3 - b7
        h = 8
        while 4 * h <= m:  # stages h and 2h together
            for i in range(0, m, 4 * h):
                q0 = x[i : i + h]
                q1 = x[i + h : i + 2 * h]
                q2 = x[i + 2 * h : i + 3 * h]
                q3 = x[i + 3 * h : i + 4 * h]
                for j in range(h):
                    p0 = q0[j]
                    p1 = q1[j]
                    p2 = q2[j]
                    p3 = q3[j]
                    s0 = p0 + p1
                    s1 = p0 - p1
                    s2 = p2 + p3
                    s3 = p2 - p3
                    q0[j] = s0 + s2
                    q1[j] = s1 + s3
                    q2[j] = s0 - s2
                    q3[j] = s1 - s3
            h *= 4
    while h < m:
        for i in range(0, m, 2 * h):
            u = x[i : i + h]
            v = x[i + h : i + 2 * h]
            for j in range(h):
                a = u[j]
                b = v[j]
                u[j] = a + b
                v[j] = a - b
        h *= 2


@numba.njit(cache=True, nogil=True)
def _hd_rows(X, signs, inv, scale, out):  # pragma: no cover - compiled
    """out[:, b m : (b + 1) m] = scale * (H D_1 ... H D_k) of every zero-padded row of X,
    block b, H normalised by ``inv`` after each transform; one row at a time in a
    buffer of length m (in cache), the same operations in the same order as
    :func:`fwht_rows` applied block by block."""
    N, d = X.shape
    n_stack, k, m = signs.shape
    D = out.shape[1]
    buf = np.empty(m, dtype=X.dtype)
    for r in range(N):
        for b in range(n_stack):
            s = signs[b, k - 1]
            for j in range(d):
                buf[j] = X[r, j] * s[j]
            for j in range(d, m):
                buf[j] = 0.0 * s[j]  # a signed zero, as zeros times D_k
            for t in range(k - 1, -1, -1):
                if t < k - 1:
                    s = signs[b, t]
                    for j in range(m):
                        buf[j] *= s[j]
                _fwht_inplace(buf)
                for j in range(m):
                    buf[j] *= inv
            lo = b * m
            hi = min(D, lo + m)
            for j in range(hi - lo):
                out[r, lo + j] = buf[j] * scale


#: Rows transformed together by :func:`_hd_rows_tiled` (SIMD across rows).
HD_TILE = 16


@numba.njit(cache=True, nogil=True)
def _wht8_first(x, m, inv, s, pre):  # pragma: no cover - compiled
    """Stages h = 1, 2, 4 of the FWHT on a tile stored flat (entry j's :data:`HD_TILE`
    lanes at x[j HD_TILE:]), in groups of 8 entries; with ``pre``, each entry is first
    multiplied by ``inv`` and then by its sign s[j] (the previous transform's
    normalisation and this one's D), as the separate passes would. The lane count is a
    compile-time constant: the blocks' loops are unrolled, without overlap tests."""
    t = HD_TILE
    for g in range(0, m, 8):
        p = g * t
        if pre:
            s0, s1, s2, s3 = s[g], s[g + 1], s[g + 2], s[g + 3]
            s4, s5, s6, s7 = s[g + 4], s[g + 5], s[g + 6], s[g + 7]
        else:
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s[0]
        for f in range(t):
            a0 = x[numba.uint64(p + f)]
            a1 = x[numba.uint64(p + t + f)]
            a2 = x[numba.uint64(p + 2 * t + f)]
            a3 = x[numba.uint64(p + 3 * t + f)]
            a4 = x[numba.uint64(p + 4 * t + f)]
            a5 = x[numba.uint64(p + 5 * t + f)]
            a6 = x[numba.uint64(p + 6 * t + f)]
            a7 = x[numba.uint64(p + 7 * t + f)]
            if pre:
                a0 = a0 * inv * s0
                a1 = a1 * inv * s1
                a2 = a2 * inv * s2
                a3 = a3 * inv * s3
                a4 = a4 * inv * s4
                a5 = a5 * inv * s5
                a6 = a6 * inv * s6
                a7 = a7 * inv * s7
            b0 = a0 + a1
            b1 = a0 - a1
            b2 = a2 + a3
            b3 = a2 - a3
            b4 = a4 + a5
            b5 = a4 - a5
            b6 = a6 + a7
            b7 = a6 - a7
            c0 = b0 + b2
            c1 = b1 + b3
            c2 = b0 - b2
            c3 = b1 - b3
            c4 = b4 + b6
            c5 = b5 + b7
            c6 = b4 - b6
            c7 = b5 - b7
            x[numba.uint64(p + f)] = c0 + c4
            x[numba.uint64(p + t + f)] = c1 + c5
            x[numba.uint64(p + 2 * t + f)] = c2 + c6
            x[numba.uint64(p + 3 * t + f)] = c3 + c7
            x[numba.uint64(p + 4 * t + f)] = c0 - c4
            x[numba.uint64(p + 5 * t + f)] = c1 - c5
            x[numba.uint64(p + 6 * t + f)] = c2 - c6
            x[numba.uint64(p + 7 * t + f)] = c3 - c7


@numba.njit(cache=True, nogil=True)
def _wht8_blocks(x0, x1, x2, x3, x4, x5, x6, x7, n):  # pragma: no cover - compiled
    """Three FWHT stages h, 2h, 4h on the 8 blocks x_r = entries r h .. (r + 1) h of a
    group (n values each), in stage order: each value's additions as stage by stage."""
    for f in range(n):
        a0 = x0[f]
        a1 = x1[f]
        a2 = x2[f]
        a3 = x3[f]
        a4 = x4[f]
        a5 = x5[f]
        a6 = x6[f]
        a7 = x7[f]
        b0 = a0 + a1
        b1 = a0 - a1
        b2 = a2 + a3
        b3 = a2 - a3
        b4 = a4 + a5
        b5 = a4 - a5
        b6 = a6 + a7
        b7 = a6 - a7
        c0 = b0 + b2
        c1 = b1 + b3
        c2 = b0 - b2
        c3 = b1 - b3
        c4 = b4 + b6
        c5 = b5 + b7
        c6 = b4 - b6
        c7 = b5 - b7
        x0[f] = c0 + c4
        x1[f] = c1 + c5
        x2[f] = c2 + c6
        x3[f] = c3 + c7
        x4[f] = c0 - c4
        x5[f] = c1 - c5
        x6[f] = c2 - c6
        x7[f] = c3 - c7


@numba.njit(cache=True, nogil=True)
def _fwht_tile(x, m, inv, s, pre):  # pragma: no cover - compiled
    """Unnormalised FWHT of every lane of a tile stored flat (m entries of ``t`` lanes),
    stages h = 1, 2, 4, ... in order: three at a time (radix 8), the one or two left
    over at the end, each stage a contiguous loop over whole blocks of entries. Every
    value sees the additions and subtractions of :func:`_fwht_inplace` in the same
    order (``pre``: see :func:`_wht8_first`); m >= 8."""
    t = HD_TILE
    _wht8_first(x, m, inv, s, pre)
    h = 8
    while 8 * h <= m:
        n = h * t
        for g in range(0, m * t, 8 * n):
            _wht8_blocks(
                x[g : g + n],
                x[g + n : g + 2 * n],
                x[g + 2 * n : g + 3 * n],
                x[g + 3 * n : g + 4 * n],
                x[g + 4 * n : g + 5 * n],
                x[g + 5 * n : g + 6 * n],
                x[g + 6 * n : g + 7 * n],
                x[g + 7 * n : g + 8 * n],
                n,
            )
        h *= 8
    while h < m:  # one or two stages left
        n = h * t
        for g in range(0, m * t, 2 * n):
            u = x[g : g + n]
            v = x[g + n : g + 2 * n]
            for f in range(n):
                a = u[f]
                b = v[f]
                u[f] = a + b
                v[f] = a - b
        h *= 2


@numba.njit(cache=True, nogil=True)
def _hd_rows_tiled(X, signs, inv, scale, out):  # pragma: no cover - compiled
    """:func:`_hd_rows` on :data:`HD_TILE` rows at a time, held transposed and flat (entry j's ``t``
    lanes at buf[j t:], t = HD_TILE) so that every FWHT stage is a contiguous loop over the rows
    (:func:`_fwht_tile`); the normalisation and the next sign diagonal folded into the
    next transform's first pass, the last normalisation and ``scale`` into the store.
    The same operations per value in the same order, hence the same bits; m >= 8."""
    t = HD_TILE
    N, d = X.shape
    n_stack, k, m = signs.shape
    D = out.shape[1]
    buf = np.zeros(m * t, dtype=X.dtype)
    x = buf[: m * t]
    rows = np.zeros(d * t, dtype=X.dtype)  # the tile's rows, transposed: read once
    xt = rows[: d * t]
    for r0 in range(0, N, t):
        nb = min(t, N - r0)
        # unsigned indices: no wraparound tests; column by column (rows can share cache
        # sets)
        for j in range(d):
            for i in range(nb):
                xt[numba.uint64(j * t + i)] = X[numba.uint64(r0 + i), numba.uint64(j)]
        for b in range(n_stack):
            s = signs[b, k - 1]
            for j in range(d):
                sj = s[j]
                for i in range(t):
                    x[numba.uint64(j * t + i)] = xt[numba.uint64(j * t + i)] * sj
            for j in range(d, m):
                sj = s[j]
                for i in range(t):
                    x[numba.uint64(j * t + i)] = 0.0 * sj  # a signed zero, as zeros times D_k
            for tt in range(k - 1, -1, -1):
                _fwht_tile(x, m, inv, signs[b, tt], tt < k - 1)
            lo = b * m
            hi = min(D, lo + m)
            for j0 in range(0, hi - lo, STORE_BLOCK):
                j1 = min(hi - lo, j0 + STORE_BLOCK)
                for i in range(nb):
                    row = out[r0 + i, lo + j0 : lo + j1]
                    for j in range(j1 - j0):
                        row[j] = x[numba.uint64((j0 + j) * t + i)] * inv * scale


def hd_blocks_rows(X: np.ndarray, signs: np.ndarray, D: int) -> np.ndarray:
    """The rows of sqrt(m) [H D_1 H D_2 ... H D_k]_b x for every row x (zero-padded to
    m) and every stacked block b, truncated to D columns (Yu et al. 2016, Eq. 7).

    ``signs`` (n_blocks x k x m) holds the Rademacher diagonals D_1..D_k of each block.
    O(N n_blocks k m log m) time, O(m) extra memory; float32 stays float32.
    """
    X = np.ascontiguousarray(X)
    dt = X.dtype
    m = signs.shape[2]
    out = np.empty((X.shape[0], D), dtype=dt)
    signs = np.ascontiguousarray(signs, dtype=dt)
    _hd(X, signs, dt.type(1.0 / np.sqrt(m)), dt.type(np.sqrt(m)), out)
    return out


def fwht_rows(X: np.ndarray) -> np.ndarray:
    """Normalised Walsh-Hadamard transform H x of each row (H = H^T, H H = I): H the
    Sylvester matrix H_2m = [[H_m, H_m], [H_m, -H_m]] / sqrt(2), the H of SORF (Yu et
    al. 2016, Eq. 7) and, times sqrt(m), of Fastfood (Le et al. 2013, Eq. 7).

    The row length must be a power of two; O(N m log m) time, no m x m matrix
    (:func:`_hd_rows` with one block and D_1 = I).
    """
    m = X.shape[1]
    if m & (m - 1):
        raise ValueError(f"the row length must be a power of two, got {m}")
    X = np.ascontiguousarray(X)
    dt = X.dtype
    out = np.empty_like(X)
    _hd(X, np.ones((1, 1, m), dtype=dt), dt.type(1.0 / np.sqrt(m)), dt.type(1.0), out)
    return out


def _hd(X, signs, inv, scale, out) -> None:
    """:func:`_hd_rows_tiled` for 4 rows or more and m >= 8, else :func:`_hd_rows` (the
    same bits)."""
    if len(X) >= 4 and signs.shape[2] >= 8:
        _hd_rows_tiled(X, signs, inv, scale, out)
    else:
        _hd_rows(X, signs, inv, scale, out)


# ----------------------------------------------------------------------- Circulant
def circulant_rows(X: np.ndarray, spectrum: np.ndarray) -> np.ndarray:
    """C x for every row x of X (N x d), C = circ(c) the d x d circulant matrix with first
    column c, C_ij = c_{(i - j) mod d}, given ``spectrum`` = rfft(c) (circular
    convolution by the real FFT: C x = irfft(rfft(c) rfft(x)); Feng et al. 2015).

    O(N d log d) time, no d x d matrix; any d; float32 stays float32. numpy's FFT
    transforms the rows one by one (SIMD lanes across rows do the same operations), so a
    row's result does not depend on the other rows of X (checked by
    :func:`kernelbench.testing.check_feature_map`).
    """
    X = np.ascontiguousarray(X)
    spec = spectrum.astype(np.complex64 if X.dtype == np.float32 else np.complex128)
    return np.fft.irfft(np.fft.rfft(X, axis=1) * spec, n=X.shape[1], axis=1).astype(
        X.dtype, copy=False
    )


# ----------------------------------------------------------------------- Butterfly
@cache
def butterfly_plan(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The deterministic block structure of a butterfly matrix of size d.

    A butterfly of size d is B = diag(B_1, B_2) R: R rotates the pairs
    (i, i + d_1), i < d_2, by one angle (d_1 = ceil(d/2), d_2 = floor(d/2); for
    odd d the middle coordinate is left alone), and B_1, B_2 are butterflies of
    sizes d_1, d_2. For d = 2^k this is Genz's (1998) butterfly with the d - 1
    angles of the binary tree; for other d it is the same recursion on an
    unbalanced tree, still with d - 1 angles and ceil(log2 d) levels.

    Returns (offset, d1, d2, level_ptr) over the tree's internal nodes in level
    order (top first): node q rotates x[offset + i] with x[offset + d1 + i],
    i < d2, by angle q. O(d) integers.
    """
    off: list[int] = []
    h1: list[int] = []
    h2: list[int] = []
    ptr = [0]
    frontier = [(0, d)]
    while frontier:
        nxt = []
        for o, size in frontier:
            if size < 2:
                continue
            d1, d2 = (size + 1) // 2, size // 2
            off.append(o)
            h1.append(d1)
            h2.append(d2)
            nxt += [(o, d1), (o + d1, d2)]
        if len(off) > ptr[-1]:
            ptr.append(len(off))
        frontier = nxt
    as_arr = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    assert len(off) == max(d - 1, 0)
    return as_arr(off), as_arr(h1), as_arr(h2), as_arr(ptr)


@numba.njit(cache=True, nogil=True)
def _butterfly_inplace(x, off, d1, d2, ptr, cos, sin, transpose):  # pragma: no cover
    n_levels = ptr.shape[0] - 1
    for step in range(n_levels):
        lv = n_levels - 1 - step if transpose else step
        for q in range(ptr[lv], ptr[lv + 1]):
            c = cos[q]
            s = -sin[q] if transpose else sin[q]
            o = off[q]
            h = d1[q]
            for i in range(d2[q]):  # contiguous: vectorises
                a = x[o + i]
                b = x[o + h + i]
                x[o + i] = c * a - s * b
                x[o + h + i] = s * a + c * b


@numba.njit(cache=True, nogil=True)
def _rotate_rows(X, out, off, d1, d2, ptr, cos, sin, perms):  # pragma: no cover
    n, d = X.shape
    buf = np.empty(d, dtype=X.dtype)
    tmp = np.empty(d, dtype=X.dtype)
    for r in range(n):
        for j in range(d):
            buf[j] = X[r, j]
        for k in range(perms.shape[0]):
            _butterfly_inplace(buf, off, d1, d2, ptr, cos[k], sin[k], True)
            for j in range(d):
                tmp[j] = buf[perms[k, j]]
            buf, tmp = tmp, buf
        for j in range(d):
            out[r, j] = buf[j]


#: Rows rotated together by :func:`_rotate_rows_tiled` (SIMD across rows): the width of
#: the fused lowest levels (:func:`_radix3`), and of every tile from d = 256 up.
BUTTERFLY_TILE = 16
#: The most rows in one tile at small d (:func:`butterfly_tile`).
BUTTERFLY_TILE_MAX = 512


@cache
def butterfly_tail(d: int) -> bool:
    """Whether the two lowest levels of a butterfly of size d are nodes of 2 and 3
    entries (the last level: nodes of 2, the left halves of the 3s), whose subtrees go
    in one pass (:func:`_radix3`): d = 3 x 2^k, for one, but not d = 2^k."""
    off, d1, d2, ptr = butterfly_plan(d)
    if len(ptr) < 3:
        return False
    size = d1 + d2
    return bool(np.all(size[ptr[-2] :] == 2) and np.all(np.isin(size[ptr[-3] : ptr[-2]], (2, 3))))


@cache
def butterfly_tile(d: int) -> int:
    """Rows per tile for a butterfly of size d: the largest power of two <= 4096 / d
    within [BUTTERFLY_TILE, BUTTERFLY_TILE_MAX], so the tile's two d x tile buffers stay
    at 64 KiB; BUTTERFLY_TILE where the fused lowest levels need it (``butterfly_tail``).
    Every entry takes the same operations in the same order whatever the tile, so the
    bits do not depend on it; small d gains (at d = 8, 4096 rows through an sr33 rule:
    214 us in tiles of 16, 47 in tiles of 512: docs/performance.md)."""
    if butterfly_tail(d):
        return BUTTERFLY_TILE
    t = 1 << max(0, (4096 // max(d, 1)).bit_length() - 1)
    return min(BUTTERFLY_TILE_MAX, max(BUTTERFLY_TILE, t))


@numba.njit(cache=True, nogil=True)
def _level_pairs(off, d1, d2, ptr):  # pragma: no cover - compiled
    """pairs[lv]: level lv can be applied in one pass with its parent level lv - 1 (radix
    4): every parent splits into two equal halves of even size 2m, and its two children,
    in order, rotate (o + i, o + m + i) and (o + 2m + i, o + 3m + i), i < m."""
    n_levels = ptr.shape[0] - 1
    pairs = np.zeros(n_levels, dtype=np.bool_)
    for lv in range(1, n_levels):
        if ptr[lv + 1] - ptr[lv] != 2 * (ptr[lv] - ptr[lv - 1]):
            continue
        ok = True
        for q in range(ptr[lv - 1], ptr[lv]):
            q0 = ptr[lv] + 2 * (q - ptr[lv - 1])
            m = d1[q0]
            if d1[q] != d2[q] or d1[q] != 2 * m or d2[q0] != m:
                ok = False
            elif off[q0] != off[q] or off[q0 + 1] != off[q] + 2 * m:
                ok = False
            elif d1[q0 + 1] != m or d2[q0 + 1] != m:
                ok = False
        pairs[lv] = ok
    return pairs


@numba.njit(cache=True, nogil=True)
def _radix2(x, p, h, n, c, s):  # pragma: no cover - compiled
    """Rotate x[p + f] with x[p + h + f], f < n, by (c, s) (one node of one level)."""
    u = x[p : p + n]  # slices: unsigned indices, so the loop vectorises
    v = x[p + h : p + h + n]
    for f in range(n):
        a = u[f]
        e = v[f]
        u[f] = c * a - s * e
        v[f] = s * a + c * e


@numba.njit(cache=True, nogil=True)
def _radix2_lanes(x, p, c, s):  # pragma: no cover - compiled
    """:func:`_radix2` of a node of 2 entries (:data:`BUTTERFLY_TILE` lanes each), the
    lane count a compile-time constant."""
    t = BUTTERFLY_TILE
    for f in range(t):
        a = x[numba.uint64(p + f)]
        e = x[numba.uint64(p + t + f)]
        x[numba.uint64(p + f)] = c * a - s * e
        x[numba.uint64(p + t + f)] = s * a + c * e


@numba.njit(cache=True, nogil=True)
def _radix3(x, p, cc, sc, c, s):  # pragma: no cover - compiled
    """A node (c, s) of 3 entries (:data:`BUTTERFLY_TILE` lanes each) at x[p:], (o, o + 2),
    after its child (cc, sc) of 2 entries, (o, o + 1): the child first, as level by
    level. The lane count is a compile-time constant: the loop is unrolled, without
    overlap tests."""
    t = BUTTERFLY_TILE
    for f in range(t):
        a0 = x[numba.uint64(p + f)]
        a1 = x[numba.uint64(p + t + f)]
        a2 = x[numba.uint64(p + 2 * t + f)]
        b0 = cc * a0 - sc * a1
        x[numba.uint64(p + t + f)] = sc * a0 + cc * a1
        x[numba.uint64(p + f)] = c * b0 - s * a2
        x[numba.uint64(p + 2 * t + f)] = s * b0 + c * a2


@numba.njit(cache=True, nogil=True)
def _radix4(x, p, n, c0, s0, c1, s1, c, s):  # pragma: no cover - compiled
    """A node (c, s) of 4 blocks of n entries at x[p:] and its two children (c0, s0),
    (c1, s1), the children first: each entry's operations as level by level."""
    x0 = x[p : p + n]
    x1 = x[p + n : p + 2 * n]
    x2 = x[p + 2 * n : p + 3 * n]
    x3 = x[p + 3 * n : p + 4 * n]
    for f in range(n):
        a0 = x0[f]
        a1 = x1[f]
        a2 = x2[f]
        a3 = x3[f]
        n0 = c0 * a0 - s0 * a1
        n1 = s0 * a0 + c0 * a1
        n2 = c1 * a2 - s1 * a3
        n3 = s1 * a2 + c1 * a3
        x0[f] = c * n0 - s * n2
        x2[f] = s * n0 + c * n2
        x1[f] = c * n1 - s * n3
        x3[f] = s * n1 + c * n3


@numba.njit(cache=True, nogil=True)
def _radix8(x, p, n, cs, sn, q, q1, q0):  # pragma: no cover - compiled
    """A node q of 8 blocks of n entries at x[p:], its children q1, q1 + 1 and
    grandchildren q0 .. q0 + 3, the lowest level first (angles (cs, sn) as given)."""
    c0, s0, c1, s1 = cs[q0], sn[q0], cs[q0 + 1], sn[q0 + 1]
    c2, s2, c3, s3 = cs[q0 + 2], sn[q0 + 2], cs[q0 + 3], sn[q0 + 3]
    ca, sa, cb, sb = cs[q1], sn[q1], cs[q1 + 1], sn[q1 + 1]
    c, s = cs[q], sn[q]
    x0 = x[p : p + n]
    x1 = x[p + n : p + 2 * n]
    x2 = x[p + 2 * n : p + 3 * n]
    x3 = x[p + 3 * n : p + 4 * n]
    x4 = x[p + 4 * n : p + 5 * n]
    x5 = x[p + 5 * n : p + 6 * n]
    x6 = x[p + 6 * n : p + 7 * n]
    x7 = x[p + 7 * n : p + 8 * n]
    for f in range(n):
        a0 = x0[f]
        a1 = x1[f]
        a2 = x2[f]
        a3 = x3[f]
        a4 = x4[f]
        a5 = x5[f]
        a6 = x6[f]
        a7 = x7[f]
        b0 = c0 * a0 - s0 * a1
        b1 = s0 * a0 + c0 * a1
        b2 = c1 * a2 - s1 * a3
        b3 = s1 * a2 + c1 * a3
        b4 = c2 * a4 - s2 * a5
        b5 = s2 * a4 + c2 * a5
        b6 = c3 * a6 - s3 * a7
        b7 = s3 * a6 + c3 * a7
        e0 = ca * b0 - sa * b2
        e2 = sa * b0 + ca * b2
        e1 = ca * b1 - sa * b3
        e3 = sa * b1 + ca * b3
        e4 = cb * b4 - sb * b6
        e6 = sb * b4 + cb * b6
        e5 = cb * b5 - sb * b7
        e7 = sb * b5 + cb * b7
        x0[f] = c * e0 - s * e4
        x4[f] = s * e0 + c * e4
        x1[f] = c * e1 - s * e5
        x5[f] = s * e1 + c * e5
        x2[f] = c * e2 - s * e6
        x6[f] = s * e2 + c * e6
        x3[f] = c * e3 - s * e7
        x7[f] = s * e3 + c * e7


@numba.njit(cache=True, nogil=True)
def _tile_levels(x, t, off, d1, d2, ptr, cs, sn, pairs, bottom):  # pragma: no cover
    """Levels bottom - 1 down to 0 of one B^T (angles ``sn`` already negated) on a tile
    stored flat, entry j's ``t`` lanes at x[j t : (j + 1) t]: three levels in one pass
    (radix 8) or two (radix 4) where the tree allows (:func:`_level_pairs`). Each entry
    sees the same rotations, in the same order, as level by level."""
    lv = bottom - 1
    while lv >= 0:
        if lv >= 2 and pairs[lv] and pairs[lv - 1]:
            for q in range(ptr[lv - 2], ptr[lv - 1]):
                q1 = ptr[lv - 1] + 2 * (q - ptr[lv - 2])
                q0 = ptr[lv] + 2 * (q1 - ptr[lv - 1])
                _radix8(x, off[q] * t, d1[q0] * t, cs, sn, q, q1, q0)
            lv -= 3
        elif lv >= 1 and pairs[lv]:
            for q in range(ptr[lv - 1], ptr[lv]):
                q0 = ptr[lv] + 2 * (q - ptr[lv - 1])
                _radix4(
                    x, off[q] * t, d1[q0] * t, cs[q0], sn[q0], cs[q0 + 1], sn[q0 + 1], cs[q], sn[q]
                )
            lv -= 2
        else:
            for q in range(ptr[lv], ptr[lv + 1]):
                _radix2(x, off[q] * t, d1[q] * t, d2[q] * t, cs[q], sn[q])
            lv -= 1


@numba.njit(cache=True, nogil=True)
def _butterflies_tile(
    X, r0, nb, buf, tmp, t, off, d1, d2, ptr, cos, sin, perms, pairs, tail
):  # pragma: no cover - compiled
    """Every factor B_k^T, P_k^T on rows r0 .. r0 + nb of X, held transposed and flat
    (entry j's ``t`` lanes at buf[j t:]), except the last gather, which the caller folds
    into its store: returns (the buffer holding the result before that gather, the
    other one). Per factor: the rows loaded (first factor) or the previous P^T
    gathered, then the levels from the bottom up, three at a time where the tree
    allows (:func:`_tile_levels`), the two lowest together where ``tail``
    (:func:`butterfly_tail`). Each entry sees the same operations in the same order as
    factor by factor, level by level (:func:`_rotate_rows`): the same bits."""
    n_levels = ptr.shape[0] - 1
    n_factors = perms.shape[0]
    d = X.shape[1]
    sn = np.empty(sin.shape[1], dtype=sin.dtype)
    if tail and t != BUTTERFLY_TILE:
        raise ValueError("the fused lowest levels need tiles of BUTTERFLY_TILE rows")
    for k in range(n_factors):
        cs = cos[k]
        for q in range(sn.shape[0]):
            sn[q] = -sin[k, q]  # the transpose: angles negated
        # unsigned indices below: no wraparound tests, so the loops vectorise
        if k > 0:
            buf, tmp = tmp, buf  # the previous factor's result is in tmp
        dst = buf[: d * t]
        if k == 0:  # column by column: the tile's rows can share cache sets
            for j in range(d):
                for b in range(nb):
                    dst[numba.uint64(j * t + b)] = X[numba.uint64(r0 + b), numba.uint64(j)]
        else:
            prev = perms[k - 1]
            for j in range(d):
                src = prev[j] * t
                for b in range(t):
                    dst[numba.uint64(j * t + b)] = tmp[numba.uint64(src + b)]
        bottom = n_levels
        if tail:  # the two lowest levels: subtrees of 2 and 3 entries in one pass
            bottom = n_levels - 2
            qc = ptr[n_levels - 1]  # the next node of the last level
            for q in range(ptr[bottom], ptr[bottom + 1]):
                if d1[q] == 2:
                    _radix3(buf, off[q] * t, cs[qc], sn[qc], cs[q], sn[q])
                    qc += 1
                else:
                    _radix2_lanes(buf, off[q] * t, cs[q], sn[q])
        _tile_levels(buf, t, off, d1, d2, ptr, cs, sn, pairs, bottom)
    return buf, tmp


@numba.njit(cache=True, nogil=True)
def _rotate_rows_tiled(
    X, out, off, d1, d2, ptr, cos, sin, perms, tile, tail
):  # pragma: no cover - compiled
    """:func:`_rotate_rows` on ``tile`` rows at a time, stored transposed (d x tile), so
    every Givens rotation is a contiguous loop over the rows of the tile
    (:func:`_butterflies_tile`), the last permutation folded into the store. The same
    operations per entry in the same order, hence the same bits."""
    n, d = X.shape
    pairs = _level_pairs(off, d1, d2, ptr)
    buf = np.zeros(d * tile, dtype=X.dtype)
    tmp = np.zeros(d * tile, dtype=X.dtype)
    last = perms[perms.shape[0] - 1]
    for r0 in range(0, n, tile):
        nb = min(tile, n - r0)
        res, other = _butterflies_tile(
            X, r0, nb, buf, tmp, tile, off, d1, d2, ptr, cos, sin, perms, pairs, tail
        )
        buf, tmp = res, other
        # row by row over blocks of columns: each line of ``out`` written whole at once
        # (the rows of a tile can share cache sets: d = 3072 is 6 x 4 KiB)
        for j0 in range(0, d, STORE_BLOCK):
            j1 = min(d, j0 + STORE_BLOCK)
            src = last[j0:j1]
            for b in range(nb):
                row = out[r0 + b, j0:j1]
                for j in range(j1 - j0):  # unsigned indices: no wraparound tests
                    row[j] = res[numba.uint64(src[j] * tile + b)]


@numba.njit(cache=True, nogil=True)
def _rotate_simplex_tiled(
    X, out, lo, radii, reflect, off, d1, d2, ptr, cos, sin, perms, tile, tail
):  # pragma: no cover - compiled
    """:func:`_rotate_rows_tiled` with :func:`_simplex_into` fused into its store: the
    rotated tile (read through the last permutation) goes straight to the scaled
    simplex products out[:, lo:], U never written. The same operations per entry in
    the same order as the two kernels one after the other, hence the same bits."""
    n, d = X.shape
    pairs = _level_pairs(off, d1, d2, ptr)
    buf = np.zeros(d * tile, dtype=X.dtype)
    tmp = np.zeros(d * tile, dtype=X.dtype)
    last = perms[perms.shape[0] - 1]
    c = _simplex_coefficients(d)
    acc = np.zeros(tile)
    p = d + 1
    for r0 in range(0, n, tile):
        nb = min(tile, n - r0)
        res, other = _butterflies_tile(
            X, r0, nb, buf, tmp, tile, off, d1, d2, ptr, cos, sin, perms, pairs, tail
        )
        buf, tmp = res, other
        for b in range(nb):
            acc[b] = 0.0
        for i in range(d):
            src = last[i] * tile
            ci = c[i]
            ri = radii[i]
            for b in range(nb):  # unsigned indices: no wraparound tests
                rv = ci * res[numba.uint64(src + b)]
                v = (acc[b] + rv * (d - i)) * ri
                out[numba.uint64(r0 + b), numba.uint64(lo + i)] = v
                if reflect:
                    out[numba.uint64(r0 + b), numba.uint64(lo + p + i)] = -v
                acc[b] -= rv
        for b in range(nb):
            v = acc[b] * radii[d]
            out[r0 + b, lo + d] = v
            if reflect:
                out[r0 + b, lo + p + d] = -v


class Butterfly:
    """Q = B_1 P_1 B_2 P_2 ... B_m P_m: random butterflies B_k and permutations P_k.

    Each B_k has d - 1 angles drawn uniformly from [0, 2 pi) (Genz 1998); the
    random permutations P_k mix coordinates between the butterflies' blocks.
    Storage is O(m d) (angles and permutations); applying Q or Q^T to a vector
    costs O(m d log d). The code published with Munkhoeva et al. (2018) used
    (B P)^3 with one B and one P; here the m factors are independent.
    """

    def __init__(self, d: int, n_factors: int, rng: np.random.Generator) -> None:
        self.d = int(d)
        self.n_factors = int(n_factors)
        theta = rng.uniform(0.0, 2.0 * np.pi, size=(self.n_factors, max(self.d - 1, 0)))
        self.cos = np.cos(theta)
        self.sin = np.sin(theta)
        self.perms = np.stack([rng.permutation(self.d) for _ in range(self.n_factors)])

    def rotate_rows(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Return X @ Q, i.e. Q^T x = P_m^T B_m^T ... P_1^T B_1^T x for every row x."""
        off, d1, d2, ptr = butterfly_plan(self.d)
        X = np.ascontiguousarray(X)
        if out is None:
            out = np.empty_like(X)
        dt = X.dtype
        args = (
            off,
            d1,
            d2,
            ptr,
            self.cos.astype(dt, copy=False),
            self.sin.astype(dt, copy=False),
            self.perms,
        )
        if len(X) >= 4:  # below, the per-row kernel wastes less on empty lanes
            _rotate_rows_tiled(X, out, *args, butterfly_tile(self.d), butterfly_tail(self.d))
        else:
            _rotate_rows(X, out, *args)
        return out

    def simplex_into(
        self, X: np.ndarray, out: np.ndarray, lo: int, radii: np.ndarray, reflect: bool
    ) -> None:
        """:func:`simplex_into` of ``rotate_rows(X)``, the same numbers bit for bit; for
        4 rows or more in one fused pass (the rotated rows go from the tile to the
        simplex products, never stored)."""
        X = np.ascontiguousarray(X)
        if len(X) < 4:
            simplex_into(self.rotate_rows(X), out, lo, radii, reflect)
            return
        dt = X.dtype
        _rotate_simplex_tiled(
            X,
            out,
            lo,
            np.asarray(radii, dtype=np.float64),
            bool(reflect),
            *butterfly_plan(self.d),
            self.cos.astype(dt, copy=False),
            self.sin.astype(dt, copy=False),
            self.perms,
            butterfly_tile(self.d),
            butterfly_tail(self.d),
        )

    def matrix(self) -> np.ndarray:
        """The dense d x d matrix Q (for tests and inspection only)."""
        return self.rotate_rows(np.eye(self.d))


def butterfly_factor_matrix(
    d: int, cos: np.ndarray, sin: np.ndarray, plan: tuple[np.ndarray, ...] | None = None
) -> np.ndarray:
    """Dense B for one butterfly, built node by node from Givens rotations (for tests),
    on ``plan`` (off, d1, d2, ptr; :func:`butterfly_plan`'s if None)."""
    off, d1, d2, ptr = butterfly_plan(d) if plan is None else plan
    B = np.eye(d)
    # a vector sees the top level first: B = L_last ... L_1 L_0
    for lv in range(len(ptr) - 1):
        G = np.eye(d)
        for q in range(ptr[lv], ptr[lv + 1]):
            for i in range(d2[q]):
                a, b = off[q] + i, off[q] + d1[q] + i
                G[a, a] = cos[q]
                G[a, b] = -sin[q]
                G[b, a] = sin[q]
                G[b, b] = cos[q]
        B = G @ B
    return B


# ------------------------------------------------------------------------ Simplex
def simplex_vertices(d: int) -> np.ndarray:
    """The d x (d + 1) matrix V whose columns are the unit vertices of a regular simplex.

    v_j . v_k = -1/d for j != k and sum_j v_j = 0 (Genz & Monahan 1998): column j
    has entries -c_i above the diagonal (i < j) and (d - j) c_j on it, with
    c_i = sqrt((d + 1) / ((d - i) d (d - i + 1))) (0-based i).
    """
    return simplex_rows(np.eye(d))


@numba.njit(cache=True, nogil=True)
def _simplex_coefficients(d):  # pragma: no cover - compiled
    """c_i = sqrt((d + 1) / ((d - i) d (d - i + 1))) of :func:`simplex_vertices`."""
    c = np.empty(d)
    for i in range(d):
        c[i] = np.sqrt((d + 1.0) / ((d - i) * d * (d - i + 1.0)))
    return c


@numba.njit(cache=True, nogil=True)
def _simplex_into(U, out, lo, radii, reflect):  # pragma: no cover
    n, d = U.shape
    c = _simplex_coefficients(d)
    p = d + 1
    for r in range(n):
        acc = 0.0
        for i in range(d):
            rv = c[i] * U[r, i]
            v = (acc + rv * (d - i)) * radii[i]
            out[r, lo + i] = v
            if reflect:
                out[r, lo + p + i] = -v
            acc -= rv
        v = acc * radii[d]
        out[r, lo + d] = v
        if reflect:
            out[r, lo + p + d] = -v


def simplex_into(U: np.ndarray, out: np.ndarray, lo: int, radii: np.ndarray, reflect: bool) -> None:
    """Write rho_j v_j . u (and, with ``reflect``, -rho_j v_j . u) into out[:, lo:].

    Columns lo .. lo + d hold the d + 1 scaled vertex products, followed by their
    negatives when ``reflect``; one fused O(N d) pass, no temporaries.
    """
    _simplex_into(
        np.ascontiguousarray(U), out, lo, np.asarray(radii, dtype=np.float64), bool(reflect)
    )


def simplex_rows(U: np.ndarray) -> np.ndarray:
    """Return U @ V (N x (d + 1)): the inner products v_j . u for every row u, in O(N d)
    (:func:`simplex_into` with unit radii)."""
    N, d = U.shape
    out = np.empty((N, d + 1), dtype=U.dtype)
    simplex_into(U, out, 0, np.ones(d + 1), False)
    return out
