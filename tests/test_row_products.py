"""The batch-independent product X W^T (kernelbench.transforms.row_products): a row's
bits do not depend on its batch, and the product is X W^T up to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench import transforms
from kernelbench.transforms import row_block, row_blocks, row_products

SHAPES = [(1, 1), (3, 7), (5, 24), (17, 36), (40, 82), (100, 1), (100, 7), (300, 602), (784, 1570)]


@pytest.mark.parametrize(("d", "D"), SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_row_has_the_same_bits_alone_and_anywhere_in_any_batch(d, D, dtype, monkeypatch):
    """Blocks of 128 rows (the fewest): a row alone, at every place of a block, at the
    block edges of a 3-block batch, beside zeros or large rows, gives the same bits."""
    monkeypatch.setattr(transforms, "ROW_BLOCK_WORK", 1)
    assert row_block(d, D) == 128
    rng = np.random.default_rng(d * 1000 + D)
    W = rng.standard_normal((D, d))
    x = rng.standard_normal(d).astype(dtype)
    alone = row_products(x[None, :], W)[0]
    assert alone.dtype == dtype
    for N, others in ((128, 1.0), (300, 1.0), (300, 0.0), (77, 1e6)):
        X = (others * rng.standard_normal((N, d))).astype(dtype)
        for pos in sorted({0, 1, 15, 16, 63, 127, 128, 129, 255, 256, N - 1} & set(range(N))):
            Y = X.copy()
            Y[pos] = x
            np.testing.assert_array_equal(row_products(Y, W)[pos], alone, err_msg=f"{N}, {pos}")


@pytest.mark.parametrize(("d", "D"), SHAPES)
def test_row_products_is_x_w_transposed(d, D):
    rng = np.random.default_rng(d + D)
    W, X = rng.standard_normal((D, d)), rng.standard_normal((1100, d))
    P = row_products(X, W)
    ref = X @ W.T
    assert P.shape == (1100, D) and P.flags.c_contiguous
    scale = np.abs(X) @ np.abs(W).T  # the bound of a dot product's rounding
    assert np.all(np.abs(P - ref) <= 2 * d * np.finfo(float).eps * scale)
    assert row_products(X[:0], W).shape == (0, D)


def test_row_block_is_a_fixed_power_of_two_per_shape():
    assert row_block(3072, 6146) == 128 and row_block(16, 34) == 1024
    for d, D in SHAPES:
        B = row_block(d, D)
        assert 128 <= B <= 1024 and B & (B - 1) == 0


def test_row_blocks_gives_every_call_one_full_block():
    """The function sees blocks of exactly ``block`` rows, the last one zero-padded."""
    seen = []

    def columns(Xb):
        seen.append(Xb.copy())
        return 2.0 * Xb.T

    X = np.arange(1.0, 11.0)[:, None]
    np.testing.assert_array_equal(row_blocks(X, columns, 1, 4), 2.0 * X)
    assert [b.shape for b in seen] == [(4, 1)] * 3
    np.testing.assert_array_equal(seen[-1][:, 0], [9.0, 10.0, 0.0, 0.0])
