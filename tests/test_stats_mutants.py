"""kernelbench.stats: the properties the mutation run (docs/mutation.md) found unchecked."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from kernelbench.errors import KernelbenchError
from kernelbench.stats import (
    BLAS_SPREAD,
    SAME_DRAWS_ATOL,
    RankTest,
    aggregate,
    cell_stats,
    nemenyi_cd,
    pooled_z,
    rank_test,
    same_draws_tolerance,
    se_floor,
    sidak_rate,
    sidak_z,
    t_interval,
    welch_df,
    z_score,
    z_text,
)


def test_cell_stats_of_two_and_fewer_values():
    assert cell_stats(np.array([1.0, 3.0])) == pytest.approx((2.0, math.sqrt(2), 1.0))
    mean, std, sem = cell_stats(np.array([5.0]))
    assert mean == 5.0 and math.isnan(std) and math.isnan(sem)
    assert all(math.isnan(v) for v in cell_stats(np.array([])))


@pytest.mark.parametrize("level", [0.95, 0.5])
def test_t_interval_is_scipys_student_interval(level):
    values = np.array([0.3, 1.1, 0.7, 2.0, 1.4])
    mean, std, sem, half = t_interval(values, level)
    lo, hi = sps.t.interval(level, len(values) - 1, loc=values.mean(), scale=sps.sem(values))
    assert (mean, std, sem) == pytest.approx((values.mean(), values.std(ddof=1), sps.sem(values)))
    assert half == pytest.approx((hi - lo) / 2, rel=1e-12)
    assert t_interval(values)[3] == pytest.approx(t_interval(values, 0.95)[3], rel=0)


def test_t_interval_needs_two_values():
    mean, std, sem, half = t_interval(np.array([2.5]))
    assert mean == 2.5 and all(math.isnan(v) for v in (std, sem, half))
    assert np.isfinite(t_interval(np.array([1.0, 2.0]))).all()


def frame(**cols):
    base = {"dataset": "letter", "kernel": "rbf", "method_label": "rff", "n": 1}
    return pd.DataFrame({**base, **cols})


def test_aggregate_cells_sorted_nan_runs_dropped_empty_cells_left_out():
    df = pd.concat(
        [
            frame(method_label="sorf", seed=4, err=[1.0, np.nan, 3.0], data_source="mirror"),
            frame(method_label="empty", seed=0, err=[np.nan, np.nan], data_source="mirror"),
            frame(method_label="gq", seed=4, err=[2.0, 4.0], data_source=[None, "synthetic"]),
            frame(method_label="one", seed=7, err=[0.5], data_source="mirror"),
        ]
    )
    a = aggregate(df, ["dataset", "kernel", "method_label", "n"], "err")
    # sorted, the all-NaN cell left out, a one-run cell kept (std and sem NaN)
    assert list(a["method_label"]) == ["gq", "one", "sorf"]
    assert list(a["runs"]) == [2, 1, 2] and list(a["mean"]) == [3.0, 0.5, 2.0]
    assert list(a["seed"]) == [4, 7, 4]
    assert list(a["data_source"]) == ["synthetic", "mirror", "mirror"]  # first non-missing
    assert math.isnan(a["std"].iloc[1]) and math.isnan(a["sem"].iloc[1])
    assert a["n"].dtype == np.float64


def test_aggregate_keeps_a_cell_whose_key_is_missing_and_defaults_seed_and_source():
    df = pd.DataFrame({"dataset": ["a", "a", None, None], "err": [1.0, 2.0, 3.0, 5.0]})
    a = aggregate(df, ["dataset"], "err")
    assert len(a) == 2 and a["mean"].tolist() == [1.5, 4.0]
    assert list(a["seed"]) == [0, 0] and a["data_source"].isna().all()


def test_aggregate_names_the_missing_columns():
    df = frame(seed=0, err=[1.0])
    with pytest.raises(KernelbenchError, match=r"^results have no column 'loss'$"):
        aggregate(df, ["dataset"], "loss")
    with pytest.raises(KernelbenchError, match=r"^results have no column\(s\) learner, split$"):
        aggregate(df, ["dataset", "learner", "split"], "err")


def test_sidak_rate_is_the_per_test_rate_of_the_family():
    for m in (1, 3, 40):
        rate = sidak_rate(m, 0.05)
        assert 1 - (1 - rate) ** m == pytest.approx(0.05, rel=1e-12)
    assert sidak_rate(0, 0.05) == pytest.approx(0.05)  # no cells: one test


def test_sidak_z_is_two_sided_and_df_is_floored_at_one():
    assert 2 * sps.norm.sf(sidak_z(3, 0.05)) == pytest.approx(sidak_rate(3, 0.05), rel=1e-10)
    assert 2 * sps.t.sf(sidak_z(3, 0.05, 7), 7) == pytest.approx(sidak_rate(3, 0.05), rel=1e-10)
    # below one degree of freedom the threshold is the Cauchy (t_1) one
    assert sidak_z(1, 0.05, 0.3) == pytest.approx(sps.cauchy.isf(0.025), rel=1e-12)


def test_welch_df_ignores_degenerate_terms():
    # a zero-df term with variance (no estimate of its spread) adds no df term
    assert welch_df([(1.0, 10), (1.0, 0)]) == pytest.approx(40)
    assert welch_df([(2.0, 5)]) == pytest.approx(5)
    assert welch_df([(2.0, 1)]) == pytest.approx(1)  # one df: the term counts
    assert welch_df([(2.0, 0.5)]) == pytest.approx(0.5)
    # only infinite-df terms: no uncertainty in the spread, infinite df
    assert welch_df([(1.0, math.inf), (3.0, math.inf)]) == math.inf
    assert welch_df([(0.0, 5), (0.0, math.inf)]) == math.inf
    assert welch_df([]) == math.inf


def test_se_floor_and_z_score():
    assert se_floor(0.0, -3.0) == 3 * BLAS_SPREAD
    assert se_floor(math.nan, 2.0) == 2 * BLAS_SPREAD
    assert se_floor(0.5, 2.0) == 0.5
    assert z_score(1.0, 0.5, 2.0) == 2.0
    assert z_score(1.0, 0.0, 1.0) == 1.0 / BLAS_SPREAD
    # no standard error and no scale: 0 / 0 is 0, anything else infinite with its sign
    assert z_score(0.0, 0.0, 0.0) == 0.0
    assert z_score(-2.0, 0.0, 0.0) == -math.inf
    assert z_score(2.0, math.nan, 0.0) == math.inf


def test_pooled_z_sums_the_variance_bounds():
    bias, se, df = pooled_z(
        rel_diff=[0.1, 0.3],
        independent=[(0.04, 9), (0.08, 19)],
        correlated=[([0.1, 0.3], 29)],
        shared_var=0.01,
        shared_df=49,
    )
    parts = [(0.04 / 4, 9), (0.08 / 4, 19), ((0.4 / 2) ** 2, 29), (0.01, 49)]
    assert bias == pytest.approx(0.2)
    assert se == pytest.approx(math.sqrt(sum(v for v, _ in parts)))
    assert df == pytest.approx(welch_df(parts))
    # the shared offset has infinite df by default
    _, _, df_inf = pooled_z([0.1], [], [], 0.01)
    assert df_inf == math.inf
    assert all(math.isnan(v) for v in pooled_z([], [], [], 0.01))


def test_z_text_shows_the_number_a_dash_for_none_and_infinity_at_the_floor():
    """What verify's report and the site print: the z-score to two decimals with its
    sign, a dash where there is none, and +-inf (std 0) where the standard errors are
    0: an infinite z, or one at the floor of z_score (two constant samples)."""
    assert z_text(None) == "–" and z_text(math.nan) == "–"
    assert z_text(0.0) == "+0.00" and z_text(-1.234) == "-1.23" and z_text(2.5, ".1f") == "2.5"
    assert z_text(-math.inf) == "−∞ (std 0)" and z_text(math.inf) == "+∞ (std 0)"
    # constant samples whose means differ by 1e-5: |z| = 1e-5 / BLAS_SPREAD
    z = z_score(1.00001 - 1.0, 0.0, 1.0)
    assert abs(z) > 1e6 and z_text(z) == "+∞ (std 0)" and z_text(-z) == "−∞ (std 0)"
    # "beyond this for any ratio off by 1e-6 or more": 1.5e-6 and 1.01e-6 read as std 0
    for rel in (1.5e-6, 1.01e-6):
        assert z_text(z_score(rel, 0.0, 1.0)) == "+∞ (std 0)"
    # a large z of measured standard errors is still a number
    assert z_text(123456.0) == "+123456.00"


def test_nemenyi_critical_difference_at_alpha_ten_percent_is_demsars():
    """Demšar (2006), Table 5(b): q_0.10 for k = 2..10; alpha defaults to 0.05 (5(a))."""
    table = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]
    for k, q in enumerate(table, start=2):
        cd = q * math.sqrt(k * (k + 1) / (6.0 * 10))
        assert nemenyi_cd(k, 10, alpha=0.10) == pytest.approx(cd, abs=2e-3)
    assert nemenyi_cd(5, 10) == pytest.approx(2.728 * math.sqrt(5 * 6 / 60), abs=2e-3)
    # the friedman path carries the alpha it was given into its critical difference
    values = np.random.default_rng(0).normal(size=(10, 5))
    assert rank_test(values, alpha=0.10).cd == pytest.approx(nemenyi_cd(5, 10, 0.10))
    assert rank_test(values, alpha=0.10).alpha == 0.10


def test_a_rank_test_needs_two_methods_and_two_blocks():
    refusal = r"^a rank test needs two methods and two blocks, got "
    for shape in [(1, 3), (5, 1), (1, 1)]:
        with pytest.raises(ValueError, match=refusal):
            rank_test(np.zeros(shape))
    assert rank_test(np.array([[0.0, 1.0], [0.0, 1.0]])).blocks == 2


@pytest.mark.parametrize("k", [2, 3])
def test_methods_tied_in_every_block_are_not_separated(k):
    """No block ranks one method before another: statistic 0, p = 1, every method at the
    mean rank (k + 1) / 2 and at shared rank 1 (Wilcoxon for two, Friedman for more)."""
    values = np.tile(np.arange(8.0)[:, None], (1, k))
    res = rank_test(values, alpha=0.2)
    assert res.test == ("Wilcoxon" if k == 2 else "Friedman")
    assert (res.statistic, res.p_value, res.alpha, res.blocks) == (0.0, 1.0, 0.2, 8)
    assert list(res.mean_ranks) == [(k + 1) / 2] * k
    assert list(res.shared_ranks()) == [1] * k
    assert math.isnan(res.cd) == (k == 2)


def test_wilcoxon_ranks_two_methods_by_their_signed_differences():
    """Six blocks: the second method worse in five by a lot and better in one by a
    little. scipy's exact two-sided p of the signed ranks {-1, 2, ..., 6} is 4 / 64."""
    a = np.arange(6.0)
    b = a + np.array([-0.5, 2.0, 3.0, 4.0, 5.0, 6.0])
    res = rank_test(np.column_stack([a, b]))
    assert res.test == "Wilcoxon" and res.statistic == 1.0
    assert res.p_value == pytest.approx(4 / 64)
    assert list(res.mean_ranks) == pytest.approx([1 + 1 / 6, 2 - 1 / 6])
    # the order of the columns does not matter to the test
    swapped = rank_test(np.column_stack([b, a]))
    assert swapped.p_value == pytest.approx(res.p_value) and swapped.statistic == 1.0


def test_significance_is_p_strictly_below_alpha():
    """docs/leaderboard.md: a method is separated at p < alpha. Six blocks all in favour
    of one method give p = 2 / 64 exactly: separated at alpha 0.05, not at 2 / 64."""
    a = np.arange(1.0, 7.0)
    values = np.column_stack([a, a + 1])
    assert list(rank_test(values).shared_ranks()) == [1, 2]
    at = rank_test(values, alpha=2 / 64)
    assert at.p_value == at.alpha and list(at.shared_ranks()) == [1, 1]
    assert not at.separated(0, 1)


def test_friedman_separates_only_pairs_further_apart_than_the_critical_difference():
    """A significant Friedman test separates a pair iff its mean ranks differ by more
    than CD, in either order; a method is never separated from itself."""
    ranks = np.array([1.0, 1.5, 3.25, 4.25])
    res = RankTest("Friedman", 12, ranks, 30.0, 1e-6, 1.5, 0.05)
    assert res.separated(0, 2) and res.separated(2, 0) and res.separated(1, 3)
    assert not res.separated(0, 1) and not res.separated(3, 2) and not res.separated(3, 3)
    # a method's rank: 1 + the methods significantly better than it
    assert list(res.shared_ranks()) == [1, 1, 3, 3]
    assert list(RankTest("Friedman", 12, ranks, 3.0, 0.2, 1.5, 0.05).shared_ranks()) == [1] * 4


def test_same_draws_tolerance_is_relative_plus_an_absolute_floor():
    """rtol |base| + atol: the absolute floor at 0, linear in |base|, even in base."""
    assert same_draws_tolerance(0.0) == SAME_DRAWS_ATOL
    t1, t2, t4 = (same_draws_tolerance(b) for b in (1.0, 2.0, 4.0))
    assert t2 - t1 == pytest.approx(t1 - SAME_DRAWS_ATOL, rel=1e-12)
    assert t4 - t2 == pytest.approx(2 * (t2 - t1), rel=1e-12)
    assert same_draws_tolerance(-3.0) == same_draws_tolerance(3.0) > same_draws_tolerance(1.0)


def test_wilcoxon_of_opposite_values_is_one_method_better_in_every_block():
    """Block values are log error ratios, of either sign: b = -a with a > 0 puts method 1
    ahead in all six blocks, p = 2 / 64 exactly, and separates the two."""
    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    res = rank_test(np.column_stack([a, -a]))
    assert res.test == "Wilcoxon" and res.p_value == pytest.approx(2 / 64)
    assert list(res.shared_ranks()) == [2, 1]


def test_a_rank_test_is_an_immutable_value():
    import dataclasses

    res = rank_test(np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.p_value = 0.0  # type: ignore[misc]
