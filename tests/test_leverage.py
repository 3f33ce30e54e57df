"""lev_rff and slw_rff: Liu et al. 2020's leverage-weighted samplers (Algorithm 1)."""

from __future__ import annotations

import numpy as np
import pytest
from test_features import bias_statistic, small_data

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map
from kernelbench.features.lev_rff import gram_upper, symmetrize_upper
from kernelbench.kernels import exact_kernel

METHODS = ("lev_rff", "slw_rff")


def _data(n: int = 40, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("method", METHODS)
def test_mean_of_draws_converges_to_exact_kernel(method: str) -> None:
    """Importance weights sqrt(p/q) keep E[K_hat] = K, as for the other methods
    (tests/test_features.py: the same statistic and thresholds)."""
    X, Y = small_data(d=5, nx=8, ny=6)
    y = np.where(X[:, 0] > np.median(X[:, 0]), 1.0, -1.0)
    K = exact_kernel("rbf", X, Y)
    ss = np.random.SeedSequence(0)
    Ks = np.stack(
        [
            make_feature_map(method, n=1, random_state=np.random.default_rng(s))
            .fit(X, y)
            .approximate_kernel(X, Y)
            for s in ss.spawn(1200)
        ]
    )
    # no bias beyond Monte Carlo noise. (The 1/sqrt(R) shrink check of the other
    # methods is left out: weights L / (s l p_i) are heavy-tailed when a rarely chosen
    # frequency is drawn, so the error at R = 75 is itself too noisy to compare.)
    assert bias_statistic(Ks, K) < 9.0


def test_bias_statistic_flags_weights_without_importance_correction() -> None:
    """The test can fail: slw_rff re-sampling with plain 1/s weights (no sqrt(p/q)) is biased."""
    X, Y = small_data(d=5, nx=8, ny=6)
    y = np.where(X[:, 0] > np.median(X[:, 0]), 1.0, -1.0)
    K = exact_kernel("rbf", X, Y)
    Ks = []
    for s in np.random.SeedSequence(0).spawn(1200):
        fm = make_feature_map("slw_rff", n=1, random_state=np.random.default_rng(s)).fit(X, y)
        fm._feature_scale = np.full(fm.n_projections_, 1.0 / np.sqrt(fm.n_projections_))
        Ks.append(fm.approximate_kernel(X, Y))
    assert bias_statistic(np.stack(Ks), K) > 20


@pytest.mark.parametrize("method", METHODS)
def test_weights_are_importance_weights(method: str) -> None:
    """a_i^2 = L / (s l p_i): the map uses s of the l pre-sampled frequencies."""
    X, y = _data()
    fm = make_feature_map(method, n=2, gamma=1.0, random_state=3, presample=2.0).fit(X, y)
    s, l = fm.n_projections_, fm.n_presampled_
    assert s == 2 * 2 * 4 and l == 2 * s
    prob = fm.scores_ / fm.scores_.sum()
    np.testing.assert_allclose(fm.weights_, 1.0 / (s * l * prob[fm.indices_]))
    W0 = np.random.default_rng(3).standard_normal((l, X.shape[1]))
    np.testing.assert_array_equal(fm.W_, W0[fm.indices_])


def test_slw_scores_are_label_alignment() -> None:
    """p_i = (y^T cos_i)^2 + (y^T sin_i)^2 of the pre-sampled features (Eq. (15))."""
    X, y = _data()
    fm = make_feature_map("slw_rff", n=1, gamma=0.5, random_state=1).fit(X, y)
    W0 = np.random.default_rng(1).standard_normal((fm.n_presampled_, 3))
    P = X * np.sqrt(2 * 0.5) @ W0.T
    l = fm.n_presampled_
    want = ((y @ np.cos(P)) ** 2 + (y @ np.sin(P)) ** 2) / l
    np.testing.assert_allclose(fm.scores_, want, rtol=1e-12)


def test_lev_scores_are_ridge_leverage_scores() -> None:
    """p_i = diag(G (G + n lambda I)^{-1}), summed over a frequency's cos and sin columns."""
    X, y = _data()
    fm = make_feature_map("lev_rff", n=1, gamma=1.0, random_state=2, ridge=0.1).fit(X, y)
    l = fm.n_presampled_
    W0 = np.random.default_rng(2).standard_normal((l, 3))
    P = X * np.sqrt(2.0) @ W0.T
    Z = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(l)
    G = Z.T @ Z
    lev = np.diag(G @ np.linalg.inv(G + len(X) * 0.1 * np.eye(2 * l)))
    np.testing.assert_allclose(fm.scores_, lev[:l] + lev[l:], rtol=1e-9)
    assert fm.scores_.sum() < 2 * l  # leverage scores sum to the effective dimension


def test_slw_prefers_label_aligned_frequencies() -> None:
    """With labels that follow one direction, re-sampling raises the mean score."""
    X, y = _data(n=200, seed=4)
    fm = make_feature_map("slw_rff", n=4, gamma=1.0, random_state=0).fit(X, y)
    assert fm.scores_[fm.indices_].mean() > fm.scores_.mean()


def test_deterministic_and_float32() -> None:
    X, y = _data()
    a = make_feature_map("slw_rff", n=1, random_state=5).fit(X, y).transform(X)
    b = make_feature_map("slw_rff", n=1, random_state=5).fit(X, y).transform(X)
    np.testing.assert_array_equal(a, b)
    other = make_feature_map("slw_rff", n=1, random_state=6).fit(X, y).transform(X)
    assert not np.array_equal(a, other)  # the seed is what fixes them, not a constant
    c = make_feature_map("slw_rff", n=1, random_state=5).fit(X.astype(np.float32), y)
    assert c.transform(X.astype(np.float32)).dtype == np.float32


def test_errors_are_one_line() -> None:
    X, y = _data()
    with pytest.raises(KernelbenchError, match="supervised"):
        make_feature_map("slw_rff", n=1).fit(X)
    with pytest.raises(KernelbenchError, match="vector of 40 labels"):
        make_feature_map("slw_rff", n=1).fit(X, y[:3])
    with pytest.raises(KernelbenchError, match="presample must be"):
        make_feature_map("lev_rff", n=1, presample=0.5).fit(X, y)
    with pytest.raises(KernelbenchError, match="ridge must be"):
        make_feature_map("lev_rff", n=1, ridge=0).fit(X, y)
    with pytest.raises(KernelbenchError, match="rbf"):
        make_feature_map("slw_rff", kernel="arccos0", n=1).fit(X, y)
    # lev_rff reads no labels
    make_feature_map("lev_rff", n=1, random_state=0).fit(X)


def test_gram_upper_accumulates_in_place() -> None:
    rng = np.random.default_rng(0)
    Z1, Z2 = rng.standard_normal((7, 4)), rng.standard_normal((5, 4))
    G = np.zeros((4, 4), order="F")
    assert gram_upper(Z1, out=G) is G
    gram_upper(Z2, out=G)
    np.testing.assert_allclose(symmetrize_upper(G), Z1.T @ Z1 + Z2.T @ Z2, rtol=1e-12)
