"""Exact kernels: the properties the mutation run (docs/mutation.md) found unchecked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernelbench import exact_kernel
from kernelbench.errors import KernelbenchError
from kernelbench.kernels import KERNELS, get_kernel, resolve_gamma


@pytest.fixture
def XY():
    rng = np.random.default_rng(3)
    return rng.standard_normal((7, 5)), rng.standard_normal((4, 5))


@pytest.mark.parametrize("name", list(KERNELS))
def test_integer_input_is_read_as_float64(name):
    """Integer data is the same points as its float64 copy."""
    Xi = np.arange(-6, 9).reshape(5, 3)
    K = exact_kernel(name, Xi, Xi[::-1])
    assert K.dtype == np.float64
    np.testing.assert_array_equal(K, exact_kernel(name, Xi.astype(np.float64), Xi[::-1] * 1.0))


@pytest.mark.parametrize("name", list(KERNELS))
def test_y_defaults_to_x_and_mixed_precision_is_float64(name, XY):
    X, Y = XY
    np.testing.assert_array_equal(exact_kernel(name, X), exact_kernel(name, X, X))
    assert exact_kernel(name, X.astype(np.float32), Y).dtype == np.float64


def test_a_non_matrix_is_refused_in_one_line():
    for bad in (np.ones(4), np.ones((2, 2, 2))):
        with pytest.raises(KernelbenchError, match=r"^expected a 2-D array, got shape \("):
            exact_kernel("rbf", bad, np.ones((2, 2)))


@pytest.mark.parametrize("gamma", [0.0, -0.5, math.inf, math.nan])
def test_gamma_must_be_positive_and_finite(gamma):
    with pytest.raises(KernelbenchError, match=r"^gamma must be > 0 and finite, got \S+$"):
        resolve_gamma(gamma, 3)


@pytest.mark.parametrize("name", list(KERNELS))
def test_a_kernel_knows_its_id_and_the_figures_name_it_like_the_registry(name):
    from kernelbench.outputs.style import KERNEL_NAMES

    kern = get_kernel(name)
    assert kern.name == name
    assert KERNEL_NAMES[name] == kern.paper_label


def test_gamma_default_is_one_over_d_and_scales_the_input():
    assert resolve_gamma(None, 8) == 1 / 8
    assert resolve_gamma(2, 8) == 2.0
    rbf = get_kernel("rbf")
    assert rbf.input_scale(8) == pytest.approx(math.sqrt(2 / 8))
    assert rbf.input_scale(8, 0.5) == pytest.approx(1.0)
    # the arc-cosine kernels are scale-free in w: x~ = x
    assert get_kernel("arccos1").input_scale(8, 0.5) == 1.0


def test_get_kernel_passes_a_kernel_through():
    k = KERNELS.get("arccos0")
    assert get_kernel(k) is k


@pytest.mark.parametrize("name", list(KERNELS))
def test_phi_width_and_evenness_match_the_declared_fields(name):
    """n_outputs is phi's width per projection; ``even`` holds iff
    phi(p) . phi(q) == phi(-p) . phi(-q) for all projections."""
    kern = get_kernel(name)
    rng = np.random.default_rng(0)
    P, Q = rng.standard_normal((1, 50)), rng.standard_normal((1, 50))
    assert kern.phi(P).shape == (1, kern.n_outputs * 50)
    f = (kern.phi(P) * kern.phi(Q)).reshape(kern.n_outputs, 50).sum(0)
    f_neg = (kern.phi(-P) * kern.phi(-Q)).reshape(kern.n_outputs, 50).sum(0)
    assert np.allclose(f, f_neg, atol=1e-14) == kern.even


@pytest.mark.parametrize("name", list(KERNELS))
def test_features_are_phi_times_the_scale_of_each_projection(name):
    kern = get_kernel(name)
    rng = np.random.default_rng(1)
    P = rng.standard_normal((6, 4))
    scale = rng.uniform(0.5, 2.0, 4)
    expected = kern.phi(P.copy()) * np.tile(scale, kern.n_outputs)[None, :]
    np.testing.assert_allclose(kern.features(P.copy(), scale), expected, rtol=1e-14, atol=0)


def test_arc_cosine_kernels_on_known_angles():
    """theta = pi/2: k0 = 1/2, k1 = |x||y|/pi; theta = 0: k0 = 1, k1 = |x||y|."""
    x, y = np.array([[3.0, 0.0]]), np.array([[0.0, 2.0]])
    assert exact_kernel("arccos0", x, y)[0, 0] == pytest.approx(0.5, abs=1e-15)
    assert exact_kernel("arccos1", x, y)[0, 0] == pytest.approx(6.0 / math.pi, rel=1e-14)
    assert exact_kernel("arccos0", x, 2 * x)[0, 0] == pytest.approx(1.0, abs=1e-7)
    assert exact_kernel("arccos1", x, 2 * x)[0, 0] == pytest.approx(18.0, rel=1e-7)


def test_mismatched_widths_are_refused_in_one_line():
    with pytest.raises(
        KernelbenchError, match=r"^X and Y have different numbers of features: 2 != 3$"
    ):
        exact_kernel("arccos0", np.ones((2, 2)), np.ones((2, 3)))


@pytest.mark.parametrize("name", list(KERNELS))
def test_registered_kernels_are_immutable_values(name):
    """The registry hands out one shared instance per id: it cannot be changed in place,
    and it is hashable and equal to a copy of itself."""
    import copy
    import dataclasses

    kern = get_kernel(name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        kern.constant = 3.0  # type: ignore[misc]
    assert copy.copy(kern) == kern and hash(copy.copy(kern)) == hash(kern)


def test_arc_cosine_kernels_of_short_vectors_scale_as_their_degree():
    """k0 is invariant and k1 is homogeneous of degree 1 in each argument: also for
    vectors far shorter than 1 (||x|| ||y|| < 1)."""
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((6, 4)), rng.standard_normal((5, 4))
    c = 1e-3
    np.testing.assert_allclose(
        exact_kernel("arccos0", c * X, c * Y), exact_kernel("arccos0", X, Y), rtol=1e-12
    )
    np.testing.assert_allclose(
        exact_kernel("arccos1", c * X, c * Y), c * c * exact_kernel("arccos1", X, Y), rtol=1e-12
    )


def test_parallel_and_antiparallel_vectors_give_finite_exact_values():
    """theta = 0 or pi: x.y / (|x| |y|) may round beyond +-1; the kernel stays finite."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 7))
    c = rng.uniform(0.1, 10.0, 300)[:, None]
    for sign, k0 in ((1.0, 1.0), (-1.0, 0.0)):
        Y = sign * c * X
        for name in ("arccos0", "arccos1"):
            K = np.diag(exact_kernel(name, X, Y))
            assert np.isfinite(K).all()
        np.testing.assert_allclose(np.diag(exact_kernel("arccos0", X, Y)), k0, atol=1e-7)


def test_gamma_is_a_real_number_not_a_bool_or_a_string():
    """A bool (True would read as gamma = 1) or a string is refused in one line naming
    the value; any real number, numpy's included, is read as a float."""
    for bad, shown in ((True, "True"), ("0.5", "'0.5'")):
        with pytest.raises(KernelbenchError, match=rf"^gamma must be > 0 and finite, got {shown}$"):
            resolve_gamma(bad, 3)
    with pytest.raises(KernelbenchError, match=r"^gamma must be > 0 and finite, got -2\.0$"):
        resolve_gamma(-2, 3)
    for good in (2, np.float32(0.5), np.int64(3), 0.25):
        value = resolve_gamma(good, 3)
        assert type(value) is float and value == float(good)
