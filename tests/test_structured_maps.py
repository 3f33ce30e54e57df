"""Fastfood (Le, Sarlos & Smola 2013) and signed circulant features (Feng, Hu & Liao 2015)
against their papers' constructions, formed densely here: equal projections to 1e-12,
the row norms' law and the sign law. Both are built from kernelbench.blocks only."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy import stats

from kernelbench import make_feature_map
from kernelbench.blocks import chi_norms, circulant_rows, fwht_rows, next_pow2, rademacher

#: False-alarm rate of each distribution test below.
ALPHA = 1e-3


def fastfood_dense(fm) -> np.ndarray:
    """W (D x d) from the stored draws, as Le et al. (2013), Eq. 7, write it (sigma = 1):
    V = (1 / sqrt(d')) S H G Pi H B per block, H unnormalised, S_ii = s_i / ||G||_F."""
    m = fm.padded_dim_
    H = scipy.linalg.hadamard(m).astype(float)
    blocks = []
    for B, perm, g, s in zip(fm.signs_, fm.perms_, fm.gaussian_, fm.chi_, strict=True):
        Pi = np.zeros((m, m))
        Pi[np.arange(m), perm] = 1.0  # (Pi v)_i = v_perm[i]
        S = np.diag(s / np.linalg.norm(g))
        blocks.append(S @ H @ np.diag(g) @ Pi @ H @ np.diag(B.astype(float)) / np.sqrt(m))
    return np.vstack(blocks)[: fm.n_projections_, : fm.n_features_in_]


def circulant_dense(fm) -> np.ndarray:
    """W (D x d): blocks diag(s) circ(c), circ(c)_ij = c_{(i - j) mod d} (Feng et al. 2015)."""
    blocks = [
        np.diag(s.astype(float)) @ scipy.linalg.circulant(c)
        for c, s in zip(fm.columns_, fm.signs_, strict=True)
    ]
    return np.vstack(blocks)[: fm.n_projections_]


DENSE = {"fastfood": fastfood_dense, "signed_circulant": circulant_dense}


@pytest.mark.parametrize("method", list(DENSE))
@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
@pytest.mark.parametrize(("d", "n"), [(1, 1), (3, 1.25), (5, 2), (16, 0.7), (100, 0.2), (37, 3)])
def test_map_equals_the_papers_dense_construction(method, kernel, d, n):
    """Projections and features equal X~ W^T of the dense W to 1e-12 (relative), for D not
    a multiple of the block size and D < d (d = 100, n = 0.2: D = 40)."""
    X = np.random.default_rng(d).standard_normal((7, d))
    fm = make_feature_map(method, kernel=kernel, n=n, random_state=d).fit(X)
    W = DENSE[method](fm)
    assert W.shape == (fm.n_projections_, d)
    P = (X * fm.input_scale_) @ W.T
    scale = np.abs(P).max()
    np.testing.assert_allclose(fm.projections(X), P, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(fm.weight_matrix(), W, rtol=0, atol=1e-12 * np.abs(W).max())
    Z = fm.features(P.copy())
    np.testing.assert_allclose(fm.transform(X), Z, rtol=0, atol=1e-12 * max(1.0, scale))


def _draws(method, d, n, seeds):
    X = np.zeros((1, d))
    return [make_feature_map(method, n=n, random_state=s).fit(X) for s in range(seeds)]


def test_fastfood_row_norms_are_chi_of_the_padded_dimension():
    """Each row of V has norm s_i exactly (S_ii = s_i / ||G||_F cancels the norm
    sqrt(d') ||G||_F of a row of H G Pi H B) and s_i ~ chi(d') (Le et al. 2013, Eq. 7)."""
    for fm in _draws("fastfood", 16, 1, 5):  # d = d' = 16: V holds whole rows (D = 34)
        V = fastfood_dense(fm)
        np.testing.assert_allclose(np.linalg.norm(V, axis=1), fm.chi_.ravel()[:34], rtol=1e-12)
    d = 12
    m = next_pow2(d)
    fms = _draws("fastfood", d, 1, 150)
    s = np.concatenate([fm.chi_.ravel() for fm in fms])
    assert stats.kstest(s, stats.chi(m).cdf).pvalue > ALPHA
    # the test can fail: chi(d) instead of chi(d') is rejected
    assert stats.kstest(s, stats.chi(d).cdf).pvalue < ALPHA


def test_circulant_rows_of_a_block_share_a_chi_norm():
    """All d rows of a block are +-shifts of c: one norm ||c|| ~ chi(d) per block."""
    d = 9
    fms = _draws("signed_circulant", d, 4, 60)
    for fm in fms[:5]:
        W = circulant_dense(fm)
        norms = np.linalg.norm(W, axis=1)
        block = np.repeat(np.linalg.norm(fm.columns_, axis=1), d)[: len(W)]
        np.testing.assert_allclose(norms, block, rtol=1e-12)
    c = np.concatenate([np.linalg.norm(fm.columns_, axis=1) for fm in fms])
    assert stats.kstest(c, stats.chi(d).cdf).pvalue > ALPHA
    assert stats.kstest(c, stats.chi(d + 2).cdf).pvalue < ALPHA


@pytest.mark.parametrize(
    ("method", "attr"), [("fastfood", "signs_"), ("signed_circulant", "signs_")]
)
def test_signs_are_rademacher(method, attr):
    """The B of Fastfood and the s of signed circulant features: +-1, each with
    probability 1/2 (two-sided binomial test), independent of position (no column bias)."""
    signs = np.concatenate([getattr(fm, attr).ravel() for fm in _draws(method, 16, 2, 100)])
    assert set(np.unique(signs)) == {-1, 1}
    plus = int((signs == 1).sum())
    assert stats.binomtest(plus, len(signs)).pvalue > ALPHA
    mat = np.stack([getattr(fm, attr)[0] for fm in _draws(method, 16, 2, 400)])
    # per position: +1 frequency consistent with 1/2 (chi-square over 16 positions)
    counts = (mat == 1).sum(axis=0)
    chi2 = float(np.sum((counts - 200) ** 2 / 100.0))
    assert stats.chi2(16).sf(chi2) > ALPHA


def test_fastfood_permutations_are_uniform_and_gaussians_standard():
    perms = np.stack([fm.perms_[0] for fm in _draws("fastfood", 8, 0.3, 800)])
    assert all(sorted(p) == list(range(8)) for p in perms)
    first = np.bincount(perms[:, 0], minlength=8)
    assert stats.chisquare(first).pvalue > ALPHA
    g = np.concatenate([fm.gaussian_.ravel() for fm in _draws("fastfood", 8, 2, 100)])
    assert stats.kstest(g, "norm").pvalue > ALPHA


def test_blocks_are_the_transforms_of_their_docstrings():
    """fwht_rows is H x with H normalised; circulant_rows is circ(c) x; chi_norms and
    rademacher draw as documented."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 16))
    H = scipy.linalg.hadamard(16) / 4.0
    np.testing.assert_allclose(fwht_rows(X), X @ H.T, atol=1e-13)
    c = rng.standard_normal(7)
    Y = rng.standard_normal((4, 7))
    np.testing.assert_allclose(
        circulant_rows(Y, np.fft.rfft(c)), Y @ scipy.linalg.circulant(c).T, atol=1e-13
    )
    assert circulant_rows(Y.astype(np.float32), np.fft.rfft(c)).dtype == np.float32
    s = chi_norms(np.random.default_rng(1), 5, 4000)
    assert stats.kstest(s, stats.chi(5).cdf).pvalue > ALPHA
    r = rademacher(np.random.default_rng(2), (3, 4))
    assert r.dtype == np.int8 and set(np.unique(r)) <= {-1, 1}


@pytest.mark.parametrize("method", list(DENSE))
@pytest.mark.parametrize("kernel", ["rbf", "arccos1"])
def test_transform_never_allocates_a_dense_matrix(method, kernel):
    import tracemalloc

    d = 1000
    X = np.random.default_rng(0).uniform(0, 1, (4, d))
    make_feature_map(method, kernel=kernel, n=1).fit(X).transform(X)
    fm = make_feature_map(method, kernel=kernel, n=1, random_state=0).fit(X)
    tracemalloc.start()
    fm.transform(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < d * d * 8 / 8, peak


@pytest.mark.parametrize("method", ["fastfood", "signed_circulant"])
@pytest.mark.parametrize("kernel", ["rbf", "arccos1"])
@pytest.mark.parametrize("n", [1, 0.7])
def test_every_projection_weighs_one_over_d_and_there_is_no_node_at_zero(method, kernel, n):
    """Both are Monte Carlo maps with marginally N(0, I) rows: weight 1 / D each and no
    node at zero (no constant), so for rbf k_hat(x, x) = sum_j (cos^2 + sin^2) / D = 1."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    fm = make_feature_map(method, kernel=kernel, n=n, random_state=0).fit(X)
    D = fm.weights_.size
    np.testing.assert_array_equal(fm.weights_, np.full(D, 1.0 / D))
    assert fm.zero_weight_ == 0.0 and fm.constant_ == 0.0
    if kernel == "rbf":
        np.testing.assert_allclose(np.diag(fm.approximate_kernel(X, X)), 1.0, rtol=1e-12)


@pytest.mark.parametrize("method", ["fastfood", "signed_circulant"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_features_keep_the_inputs_float_type(method, dtype):
    """float32 rows give float32 features, float64 rows float64 (the estimator contract),
    equal to each other to float32's rounding."""
    X = np.random.default_rng(1).standard_normal((6, 5))
    fm = make_feature_map(method, n=1, random_state=0).fit(X)
    Z = fm.transform(X.astype(dtype))
    assert Z.dtype == dtype
    np.testing.assert_allclose(Z, fm.transform(X), rtol=0, atol=1e-5)
