"""Exact kernels: definitions, integral representations, zero vectors, chunking."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import kernelbench.kernels as kmod
from kernelbench import exact_kernel
from kernelbench.errors import KernelbenchError
from kernelbench.kernels import KERNELS, get_kernel


def arccos_reference(X, Y, order):
    out = np.empty((len(X), len(Y)))
    for a, x in enumerate(X):
        for b, y in enumerate(Y):
            nx, ny = np.linalg.norm(x), np.linalg.norm(y)
            if nx == 0 or ny == 0:
                out[a, b] = 0.5 if order == 0 else 0.0
                continue
            t = np.arccos(np.clip(x @ y / (nx * ny), -1, 1))
            if order == 0:
                out[a, b] = 1 - t / np.pi
            else:
                out[a, b] = nx * ny * (np.sin(t) + (np.pi - t) * np.cos(t)) / np.pi
    return out


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((13, 6))
    Y = rng.standard_normal((9, 6))
    X[3] = 0.0
    Y[2] = X[5]  # theta = 0 exactly
    Y[4] = -X[6]  # theta = pi
    return X, Y


def test_rbf_matches_sklearn_with_default_gamma(data):
    X, Y = data
    np.testing.assert_allclose(exact_kernel("rbf", X, Y), rbf_kernel(X, Y, gamma=1 / 6), atol=1e-14)
    np.testing.assert_allclose(
        exact_kernel("rbf", X, Y, gamma=0.3), rbf_kernel(X, Y, gamma=0.3), atol=1e-14
    )


@pytest.mark.parametrize("order", [0, 1])
def test_arccos_matches_definition_including_zero_vectors(data, order):
    X, Y = data
    K = exact_kernel(f"arccos{order}", X, Y)
    # arccos has slope 1/sqrt(1 - c^2): near theta = 0, pi rounding of c costs sqrt(eps)
    np.testing.assert_allclose(K, arccos_reference(X, Y, order), atol=1e-7)
    assert np.isfinite(K).all()


def test_chunked_equals_unchunked(data, monkeypatch):
    X, Y = data
    full = {k: exact_kernel(k, X, Y) for k in KERNELS}
    monkeypatch.setattr(kmod, "CHUNK_ROWS", 4)
    for k in KERNELS:
        np.testing.assert_allclose(exact_kernel(k, X, Y), full[k], atol=1e-15)


@pytest.mark.parametrize("name", ["rbf", "arccos0", "arccos1"])
def test_integral_representation_by_monte_carlo(name):
    """k(x, y) = c E[phi(w.x~) . phi(w.y~)] with f(0) = phi(0).phi(0)."""
    kern = get_kernel(name)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    s = kern.input_scale(4)
    W = rng.standard_normal((400_000, 4))
    fx = kern.phi((W @ x * s)[:, None])
    fy = kern.phi((W @ y * s)[:, None])
    vals = kern.constant * np.sum(fx * fy, axis=1)
    est, se = vals.mean(), vals.std() / np.sqrt(len(vals))
    exact = exact_kernel(name, x[None], y[None])[0, 0]
    assert abs(est - exact) < 5 * se
    zero = kern.phi(np.zeros((1, 1)))
    assert np.sum(zero * zero) == kern.f0


def test_float32_is_kept(data):
    X, Y = data
    for k in KERNELS:
        assert exact_kernel(k, X.astype(np.float32), Y.astype(np.float32)).dtype == np.float32


def test_unknown_kernel_and_bad_gamma():
    with pytest.raises(KernelbenchError, match="unknown kernel 'poly'; valid choices: arccos0"):
        exact_kernel("poly", np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(KernelbenchError, match="gamma must be > 0"):
        exact_kernel("rbf", np.ones((2, 2)), np.ones((2, 2)), gamma=-1.0)
    with pytest.raises(KernelbenchError, match="different numbers of features"):
        exact_kernel("rbf", np.ones((2, 2)), np.ones((2, 3)))
