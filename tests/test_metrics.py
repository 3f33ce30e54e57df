"""The spectral norm used for the relative spectral error."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.metrics import spectral_norm


@pytest.mark.parametrize("shape", [(1, 1), (10, 7), (50, 50), (550, 300), (300, 550), (550, 550)])
def test_spectral_norm_matches_svd_and_is_deterministic(shape):
    A = np.random.default_rng(sum(shape)).standard_normal(shape)
    expected = np.linalg.norm(A, 2)
    got = spectral_norm(A)
    assert got == pytest.approx(expected, rel=1e-12)
    assert spectral_norm(A.copy()) == got


def test_spectral_norm_of_low_rank_kernel_matrix():
    X = np.random.default_rng(0).uniform(size=(400, 3))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    assert spectral_norm(K) == pytest.approx(np.linalg.eigvalsh(K)[-1], rel=1e-12)
    assert spectral_norm(np.zeros((40, 40))) == 0.0


@pytest.mark.parametrize("method", ["rff", "sr33", "orf"])
def test_spectral_norm_of_kernel_errors_matches_lapack_and_arpack(method):
    """The error matrices the protocol sees: Golub-Kahan agrees with LAPACK's SVD and
    with the ARPACK value of schema version 1 to 1e-12 (the bits may differ)."""
    from scipy.sparse.linalg import svds

    from kernelbench import exact_kernel, make_feature_map

    rng = np.random.default_rng(1)
    X, Y = rng.uniform(size=(300, 16)), rng.uniform(size=(200, 16))
    fm = make_feature_map(method, n=1, random_state=0).fit(X)
    E = exact_kernel("rbf", X, Y) - fm.approximate_kernel(X, Y)
    v0 = np.full(200, 1.0 / np.sqrt(200))
    arpack = svds(E, k=1, v0=v0, return_singular_vectors=False, solver="arpack")[0]
    assert spectral_norm(E) == pytest.approx(np.linalg.norm(E, 2), rel=1e-12)
    assert spectral_norm(E) == pytest.approx(arpack, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_spectral_norm_of_a_near_permutation_kernel(seed):
    """RBF with a huge gamma (kernel.params.gamma=1e9 on LETTER, which has duplicate
    rows): K is a partial permutation with entries 1 - O(1e-6), Golub-Kahan breaks down
    after a few steps (an alpha of 1e-32) and the norm comes from LAPACK."""
    rng = np.random.default_rng(seed)
    K = np.zeros((550, 550))
    rows, cols = rng.choice(550, 43, replace=False), rng.choice(550, 43, replace=False)
    K[rows, cols] = 1.0 - rng.choice([0.0, 4e-7, 9e-7, 1.8e-6], size=43)
    assert spectral_norm(K) == pytest.approx(np.linalg.norm(K, 2), rel=1e-12)
    assert spectral_norm(K.T) == pytest.approx(np.linalg.norm(K, 2), rel=1e-12)


@pytest.mark.parametrize("cols", [{5: 2.0}, {5: 2.0, 7: 1.0}, {1: 1.0, 2: 3.0, 9: -3.0}])
def test_an_exact_invariant_subspace_after_the_first_step(cols, monkeypatch):
    """A rank-one u w^T with |u| = 2 and small integer w on 64 columns: every step is
    exact and alpha_1 is exactly 0. Golub-Kahan answers (no Gram fallback) with the norm
    of the 1 x 2 bidiagonal (alpha_0, beta_0), 2 |w|, not alpha_0 = 2 |sum w| / 8."""
    import kernelbench.metrics as metrics

    A = np.zeros((64, 64))
    for c, w in cols.items():
        A[:4, c] = w
    expected = 2.0 * np.linalg.norm(list(cols.values()))
    monkeypatch.setattr(metrics, "_gram_top", None)
    assert spectral_norm(A) == pytest.approx(expected, rel=1e-12)
    assert spectral_norm(A) == pytest.approx(np.linalg.norm(A, 2), rel=1e-12)
