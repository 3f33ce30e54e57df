"""kernelbench.verify.compare: the properties the mutation run (docs/mutation.md) found
unchecked."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernelbench.errors import KernelbenchError
from kernelbench.stats import BLAS_SPREAD, welch_df
from kernelbench.verify import compare
from kernelbench.verify.compare import (
    compare_baseline,
    compare_reference,
    judge,
    load_sample_variation,
    pooled_bias,
    tau_df,
)
from tests.test_verify import cfg_with, ours_row, ref_row

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verification.md"


def test_the_verdict_words_are_the_ones_the_docs_explain():
    """verify.csv, the report and the figures print these words; docs/verification.md
    lists each of them (the tau source 'default' too, the flag of an unmeasured pair)."""
    text = DOCS.read_text(encoding="utf-8")
    words = [
        compare.REPRODUCED,
        compare.DEVIATES,
        compare.NO_REFERENCE,
        compare.AGREES,
        compare.DRIFTS,
        compare.NO_BASELINE,
        compare.DEFAULT_TAU,
    ]
    assert len(set(words)) == len(words)
    missing = [w for w in words if f"`{w}`" not in text]
    if f"`{compare.KNOWN}: <reason>`" not in text:
        missing.append(compare.KNOWN)
    assert not missing, f"docs/verification.md does not explain {missing}"


def test_a_missing_sample_variation_table_is_one_line_naming_what_writes_it(tmp_path):
    with pytest.raises(KernelbenchError) as err:
        load_sample_variation(tmp_path / "tau.csv")
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("sample-variation table ")
    assert msg.endswith("not found (scripts/measure_sample_variation.py writes it)")
    assert load_sample_variation(None) is None


TAU = pd.DataFrame(
    {
        "dataset": ["letter", "mnist", "letter"],
        "kernel": ["rbf", "rbf", "arccos0"],
        "cv": [0.1, 0.2, 0.3],
        "df": [56, 10, 20],
    }
)


def test_tau_cv_reads_the_pairs_own_row():
    assert compare.tau_cv(TAU, "letter", "rbf") == (0.1, "measured")
    assert compare.tau_cv(TAU, "mnist", "rbf") == (0.2, "measured")
    assert compare.tau_cv(TAU, "letter", "arccos0") == (0.3, "measured")
    assert compare.tau_cv(TAU, "mnist", "arccos0") == (0.0, compare.DEFAULT_TAU)
    assert compare.tau_cv(TAU.iloc[:0], "letter", "rbf") == (0.0, "none")


def test_tau_df_reads_the_pairs_own_row():
    assert tau_df(TAU, "letter", "rbf") == 56
    assert tau_df(TAU, "mnist", "rbf") == 10
    assert tau_df(TAU, "letter", "arccos0") == 20
    assert tau_df(TAU, "mnist", "arccos0") == math.inf  # unmeasured: a declared default
    assert tau_df(TAU.drop(columns="df"), "letter", "rbf") == math.inf  # no estimate
    assert tau_df(None, "letter", "rbf") == math.inf
    assert tau_df(TAU.iloc[:0], "letter", "rbf") == math.inf


def test_a_cell_without_a_paper_number_has_every_column_empty_and_keeps_the_rest():
    """An unmatched cell gets the matched cells' columns, all empty (NaN, tau_source ''),
    and does not stop the cells after it. Results of which the paper reports no cell are
    judged 'no reference' (the table had no df column then, and judge stopped on a
    KeyError)."""
    cfg = cfg_with()
    ours = [ours_row(label="sr11"), ours_row(), ours_row(label="gq")]
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame([ref_row()]), cfg, None)
    assert list(t["method_label"]) == ["sr11", "rff", "gq"]
    matched = compare_reference(pd.DataFrame(ours[1:2]), pd.DataFrame([ref_row()]), cfg, None)
    assert set(t.columns) == set(matched.columns)
    empty = ["paper_mean", "paper_std", "paper_sem", "paper_runs", "ratio", "tau"]
    empty += ["se_diff", "z", "df"]
    for row in (0, 2):
        assert t.loc[row, empty].isna().all()
        assert t.loc[row, "tau_source"] == "" and pd.isna(t.loc[row, "paper_method"])
    alone = compare_reference(pd.DataFrame(ours[:1]), pd.DataFrame([ref_row()]), cfg, None)
    assert set(alone.columns) == set(matched.columns)
    judged, _, m = judge(alone, 0.01, False)
    assert list(judged["verdict"]) == [compare.NO_REFERENCE] and m == 0


def test_the_degrees_of_freedom_and_se_of_a_cell_of_one_run():
    """One run of ours (sem NaN): no share in se_diff, and without tau the Welch df is the
    paper's runs - 1 (the only term with a variance)."""
    ours = [ours_row(mean=0.11, std=math.nan, runs=1)]
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame([ref_row()]), cfg_with(), None)
    paper_sem = 0.01 / math.sqrt(500)
    assert t["se_diff"].iloc[0] == pytest.approx(paper_sem, rel=1e-12)
    assert t["z"].iloc[0] == pytest.approx(0.01 / paper_sem, rel=1e-9)
    assert t["df"].iloc[0] == pytest.approx(499.0, rel=1e-12)
    # our runs exact too (std 0): the same df
    ours = [ours_row(mean=0.11, std=0.0, runs=30)]
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame([ref_row()]), cfg_with(), None)
    assert t["df"].iloc[0] == pytest.approx(499.0, rel=1e-12)
    assert np.isfinite(t["z"].iloc[0])


def test_the_welch_df_takes_the_measured_pairs_own_df():
    """tau's share of the Welch-Satterthwaite df is the df of the pair's own row."""
    ours = [ours_row(mean=0.11)]
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame([ref_row()]), cfg_with(), TAU)
    tau = 0.1 * 0.1
    parts = [(0.01**2 / 30, 29.0), (0.01**2 / 500, 499.0), (2 * tau**2, 56.0)]
    assert t["tau"].iloc[0] == pytest.approx(tau)
    assert t["df"].iloc[0] == pytest.approx(welch_df(parts), rel=1e-12)
    assert t["df"].iloc[0] != pytest.approx(welch_df([*parts[:2], (2 * tau**2, math.inf)]))


def test_a_cell_without_a_baseline_has_every_column_empty_and_keeps_the_rest():
    """As for the paper: an unmatched cell's baseline columns are empty, the cells after
    it are compared, and results none of which the baseline holds are judged 'no
    baseline' (judge stopped on a KeyError for base_df before)."""
    ours = [ours_row(label="sr11"), ours_row(), ours_row(label="gq")]
    base = [ours_row(mean=0.1)]
    t = compare_baseline(pd.DataFrame(ours), pd.DataFrame(base))
    assert list(t["method_label"]) == ["sr11", "rff", "gq"]
    matched = compare_baseline(pd.DataFrame(ours[1:2]), pd.DataFrame(base))
    assert set(t.columns) == set(matched.columns)
    empty = ["base_mean", "base_runs", "base_ratio", "base_se", "base_z", "base_df"]
    for row in (0, 2):
        assert t.loc[row, empty].isna().all() and t.loc[row, "base_test"] == ""
    assert t.loc[1, "base_test"] == "rtol"
    alone = compare_baseline(pd.DataFrame(ours[:1]), pd.DataFrame(base))
    assert set(alone.columns) == set(matched.columns)
    table = compare_reference(pd.DataFrame(ours[:1]), pd.DataFrame([ref_row()]), cfg_with(), None)
    table = table.merge(alone, on=["dataset", "kernel", "method_label", "n"], how="left")
    judged, _, m = judge(table, 0.01, True)
    assert list(judged["base_verdict"]) == [compare.NO_BASELINE] and m == 0


def test_a_baseline_cell_of_one_run_adds_no_variance():
    """Our std NaN (one run), another seed: the variance is the baseline's s^2 / B only."""
    ours = [ours_row(mean=0.1, std=math.nan, runs=1)]
    base = [ours_row(mean=0.101, runs=500, seed=1)]
    t = compare_baseline(pd.DataFrame(ours), pd.DataFrame(base))
    assert t["base_test"].iloc[0] == "z"
    assert t["base_se"].iloc[0] == pytest.approx(0.01 / math.sqrt(500), rel=1e-12)
    # and the baseline's std NaN: ours only
    ours = [ours_row(mean=0.1, runs=30)]
    base = [ours_row(mean=0.101, std=math.nan, runs=1, seed=1)]
    t = compare_baseline(pd.DataFrame(ours), pd.DataFrame(base))
    assert t["base_se"].iloc[0] == pytest.approx(0.01 / math.sqrt(30), rel=1e-12)


def _satterthwaite(*terms: tuple[float, float]) -> float:
    """(sum v)^2 / sum v^2 / df, written out (Welch 1947)."""
    return sum(v for v, _ in terms) ** 2 / sum(v**2 / df for v, df in terms)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_baseline_df_is_welch_satterthwaite_of_the_two_variances(seed):
    """Same seed, other runs: the halves of s^2 with df R - 1 and B - 1; another seed:
    s^2 / R and s^2 / B (independent means)."""
    R, B, s_o, s_b = 30, 500, 0.01, 0.03
    ours = [ours_row(mean=0.1, std=s_o, runs=R)]
    base = [ours_row(mean=0.101, std=s_b, runs=B, seed=seed)]
    t = compare_baseline(pd.DataFrame(ours), pd.DataFrame(base))
    if seed == 0:
        want = _satterthwaite((0.5 * s_o**2, R - 1), (0.5 * s_b**2, B - 1))
    else:
        want = _satterthwaite((s_o**2 / R, R - 1), (s_b**2 / B, B - 1))
    assert t["base_test"].iloc[0] == "z"
    assert t["base_df"].iloc[0] == pytest.approx(want, rel=1e-12)


def test_the_baseline_ratio_is_ours_over_the_baseline_and_nan_at_a_zero_baseline():
    ours = [ours_row(mean=0.1), ours_row(label="gq", mean=0.1)]
    base = [ours_row(mean=0.125, runs=500), ours_row(label="gq", mean=0.0, runs=500)]
    t = compare_baseline(pd.DataFrame(ours), pd.DataFrame(base))
    assert t["base_ratio"].iloc[0] == pytest.approx(0.8, rel=1e-12)
    assert math.isnan(t["base_ratio"].iloc[1])
    assert list(t["base_mean"]) == [0.125, 0.0] and list(t["base_runs"]) == [500, 500]


def _family(ours, ref, known=()):
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame(ref), cfg_with(known=known), None)
    return pooled_bias(t, None)


def test_the_pooled_se_of_independent_runs_is_the_root_sum_of_relative_sems_over_k():
    """Paper std 0, no tau: Var(mean r_i) = sum (sem_i / p_i)^2 / k^2; a cell of one run
    (sem NaN) adds nothing; its df is Welch's of the cells' runs - 1."""
    ps, ms = [0.1, 0.2, 0.4], [0.11, 0.2, 0.5]
    ours = [
        ours_row(n=1, mean=ms[0], std=0.01, runs=30),
        ours_row(n=2, mean=ms[1], std=0.04, runs=20),
        ours_row(n=3, mean=ms[2], std=math.nan, runs=1),
    ]
    ref = [ref_row(n=n, mean=p, std=0.0) for n, p in zip((1, 2, 3), ps, strict=True)]
    (row,) = _family(ours, ref).to_dict("records")
    v = [(0.01 / math.sqrt(30) / 0.1) ** 2, (0.04 / math.sqrt(20) / 0.2) ** 2]
    assert row["cells"] == 3 and row["ns"] == "1,2,3"
    assert row["bias"] == pytest.approx(np.mean([0.1, 0.0, 0.25]), rel=1e-12)
    assert row["se"] == pytest.approx(math.sqrt(sum(v)) / 3, rel=1e-12)
    assert row["df"] == pytest.approx(_satterthwaite((v[0] / 9, 29), (v[1] / 9, 19)), rel=1e-12)
    assert (row["ratio_min"], row["ratio_max"]) == pytest.approx((1.0, 1.25))


def test_the_pooled_se_of_the_papers_sems_is_their_mean_relative_sem():
    """Our runs exact, no tau: the paper's cells are of unknown correlation, so the bound
    (sum sd_i / k)^2 with sd_i = paper sem / paper mean, df the fewest paper runs - 1; a
    paper cell without a std adds nothing."""
    ps = [0.1, 0.2, 0.4]
    ours = [ours_row(n=n, mean=p, std=0.0) for n, p in zip((1, 2, 3), ps, strict=True)]
    ref = [
        ref_row(n=1, mean=0.1, std=0.02, runs=400),
        ref_row(n=2, mean=0.2, std=0.02, runs=100),
        ref_row(n=3, mean=0.4, std=math.nan, runs=500),
    ]
    (row,) = _family(ours, ref).to_dict("records")
    sd = [0.02 / math.sqrt(400) / 0.1, 0.02 / math.sqrt(100) / 0.2]
    assert row["se"] == pytest.approx(sum(sd) / 3, rel=1e-12)
    assert row["df"] == pytest.approx(99.0, rel=1e-12)


def test_a_family_pools_its_unknown_cells_or_if_all_are_known_all_its_cells():
    """Two cells not known and one known: the two pooled, not known; one not known and
    one known: no pooled test; all known: pooled and known, each distinct reason once."""
    known = [
        {"methods": ["orf"], "ns": [3], "reason": "r1"},
        {"methods": ["gq"], "reason": "r1"},
        {"methods": ["gq"], "ns": [2], "reason": "r2"},
        {"methods": ["sorf"], "ns": [2], "reason": "r3"},
    ]
    ours = [ours_row(label="sorf", n=n) for n in (1, 2)]  # first: the others follow it
    ours += [ours_row(label=m, n=n) for m in ("orf", "gq") for n in (1, 2, 3)]
    ref = [ref_row(method=m, n=n) for m in ("orf", "gq", "sorf") for n in (1, 2, 3)]
    p = _family(ours, ref, known).set_index("method_label")
    assert sorted(p.index) == ["gq", "orf"]
    assert p.loc["orf", "cells"] == 2 and p.loc["orf", "known"] == ""
    assert p.loc["orf", "ns"] == "1,2"
    assert p.loc["gq", "cells"] == 3 and p.loc["gq", "known"] == "r1; r1; r2"


def test_with_shared_runs_our_cells_sems_are_bounded_as_correlated():
    """shared_runs (the cells of a family share their draws): our relative sems enter as
    (sum sd_i / k)^2 too, with the fewest runs - 1 as df."""
    ours = [
        ours_row(n=1, mean=0.1, std=0.01, runs=30),
        ours_row(n=2, mean=0.2, std=0.04, runs=20),
    ]
    ref = [ref_row(n=n, mean=p, std=0.0) for n, p in ((1, 0.1), (2, 0.2))]
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame(ref), cfg_with(), None)
    (row,) = pooled_bias(t, None, shared_runs=True).to_dict("records")
    sd = [0.01 / math.sqrt(30) / 0.1, 0.04 / math.sqrt(20) / 0.2]
    assert row["se"] == pytest.approx(sum(sd) / 2, rel=1e-12)
    assert row["df"] == pytest.approx(19.0, rel=1e-12)


def test_the_pooled_tau_term_is_the_pairs_own_cv_and_df():
    """tau enters as one shared offset 2 cv^2 with the df of the pair's row."""
    ours = [ours_row(n=n, mean=p, std=0.0) for n, p in ((1, 0.1), (2, 0.2))]
    ref = [ref_row(n=n, mean=p, std=0.02, runs=100) for n, p in ((1, 0.1), (2, 0.2))]
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame(ref), cfg_with(), TAU)
    (row,) = pooled_bias(t, TAU).to_dict("records")
    sd = (0.02 / 10 / 0.1 + 0.02 / 10 / 0.2) / 2
    assert row["cv"] == pytest.approx(0.1, rel=1e-12)
    assert row["se"] == pytest.approx(math.sqrt(sd**2 + 2 * 0.1**2), rel=1e-12)
    assert row["df"] == pytest.approx(_satterthwaite((sd**2, 99), (2 * 0.1**2, 56)), rel=1e-12)


def test_a_noiseless_family_has_the_floor_of_a_relative_difference_as_its_se():
    """std 0 on both sides, no tau: se is BLAS_SPREAD (the floor at scale 1, the mean of
    relative differences), and z the mean relative difference over it."""
    ours = [ours_row(n=n, mean=p * (1 + 1e-12), std=0.0) for n, p in ((1, 0.1), (2, 0.2))]
    ref = [ref_row(n=n, mean=p, std=0.0) for n, p in ((1, 0.1), (2, 0.2))]
    (row,) = _family(ours, ref).to_dict("records")
    assert row["se"] == BLAS_SPREAD
    assert row["z"] == pytest.approx(row["bias"] / BLAS_SPREAD, rel=1e-12)
    assert row["bias"] == pytest.approx(1e-12, rel=1e-3)


def test_a_z_at_the_critical_value_reproduces():
    """docs/verification.md: reproduced when |z| <= z_crit (the bound included)."""
    from kernelbench.stats import sidak_z

    z = sidak_z(1, 0.01)
    table = pd.DataFrame(
        {"paper_mean": [0.1], "known": [""], "z": [-z], "df": [math.inf], "ratio": [1.0]}
    )
    judged, _, m = judge(table, 0.01, False)
    assert m == 1 and judged["z_crit"].iloc[0] == z
    assert judged["verdict"].iloc[0] == compare.REPRODUCED
    assert bool(judged["within_tolerance"].iloc[0])
    # the baseline's same-draws test: |base_z| <= 1 agrees
    table = table.assign(base_test="rtol", base_mean=0.1, base_z=-1.0, base_df=math.inf)
    judged, _, _ = judge(table, 0.01, True)
    assert judged["base_z_crit"].iloc[0] == 1.0
    assert judged["base_verdict"].iloc[0] == compare.AGREES
    # and a pooled family's z at its critical value
    pooled = pd.DataFrame({"known": [""], "z": [z], "df": [math.inf]})
    judged, _, m = judge(table.assign(known="r"), 0.01, False, pooled)
    assert m == 1 and pooled["z_crit"].iloc[0] == z
    assert bool(pooled["within_tolerance"].iloc[0])
    assert pooled["verdict"].iloc[0] == compare.REPRODUCED


def test_verify_table_reads_the_configs_reference_pools_and_compares_the_baseline():
    """Without ``ref``, the config's reference is read; the families are pooled; a
    baseline adds its columns. Checked against the paper's powerplant rbf rff cells."""
    import dataclasses

    from kernelbench.reference import load_reference
    from kernelbench.verify import load_config
    from kernelbench.verify.compare import verify_table

    cfg = dataclasses.replace(load_config(), sample_variation=None)
    paper = load_reference(cfg.reference)
    cells = paper[(paper["dataset"] == "powerplant") & (paper["kernel"] == "rbf")]
    cells = cells[(cells["method"] == "rff") & cells["n"].isin([1, 2])]
    ours = pd.DataFrame(
        [
            ours_row(dataset="powerplant", n=n, mean=m)
            for n, m in zip(cells["n"], cells["mean"], strict=True)
        ]
    )
    ver = verify_table(ours, cfg, baseline=ours)
    assert list(ver.table["paper_mean"]) == list(cells["mean"])
    assert list(ver.table["verdict"]) == [compare.REPRODUCED] * 2
    assert list(ver.table["base_verdict"]) == [compare.AGREES] * 2
    assert list(ver.pooled["cells"]) == [2] and ver.m == 3  # two cells, one family
    same = verify_table(ours, cfg, ref=paper, baseline=ours)
    pd.testing.assert_frame_equal(ver.table, same.table)


def test_sort_cells_orders_datasets_by_d_else_by_name_then_kernels_and_methods():
    rows = [
        {"dataset": "usps", "kernel": "rbf", "method_label": "rff", "n": 1.0, "d": 256},
        {"dataset": "letter", "kernel": "rbf", "method_label": "rff", "n": 2.0, "d": 16},
        {"dataset": "letter", "kernel": "rbf", "method_label": "rff", "n": 1.0, "d": 16},
        {"dataset": "powerplant", "kernel": "rbf", "method_label": "rff", "n": 1.0, "d": 4},
    ]
    t = compare.sort_cells(pd.DataFrame(rows))
    assert list(zip(t["dataset"], t["n"], strict=True)) == [
        ("powerplant", 1.0),
        ("letter", 1.0),
        ("letter", 2.0),
        ("usps", 1.0),
    ]
    assert list(t.columns) == list(rows[0]) and list(t.index) == [0, 1, 2, 3]
    t = compare.sort_cells(pd.DataFrame(rows).drop(columns="d"))  # no d: by name
    assert list(t["dataset"]) == ["letter", "letter", "powerplant", "usps"]
    # kernels and methods in the figures' order (drawing.KERNEL_ORDER, METHOD_STYLES),
    # not by name; unknown methods after the known ones
    cells = [("arccos0", "gq"), ("rbf", "zz"), ("rbf", "gq"), ("rbf", "rff"), ("arccos0", "rff")]
    t = compare.sort_cells(
        pd.DataFrame(
            [{"dataset": "letter", "kernel": k, "method_label": m, "n": 1.0} for k, m in cells]
        )
    )
    assert list(zip(t["kernel"], t["method_label"], strict=True)) == [
        ("rbf", "rff"),
        ("rbf", "gq"),
        ("rbf", "zz"),
        ("arccos0", "rff"),
        ("arccos0", "gq"),
    ]


def test_default_sensitivity_returns_the_keys_and_both_verdicts_only(tmp_path):
    import dataclasses

    from kernelbench.verify.compare import default_sensitivity, verify_table

    path = tmp_path / "tau.csv"
    TAU.to_csv(path, index=False)
    cfg = dataclasses.replace(cfg_with(), sample_variation=path)
    ours = pd.DataFrame([ours_row(mean=0.12), ours_row(dataset="usps", mean=0.12)])
    ref = pd.DataFrame([ref_row(mean=0.1), ref_row(dataset="usps", mean=0.1)])
    cols = ["dataset", "kernel", "method_label", "n", "verdict", "verdict_widest"]
    flips = default_sensitivity(ours, cfg, verify_table(ours, cfg, ref=ref), ref=ref)
    assert list(flips.columns) == cols and list(flips["dataset"]) == ["usps"]
    none = default_sensitivity(ours[:1], cfg, verify_table(ours[:1], cfg, ref=ref), ref=ref)
    assert none.empty and list(none.columns) == cols


def test_counts_tally_the_baseline_verdicts_and_the_same_draws_comparisons():
    t = pd.DataFrame(
        {
            "verdict": [compare.REPRODUCED] * 5,
            "base_verdict": [compare.AGREES] * 3 + [compare.DRIFTS, compare.NO_BASELINE],
            "base_test": ["rtol", "z", "z", "rtol", ""],
            "base_mean": [0.1, 0.1, 0.1, 0.1, np.nan],
        }
    )
    c = compare.counts(t)
    assert (c["agree"], c["drift"], c["no_baseline"], c["same_draws"]) == (3, 1, 1, 2)
    assert compare.failed(t) and not compare.failed(t.iloc[[0, 1, 2, 4]])
