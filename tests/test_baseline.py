"""``kernelbench baseline``: the baseline tables' format (one module, read by ``verify``)
and their per-cell statistics (:func:`kernelbench.stats.cell_stats`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kernelbench.errors import KernelbenchError
from kernelbench.outputs.baseline import TABLES, baseline
from kernelbench.outputs.papers.munkhoeva2018 import FIG1
from kernelbench.outputs.spec import build
from kernelbench.outputs.tables import CELL, COLUMNS, cell_table, read_table, update_table
from kernelbench.stats import aggregate


def _table(rows: list[tuple[str, str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["dataset", "kernel", "method_label", "n", "mean"])


def test_baseline_update_replaces_only_the_rerun_datasets() -> None:
    old = _table(
        [
            ("letter", "rbf", "rff", 1, 0.1),
            ("leukemia", "rbf", "rff", 1, 9.0),
            ("leukemia", "rbf", "orf", 1, 8.0),
            ("usps", "rbf", "rff", 1, 0.3),
        ]
    )
    new = _table([("leukemia", "rbf", "sr33", 1, 0.5), ("leukemia", "rbf", "rff", 1, 0.4)])
    out = update_table(old, new)
    assert list(zip(out["dataset"], out["method_label"], out["mean"], strict=True)) == [
        ("letter", "rff", 0.1),
        ("leukemia", "rff", 0.4),
        ("leukemia", "sr33", 0.5),
        ("usps", "rff", 0.3),
    ]


def test_baseline_update_cells_replaces_only_the_rerun_cells() -> None:
    old = _table(
        [
            ("cifar100", "arccos1", "orf", 1, 8.0),
            ("cifar100", "arccos1", "orf", 2, 7.0),
            ("cifar100", "arccos1", "rff", 1, 9.0),
        ]
    )
    new = _table([("cifar100", "arccos1", "orf", 1, 0.5), ("cifar100", "arccos1", "sr33", 1, 0.4)])
    new["n"] = new["n"].astype(float)  # rows store n as a float
    out = update_table(old, new, by="cell")
    assert list(zip(out["method_label"], out["n"], out["mean"], strict=True)) == [
        ("orf", 1, 0.5),
        ("orf", 2, 7.0),
        ("rff", 1, 9.0),
        ("sr33", 1, 0.4),
    ]


def test_baseline_table_summary_has_t_intervals() -> None:
    t = _table([("letter", "rbf", "rff", 1, 1.0), ("letter", "rbf", "rff", 2, 2.0)])
    t = t.assign(runs=[10, 1], sem=[0.1, np.nan], d=16)
    (fig,) = build(t, FIG1, "t")  # the baseline table as its figure spec draws it
    (series,) = fig.series
    assert series.hi[0] - 1.0 == pytest.approx(2.262157 * 0.1, rel=1e-5)
    assert np.isnan(series.lo[1])


def results_frame(seed: int = 0) -> pd.DataFrame:
    """Shards' rows of two cells: rff at n = 1 (7 runs) and sr33 at n = 0.5 (1 run)."""
    rng = np.random.default_rng(seed)
    rows = []
    for label, n, runs in (("rff", 1.0, 7), ("sr33", 0.5, 1)):
        for run in range(runs):
            rows.append(
                {
                    "experiment": "munkhoeva2018_fig1",
                    "dataset": "letter",
                    "d": 16,
                    "kernel": "rbf",
                    "method": label,
                    "method_label": label,
                    "paper_label": {"rff": "G", "sr33": "B"}[label],
                    "n": n,
                    "run": run,
                    "seed": 0,
                    "config_hash": f"h-{label}",
                    "data_source": "mirror",
                    "rel_fro_error": rng.uniform(0.01, 0.2),
                }
            )
    return pd.DataFrame(rows)


def test_cell_table_statistics_and_format():
    df = results_frame()
    t = cell_table(df, "rel_fro_error")
    assert list(t.columns) == list(COLUMNS)
    assert list(t["n"]) == [1, 0.5]  # n written as an int when integral
    v = df[df["method_label"] == "rff"]["rel_fro_error"].to_numpy()
    rff = t.iloc[0]
    assert rff["runs"] == 7 and rff["mean"] == v.mean()
    assert rff["std"] == v.std(ddof=1) and rff["sem"] == v.std(ddof=1) / np.sqrt(7)
    assert (rff["median"], rff["q025"]) == (np.median(v), np.quantile(v, 0.025))
    assert np.isnan(t.iloc[1]["std"]) and np.isnan(t.iloc[1]["sem"])  # one run
    # verify's statistics of the same rows are the same numbers
    agg = aggregate(df, list(CELL), "rel_fro_error")
    assert np.array_equal(agg["mean"], t["mean"]) and agg["std"].equals(t["std"])


def test_cell_table_refuses_mixed_configs():
    df = results_frame()
    df.loc[0, "config_hash"] = "other"
    with pytest.raises(KernelbenchError, match="more than one config"):
        cell_table(df, "rel_fro_error")


def test_a_written_baseline_is_what_verify_reads(tmp_path: Path):
    df = results_frame()
    TABLES["munkhoeva2018_fig1"].write(df, tmp_path, None, figure=False)
    back = read_table(tmp_path / "fig1_baseline.csv", list(CELL))
    pd.testing.assert_frame_equal(
        back[["mean", "std"]], cell_table(df, "rel_fro_error")[["mean", "std"]]
    )
    pd.DataFrame({"dataset": ["x"]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(KernelbenchError, match="missing columns"):
        read_table(tmp_path / "bad.csv", list(CELL))


def test_an_experiment_without_results_is_one_line(tmp_path: Path):
    """Any experiment has a baseline (no fixed table): one without shards under the
    results directories is named, with how to make them."""
    r = CliRunner().invoke(baseline, ["quick", str(tmp_path)], standalone_mode=False)
    assert isinstance(r.exception, KernelbenchError)
    assert str(r.exception).startswith("no results")
    r = CliRunner().invoke(baseline, ["quick", str(tmp_path / "x")], standalone_mode=False)
    assert "does not exist" in str(r.exception)
    r = CliRunner().invoke(
        baseline, ["yu2016_fig2", str(tmp_path), "--update"], standalone_mode=False
    )
    assert str(r.exception) == (
        "--update and --update-cells apply to munkhoeva2018_fig1, munkhoeva2018_fig2, "
        "liu2020_table3, liu2020_table3_paper"
    )


def test_fig2_update_cells_keeps_the_other_learners_rows():
    """Fig. 2's cells are named with their learner: rerun SVM cells replace only the SVM
    rows of those cells, the linear learner's rows of the same cells stay."""
    from kernelbench.outputs.baseline import TABLES
    from kernelbench.outputs.papers.munkhoeva2018 import FIG2_KEYS as KEYS

    def table(learners, mean):
        rows = [
            {"dataset": "powerplant", "kernel": "rbf", "method_label": "rff", "learner": lr}
            | {"n": n, "mean": mean}
            for lr in learners
            for n in (1, 3)
        ]
        return pd.DataFrame(rows)

    fig2 = TABLES["munkhoeva2018_fig2"]
    assert fig2.merged is not None and fig2.keys == tuple(KEYS)
    old = table(["linear", "svm_precomputed"], 0.5)
    out = update_table(old, table(["svm_precomputed"], 0.9), by="cell", keys=fig2.keys)
    assert len(out) == 4
    assert list(out.groupby("learner")["mean"].first()) == [0.5, 0.9]


def test_liu_update_cells_keeps_other_cells_and_recomputes_the_rff_ratio():
    """A method rerun alone (no rff rows in its results) is spliced into the Liu table;
    its feature-time ratio is to the table's rff at the same cell."""
    from kernelbench.outputs.papers.liu2020 import with_rff_ratio

    def table(methods, seconds):
        rows = [
            {
                "dataset": "eeg",
                "kernel": "rbf",
                "method_label": m,
                "n": n,
                "mean": 70.0 + n,
                "feature_seconds": sec * n,
                "feature_time_vs_rff": np.nan,
            }
            for m, sec in zip(methods, seconds, strict=True)
            for n in (1, 2)
        ]
        return pd.DataFrame(rows)

    old = with_rff_ratio(table(["rff", "sr33"], [2.0, 1.0]))
    new = table(["sr33"], [0.5])
    new["mean"] = 99.0
    out = with_rff_ratio(update_table(old, new, by="cell"))
    assert len(out) == 4 and list(out.columns) == list(old.columns)
    sr33 = out[out["method_label"] == "sr33"]
    assert list(sr33["mean"]) == [99.0, 99.0] and list(sr33["feature_time_vs_rff"]) == [0.25] * 2
    rff = out[out["method_label"] == "rff"]
    assert list(rff["mean"]) == [71.0, 72.0] and list(rff["feature_time_vs_rff"]) == [1.0] * 2


def test_redraw_draws_the_committed_pngs_from_their_tables_only(tmp_path) -> None:
    """``kernelbench baseline --redraw STEM``: the PNGs of that figure from its table in
    --out (one per page: fig2 per learner), the table unchanged; a bad stem, a missing
    table or RESULTS given is a one-line error."""
    import shutil

    src = Path(__file__).resolve().parents[1] / "results" / "baseline"
    for name in ("fig2_baseline.csv", "yu2016_fig2.csv"):
        shutil.copyfile(src / name, tmp_path / name)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    runner = CliRunner()
    for stem in ("fig2", "yu2016_fig2"):
        result = runner.invoke(baseline, ["--redraw", stem, "--out", str(tmp_path)])
        assert result.exit_code == 0, result.output
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["fig2_linear.png", "fig2_svm_precomputed.png", "yu2016_fig2.png"]
    assert all((tmp_path / p).read_bytes()[:4] == b"\x89PNG" for p in pngs)
    assert {n: (tmp_path / n).read_bytes() for n in before} == before
    bad = runner.invoke(baseline, ["--redraw", "nope", "--out", str(tmp_path)]).exception
    assert isinstance(bad, KernelbenchError) and "'nope'; valid choices: fig1" in str(bad)
    both = runner.invoke(baseline, ["--redraw", "fig2", str(tmp_path)])
    assert both.exit_code == 2 and "give no RESULTS" in both.output
    missing = runner.invoke(baseline, ["--redraw", "yang2014_fig3", "--out", str(tmp_path)])
    assert "yang2014_fig3.csv" in str(missing.exception)
