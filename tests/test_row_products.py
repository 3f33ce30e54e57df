"""The batch-independent product X W^T (kernelbench.transforms.row_products): a row's
bits do not depend on its batch, and the product is X W^T up to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.transforms import (
    ROW_BLOCK_MAX,
    ROW_BLOCK_MIN,
    block_product,
    row_block,
    row_blocks,
    row_products,
)

SHAPES = [(1, 1), (3, 7), (5, 24), (17, 36), (40, 25), (40, 82), (100, 7), (300, 602), (784, 1570)]


@pytest.mark.parametrize(("d", "D"), SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_row_has_the_same_bytes_alone_and_anywhere_in_any_batch(d, D, dtype):
    """A row alone, at every place of the first block and at the block edges of a
    3-block batch, beside zeros or rows 1e6 times larger, gives the same bytes."""
    rng = np.random.default_rng(d * 1000 + D)
    W = rng.standard_normal((D, d))
    B = row_block(d, D)
    x = rng.standard_normal(d).astype(dtype)
    alone = row_products(x[None, :], W)[0]
    assert alone.dtype == dtype
    for N, others in ((B, 1.0), (2 * B + 5, 1.0), (2 * B + 5, 0.0), (B // 2 + 3, 1e6)):
        X = (others * rng.standard_normal((N, d))).astype(dtype)
        edges = {0, 1, 15, 16, B - 1, B, B + 1, 2 * B - 1, 2 * B, N - 1}
        places = range(min(N, B)) if d * D < 10**4 else sorted(edges & set(range(N)))
        for pos in places:
            Y = X.copy()
            Y[pos] = x
            assert row_products(Y, W)[pos].tobytes() == alone.tobytes(), (N, pos)


@pytest.mark.parametrize(("d", "D"), SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_products_is_x_w_transposed(d, D, dtype):
    rng = np.random.default_rng(d + D)
    W, X = rng.standard_normal((D, d)), rng.standard_normal((300, d)).astype(dtype)
    P = row_products(X, W)
    X64 = X.astype(np.float64)
    scale = np.abs(X64) @ np.abs(W).T  # the bound of a dot product's rounding
    assert P.shape == (300, D) and P.dtype == dtype and P.flags.c_contiguous
    eps = np.finfo(dtype).eps  # float32: the float64 product, rounded once
    assert np.all(np.abs(P - X64 @ W.T) <= (2 * d * np.finfo(float).eps + eps) * scale)
    assert row_products(X[:0], W).shape == (0, D)


def test_row_products_chunks_do_not_change_the_bits(monkeypatch):
    """Blocks are stacked in chunks of ROW_CHUNK_BYTES: one block per chunk or many, the
    same bytes (a chunk only groups the blocks' GEMM calls)."""
    from kernelbench import transforms

    rng = np.random.default_rng(5)
    W, X = rng.standard_normal((30, 12)), rng.standard_normal((700, 12))
    P = row_products(X, W)
    monkeypatch.setattr(transforms, "ROW_CHUNK_BYTES", 1)
    assert row_products(X, W).tobytes() == P.tobytes()


def test_row_block_is_a_power_of_two_of_the_shape_only():
    assert row_block(3072, 6146) == ROW_BLOCK_MIN == 64 and row_block(16, 34) == ROW_BLOCK_MAX
    for d, D in SHAPES:
        B = row_block(d, D)
        assert ROW_BLOCK_MIN <= B <= ROW_BLOCK_MAX and B & (B - 1) == 0


def test_row_blocks_gives_every_call_one_full_float64_block():
    """The function sees blocks of exactly ``block`` float64 rows, the last zero-padded;
    the result is in X's dtype."""
    seen = []

    def columns(Xb):
        seen.append(Xb.copy())
        return 2.0 * Xb.T

    X = np.arange(1.0, 11.0, dtype=np.float32)[:, None]
    out = row_blocks(X, columns, 1, 4)
    assert out.dtype == np.float32 and out.tobytes() == (2.0 * X).tobytes()
    assert [(b.shape, b.dtype) for b in seen] == [((4, 1), np.float64)] * 3
    np.testing.assert_array_equal(seen[-1][:, 0], [9.0, 10.0, 0.0, 0.0])


def test_block_product_of_one_row_is_a_gemm_row():
    """A one-row W: the first row of a two-row product (W with a zero row), not GEMV."""
    rng = np.random.default_rng(2)
    w, Xb = rng.standard_normal((1, 9)), rng.standard_normal((64, 9))
    two = np.vstack([w, np.zeros_like(w)]) @ Xb.T
    assert block_product(w, Xb).tobytes() == two[:1].tobytes()
