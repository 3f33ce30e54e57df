"""The nearest-neighbour bandwidth rule (Yu et al. 2016, Sec. 3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from kernelbench.bandwidth import (
    Bandwidth,
    kth_neighbour_distances,
    nn_sigma,
    parse_rule,
    resolve_gamma_rule,
)
from kernelbench.errors import KernelbenchError


def brute_force(X: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Sort every row of the full distance matrix, the point itself removed."""
    rows = np.arange(len(X)) if rows is None else rows
    D = cdist(X[rows], X)
    out = []
    for i, r in enumerate(rows):
        others = np.delete(D[i], r)
        out.append(np.sort(others)[k - 1])
    return np.asarray(out)


@pytest.fixture
def data() -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 7)) * np.arange(1, 8)
    X[5] = X[9]  # a duplicate: distance 0 to each other, and still a neighbour
    return X


@pytest.mark.parametrize("k", [1, 2, 50, 119])
def test_kth_neighbour_equals_brute_force(data, k):
    got = kth_neighbour_distances(data, k)
    np.testing.assert_allclose(got, brute_force(data, k), rtol=1e-9, atol=1e-9)
    if k == 1:
        assert got[5] == 0.0 and got[9] == 0.0


def test_blocks_change_only_rounding_and_reruns_are_identical(data):
    whole = kth_neighbour_distances(data, 10)
    np.testing.assert_array_equal(whole, kth_neighbour_distances(data, 10))
    tiny = kth_neighbour_distances(data, 10, block_bytes=8 * len(data) * 7)  # 7 rows a block
    one = kth_neighbour_distances(data, 10, block_bytes=1)  # one row a block
    # a different block shape may round the products x.y differently (BLAS kernels)
    np.testing.assert_allclose(tiny, whole, rtol=1e-12)
    np.testing.assert_allclose(one, whole, rtol=1e-12)


def test_nn_sigma_is_the_mean_and_gamma_matches(data):
    bw = nn_sigma(data, k=50)
    assert isinstance(bw, Bandwidth)
    sigma, gamma = bw  # unpacks as a tuple
    assert sigma == pytest.approx(brute_force(data, 50).mean(), rel=1e-12)
    assert gamma == pytest.approx(1.0 / (2.0 * sigma**2), rel=1e-15)
    assert nn_sigma(data.astype(np.float32), k=50).sigma == pytest.approx(sigma, rel=1e-6)
    # the 50th neighbour of a bigger set of the same law is nearer
    bigger = np.random.default_rng(1).standard_normal((1000, 7)) * np.arange(1, 8)
    assert nn_sigma(bigger, k=50).sigma < sigma


def test_query_subset_is_seeded_and_exact(data):
    a = nn_sigma(data, k=5, n_queries=30, random_state=3)
    b = nn_sigma(data, k=5, n_queries=30, random_state=np.random.default_rng(3))
    assert a == b
    rows = np.sort(np.random.default_rng(3).choice(len(data), size=30, replace=False))
    assert a.sigma == pytest.approx(brute_force(data, 5, rows).mean(), rel=1e-12)
    assert nn_sigma(data, k=5, n_queries=30, random_state=4) != a
    assert nn_sigma(data, k=5, n_queries=len(data), random_state=0).sigma == pytest.approx(
        nn_sigma(data, k=5).sigma, rel=1e-12
    )


def test_resolve_gamma_rule(data):
    assert resolve_gamma_rule(None, data) is None
    assert resolve_gamma_rule(0.25, data) == 0.25
    assert resolve_gamma_rule("nn50", data) == nn_sigma(data, k=50).gamma
    assert resolve_gamma_rule("nn3", data, n_queries=10, random_state=1) == (
        nn_sigma(data, k=3, n_queries=10, random_state=1).gamma
    )
    assert parse_rule("nn50") == 50


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda X: parse_rule("knn50"), "invalid bandwidth rule 'knn50'; valid: a positive"),
        (lambda X: parse_rule("nn0"), "invalid bandwidth rule 'nn0'"),
        (lambda X: resolve_gamma_rule(-1.0, X), "gamma must be > 0"),
        (lambda X: nn_sigma(X, k=120), "k must be an integer in 1..119"),
        (lambda X: nn_sigma(X, n_queries=5), "n_queries needs a random_state"),
        (lambda X: nn_sigma(X[:, 0]), "X must be a finite 2-D array"),
        (lambda X: nn_sigma(np.ones((10, 2)), k=3), "too many duplicate rows"),
    ],
)
def test_bad_input_is_one_line(data, call, message):
    with pytest.raises(KernelbenchError) as err:
        call(data)
    assert message in str(err.value) and "\n" not in str(err.value)
