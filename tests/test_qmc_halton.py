"""The compiled Halton sums: the bits of numpy's digit loop (Owen 2017; scipy), and the
same random draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelbench.features import qmc
from kernelbench.features.qmc import (
    first_primes,
    halton_points,
    halton_rr2_points,
    n_digits,
    rr2_permutation,
    scrambled_radical_inverse,
)

PRIMES = first_primes(1007).tolist()  # 2 .. 7993


def reference_radical_inverse(index, base, perms):
    """The digit loop as written before the compiled kernels (numpy, one position at a
    time: digits by integer division, out += perm[digits] * scale)."""
    index = np.asarray(index, dtype=np.int64)
    last = int(index.max()) if index.size else 0
    out = np.zeros(index.shape)
    scale = 1.0 / base
    power = 1
    for perm in perms:
        if power <= last:
            out += np.asarray(perm)[(index // power) % base] * scale
            power *= base
        else:
            out += perm[0] * scale
        scale /= base
    return out


def reference_halton(n_points, d, rng, scramble=True):
    """halton_points as written before the compiled kernels: the same draws in the same
    order, the sums by :func:`reference_radical_inverse`."""
    start = 0 if scramble else 1
    index = np.arange(start, start + n_points, dtype=np.int64)
    last = start + n_points - 1
    out = np.empty((d, n_points))
    for k, p in enumerate(first_primes(d).tolist()):
        perms, power, count = [], 1, n_digits(p)
        for j in range(count):
            if power > last:
                tail = count - j
                zeros = rng.integers(0, p, size=tail) if scramble else np.zeros(tail, np.int64)
                perms.extend(zeros[:, None])
                break
            used = min(p, last // power + 1)
            perms.append(rng.choice(p, size=used, replace=False) if scramble else np.arange(used))
            power *= p
        out[k] = reference_radical_inverse(index, p, perms)
    return out.T


def same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.shape == expected.shape and got.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 5000),
    d=st.integers(1, 1007),
    scramble=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_halton_points_are_the_digit_loops_bits_and_draws(n, d, scramble, seed):
    d = min(d, max(1, 250_000 // max(n, 1)))  # the numpy reference's time
    rng, ref_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    got = halton_points(n, d, rng, scramble)
    expected = reference_halton(n, d, ref_rng, scramble)
    same_bits(got, expected)
    assert got.strides == expected.strides  # the same (d, N) buffer, transposed
    assert rng.bit_generator.state == ref_rng.bit_generator.state  # the same draws


@pytest.mark.parametrize(("n", "d"), [(7850, 40), (2570, 256), (300, 1007), (1, 1007)])
def test_halton_points_bits_at_the_paper_shapes(n, d):
    """MNIST's N (base 2 has 13 digits in use), USPS's d, primes up to 7993, N = 1."""
    for scramble in (True, False):
        rng, ref_rng = np.random.default_rng(n + d), np.random.default_rng(n + d)
        same_bits(halton_points(n, d, rng, scramble), reference_halton(n, d, ref_rng, scramble))
        assert rng.random() == ref_rng.random()


def test_halton_points_in_blocks_are_the_same_bits(monkeypatch):
    """Rows computed a few dimensions at a time (the memory bound) give the same points."""
    whole = halton_points(700, 60, np.random.default_rng(2))
    monkeypatch.setattr(qmc, "_BLOCK_ENTRIES", 1000)
    same_bits(halton_points(700, 60, np.random.default_rng(2)), whole)
    monkeypatch.setattr(qmc, "USE_COMPILED", False)  # numpy's loop, kept for comparisons
    same_bits(halton_points(700, 60, np.random.default_rng(2)), whole)


@settings(max_examples=100, deadline=None)
@given(
    base=st.sampled_from(PRIMES),
    n=st.integers(1, 5000),
    start=st.sampled_from([0, 1]),
    leap=st.integers(0, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_radical_inverse_is_the_digit_loops_bits(base, n, start, leap, seed):
    """Full random permutations at every position, indices start + i (leap + 1)."""
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(base) for _ in range(n_digits(base))]
    index = start + np.arange(n, dtype=np.int64) * (leap + 1)
    same_bits(
        scrambled_radical_inverse(index, base, perms), reference_radical_inverse(index, base, perms)
    )


@settings(max_examples=50, deadline=None)
@given(
    base=st.sampled_from([2, 3, 5, 10, 7993]),
    index=st.lists(st.integers(-(2**40), 2**50), min_size=1, max_size=40),
)
def test_radical_inverse_of_any_indices_is_the_digit_loops_bits(base, index):
    """Unsorted and negative indices (floor division's digits), a matrix of them."""
    perms = [np.random.default_rng(base + j).permutation(base) for j in range(n_digits(base))]
    index = np.asarray(index * 2, dtype=np.int64).reshape(2, -1)
    same_bits(
        scrambled_radical_inverse(index, base, perms), reference_radical_inverse(index, base, perms)
    )


def test_rr2_points_are_the_digit_loops_bits():
    for skip, leap in [(0, 0), (1000, 100), (7, 3)]:
        index = skip + np.arange(300, dtype=np.int64) * (leap + 1) + (skip == 0)
        expected = np.column_stack(
            [
                reference_radical_inverse(index, p, [rr2_permutation(p)] * n_digits(p))
                for p in first_primes(30).tolist()
            ]
        )
        got = halton_rr2_points(300, 30, skip, leap)
        np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64))


def test_a_digit_without_a_permutation_entry_is_an_index_error():
    perms = [np.arange(3), np.arange(1)] + [np.zeros(1, np.int64)] * (n_digits(5) - 2)
    assert math.isclose(scrambled_radical_inverse(np.array([2]), 5, perms)[0], 0.4)
    with pytest.raises(IndexError, match="base-5 digit"):
        scrambled_radical_inverse(np.array([0, 5, 3]), 5, perms)
