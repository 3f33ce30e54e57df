"""kernelbench.verify.compare: the properties the mutation run (docs/mutation.md) found
unchecked."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernelbench.errors import KernelbenchError
from kernelbench.stats import welch_df
from kernelbench.verify import compare
from kernelbench.verify.compare import (
    compare_baseline,
    compare_reference,
    judge,
    load_sample_variation,
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
    assert "scripts/measure_sample_variation.py writes it" in msg
    assert load_sample_variation(None) is None


TAU = pd.DataFrame(
    {
        "dataset": ["letter", "mnist", "letter"],
        "kernel": ["rbf", "rbf", "arccos0"],
        "cv": [0.1, 0.2, 0.3],
        "df": [56, 10, 20],
    }
)


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
