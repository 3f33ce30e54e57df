"""Batch-independent rows (kernelbench.transforms: row_block, row_blocks, gemm_rows,
row_products): the properties the mutation run (docs/mutation.md) found unchecked by
tests/test_row_products.py. Small inputs, no numba kernels."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.transforms import gemm_rows, row_block, row_blocks, row_products


def test_row_block_is_128_rows_below_two_to_the_17_entries_and_64_from_there():
    """The documented rule (docs/performance.md, "Batch-independent BLAS products"): a
    block has 128 rows for a W of fewer than 2^17 = d D entries, 64 rows from 2^17 on,
    whichever of d and D is the larger (a function of the product d D only)."""
    below = [(1, 2**17 - 1), (2**17 - 1, 1), (256, 511), (511, 256), (1, 1), (0, 5)]
    at_or_above = [(1, 2**17), (2**17, 1), (256, 512), (512, 256), (2, 2**16 + 1), (3072, 3072)]
    assert [row_block(d, D) for d, D in below] == [128] * len(below)
    assert [row_block(d, D) for d, D in at_or_above] == [64] * len(at_or_above)


@pytest.mark.parametrize("N", [1, 3, 4, 8, 9])
def test_row_blocks_maps_one_row_exact_blocks_and_a_padded_tail(N):
    """f(x) for every row, a single row and a multiple of the block included; every call
    sees ``block`` rows whose padding (the rows past the batch's end) is zero, also after
    a full block filled the buffer."""
    seen = []

    def columns(Xb):  # f(x) = (2 x_0, x_1 + 1): exact in floating point
        seen.append(Xb.copy())
        return np.vstack([2.0 * Xb[:, 0], Xb[:, 1] + 1.0])

    X = np.arange(1.0, 2 * N + 1).reshape(N, 2)
    out = row_blocks(X, columns, 2, 4)
    np.testing.assert_array_equal(out, np.column_stack([2.0 * X[:, 0], X[:, 1] + 1.0]))
    assert len(seen) == -(-N // 4) and all(b.shape == (4, 2) for b in seen)
    np.testing.assert_array_equal(np.vstack(seen)[:N], X)
    np.testing.assert_array_equal(np.vstack(seen)[N:], 0.0)


def test_gemm_rows_pads_only_a_one_row_w_with_a_zero_row():
    """A one-row W gets a zero second row (its product stays a GEMM); any other W is W,
    in float64."""
    w = np.arange(1, 4, dtype=np.float32)[None, :]
    g = gemm_rows(w)
    assert g.dtype == np.float64 and g.shape == (2, 3)
    np.testing.assert_array_equal(g, [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    for D in (2, 3):
        W = np.random.default_rng(D).standard_normal((D, 4))
        assert gemm_rows(W).shape == (D, 4)
        np.testing.assert_array_equal(gemm_rows(W), W)


@pytest.mark.parametrize("d", [1, 7, 24])
@pytest.mark.parametrize("N", [1, 16, 40])
def test_row_products_of_a_square_w(d, N, monkeypatch):
    """D = d (a square W, e.g. a rotation): X W^T up to rounding, in one chunk and in
    chunks of one block, with the bits of a row alone."""
    from kernelbench import transforms

    rng = np.random.default_rng(d * 100 + N)
    W, X = rng.standard_normal((d, d)), rng.standard_normal((N, d))
    P = row_products(X, W, block=16)
    np.testing.assert_allclose(P, X @ W.T, rtol=0, atol=1e-13 * max(1.0, np.abs(X @ W.T).max()))
    monkeypatch.setattr(transforms, "ROW_CHUNK_BYTES", 1)
    assert row_products(X, W, block=16).tobytes() == P.tobytes()
    assert row_products(X[-1:], W, block=16)[0].tobytes() == P[-1].tobytes()
