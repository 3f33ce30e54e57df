"""kernelbench.transforms: the tiled Hadamard-diagonal kernel (_hd_rows_tiled, _fwht_tile)
at the edges of its tiles, the properties the mutation run (docs/mutation.md) found
unchecked. The code promises the same bits as the stage-by-stage transform, so the
oracle is exact: a plain numpy reference, compared bit for bit, signed zeros included.
Small inputs: the run executes the numba kernels as Python (NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.transforms import HD_TILE, fwht_rows, hd_blocks_rows, next_pow2
from tests.test_transforms import _fwht_stagewise


def _same_bits(out: np.ndarray, ref: np.ndarray) -> bool:
    return (
        out.dtype == ref.dtype
        and out.shape == ref.shape
        and np.array_equal(out, ref)
        and np.array_equal(np.signbit(out), np.signbit(ref))
    )


def _hd_blocks_reference(X: np.ndarray, signs: np.ndarray, D: int) -> np.ndarray:
    """sqrt(m) [H D_1 ... H D_k]_b x block by block (Yu et al. 2016, Eq. 7), in numpy:
    zero-pad to m, then D_k, H (normalised), ..., D_1, H, times sqrt(m); D columns."""
    dt = X.dtype.type
    n, d = X.shape
    n_stack, _, m = signs.shape
    ref = np.empty((n, D), dtype=X.dtype)
    for b in range(n_stack):
        Y = np.zeros((n, m), dtype=X.dtype)
        Y[:, :d] = X
        for s in signs[b][::-1]:
            Y = Y * s.astype(X.dtype)[None, :]
            Y = _fwht_stagewise(Y) * dt(1.0 / np.sqrt(m))
        lo, hi = b * m, min(D, (b + 1) * m)
        ref[:, lo:hi] = Y[:, : hi - lo] * dt(np.sqrt(m))
    return ref


# (d, n_stack, k, D): d = 1, 2, 4 (m < 8: row by row), d = 8 (m = 8: radix 8 only),
# padded d (5, 9, 33, 100), m = 128 (two radix-8 groups, then one radix-2 stage), the
# last block narrower than a store block (D - lo = 3, 5), D < m, D = m.
SHAPES = [
    (1, 1, 1, 1),
    (2, 2, 2, 3),
    (4, 3, 1, 10),
    (8, 1, 3, 8),
    (5, 2, 3, 13),
    (9, 3, 2, 37),
    (33, 2, 2, 100),
    (100, 2, 3, 131),
    (128, 1, 1, 61),
]


@pytest.mark.parametrize(("d", "n_stack", "k", "D"), SHAPES)
@pytest.mark.parametrize("rows", [1, 4, HD_TILE, HD_TILE + 5])
def test_hd_blocks_rows_same_bits_as_stagewise_at_tile_edges(d, n_stack, k, D, rows):
    """One row, the 4 rows from which tiles are used, one whole tile, a tile and 5 rows:
    every row, every block and every column equals the stage-by-stage blocks bit for
    bit (zero rows and a negative zero included, whose signs the padding must keep)."""
    rng = np.random.default_rng(1000 * d + rows)
    m = next_pow2(d)
    X = rng.standard_normal((rows, d))
    X[0, 0] = -0.0
    if rows > 2:
        X[2] = 0.0
    signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=(n_stack, k, m))
    assert _same_bits(hd_blocks_rows(X, signs, D), _hd_blocks_reference(X, signs, D))


@pytest.mark.parametrize("rows", [4, HD_TILE + 1])
def test_hd_blocks_rows_float32_same_bits_as_stagewise(rows):
    """float32 stays float32 with the same bits as the stage-by-stage float32 blocks."""
    rng = np.random.default_rng(rows)
    X = rng.standard_normal((rows, 100)).astype(np.float32)
    signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=(2, 3, 128))
    assert _same_bits(hd_blocks_rows(X, signs, 200), _hd_blocks_reference(X, signs, 200))


@pytest.mark.parametrize("m", [1, 2, 4, 8, 16, 32, 64, 128, 512])
@pytest.mark.parametrize("rows", [1, 4, HD_TILE + 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fwht_rows_same_bits_as_stagewise_at_tile_edges(m, rows, dtype):
    """H x (normalised) equals the stage-by-stage FWHT bit for bit for every power of two
    up to 512 (radix 8 twice, then none left; radix 8 on two groups and one stage left)."""
    X = np.random.default_rng(m + rows).standard_normal((rows, m)).astype(dtype)
    assert _same_bits(fwht_rows(X), _fwht_stagewise(X) * dtype(1.0 / np.sqrt(m)))


def test_fwht_rows_error_names_the_length():
    """The one-line error states the rule and the offending row length."""
    with pytest.raises(ValueError, match=r"^the row length must be a power of two, got 6$"):
        fwht_rows(np.ones((2, 6)))
