"""kernelbench.transforms: the butterflies' tiled and fused kernels and the regular simplex
(Munkhoeva et al. 2018, Sec. 2.4; Genz & Monahan 1998), on the tree shapes and row
counts the mutation run (docs/mutation.md) found unchecked by tests/test_transforms.py.

The oracles: the row-by-row rotation (``_rotate_rows``, one row, one factor, one level
at a time), which the tiled kernels promise to equal bit for bit; the dense product of
Givens rotations and permutation matrices; the simplex written out entry by entry and
its defining properties (unit vertices, inner products -1/d, centred). Small inputs: the
mutation run executes the numba kernels as Python (NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kernelbench.transforms import (
    Butterfly,
    _rotate_rows_tiled,
    butterfly_plan,
    butterfly_tail,
    simplex_into,
    simplex_rows,
    simplex_vertices,
)
from tests.test_butterfly_mutants import dense_q, row_by_row

# One d per shape of the tree's levels that the tiled kernel treats differently: the
# radix-8 pass at the top level (8, 24, 64) or lower (16, 32, 48, 64), a radix-4 pass
# (4, 20, 32), single levels only (2, 7, 13), the fused lowest levels of 2 and 3
# entries (3, 9, 17, 20, 24, 48), several blocks of stored columns (d > 8).
TREE_DIMS = [2, 3, 4, 7, 8, 9, 13, 16, 17, 20, 24, 32, 48, 64]


def _dense_simplex(d: int) -> np.ndarray:
    """V (d x (d + 1)): column j has -c_i above the diagonal, (d - j) c_j on it."""
    V = np.zeros((d, d + 1))
    for j in range(d + 1):
        for i in range(min(j + 1, d)):
            c = np.sqrt((d + 1.0) / ((d - i) * d * (d - i + 1.0)))
            V[i, j] = (d - i) * c if i == j else -c
    return V


@pytest.mark.parametrize("d", TREE_DIMS)
@pytest.mark.parametrize("n", [4, 35])
def test_tiled_rotation_is_bit_identical_to_row_by_row_on_every_tree_shape(d, n):
    """4 rows (one partial tile) and 35 (two full tiles and a partial one), three
    factors: the same bits as row by row, and X Q of the dense factors."""
    rng = np.random.default_rng(1000 * d + n)
    B = Butterfly(d, 3, rng)
    X = rng.standard_normal((n, d))
    got = B.rotate_rows(X)
    np.testing.assert_array_equal(got, row_by_row(B, X))
    np.testing.assert_allclose(got, X @ dense_q(B), rtol=0, atol=1e-12)


@pytest.mark.parametrize("d", [7, 12, 20])
def test_tiled_rotation_in_float32_is_bit_identical_and_stays_float32(d):
    rng = np.random.default_rng(d)
    B = Butterfly(d, 2, rng)
    X = rng.standard_normal((19, d)).astype(np.float32)
    got = B.rotate_rows(X)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, row_by_row(B, X))


@pytest.mark.parametrize("d", [8, 12, 13, 24])
@pytest.mark.parametrize("tile", [1, 3, 8])
def test_tiled_kernel_without_the_fused_tail_gives_the_same_bits_at_any_tile_width(d, tile):
    """The tile width changes only how many rows share a pass (the fused lowest levels
    aside, which are written for BUTTERFLY_TILE lanes and refuse any other width)."""
    rng = np.random.default_rng(d + tile)
    B = Butterfly(d, 3, rng)
    X = rng.standard_normal((10, d))
    off, d1, d2, ptr = butterfly_plan(d)
    out = np.full_like(X, np.nan)
    _rotate_rows_tiled(X, out, off, d1, d2, ptr, B.cos, B.sin, B.perms, tile, False)
    np.testing.assert_array_equal(out, row_by_row(B, X))
    if butterfly_tail(d):
        with pytest.raises(
            ValueError, match=r"^the fused lowest levels need tiles of BUTTERFLY_TILE rows$"
        ):
            _rotate_rows_tiled(X, out, off, d1, d2, ptr, B.cos, B.sin, B.perms, tile, True)


def test_rotate_rows_writes_into_a_given_output_and_returns_it():
    rng = np.random.default_rng(5)
    B = Butterfly(9, 3, rng)
    for n in (2, 4, 17):
        X = np.asfortranarray(rng.standard_normal((n, 9)))  # not C-contiguous
        out = np.full((n, 9), np.nan)
        assert B.rotate_rows(X, out=out) is out
        np.testing.assert_array_equal(out, row_by_row(B, np.ascontiguousarray(X)))


@pytest.mark.parametrize("d", [1, 2, 3, 4, 8, 9, 16, 17])
@pytest.mark.parametrize("n", [4, 35, 1061])
@pytest.mark.parametrize("reflect", [False, True])
def test_fused_simplex_is_bit_identical_to_rotation_then_simplex(d, n, reflect):
    """Butterfly.simplex_into writes simplex_into of the row-by-row rotation, bit for
    bit, in columns lo .. lo + d (+ their negatives after them with ``reflect``) and
    nothing else; the values are rho_j v_j . (Q^T x)."""
    rng = np.random.default_rng(100 * d + n + reflect)
    B = Butterfly(d, 3, rng)
    X = rng.standard_normal((n, d))
    radii = rng.uniform(0.5, 2.0, d + 1)
    lo, p = 3, d + 1
    width = lo + p * (2 if reflect else 1) + 2
    ref = np.full((n, width), np.nan)
    simplex_into(row_by_row(B, X), ref, lo, radii, reflect)
    got = np.full_like(ref, np.nan)
    B.simplex_into(X, got, lo, radii, reflect)
    assert np.array_equal(got, ref, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(ref))
    want = (X @ dense_q(B) @ _dense_simplex(d)) * radii
    np.testing.assert_allclose(got[:, lo : lo + p], want, rtol=0, atol=1e-12)
    if reflect:
        np.testing.assert_array_equal(got[:, lo + p : lo + 2 * p], -got[:, lo : lo + p])
    assert np.isnan(np.delete(got, np.r_[lo : lo + p * (2 if reflect else 1)], axis=1)).all()


@pytest.mark.parametrize("d", [1, 2, 5, 9])
@pytest.mark.parametrize("reflect", [False, True])
def test_simplex_into_writes_the_scaled_vertex_products_and_their_negatives(d, reflect):
    """out[:, lo + j] = rho_j v_j . u, and with ``reflect`` out[:, lo + d + 1 + j] = its
    negative (the same bits, sign flipped); nothing else written."""
    rng = np.random.default_rng(d + 10 * reflect)
    U = rng.standard_normal((3, d))
    radii = rng.uniform(0.5, 2.0, d + 1)
    lo, p = 2, d + 1
    width = lo + p * (2 if reflect else 1) + 1
    out = np.full((3, width), np.nan)
    simplex_into(U, out, lo, radii, reflect)
    np.testing.assert_allclose(out[:, lo : lo + p], U @ _dense_simplex(d) * radii, atol=1e-12)
    if reflect:
        np.testing.assert_array_equal(out[:, lo + p : lo + 2 * p], -out[:, lo : lo + p])
    assert np.isnan(np.delete(out, np.r_[lo : lo + p * (2 if reflect else 1)], axis=1)).all()


@pytest.mark.parametrize("d", [1, 2, 3, 4, 7])
def test_simplex_vertices_are_a_centred_regular_simplex_of_unit_vectors(d):
    """d + 1 unit columns, v_j . v_k = -1/d for j != k, sum_j v_j = 0; simplex_rows is
    U V with d + 1 columns."""
    V = simplex_vertices(d)
    assert V.shape == (d, d + 1)
    G = V.T @ V
    np.testing.assert_allclose(np.diag(G), 1.0, rtol=0, atol=1e-13)
    np.testing.assert_allclose(G[~np.eye(d + 1, dtype=bool)], -1.0 / d, rtol=0, atol=1e-13)
    np.testing.assert_allclose(V.sum(axis=1), 0.0, rtol=0, atol=1e-13)
    U = np.random.default_rng(d).standard_normal((4, d))
    R = simplex_rows(U)
    assert R.shape == (4, d + 1) and R.dtype == U.dtype
    np.testing.assert_allclose(R, U @ V, rtol=0, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 9])
@pytest.mark.parametrize("m", [1, 3])
def test_a_butterfly_stores_one_angle_per_node_and_m_permutations(d, m):
    """Each B_k has d - 1 angles, one per internal node of the tree (cos^2 + sin^2 = 1),
    and each P_k is a permutation of the d coordinates: O(m d) storage."""
    B = Butterfly(d, m, np.random.default_rng(d + m))
    assert B.d == d and B.n_factors == m
    assert B.cos.shape == B.sin.shape == (m, d - 1) == (m, len(butterfly_plan(d)[0]))
    np.testing.assert_allclose(B.cos**2 + B.sin**2, 1.0, atol=1e-15)
    assert B.perms.shape == (m, d)
    assert all(np.array_equal(np.sort(P), np.arange(d)) for P in B.perms)


def test_butterfly_angles_are_uniform_on_the_circle():
    """Genz (1998): every angle uniform on [0, 2 pi). 2000 angles; KS test."""
    B = Butterfly(1001, 2, np.random.default_rng(0))
    theta = np.mod(np.arctan2(B.sin, B.cos), 2 * np.pi).ravel()
    assert stats.kstest(theta, stats.uniform(0, 2 * np.pi).cdf).pvalue > 1e-3
    # the test can fail: angles from [1, 2 pi), or from [0, 3 pi) wrapped, are rejected
    wrong = np.random.default_rng(0).uniform(1.0, 2 * np.pi, 2000)
    assert stats.kstest(wrong, stats.uniform(0, 2 * np.pi).cdf).pvalue < 1e-6
    wrapped = np.mod(np.random.default_rng(0).uniform(0.0, 3 * np.pi, 2000), 2 * np.pi)
    assert stats.kstest(wrapped, stats.uniform(0, 2 * np.pi).cdf).pvalue < 1e-6
