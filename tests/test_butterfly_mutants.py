"""The butterfly rotations of sr33 (Munkhoeva et al. 2018, Sec. 3), checked against
references built here: the halving tree of the plan, dense Givens products, and the
level-by-level rotations that every fused kernel promises to reproduce bit for bit.

Small inputs throughout (d <= 64, a few rows): these tests also run with numba's JIT
off, where the kernels are plain Python.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernelbench.transforms import (
    BUTTERFLY_TILE,
    BUTTERFLY_TILE_MAX,
    Butterfly,
    _level_pairs,
    _radix2,
    _radix2_lanes,
    _radix3,
    _radix4,
    _radix8,
    _rotate_rows,
    butterfly_factor_matrix,
    butterfly_plan,
    butterfly_tail,
    butterfly_tile,
)

#: every size up to 33 (odd, even, powers of two, 3 x 2^k), and a few larger ones
#: with three balanced levels (48, 64) or unbalanced ones (40, 57)
SIZES = [*range(1, 34), 40, 48, 57, 64]


def halving_tree(d: int) -> list[tuple[int, int, int, int]]:
    """The internal nodes (level, offset, d1, d2) of the butterfly's tree, depth first:
    a block of size >= 2 at offset o rotates (o + i, o + d1 + i), i < d2, with
    d1 = ceil(size / 2), d2 = floor(size / 2), and its halves are the blocks below."""
    nodes: list[tuple[int, int, int, int]] = []

    def visit(level: int, o: int, size: int) -> None:
        if size < 2:
            return
        h1, h2 = (size + 1) // 2, size // 2
        nodes.append((level, o, h1, h2))
        visit(level + 1, o, h1)
        visit(level + 1, o + h1, h2)

    visit(0, 0, d)
    return nodes


def reference_plan(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(offset, d1, d2, level_ptr) in level order, top first, left to right."""
    nodes = sorted(halving_tree(d))
    n_levels = max((lv + 1 for lv, *_ in nodes), default=0)
    ptr = [sum(1 for lv, *_ in nodes if lv < k) for k in range(n_levels + 1)]
    cols = [np.array([nd[i] for nd in nodes], dtype=np.int64) for i in (1, 2, 3)]
    return cols[0], cols[1], cols[2], np.array(ptr, dtype=np.int64)


def dense_q(B: Butterfly) -> np.ndarray:
    """Q = B_1 P_1 ... B_m P_m, P_k = I[:, perm_k]: rotate_rows(X) is X @ Q; each factor's
    Givens levels on the halving tree above (:func:`reference_plan`), not butterfly_plan's."""
    Q = np.eye(B.d)
    for k in range(B.n_factors):
        B_k = butterfly_factor_matrix(B.d, B.cos[k], B.sin[k], plan=reference_plan(B.d))
        Q = Q @ B_k @ np.eye(B.d)[:, B.perms[k]]
    return Q


def row_by_row(B: Butterfly, X: np.ndarray) -> np.ndarray:
    """The per-row kernel: factor by factor, level by level (the tiles' reference)."""
    out = np.empty_like(X)
    dt = X.dtype
    _rotate_rows(X, out, *butterfly_plan(B.d), B.cos.astype(dt), B.sin.astype(dt), B.perms)
    return out


@pytest.mark.parametrize("d", [*SIZES, 100, 257])
def test_the_plan_is_the_halving_tree_in_level_order(d):
    """Munkhoeva et al. (2018), Sec. 3: B = diag(B_1, B_2) R recursively; d - 1 angles
    over ceil(log2 d) levels, every coordinate at most once per level."""
    got = butterfly_plan(d)
    want = reference_plan(d)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w)
    off, d1, d2, ptr = got
    assert len(off) == max(d - 1, 0)
    assert len(ptr) - 1 == (math.ceil(math.log2(d)) if d > 1 else 0)


@pytest.mark.parametrize("d", SIZES)
def test_a_few_rows_rotate_by_the_dense_product_of_givens_factors(d):
    """Fewer than four rows go through the per-row kernel: X @ Q with Q the dense
    product of the Givens levels and the permutations, and Q orthogonal."""
    rng = np.random.default_rng(1000 + d)
    B = Butterfly(d, 3, rng)
    Q = dense_q(B)
    np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-12)
    for n in (1, 3):
        X = rng.standard_normal((n, d))
        np.testing.assert_allclose(B.rotate_rows(X), X @ Q, rtol=0, atol=1e-12)
    X = rng.standard_normal((3, d))
    np.testing.assert_allclose(row_by_row(B, X), X @ Q, rtol=0, atol=1e-12)


@pytest.mark.parametrize("d", SIZES)
@pytest.mark.parametrize(
    ("n", "dtype"),
    [(4, np.float64), (21, np.float64), (5, np.float32), (1061, np.float64), (1061, np.float32)],
)
def test_tiles_of_rows_give_the_row_by_row_bits(d, n, dtype):
    """Four rows or more go through tiles of butterfly_tile(d) rows (BUTTERFLY_TILE from
    d = 256 up and for the fused lowest levels, up to 512 at small d; 4, 21 = 16 + 5, 5
    and 1061 = 2 x 512 + 37 rows: partial tiles, full ones and a partial one after
    them, at every tile width), three levels per pass
    (radix 8) or two (radix 4) where the tree allows, the two lowest levels in one
    pass (radix 3) where they are nodes of 2 and 3: the same bits as row by row,
    which is X @ Q."""
    rng = np.random.default_rng(2000 + 7 * d + n)
    B = Butterfly(d, 3, rng)
    X = rng.standard_normal((n, d)).astype(dtype)
    ref = row_by_row(B, X)
    got = B.rotate_rows(X)
    assert got.dtype == dtype
    assert n < 1000 or butterfly_tile(d) == BUTTERFLY_TILE or n > 2 * butterfly_tile(d)
    np.testing.assert_array_equal(got, ref)
    assert np.array_equal(np.signbit(got), np.signbit(ref))
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(ref, X.astype(np.float64) @ dense_q(B), rtol=0, atol=tol)


def test_a_tile_is_a_power_of_two_rows_of_at_most_64_kib_per_buffer():
    """butterfly_tile(d): BUTTERFLY_TILE where the fused lowest levels need it, else the
    largest power of two <= 4096 / d within [BUTTERFLY_TILE, BUTTERFLY_TILE_MAX]."""
    for d in [*SIZES, 100, 256, 784, 1024, 3072]:
        t = butterfly_tile(d)
        if butterfly_tail(d):
            assert t == BUTTERFLY_TILE, d
            continue
        assert t & (t - 1) == 0 and BUTTERFLY_TILE <= t <= BUTTERFLY_TILE_MAX, (d, t)
        assert t == BUTTERFLY_TILE_MAX or t == BUTTERFLY_TILE or t * d <= 4096 < 2 * t * d
    assert [butterfly_tile(d) for d in (4, 8, 14, 16, 32, 64, 128, 256)] == [
        512,
        512,
        256,
        256,
        128,
        64,
        32,
        16,
    ]


@pytest.mark.parametrize("d", [*SIZES, 96, 100, 257, 384])
def test_radix4_pairs_are_the_levels_below_parents_of_a_multiple_of_four(d):
    """_level_pairs marks level lv (>= 1) when every node of level lv - 1 splits into
    two equal halves of even size 2m that split into m and m: in the halving tree,
    exactly when every node of level lv - 1 has a size divisible by 4."""
    nodes = halving_tree(d)
    n_levels = max((lv + 1 for lv, *_ in nodes), default=0)
    want = [
        lv > 0 and all((h1 + h2) % 4 == 0 for level, _, h1, h2 in nodes if level == lv - 1)
        for lv in range(n_levels)
    ]
    got = _level_pairs(*butterfly_plan(d))
    assert got.dtype == np.bool_
    assert got.tolist() == want


@pytest.mark.parametrize("d", [*SIZES, 96, 100, 257, 384])
def test_the_fused_tail_is_for_lowest_levels_of_nodes_of_2_and_3(d):
    """butterfly_tail(d): the last level's nodes have 2 entries (always) and the level
    above has nodes of 2 or 3 only. Level k's blocks have floor or ceil of d / 2^k
    entries, so with L = ceil(log2 d) levels: d >= 3 and d <= 3 x 2^(L - 2)
    (d = 3 x 2^k, for one, but not d = 2^k)."""
    nodes = halving_tree(d)
    n_levels = max((lv + 1 for lv, *_ in nodes), default=0)
    sizes = [[h1 + h2 for level, _, h1, h2 in nodes if level == lv] for lv in range(n_levels)]
    want = n_levels >= 2 and set(sizes[-1]) == {2} and set(sizes[-2]) <= {2, 3}
    assert butterfly_tail(d) is want
    assert want == (d >= 3 and d <= 3 * 2 ** (math.ceil(math.log2(d)) - 2))


# ------------------------------------------------------------------ the fused kernels
# Each fused kernel must do, entry by entry, the rotations of one node after another,
# level by level: x' = c x_a - s x_b, x_b' = s x_a + c x_b, the children first. The
# references below are numpy's elementwise products and differences, the same IEEE
# operations in the same order, so the bits must agree; entries outside the node's
# blocks (guards on both sides) must be left alone.


def givens(x: np.ndarray, a: np.ndarray, b: np.ndarray, c: float, s: float) -> None:
    """Rotate x[a] with x[b] by (c, s), the two new values from the old ones."""
    u, v = x[a].copy(), x[b].copy()
    x[a] = c * u - s * v
    x[b] = s * u + c * v


def angles(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    th = rng.uniform(0.0, 2.0 * np.pi, k)
    return np.cos(th), np.sin(th)


@pytest.mark.parametrize(("p", "h", "n"), [(0, 3, 3), (5, 4, 3), (7, 9, 2), (40, 6, 5)])
def test_radix2_rotates_one_node_and_nothing_else(p, h, n):
    rng = np.random.default_rng(p + h + n)
    x = rng.standard_normal(p + h + n + 11)
    cs, sn = angles(rng, 1)
    want = x.copy()
    givens(want, np.arange(p, p + n), np.arange(p + h, p + h + n), cs[0], sn[0])
    _radix2(x, p, h, n, cs[0], sn[0])
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("p", [0, 32, 48])
def test_radix2_lanes_is_radix2_of_a_node_of_two_entries(p):
    t = BUTTERFLY_TILE
    rng = np.random.default_rng(p)
    x = rng.standard_normal(p + 2 * t + 17)
    cs, sn = angles(rng, 1)
    want = x.copy()
    givens(want, np.arange(p, p + t), np.arange(p + t, p + 2 * t), cs[0], sn[0])
    _radix2_lanes(x, p, cs[0], sn[0])
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("p", [0, 16, 48])
def test_radix3_is_the_child_of_two_then_the_node_of_three(p):
    """A node of 3 entries (o, o + 2) after its child of 2 entries (o, o + 1), every
    entry BUTTERFLY_TILE lanes wide."""
    t = BUTTERFLY_TILE
    rng = np.random.default_rng(p + 1)
    x = rng.standard_normal(p + 3 * t + 17)
    cs, sn = angles(rng, 2)  # [child, node]
    want = x.copy()
    lane = np.arange(t)
    givens(want, p + lane, p + t + lane, cs[0], sn[0])
    givens(want, p + lane, p + 2 * t + lane, cs[1], sn[1])
    _radix3(x, p, cs[0], sn[0], cs[1], sn[1])
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize(("p", "n"), [(0, 1), (0, 3), (8, 2), (30, 3), (45, 4)])
def test_radix4_is_two_children_then_their_parent(p, n):
    """Four blocks of n entries at x[p:]: children (0, 1) and (2, 3), then the parent
    (0, 2), (1, 3); p at, below and beyond 2n (the blocks as slices of x)."""
    rng = np.random.default_rng(10 * p + n)
    x = rng.standard_normal(p + 4 * n + 13)
    cs, sn = angles(rng, 3)  # [child 0, child 1, parent]
    blk = [np.arange(p + j * n, p + (j + 1) * n) for j in range(4)]
    want = x.copy()
    givens(want, blk[0], blk[1], cs[0], sn[0])
    givens(want, blk[2], blk[3], cs[1], sn[1])
    givens(want, np.r_[blk[0], blk[1]], np.r_[blk[2], blk[3]], cs[2], sn[2])
    _radix4(x, p, n, cs[0], sn[0], cs[1], sn[1], cs[2], sn[2])
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize(("p", "n"), [(0, 1), (0, 3), (6, 2), (20, 3), (70, 4)])
def test_radix8_is_four_grandchildren_two_children_then_the_node(p, n):
    """Eight blocks of n entries at x[p:]: the grandchildren q0 .. q0 + 3 on blocks
    (0, 1), (2, 3), (4, 5), (6, 7), the children q1, q1 + 1 on (0 1, 2 3), (4 5, 6 7),
    then the node q on (0..3, 4..7); angles read from the arrays at those indices."""
    rng = np.random.default_rng(100 * p + n)
    x = rng.standard_normal(p + 8 * n + 13)
    cs, sn = angles(rng, 12)
    q, q1, q0 = 2, 4, 7  # any distinct indices: the kernel reads the angles there
    blk = [np.arange(p + j * n, p + (j + 1) * n) for j in range(8)]
    want = x.copy()
    for j in range(4):
        givens(want, blk[2 * j], blk[2 * j + 1], cs[q0 + j], sn[q0 + j])
    for j in range(2):
        a = np.r_[blk[4 * j], blk[4 * j + 1]]
        b = np.r_[blk[4 * j + 2], blk[4 * j + 3]]
        givens(want, a, b, cs[q1 + j], sn[q1 + j])
    givens(want, np.concatenate(blk[:4]), np.concatenate(blk[4:]), cs[q], sn[q])
    _radix8(x, p, n, cs, sn, q, q1, q0)
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("d", [16, 24, 32, 64])
def test_tiles_fuse_levels_only_where_the_children_sit_under_their_parent(d):
    """The rotations of one level are disjoint, so listing a level's nodes in another
    order (here: the left children first, then the right ones) changes no bit of the
    row-by-row product. The tiled kernel, given that plan, must fuse two or three
    levels only where a parent's children are the next two nodes in order, at its
    offset and two halves further (_level_pairs' offset check), and so still give the
    row-by-row bits."""
    from kernelbench.transforms import _rotate_rows_tiled

    off, d1, d2, ptr = butterfly_plan(d)
    levels = zip(ptr[:-1], ptr[1:], strict=True)
    order = np.concatenate([np.r_[np.arange(a, b, 2), np.arange(a + 1, b, 2)] for a, b in levels])
    plan = (off[order], d1[order], d2[order], ptr)
    assert not np.array_equal(order, np.arange(len(off)))
    pairs = _level_pairs(*plan)
    assert not pairs[2:].any() and pairs.tolist() != _level_pairs(*butterfly_plan(d)).tolist()
    rng = np.random.default_rng(d)
    B = Butterfly(d, 2, rng)
    X = rng.standard_normal((21, d))
    cos, sin = B.cos[:, order], B.sin[:, order]
    ref = np.empty_like(X)
    _rotate_rows(X, ref, *plan, cos, sin, B.perms)
    np.testing.assert_array_equal(ref, row_by_row(B, X))
    got = np.empty_like(X)
    _rotate_rows_tiled(X, got, *plan, cos, sin, B.perms, BUTTERFLY_TILE, False)
    np.testing.assert_array_equal(got, ref)
