"""Property-based checks (hypothesis) over dimensions, budgets and seeds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelbench import make_feature_map
from kernelbench.transforms import Butterfly, simplex_rows, simplex_vertices

dims = st.integers(min_value=1, max_value=70)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
methods = st.sampled_from(["rff", "orf", "sorf", "qmc", "gq", "sr33", "sr11", "sr13"])
kernels = st.sampled_from(["rbf", "arccos0", "arccos1"])


@settings(max_examples=40, deadline=None)
@given(d=dims, factors=st.integers(1, 4), seed=seeds)
def test_butterfly_is_orthogonal_for_any_d(d, factors, seed):
    Q = Butterfly(d, factors, np.random.default_rng(seed)).matrix()
    np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(d=dims, seed=seeds)
def test_simplex_fast_product_for_any_d(d, seed):
    U = np.random.default_rng(seed).standard_normal((3, d))
    np.testing.assert_allclose(simplex_rows(U), U @ simplex_vertices(d), atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(method=methods, kernel=kernels, d=dims, n=st.sampled_from([0.5, 1, 2, 3]), seed=seeds)
def test_any_map_is_finite_deterministic_and_weights_sum_to_one(method, kernel, d, n, seed):
    X = np.random.default_rng(seed).uniform(-1, 1, (5, d))
    a = make_feature_map(method, kernel=kernel, n=n, random_state=seed).fit(X)
    b = make_feature_map(method, kernel=kernel, n=n, random_state=seed).fit(X)
    Ka = a.approximate_kernel(X)
    assert np.isfinite(Ka).all()
    np.testing.assert_array_equal(Ka, b.approximate_kernel(X))
    assert np.isclose(a.weights_.sum() + a.zero_weight_, 1.0)


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 30), seed=seeds, reflections=st.booleans())
def test_sr33_integrates_quadratics_exactly(d, seed, reflections):
    """E[w w^T] = I and E[1] = 1 for every single draw of the (3,3) rule."""
    fm = make_feature_map(
        "sr33", kernel="arccos0", n=1, random_state=seed, reflections=reflections
    ).fit(np.zeros((1, d)))
    W = fm.weight_matrix()
    np.testing.assert_allclose((W * fm.weights_[:, None]).T @ W, np.eye(d), atol=1e-9)
    if reflections:  # odd moments cancel
        np.testing.assert_allclose(fm.weights_ @ W, 0.0, atol=1e-9)
