"""Structured transforms: orthogonality and fast == dense."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy import stats

from kernelbench.transforms import (
    Butterfly,
    HouseholderProduct,
    WideReflectors,
    butterfly_factor_matrix,
    butterfly_plan,
    fwht_rows,
    haar_orthogonal,
    hd_blocks_rows,
    next_pow2,
    scale_columns_into,
    simplex_rows,
    simplex_vertices,
)

DIMS = [1, 2, 3, 5, 16, 100, 784]


def dense_simplex(d: int) -> np.ndarray:
    """Regular simplex written out entry by entry (independent of simplex_rows)."""
    V = np.zeros((d, d + 1))
    for j in range(d + 1):
        for i in range(d):
            c = np.sqrt((d + 1.0) / ((d - i) * d * (d - i + 1.0)))
            if i < j:
                V[i, j] = -c
            elif i == j:
                V[i, j] = (d - i) * c
    return V


@pytest.mark.parametrize("d", DIMS)
def test_haar_is_orthogonal(d):
    Q = haar_orthogonal(np.random.default_rng(d), d)
    np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-10)
    np.testing.assert_allclose(Q @ Q.T, np.eye(d), atol=1e-10)


def test_haar_sign_correction_gives_uniform_diagonal():
    # Without the sign correction numpy's QR has a biased diagonal: E[Q_11] != 0.
    rng = np.random.default_rng(0)
    diag = np.array([haar_orthogonal(rng, 3)[0, 0] for _ in range(4000)])
    assert abs(diag.mean()) < 4 * diag.std() / np.sqrt(diag.size)


@pytest.mark.parametrize("d", DIMS)
def test_butterfly_orthogonal_and_fast_equals_dense(d):
    rng = np.random.default_rng(d)
    B = Butterfly(d, 3, rng)
    Q_fast = B.matrix()
    np.testing.assert_allclose(Q_fast.T @ Q_fast, np.eye(d), atol=1e-10)
    # Dense product of Givens factors and permutation matrices, built independently.
    Q = np.eye(d)
    for k in range(3):
        Bk = butterfly_factor_matrix(d, B.cos[k], B.sin[k])
        Pk = np.eye(d)[:, B.perms[k]]
        Q = Q @ Bk @ Pk
    np.testing.assert_allclose(Q_fast, Q, atol=1e-12)
    X = rng.standard_normal((9, d))
    np.testing.assert_allclose(B.rotate_rows(X), X @ Q, atol=1e-12)
    np.testing.assert_allclose(B.rotate_rows(X.astype(np.float32)), X @ Q, atol=1e-4)
    assert B.rotate_rows(X.astype(np.float32)).dtype == np.float32


def test_butterfly_matches_paper_example_d4():
    """Munkhoeva et al. (2018), Sec. 2.4: the explicit 4 x 4 butterfly."""
    th = np.array([0.3, 1.1, 2.5])  # node 0 = top (theta_2), 1 = left (theta_1), 2 = right
    c, s = np.cos(th), np.sin(th)
    c1, s1, c2, s2, c3, s3 = c[1], s[1], c[0], s[0], c[2], s[2]
    paper = np.array(
        [
            [c1 * c2, -s1 * c2, -c1 * s2, s1 * s2],
            [s1 * c2, c1 * c2, -s1 * s2, -c1 * s2],
            [c3 * s2, -s3 * s2, c3 * c2, -s3 * c2],
            [s3 * s2, c3 * s2, s3 * c2, c3 * c2],
        ]
    )
    np.testing.assert_allclose(butterfly_factor_matrix(4, c, s), paper, atol=1e-15)


@pytest.mark.parametrize("d", [2, 3, 7, 16, 100, 784, 7129])
def test_butterfly_plan_has_d_minus_1_angles_and_log_depth(d):
    off, d1, d2, ptr = butterfly_plan(d)
    assert len(off) == d - 1  # one angle per internal node of the tree
    assert len(ptr) - 1 == int(np.ceil(np.log2(d)))
    assert d2[0] == d // 2 and d1[0] == (d + 1) // 2
    for lv in range(len(ptr) - 1):  # the pairs of a level are disjoint
        idx = np.concatenate(
            [
                np.r_[o : o + b]
                for q, o in enumerate(off[ptr[lv] : ptr[lv + 1]], ptr[lv])
                for b in (d2[q],)
            ]
            + [
                np.r_[o + d1[q] : o + d1[q] + d2[q]]
                for q, o in enumerate(off[ptr[lv] : ptr[lv + 1]], ptr[lv])
            ]
        )
        assert len(np.unique(idx)) == len(idx)


@pytest.mark.parametrize("m", [1, 2, 4, 16, 128, 1024])
def test_fwht_equals_dense_hadamard_and_is_orthogonal(m):
    rng = np.random.default_rng(m)
    X = rng.standard_normal((5, m))
    H = scipy.linalg.hadamard(m) / np.sqrt(m)
    np.testing.assert_allclose(fwht_rows(X), X @ H.T, atol=1e-12)
    Hf = fwht_rows(np.eye(m))
    np.testing.assert_allclose(Hf @ Hf.T, np.eye(m), atol=1e-10)


def test_fwht_rejects_non_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        fwht_rows(np.ones((2, 6)))


def test_next_pow2():
    assert [next_pow2(d) for d in (1, 2, 3, 4, 5, 784, 1024, 7129)] == [
        1,
        2,
        4,
        4,
        8,
        1024,
        1024,
        8192,
    ]


@pytest.mark.parametrize("d", DIMS)
def test_simplex_properties_and_fast_product(d):
    V = simplex_vertices(d)
    np.testing.assert_allclose(V, dense_simplex(d), atol=1e-14)
    G = V.T @ V
    np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-12)
    off = G[~np.eye(d + 1, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / d, atol=1e-12)
    np.testing.assert_allclose(V.sum(axis=1), 0.0, atol=1e-12)
    # tight frame: V V^T = (d + 1) / d I (what makes the (3,3) rule exact on quadratics)
    np.testing.assert_allclose(V @ V.T, (d + 1) / d * np.eye(d), atol=1e-10)
    U = np.random.default_rng(d).standard_normal((11, d))
    np.testing.assert_allclose(simplex_rows(U), U @ dense_simplex(d), atol=1e-12)


# -------------------------------------------------------------------- Householder
SHAPES = [(1, 1), (2, 2), (5, 5), (70, 70), (100, 37), (37, 37), (33, 1), (64, 64)]


@pytest.mark.parametrize(("m", "k"), SHAPES)
@pytest.mark.parametrize("panel", [1, 3, 32])
def test_householder_product_is_orthogonal(m, k, panel):
    hp = HouseholderProduct.gaussian(np.random.default_rng(m + k), m, k, panel=panel)
    Q = hp.matrix()
    np.testing.assert_allclose(Q.T @ Q, np.eye(m), atol=1e-10)
    np.testing.assert_allclose(Q @ Q.T, np.eye(m), atol=1e-10)
    assert sum(V.shape[1] for _, V, _ in hp.panels) == k == len(hp.beta)
    # packed: the reflectors only, never an m x m array
    assert all(V.shape == (m - off, min(panel, k - off)) for off, V, _ in hp.panels)


@pytest.mark.parametrize(("m", "k"), SHAPES)
@pytest.mark.parametrize("panel", [1, 3, 32])
def test_householder_product_equals_the_dense_q_it_represents(m, k, panel):
    """From LAPACK's dgeqrf reflectors: the blocked product is numpy's (LAPACK's) Q,
    applied both ways, in float64 and float32, and beta is R's diagonal."""
    rng = np.random.default_rng(10 * m + k)
    G = rng.standard_normal((m, k))
    qr, tau, _, info = scipy.linalg.lapack.dgeqrf(G)
    assert info == 0
    hp = HouseholderProduct.from_qr(qr, tau, panel=panel)
    Q, R = np.linalg.qr(G, mode="complete")
    np.testing.assert_allclose(hp.matrix(), Q, atol=1e-12)
    np.testing.assert_allclose(hp.beta, np.diag(R)[:k], rtol=1e-12)
    X = rng.standard_normal((9, m))
    np.testing.assert_allclose(hp.apply_rows(X), X @ Q.T, atol=1e-12)
    np.testing.assert_allclose(hp.apply_rows(X, transpose=True), X @ Q, atol=1e-12)
    X32 = X.astype(np.float32)
    got = hp.apply_rows(X32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, X @ Q.T, atol=1e-4)


@pytest.mark.parametrize(("m", "k"), SHAPES)
@pytest.mark.parametrize("panel", [1, 3, 32])
def test_householder_reduced_rows_are_the_first_columns_of_q(m, k, panel):
    """reduced_rows (the panels' GEMMs on the identity's reachable part) is Q[:, :k]^T,
    as dorgqr's reduced() and the dense Q give it."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(m * k), m, k, panel=panel)
    R = hp.reduced_rows()
    assert R.shape == (k, m) and R.flags.c_contiguous
    np.testing.assert_allclose(R, hp.reduced().T, atol=1e-13)
    np.testing.assert_allclose(R, hp.matrix()[:, :k].T, atol=1e-13)


def test_householder_draws_do_not_depend_on_the_panel_size():
    a = HouseholderProduct.gaussian(np.random.default_rng(3), 50, 40, panel=7)
    b = HouseholderProduct.gaussian(np.random.default_rng(3), 50, 40, panel=64)
    np.testing.assert_array_equal(a.beta, b.beta)
    np.testing.assert_allclose(a.matrix(), b.matrix(), atol=1e-13)


def test_householder_from_gaussian_vectors_has_the_law_of_the_dense_qr():
    """Stewart (1980): reflectors from fresh Gaussian vectors give Q and diag R the law
    of numpy's QR of a Gaussian matrix, LAPACK's signs included (KS tests, R = 3000).
    The sign-corrected product has the Haar law of haar_orthogonal."""
    rng = np.random.default_rng(0)
    m, k, R = 6, 4, 3000
    ours = [HouseholderProduct.gaussian(rng, m, k, panel=3) for _ in range(R)]
    dense = [np.linalg.qr(rng.standard_normal((m, k)), mode="complete") for _ in range(R)]
    Qo = np.stack([h.matrix()[:, :k] for h in ours])
    Qd = np.stack([q[:, :k] for q, _ in dense])
    Bo = np.stack([h.beta for h in ours])
    Bd = np.stack([np.diag(r)[:k] for _, r in dense])
    for i, j in [(0, 0), (1, 0), (2, 1), (5, 3), (3, 3)]:
        assert stats.ks_2samp(Qo[:, i, j], Qd[:, i, j]).pvalue > 1e-3, (i, j)
    for j in range(k):
        assert stats.ks_2samp(Bo[:, j], Bd[:, j]).pvalue > 1e-3, j
    assert np.all(Qo[:, 0, 0] < 0) and np.all(Qd[:, 0, 0] < 0)  # LAPACK: Q_11 < 0
    # the test can fail: an entry of another law (LAPACK's Q_11 < 0 vs symmetric Q_21)
    assert stats.ks_2samp(Qo[:, 0, 0], Qd[:, 1, 0]).pvalue < 1e-6
    haar = np.stack([h.matrix()[:, :k] * h.r_signs[None, :] for h in ours[:1500]])
    ref = np.stack([haar_orthogonal(rng, m)[:, :k] for _ in range(1500)])
    for i, j in [(0, 0), (4, 2)]:
        assert stats.ks_2samp(haar[:, i, j], ref[:, i, j]).pvalue > 1e-3


@pytest.mark.parametrize("d", [1, 3, 5, 12, 16, 100, 96, 384, 257, 784, 3072])
@pytest.mark.parametrize("n", [1, 5, 16, 37])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_butterfly_tiled_rows_are_bit_identical_to_row_by_row(d, n, dtype):
    """Rotating a tile of rows at once, three or two levels per pass where the tree
    allows (d = 12, 16, 96, 384, 3072: balanced levels; 100, 257, 784: some), the two
    lowest levels in one pass where they are nodes of 2 and 3 (d = 3, 5, 12, 96, 257,
    384, 3072), changes the speed, not the bits."""
    from kernelbench.transforms import _rotate_rows

    rng = np.random.default_rng(d + n)
    B = Butterfly(d, 3, rng)
    X = rng.standard_normal((n, d)).astype(dtype)
    ref = np.empty_like(X)
    off, d1, d2, ptr = butterfly_plan(d)
    _rotate_rows(X, ref, off, d1, d2, ptr, B.cos.astype(dtype), B.sin.astype(dtype), B.perms)
    np.testing.assert_array_equal(B.rotate_rows(X), ref)


@pytest.mark.parametrize("d", [1, 2, 12, 96, 100, 257])
@pytest.mark.parametrize("n", [3, 5, 16, 37])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reflect", [False, True])
def test_butterfly_fused_simplex_is_bit_identical_to_rotation_then_simplex(d, n, dtype, reflect):
    """Butterfly.simplex_into (the rotated tile read through the last permutation
    straight into the simplex products) writes what the row-by-row rotation followed
    by simplex_into writes, bit for bit, and nothing outside its columns."""
    from kernelbench.transforms import _rotate_rows, simplex_into

    rng = np.random.default_rng(d * n)
    B = Butterfly(d, 3, rng)
    X = rng.standard_normal((n, d)).astype(dtype)
    radii = rng.uniform(0.5, 2.0, d + 1)
    U = np.empty_like(X)
    off, d1, d2, ptr = butterfly_plan(d)
    _rotate_rows(X, U, off, d1, d2, ptr, B.cos.astype(dtype), B.sin.astype(dtype), B.perms)
    width = 2 + (d + 1) * (2 if reflect else 1) + 3
    ref = np.full((n, width), np.nan, dtype=dtype)
    simplex_into(U, ref, 2, radii, reflect)
    got = np.full_like(ref, np.nan)
    B.simplex_into(X, got, 2, radii, reflect)
    assert np.array_equal(got, ref, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(ref))


def _fwht_stagewise(X: np.ndarray) -> np.ndarray:
    """The textbook radix-2 FWHT, stage h = 1, 2, 4, ... at a time (numpy; unnormalised)."""
    Y = np.array(X, dtype=X.dtype, copy=True)
    m = Y.shape[1]
    h = 1
    while h < m:
        Z = Y.reshape(len(Y), m // (2 * h), 2, h)
        a, b = Z[:, :, 0, :].copy(), Z[:, :, 1, :].copy()
        Z[:, :, 0, :] = a + b
        Z[:, :, 1, :] = a - b
        h *= 2
    return Y


@pytest.mark.parametrize("m", [1, 2, 4, 8, 16, 32, 64, 512, 4096])
@pytest.mark.parametrize("rows", [3, 21])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fwht_same_bits_as_stagewise(m, rows, dtype):
    """The fused stages (radix 8, then radix 4; for 4 rows or more on tiles of rows,
    radix 8 and the one or two stages left) do every entry's additions in the
    stage-by-stage order: equal bit for bit, not only up to rounding."""
    X = np.random.default_rng(m).standard_normal((rows, m)).astype(dtype)
    ref = _fwht_stagewise(X) * dtype(1.0 / np.sqrt(m))
    out = fwht_rows(X)
    assert out.dtype == dtype
    assert np.array_equal(out, ref) and np.array_equal(np.signbit(out), np.signbit(ref))


@pytest.mark.parametrize(
    ("d", "n_stack", "k", "D"),
    [(1, 1, 3, 1), (5, 2, 3, 13), (100, 3, 2, 300), (30, 2, 3, 40), (600, 2, 3, 1201)],
)
@pytest.mark.parametrize("rows", [3, 7, 37])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hd_blocks_rows_same_bits_as_blockwise(d, n_stack, k, D, rows, dtype):
    """One fused pass per row (3 rows), or per tile of rows with the normalisation and
    the next sign diagonal folded into the next transform's first stages (7, 37 rows),
    equals zero-padding, D_k, H, ..., D_1, H block by block (each H normalised, then
    sqrt(m)) bit for bit, signed zeros included."""
    rng = np.random.default_rng(d)
    m = next_pow2(d)
    X = rng.standard_normal((rows, d)).astype(dtype)
    X[0, 0] = -0.0
    signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=(n_stack, k, m))
    ref = np.empty((rows, D), dtype=dtype)
    for b in range(n_stack):
        Y = np.zeros((rows, m), dtype=dtype)
        Y[:, :d] = X
        for s in signs[b][::-1]:
            Y *= s.astype(dtype)[None, :]
            Y = _fwht_stagewise(Y) * dtype(1.0 / np.sqrt(m))
        lo, hi = b * m, min(D, (b + 1) * m)
        ref[:, lo:hi] = Y[:, : hi - lo] * dtype(np.sqrt(m))
    out = hd_blocks_rows(X, signs, D)
    assert out.dtype == dtype
    assert np.array_equal(out, ref) and np.array_equal(np.signbit(out), np.signbit(ref))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, r", [(1, 1), (5, 33), (64, 32), (97, 70), (0, 3), (3, 0)])
def test_scale_columns_into_is_the_product_whatever_the_layouts(n, r, dtype):
    """out = Y diag(s) bit for bit: Y in F order into a row-major slice (the tiled
    transposing kernel, tiles of 32 cut across both edges) and every other layout."""
    rng = np.random.default_rng(n * 100 + r)
    Y = np.asfortranarray(rng.standard_normal((n, r))).astype(dtype, order="F")
    s = rng.standard_normal(r) * 3.0
    expected = Y * s.astype(dtype)[None, :]
    for Yl in (Y, np.ascontiguousarray(Y)):
        big = np.full((n, r + 7), np.nan, dtype=dtype)
        out = scale_columns_into(Yl, s, big[:, 2 : 2 + r])
        assert out.dtype == dtype
        assert np.array_equal(big[:, 2 : 2 + r], expected)
        assert np.isnan(big[:, :2]).all() and np.isnan(big[:, 2 + r :]).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows", [3, 257, 300])
def test_wide_reflectors_col_scale_is_q_times_the_scaled_rows(rows, dtype):
    """apply_rows(X, col_scale=s) = apply_rows(X diag(s)) bit for bit (a +-1 scale, as
    orf's sign correction, and a general one), in both layouts (rows <= 256 in BLAS's
    N dimension, more in M) and the GEMM-only one; the input is left unchanged."""
    rng = np.random.default_rng(rows)
    hp = HouseholderProduct.gaussian(rng, 300)
    W = WideReflectors.of(hp)
    X = rng.standard_normal((rows, 300)).astype(dtype)
    X0 = X.copy()
    for s in (np.sign(rng.standard_normal(300)), rng.uniform(0.5, 2.0, 300)):
        for gemm_only in (False, True):
            got = W.apply_rows(X, gemm_only=gemm_only, col_scale=s)
            want = W.apply_rows(X * s.astype(dtype)[None, :], gemm_only=gemm_only)
            assert got.dtype == dtype and np.array_equal(got, want)
        got = hp.apply_rows(X, col_scale=s)
        assert np.array_equal(got, hp.apply_rows(X * s.astype(dtype)[None, :]))
    assert np.array_equal(X, X0)
