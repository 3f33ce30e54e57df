"""lev_rff and the shared sampler (kernelbench.features.lev_rff): the properties the
mutation run (docs/mutation.md) found unchecked."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map
from kernelbench.features.lev_rff import _usable, check_labels, gram_upper


def _data(n: int = 30, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


def test_labels_are_checked_in_one_line_each():
    """fit(X, y) of a supervised map: y present, a vector of one label per row, finite."""
    with pytest.raises(
        KernelbenchError, match=r"^this feature map is supervised: fit\(X, y\) needs the labels y$"
    ):
        check_labels(None, 4)
    with pytest.raises(
        KernelbenchError, match=r"^y must be a vector of 4 labels, got shape \(3,\)$"
    ):
        check_labels(np.ones(3), 4)
    for bad in ([1.0, np.nan, 1.0, -1.0], [1.0, np.inf, 1.0, -1.0], ["a", "b", "a", "b"]):
        with pytest.raises(KernelbenchError, match=r"^y must hold finite numbers$"):
            check_labels(np.array(bad), 4)
    y = check_labels(np.array([1, -1, 1, 1]), 4)
    assert y.dtype == np.float64 and list(y) == [1.0, -1.0, 1.0, 1.0]


@pytest.mark.parametrize("order", ["F", "C"])
def test_gram_upper_adds_z_transpose_z_of_any_row_count(order):
    """out + Z^T Z (upper triangle) for one row, no rows and many; a C-ordered ``out``
    (not updated in place by BLAS) still holds the sum."""
    rng = np.random.default_rng(0)
    Z1, Z2 = rng.standard_normal((1, 4)), rng.standard_normal((6, 4))
    G = np.zeros((4, 4), order=order)
    for Z in (Z1, np.empty((0, 4)), Z2):
        assert gram_upper(Z, out=G) is G
    want = Z1.T @ Z1 + Z2.T @ Z2
    iu = np.triu_indices(4)
    np.testing.assert_allclose(G[iu], want[iu], rtol=1e-12)


@pytest.mark.parametrize("scores", [[0.0, 0.0, 0.0], [-1.0, 0.0, -2.0], [np.inf, 1.0, 2.0]])
def test_scores_without_signal_give_plain_rff_weights(scores):
    """No positive finite total: every frequency score 1 (q uniform, a_i^2 = 1/s)."""
    s, total = _usable(scores)
    np.testing.assert_array_equal(s, np.ones(3))
    assert total == 3.0


def test_small_and_negative_scores_are_kept_clipped_at_zero():
    """A total below 1 is still a signal (leverage scores sum to the effective
    dimension, slw scores scale as 1/l); a negative score (rounding) counts 0."""
    s, total = _usable([0.25, -1e-17, 0.5])
    np.testing.assert_array_equal(s, [0.25, 0.0, 0.5])
    assert total == 0.75


@pytest.mark.parametrize("method", ["lev_rff", "slw_rff"])
def test_resampled_maps_have_sklearns_identity_and_repr(method):
    """As the other maps (tests/test_features_mutants.py): compared by identity,
    hashable, repr of the changed parameters only."""
    a, b = make_feature_map(method, n=2), make_feature_map(method, n=2)
    assert a != b and a == a and len({a, b}) == 2
    assert repr(a) == f"{type(a).__name__}(n=2)"


def test_bad_sampler_parameters_are_refused_in_one_line():
    X, y = _data()
    with pytest.raises(
        KernelbenchError, match=r"^presample must be a number >= 1 \(l >= s\), got 0.5$"
    ):
        make_feature_map("lev_rff", presample=0.5).fit(X, y)
    with pytest.raises(
        KernelbenchError, match=r"^invalid mode 'paper'; valid choices: resample, reweight"
    ):
        make_feature_map("lev_rff", mode="paper").fit(X, y)
    whole = (
        r"^presample must be 1 with mode 'reweight' \(it scores the s drawn frequencies "
        r"themselves\), got 2$"
    )
    with pytest.raises(KernelbenchError, match=whole):
        make_feature_map("lev_rff", mode="reweight", presample=2).fit(X, y)


def test_defaults_are_table_3s_l_equal_s_and_the_public_codes_ridge():
    """Liu et al. 2020, Table 3: l = s pre-sampled frequencies; lambda 0.05 as in
    leverageRFF.m (the smallest of the Table 3 grid)."""
    X, y = _data()
    fm = make_feature_map("lev_rff", n=1, random_state=4).fit(X, y)
    assert fm.n_presampled_ == fm.n_projections_ == 8
    explicit = make_feature_map("lev_rff", n=1, random_state=4, ridge=0.05, presample=1.0)
    np.testing.assert_array_equal(fm.scores_, explicit.fit(X, y).scores_)


def test_lev_scores_do_not_depend_on_the_row_chunks(monkeypatch):
    """G = Z^T Z sums over every row chunk (memory O(chunk l)), rows > d here."""
    from kernelbench.features import lev_rff

    X, y = _data(n=10)
    whole = make_feature_map("lev_rff", random_state=1).fit(X, y).scores_
    monkeypatch.setattr(lev_rff, "SCORE_CHUNK_ROWS", 3)
    chunked = make_feature_map("lev_rff", random_state=1).fit(X, y).scores_
    np.testing.assert_allclose(chunked, whole, rtol=1e-12)


def test_a_zero_column_score_gets_the_smallest_positive_ones_weight():
    """reweight: q = score / total, floored at the smallest positive q, so a column
    whose score is 0 gets a finite weight sqrt(1/s) sqrt(1/q_min), not 1/0."""
    from kernelbench.features.lev_rff import LevRFF

    class ZeroScored(LevRFF):
        def _column_scores(self, X, y, W, b):
            scores = super()._column_scores(X, y, W, b).copy()
            scores[[0, 3]] = 0.0
            return scores

    X, y = _data()
    fm = ZeroScored(mode="reweight", random_state=0).fit(X, y)
    s = fm.n_projections_
    q = fm.scores_ / fm.scores_.sum()
    assert np.count_nonzero(q == 0) == 2
    assert np.all(np.isfinite(fm.column_scale_))
    largest = np.sqrt(1.0 / s) * np.sqrt(1.0 / q[q > 0].min())
    np.testing.assert_allclose(fm.column_scale_[-2:], largest, rtol=1e-12)
    assert np.all(np.isfinite(fm.transform(X)))


@pytest.mark.parametrize("mode", ["resample", "reweight"])
def test_weight_matrix_holds_the_projections_rows(mode):
    """X~ W^T (+ the phases [b, b] of reweight's columns): s x d re-sampled rows, or
    reweight's 2s x d (one row per column); reweight scores its l = s drawn
    frequencies themselves."""
    X, y = _data()
    fm = make_feature_map("lev_rff", mode=mode, gamma=2.0, random_state=5).fit(X, y)
    s = fm.n_projections_
    assert fm.n_presampled_ == s
    W = fm.weight_matrix()
    shift = np.concatenate([fm.phase_, fm.phase_]) if mode == "reweight" else 0.0
    assert W.shape == ((2 * s if mode == "reweight" else s), 3)
    np.testing.assert_allclose(fm.projections(X), (2.0 * X) @ W.T + shift, rtol=1e-12)
