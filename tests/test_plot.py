"""``kernelbench plot`` on small generated result sets, and the reference tables."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from kernelbench import reference as reference_mod  # noqa: E402
from kernelbench.errors import KernelbenchError  # noqa: E402
from kernelbench.outputs.generic import summarise as summarise_protocol  # noqa: E402
from kernelbench.outputs.papers.munkhoeva2018 import fig1_spec  # noqa: E402
from kernelbench.outputs.plot import plot  # noqa: E402
from kernelbench.outputs.render import draw  # noqa: E402
from kernelbench.outputs.spec import build  # noqa: E402
from kernelbench.outputs.style import markdown_table, method_style, summarise  # noqa: E402
from kernelbench.protocols import get_protocol  # noqa: E402
from kernelbench.reference import load_reference, reference_dir  # noqa: E402
from kernelbench.results import read_results  # noqa: E402
from kernelbench.stats import t_interval  # noqa: E402

DIMS = {"letter": 16, "powerplant": 4}  # letter first: columns must still be ordered by d
KERNELS = ("rbf", "arccos0", "arccos1")
METHODS = (("rff", "rff", "G"), ("orf", "orf", "Gort"), ("orf", "orf_tallqr", "Gort"))
RUNS = 3


def make_results(
    datasets: dict[str, int] = DIMS,
    kernels: tuple[str, ...] = KERNELS,
    methods: tuple[tuple[str, str, str], ...] = METHODS,
    ns: tuple[int, ...] = (1, 2),
    runs: int = RUNS,
    experiment: str = "fig1",
    seed: int = 0,
) -> pd.DataFrame:
    """One row per run with the runner's columns and random positive errors."""
    rng = np.random.default_rng(seed)
    rows = []
    for ds, d in datasets.items():
        for kernel in kernels:
            for method, label, paper in methods:
                for n in ns:
                    for run in range(runs):
                        err = float(0.1 / n * (1 + 0.2 * rng.random()))
                        rows.append(
                            {
                                "experiment": experiment,
                                "dataset": ds,
                                "kernel": kernel,
                                "method": method,
                                "method_label": label,
                                "paper_label": paper,
                                "method_params": json.dumps({}),
                                "n": float(n),
                                "D": 2 * n * (d + 1),
                                "n_features": 2 * n * (d + 1),
                                "d": d,
                                "samples": 50,
                                "run": run,
                                "seed": seed,  # one seed per cell, as in real shards
                                "rel_fro_error": err,
                                "rel_spec_error": 1.5 * err,
                                "fit_seconds": 0.0,
                                "transform_seconds": 0.0,
                                "config_hash": f"{ds}-{kernel}-{label}-{n}",
                            }
                        )
    return pd.DataFrame(rows)


def write_shards(df: pd.DataFrame, root: Path) -> Path:
    """Write one parquet shard per dataset (in nested folders) under ``root``."""
    for i, (ds, g) in enumerate(df.groupby("dataset")):
        shard = root / f"part{i}" / f"{ds}.parquet"
        shard.parent.mkdir(parents=True, exist_ok=True)
        g.to_parquet(shard)
    return root


def invoke(*args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(plot, list(args))
    return result.exit_code, result.output, result.exception


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_shards(make_results(), tmp_path_factory.mktemp("results"))


# --------------------------------------------------------------------------- command


def test_command_writes_figures_and_summary(results_dir: Path, tmp_path: Path) -> None:
    code, output, exc = invoke(
        str(results_dir), "--out", str(tmp_path), "--reference", "--format", "png,pdf"
    )
    assert code == 0, (output, exc)
    out = tmp_path / "fig1"  # one directory per experiment
    for name in ("fig1_kernel_error_fro.png", "fig1_kernel_error_fro.pdf"):
        path = out / name
        assert path.is_file() and path.stat().st_size > 1000
    assert (out / "fig1_kernel_error_fro.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "fig1_kernel_error_fro.pdf").read_bytes()[:4] == b"%PDF"
    summary = pd.read_csv(out / "fig1_summary.csv")
    # 2 datasets x 3 kernels x 3 labels x 2 n x 2 metrics
    assert len(summary) == 2 * 3 * 3 * 2 * 2
    assert set(summary["metric"]) == {"fro", "spec"}
    md = (out / "fig1_summary.md").read_text()
    assert md.count("\n| fig1 | ") == len(summary)
    assert "wrote" in output


def test_default_out_dir_and_spec_metric(results_dir: Path) -> None:
    code, output, exc = invoke(str(results_dir), "--metric", "spec", "--format", "png")
    assert code == 0, (output, exc)
    assert (results_dir / "figures" / "fig1" / "fig1_kernel_error_spec.png").is_file()
    assert (results_dir / "figures" / "fig1" / "fig1_summary.csv").is_file()


def test_summary_matches_hand_computed_mean(results_dir: Path, tmp_path: Path) -> None:
    assert invoke(str(results_dir), "--out", str(tmp_path), "--format", "png")[0] == 0
    raw = make_results()
    cell = raw[
        (raw["dataset"] == "letter")
        & (raw["kernel"] == "arccos0")
        & (raw["method_label"] == "orf_tallqr")
        & (raw["n"] == 2)
    ]["rel_fro_error"].tolist()
    assert len(cell) == RUNS
    mean = sum(cell) / len(cell)
    std = math.sqrt(sum((v - mean) ** 2 for v in cell) / (len(cell) - 1))
    half = 4.302652729749464 * std / math.sqrt(len(cell))  # t_{0.975, 2}
    summary = pd.read_csv(tmp_path / "fig1" / "fig1_summary.csv")
    row = summary[
        (summary["dataset"] == "letter")
        & (summary["kernel"] == "arccos0")
        & (summary["method_label"] == "orf_tallqr")
        & (summary["n"] == 2)
        & (summary["metric"] == "fro")
    ]
    assert len(row) == 1
    row = row.iloc[0]
    assert row["runs"] == RUNS and row["paper_label"] == "Gort"
    assert row["mean"] == pytest.approx(mean, rel=1e-12)
    assert row["std"] == pytest.approx(std, rel=1e-12)
    assert row["ci_low"] == pytest.approx(mean - half, rel=1e-9)
    assert row["ci_high"] == pytest.approx(mean + half, rel=1e-9)


def test_t_interval_by_hand() -> None:
    mean, std, sem, half = t_interval(np.array([0.1, 0.2, 0.3]))
    assert mean == pytest.approx(0.2)
    assert std == pytest.approx(0.1)
    assert sem == pytest.approx(0.1 / math.sqrt(3))
    assert half == pytest.approx(4.302652729749464 * 0.1 / math.sqrt(3))
    mean, std, sem, half = t_interval(np.array([0.5]))
    assert mean == 0.5 and math.isnan(std) and math.isnan(half)


# --------------------------------------------------------------------------- figure


def fig1_drawn(df: pd.DataFrame, metric: str = "fro", reference: bool = False, log=None):
    """Fig. 1 of results as ``kernelbench plot`` draws it: (matplotlib figure, its
    SpecFigure, notes)."""
    from dataclasses import replace

    summary = summarise_protocol(get_protocol("kernel_approx"), df)
    spec, notes = fig1_spec(summary, metric, reference)
    spec = spec if log is None else replace(spec, logy=log)
    (fig,) = build(summary, spec, "t")
    return draw(fig), fig, notes + fig.notes()


def lines(ax, kind: str) -> list:
    """The lines of ``kind`` (ours, paper, below) on ``ax``."""
    return [ln for ln in ax.get_lines() if (ln.get_gid() or "").split("\t")[0] == kind]


def test_figure_grid_lines_and_order() -> None:
    fig, spec_fig, notes = fig1_drawn(make_results(), "fro", reference=True, log=True)
    try:
        assert spec_fig.rows == ["rbf", "arccos0", "arccos1"]
        assert spec_fig.cols == ["powerplant", "letter"]  # by d: 4, 16
        axes = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
        assert len(axes) == 3 * 2
        assert axes[0].get_title().startswith("Powerplant")
        assert axes[1].get_title().startswith("LETTER")
        assert "Gaussian" in axes[0].get_ylabel() and "Arc-cos 1" in axes[4].get_ylabel()
        for ax in axes:
            assert len(lines(ax, "ours")) == 3  # 3 method labels
            # the paper's G and Gort; Gort (the published tall-QR code) beside orf_tallqr
            dashed = lines(ax, "paper")
            assert {ln.get_linestyle() for ln in dashed} == {"--"}
            assert {ln.get_color() for ln in dashed} == {
                method_style("rff")[0],
                method_style("orf_tallqr")[0],
            }
            assert ax.get_yscale() == "log"
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        # orf and orf_tallqr share the paper label Gort: told apart
        assert labels == [
            "rff (G)",
            "orf (ORF, Yu et al.)",
            "orf_tallqr (Gort, QR, published)",
            "the paper's values",
        ]
        assert notes == []
    finally:
        plt.close(fig)


def test_figure_without_reference_and_linear() -> None:
    fig, _, _ = fig1_drawn(make_results(), "fro", log=False)
    try:
        for ax in fig.axes[:6]:
            assert len(ax.get_lines()) == 3
            assert ax.get_yscale() == "linear"
    finally:
        plt.close(fig)


def test_reference_not_overlaid_on_spectral_metric() -> None:
    fig, _, notes = fig1_drawn(make_results(), "spec", reference=True)
    try:
        assert all(len(ax.get_lines()) == 3 for ax in fig.axes[:6])
        assert any("Frobenius" in note for note in notes)
    finally:
        plt.close(fig)


def test_method_styles_are_stable_and_distinct() -> None:
    """Known labels get distinct styles; a new label's style is the same in another
    process with another string-hash seed (Python's hash() would not be)."""
    import subprocess
    import sys

    known = ["rff", "orf", "orf_tallqr", "sorf", "qmc", "gq", "sr33", "sr33_haar"]
    assert len({method_style(m) for m in known}) == len(known)
    new = ["brand_new", "my_map", "rff_variant"]
    code = "from kernelbench.outputs.style import method_style; "
    code += f"print([method_style(m) for m in {new}])"
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == str([method_style(m) for m in new]), out.stderr


# --------------------------------------------------------------------------- partial data


def test_partial_grid_skips_missing_cell_with_note(tmp_path: Path) -> None:
    df = make_results()
    df = df[~((df["kernel"] == "arccos1") & (df["dataset"] == "letter"))]
    df = df[~((df["kernel"] == "rbf") & (df["dataset"] == "powerplant") & (df["method"] == "rff"))]
    res = write_shards(df, tmp_path / "res")
    code, output, exc = invoke(str(res), "--out", str(tmp_path / "out"), "--format", "png")
    assert code == 0, (output, exc)
    assert "no results for Arc-cos 1 × LETTER" in output
    assert "Gaussian × Powerplant: no results for rff" in output
    assert "Arc-cos 1 × LETTER" in (tmp_path / "out" / "fig1" / "fig1_summary.md").read_text()

    fig, _, _ = fig1_drawn(df, "fro")
    try:
        axes = fig.axes[:6]
        assert len(axes) == 6
        assert [len(ax.get_lines()) for ax in axes] == [2, 3, 3, 3, 3, 0]
    finally:
        plt.close(fig)


def test_single_cell(tmp_path: Path) -> None:
    df = make_results(
        datasets={"usps": 256}, kernels=("arccos1",), methods=(("rff", "rff", "G"),), ns=(3,)
    )
    res = write_shards(df, tmp_path / "res")
    code, output, exc = invoke(str(res), "--out", str(tmp_path), "--reference", "--format", "png")
    assert code == 0, (output, exc)
    assert (tmp_path / "fig1" / "fig1_kernel_error_fro.png").is_file()
    summary = pd.read_csv(tmp_path / "fig1" / "fig1_summary.csv")
    fro = summary[summary["metric"] == "fro"]
    assert len(fro) == 1
    assert fro["mean"].iloc[0] == pytest.approx(df["rel_fro_error"].mean())
    fig, _, _ = fig1_drawn(df, "fro", reference=True)
    try:
        assert len(fig.axes) == 1
        assert len(fig.axes[0].get_lines()) == 2  # rff + reference G
    finally:
        plt.close(fig)


def test_single_run_has_no_band(tmp_path: Path) -> None:
    df = make_results(datasets={"letter": 16}, kernels=("rbf",), runs=1)
    keys = ["experiment", "dataset", "kernel", "method_label", "n"]
    summary = summarise(df, keys, {"fro": "rel_fro_error"})
    assert (summary["runs"] == 1).all()
    assert summary["std"].isna().all() and summary["ci_low"].isna().all()
    fig, _, _ = fig1_drawn(df, "fro")
    try:
        assert len(fig.axes[0].collections) == 0  # no fill_between band
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------- errors


def _one_line_error(exc: BaseException | None) -> str:
    assert isinstance(exc, KernelbenchError), repr(exc)
    msg = str(exc)
    assert msg and "\n" not in msg
    return msg


def test_unknown_directory_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code, _, exc = invoke(str(missing))
    assert code != 0
    assert "nowhere" in _one_line_error(exc)
    assert not missing.exists()


def test_empty_directory_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, exc = invoke(str(tmp_path / "empty"))
    assert code != 0
    assert "empty" in _one_line_error(exc)


def test_every_experiment_is_drawn_into_its_own_directory(tmp_path: Path) -> None:
    df = pd.concat(
        [
            make_results(datasets={"letter": 16}, kernels=("rbf",), experiment="a"),
            make_results(datasets={"powerplant": 4}, kernels=("rbf",), experiment="b"),
        ]
    )
    res = tmp_path / "res"
    res.mkdir()
    df.to_parquet(res / "all.parquet")
    code, output, exc = invoke(str(res), "--format", "png")
    assert code == 0, (output, exc)
    for exp in ("a", "b"):
        summary = pd.read_csv(res / "figures" / exp / "fig1_summary.csv")
        assert set(summary["experiment"]) == {exp}
        assert f"{exp}:" in output and str(res / "figures" / exp) in output
    _, _, exc = invoke(str(res), "--experiment", "c")
    assert "a, b" in _one_line_error(exc)
    out = tmp_path / "only_b"
    code, output, exc = invoke(str(res), "--experiment", "b", "--out", str(out), "--format", "png")
    assert code == 0, (output, exc)
    assert sorted(p.name for p in out.iterdir()) == ["b"]


def test_results_home_draws_every_experiment_under_runs(tmp_path: Path) -> None:
    """A newcomer's `kernelbench plot results/`: results/runs holds two experiments beside
    the committed results/reference and results/baseline; every experiment is drawn, the
    figures stay under results/runs (deleting it leaves the committed data alone)."""
    home = tmp_path / "results"
    for exp, ds in (("quick", {"letter": 16}), ("kernel_approx", {"powerplant": 4})):
        write_shards(
            make_results(datasets=ds, kernels=("rbf",), experiment=exp), home / "runs" / exp
        )
    for committed in ("reference", "baseline"):
        (home / committed).mkdir()
        (home / committed / "table.csv").write_text("a,b\n1,2\n")
    code, output, exc = invoke(str(home), "--format", "png")
    assert code == 0, (output, exc)
    for exp in ("quick", "kernel_approx"):
        where = home / "runs" / "figures" / exp
        assert (where / "fig1_kernel_error_fro.png").is_file()
        assert f"{exp}:" in output and str(where) in output
    assert sorted(p.name for p in home.iterdir()) == ["baseline", "reference", "runs"]
    assert [p.name for p in (home / "baseline").iterdir()] == ["table.csv"]


def test_unknown_figure_and_metric_errors(results_dir: Path, tmp_path: Path) -> None:
    _, _, exc = invoke(str(results_dir), "--figure", "nope", "--out", str(tmp_path))
    msg = _one_line_error(exc)
    assert "nope" in msg and "fig1" in msg
    _, _, exc = invoke(str(results_dir), "--metric", "bogus", "--out", str(tmp_path))
    msg = _one_line_error(exc)
    assert "bogus" in msg and "fro" in msg and "spec" in msg


def test_bad_format_error(results_dir: Path, tmp_path: Path) -> None:
    _, _, exc = invoke(str(results_dir), "--out", str(tmp_path), "--format", "png,gif")
    assert "gif" in _one_line_error(exc)


def test_missing_metric_values_error(tmp_path: Path) -> None:
    df = make_results(datasets={"letter": 16}, kernels=("rbf",))
    df["rel_spec_error"] = np.nan
    with pytest.raises(KernelbenchError, match="rel_spec_error"):
        fig1_drawn(df, "spec")
    res = write_shards(df, tmp_path / "res")
    assert len(read_results(res)) == len(df)


def test_markdown_table() -> None:
    text = markdown_table(pd.DataFrame({"a": ["x|y"], "b": [0.5], "c": [float("nan")]}))
    assert text.splitlines() == ["| a | b | c |", "|---|---|---|", r"| x\|y | 0.5 |  |"]


# --------------------------------------------------------------------------- reference


def test_reference_table_loads() -> None:
    ref = load_reference()
    assert list(ref.columns[:5]) == ["dataset", "kernel", "method", "paper_method", "n"]
    # every cell of Fig. 1: six methods on four datasets, four (no QMC, GQ) on two
    assert len(ref) == 480 == 4 * 3 * 6 * 5 + 2 * 3 * 4 * 5
    assert not ref.duplicated(["dataset", "kernel", "method", "n"]).any()
    assert set(ref["method"]) == {"rff", "orf", "sorf", "qmc", "gq", "sr33"}
    per_dataset = ref.groupby("dataset")["method"].agg(lambda m: sorted(set(m)))
    assert per_dataset["cifar100"] == per_dataset["leukemia"] == ["orf", "rff", "sorf", "sr33"]
    assert set(ref["paper_method"]) == {"G", "Gort", "ROM", "QMC", "GQ", "B"}
    assert (ref["mean"] > 0).all()
    assert len(load_reference("liu2020_table3_krr_accuracy.csv")) > 0
    assert (reference_dir() / "README.md").is_file()


def test_reference_lookup_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference tables are the package kernelbench.reference_data, found through
    importlib.resources (results/reference of the source tree in an editable install)."""
    from importlib.resources import files

    from kernelbench import packaged

    assert reference_dir() == Path(str(files("kernelbench.reference_data")))
    assert packaged.tree_name(reference_dir() / "x.csv") == "results/reference/x.csv"
    assert packaged.shipped("results/reference/x.csv") == reference_dir() / "x.csv"
    monkeypatch.setattr(reference_mod, "data_dir", lambda tree: tmp_path)
    (tmp_path / "t.csv").write_text("a\n2\n")
    assert load_reference("t")["a"].tolist() == [2]
    with pytest.raises(KernelbenchError, match="valid choices: t"):
        load_reference("nope")
    monkeypatch.setitem(packaged.PACKAGES, "results/nope", "kernelbench.nope_data")
    with pytest.raises(KernelbenchError, match="kernelbench.nope_data is not installed"):
        packaged.data_dir("results/nope")


def test_reads_shards_written_by_the_runner(tmp_path: Path) -> None:
    from kernelbench.cell import shard_schema
    from kernelbench.protocols import get_protocol
    from kernelbench.results import format_n, write_shard

    schema = shard_schema(get_protocol("kernel_approx"))
    df = make_results(datasets={"letter": 16}, kernels=("rbf", "arccos0"))
    for col in schema.names:
        if col not in df.columns:
            df[col] = None
    for (exp, ds, kernel, label, n), g in df.groupby(
        ["experiment", "dataset", "kernel", "method_label", "n"]
    ):
        write_shard(
            g, tmp_path.joinpath(exp, ds, kernel, label, f"n={format_n(n)}.parquet"), schema
        )
    code, output, exc = invoke(str(tmp_path), "--format", "png")
    assert code == 0, (output, exc)
    summary = pd.read_csv(tmp_path / "figures" / "fig1" / "fig1_summary.csv")
    assert len(summary) == 2 * 3 * 2 * 2  # kernels x labels x n x metrics
    assert summary["mean"].sum() == pytest.approx(
        df.groupby(["kernel", "method_label", "n"])[["rel_fro_error", "rel_spec_error"]]
        .mean()
        .to_numpy()
        .sum()
    )


def test_paper_gort_beside_true_orf_is_marked() -> None:
    """Without orf_tallqr the paper's Gort is drawn beside our true ORF, in its colour."""
    df = make_results(methods=(("rff", "rff", "G"), ("orf", "orf", "Gort")))
    fig, _, _ = fig1_drawn(df, "fro", reference=True, log=True)
    try:
        dashed = {ln.get_color() for ln in lines(fig.axes[0], "paper")}
        assert dashed == {method_style("rff")[0], method_style("orf")[0]}
    finally:
        plt.close(fig)


def test_one_n_gets_one_integer_tick_and_the_runs_are_said() -> None:
    df = make_results(ns=(3,), kernels=("rbf",))
    fig, _, _ = fig1_drawn(df, "fro")
    try:
        for ax in fig.axes[:2]:
            assert [t.get_text() for t in ax.get_xticklabels()] == ["3"]
        caption = fig._suptitle.get_text()
        assert f"{RUNS} runs per cell" in caption and "bands: 95% t-intervals" in caption
    finally:
        plt.close(fig)


def test_sparse_ad_hoc_grid_is_one_figure_per_dataset(tmp_path: Path) -> None:
    """Ad-hoc cells (experiment kernel_approx) on two datasets and other kernels: only the
    cells present, one figure per dataset, not a mostly empty kernels x datasets grid."""
    a = make_results({"letter": 16}, ("rbf",), experiment="kernel_approx")
    b = make_results({"powerplant": 4}, ("arccos1",), experiment="kernel_approx", seed=1)
    res = write_shards(pd.concat([a, b], ignore_index=True), tmp_path / "res")
    code, output, exc = invoke(str(res), "--out", str(tmp_path / "out"), "--format", "png")
    assert code == 0, (output, exc)
    names = sorted(p.name for p in (tmp_path / "out" / "kernel_approx").glob("*.png"))
    assert names == ["fig1_kernel_error_fro_letter.png", "fig1_kernel_error_fro_powerplant.png"]
    assert "no results" not in output


def test_log_panel_clips_values_past_a_gap():
    """A log panel keeps its range when its values are spread (no gap over LOG_GAP
    decades) and clips only what lies past such a gap: drawn on the bottom edge (not on
    the line), and noted."""
    from kernelbench.outputs.style import LOG_GAP, _log_bottom

    spread = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
    assert _log_bottom(spread) == pytest.approx(1e-7 / 1.3)
    gap = [3e-2, 1e-2, 1e-14, 2e-14]
    assert LOG_GAP < 12 and _log_bottom(gap) == pytest.approx(1e-3)
    df = make_results(datasets={"letter": 16}, kernels=("rbf",), ns=(1, 2, 3))
    df.loc[(df["method_label"] == "orf") & (df["n"] == 2), "rel_fro_error"] = 1e-14
    fig, spec_fig, notes = fig1_drawn(df, "fro")
    try:
        (panel,) = spec_fig.panels.values()
        others = df.loc[df["rel_fro_error"] > 1e-3, "rel_fro_error"]
        assert 1e-5 < panel.bottom < others.min() / 5
        (ax,) = fig.axes
        orf = next(ln for ln in lines(ax, "ours") if ln.get_gid().split("\t")[1] == "orf")
        assert np.isnan(orf.get_ydata()[1]) and np.isfinite(orf.get_ydata()[[0, 2]]).all()
        (below,) = lines(ax, "below")
        assert list(below.get_xdata()) == [2.0] and list(below.get_ydata()) == [panel.bottom]
        assert any("orf at x = 2 is 1.0e-14" in n for n in notes)
        assert "a mean far below its axis (1)" in fig._suptitle.get_text()
    finally:
        plt.close(fig)
