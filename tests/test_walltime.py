"""The walltime protocol (Fig. 3): rows, settings, the fig3 grid and the fig3 figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from kernelbench.cell import build_cell
from kernelbench.errors import KernelbenchError  # noqa: E402
from kernelbench.experiment import make_cell, run_and_store, run_cell
from kernelbench.launch import plan  # noqa: E402
from kernelbench.outputs.generic import FigureOptions  # noqa: E402
from kernelbench.outputs.papers.munkhoeva2018 import FIG3, draw_fig3, median_summary  # noqa: E402
from kernelbench.outputs.plot import plot  # noqa: E402
from kernelbench.outputs.render import draw, finish  # noqa: E402
from kernelbench.outputs.spec import build  # noqa: E402
from kernelbench.protocols import PROTOCOLS, get_protocol  # noqa: E402
from kernelbench.results import read_results  # noqa: E402


def walltime_cell(method="sr33", points=7, repeats=4, runs=None, **kw):
    cell = make_cell(method, "rbf", "digits", 1, runs=runs, protocol="walltime", **kw)
    cell["protocol"].update(points=points, repeats=repeats)
    return cell


def test_registered_with_its_config():
    assert "walltime" in PROTOCOLS
    cell = build_cell(walltime_cell())
    assert cell.options.data == "kernel_approx"
    assert cell.runs == 1  # the protocol's runs, not Fig. 1's error runs


def test_rows_one_per_repetition_with_fit_and_first_call():
    df = run_cell(walltime_cell(runs=2, repeats=3))
    assert len(df) == 6
    assert df["run"].tolist() == [0, 0, 0, 1, 1, 1]
    assert df["repetition"].tolist() == [0, 1, 2] * 2
    assert (df["points"] == 7).all() and (df["d"] == 64).all()
    assert (df["map_seconds"] > 0).all()
    assert df["map_seconds"].equals(df["transform_seconds"])
    # fit and the first call are per run: one value on each of its rows
    assert df.groupby("run")["fit_seconds"].nunique().eq(1).all()
    assert df.groupby("run")["first_map_seconds"].nunique().eq(1).all()
    assert (df["D"] == 2 * 65).all()


def test_a_map_is_told_the_rows_it_will_transform(monkeypatch):
    """orf's map_rows: points x (1 + repeats), so that it forms W where they pay for it;
    a map_rows given in the method's parameters is kept."""
    from kernelbench.features.orf import ORF

    seen = []
    fit = ORF.fit
    monkeypatch.setattr(ORF, "fit", lambda self, X, y=None: seen.append(self) or fit(self, X))

    def orf(points, **params):
        cell = walltime_cell("orf", points=points, repeats=4)
        cell["method"]["params"].update(params)
        run_cell(cell)
        return seen[-1]

    assert orf(7).map_rows == 35
    assert orf(7, map_rows=3).map_rows == 3
    # above dense_limit_mb (d = 64, D = 130) the rows decide: 13 x 5 >= d forms W
    assert orf(13, dense_limit_mb=0.01).W_ is not None
    assert orf(12, dense_limit_mb=0.01).W_ is None


def test_points_are_reproducible_and_a_path_part(tmp_path):
    cell = build_cell(walltime_cell(points=5))
    proto = get_protocol(cell)
    a, b = proto.prepare(cell), proto.prepare(cell.with_runs(3))
    np.testing.assert_array_equal(a.X, b.X)
    assert a.X.shape == (5, 64)
    run_and_store(walltime_cell(points=5), tmp_path, echo=None)
    variant = ",".join(cell.variant)
    assert variant.startswith("h=")  # repeats=4 differs from configs/protocol/walltime.yaml
    assert (tmp_path / f"walltime/digits/rbf/sr33/points=5/{variant}/n=1.parquet").exists()


def test_more_runs_remeasure_every_run(tmp_path):
    """Timings are not stitched across sessions: more runs recompute the whole cell."""
    lines = []
    run_and_store(walltime_cell(runs=1, repeats=2), tmp_path, echo=lines.append)
    first = read_results(tmp_path)
    run_and_store(walltime_cell(runs=2, repeats=2), tmp_path, echo=lines.append)
    assert lines[-2].endswith("config changed, recomputing")
    again = read_results(tmp_path)
    assert again["run"].tolist() == [0, 0, 1, 1]
    assert (again["started_at"] > first["started_at"].iloc[0]).all()


def test_more_points_than_train_rows_are_drawn_with_replacement():
    cell = walltime_cell("rff", points=3000, repeats=1)
    df = run_cell(cell)
    assert "with replacement" in df["data_deviation"].iloc[0]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("points", 0, "points must be an integer >= 1"), ("repeats", "x", "repeats must be")],
)
def test_bad_settings_are_one_line_errors(key, value, message):
    cell = walltime_cell()
    cell["protocol"][key] = value
    with pytest.raises(KernelbenchError, match=message):
        build_cell(cell)


def test_fig3_grid(tmp_path, monkeypatch):
    _, _, cells = plan(["experiment=fig3"], True)
    assert cells == 2 * 6 * 8
    # the experiment selects the protocol, so its settings can be overridden
    from kernelbench.launch import launch

    monkeypatch.chdir(tmp_path)
    args = ["experiment=fig3", "dataset=digits", "method=sr33", "protocol.repeats=2"]
    launch([*args, "protocol.points=3", f"output_dir={tmp_path}"], multirun=True)
    df = read_results(tmp_path)
    assert len(df) == 2 and (df["points"] == 3).all()


def fake_results(points=(10, 1000), dims=(("letter", 16), ("usps", 256), ("mnist", 784))):
    rng = np.random.default_rng(0)
    rows = []
    for p in points:
        for ds, d in dims:
            for label, method, paper, scale in (
                ("rff", "rff", "G", 2.0),
                ("sr33", "sr33", "B", 0.5),
            ):
                for rep in range(6):
                    rows.append(
                        {
                            "experiment": "munkhoeva2018_fig3",
                            "protocol": "walltime",
                            "dataset": ds,
                            "kernel": "rbf",
                            "method": method,
                            "method_label": label,
                            "paper_label": paper,
                            "n": 1.0,
                            "d": d,
                            "points": p,
                            "run": 0,
                            "repetition": rep,
                            "map_seconds": scale * d * p * 1e-7 * (1 + 0.1 * rng.random()),
                            "fit_seconds": scale * d * 1e-5,
                            "first_map_seconds": 0.5,
                        }
                    )
    return pd.DataFrame(rows)


def test_median_summary_by_hand():
    df = fake_results()
    s = median_summary(df, ["map", "fit"])
    cell = df[(df.points == 10) & (df.dataset == "usps") & (df.method_label == "rff")]
    row = s[(s.points == 10) & (s.dataset == "usps") & (s.method_label == "rff")]
    m = row[row.metric == "map"].iloc[0]
    assert m["median"] == pytest.approx(np.median(cell["map_seconds"]))
    assert m["q25"] == pytest.approx(np.quantile(cell["map_seconds"], 0.25))
    assert m["values"] == 6
    assert row[row.metric == "fit"].iloc[0]["values"] == 1  # one fit per run


def test_fig3_axes_and_lines(tmp_path):
    import matplotlib.pyplot as plt

    df = fake_results()
    (spec_fig,) = build(median_summary(df, ["map", "fit"]), FIG3, "t")
    axes = [ax for ax in draw(spec_fig).axes if ax.get_lines()]
    assert [ax.get_title() for ax in axes] == ["points 10", "points 1000"]
    for ax in axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert ax.get_xlabel() == "d (input dimension)"
        lines = {ln.get_gid().split("\t")[1]: ln for ln in ax.get_lines()}
        assert set(lines) == {"rff", "sr33"}
        np.testing.assert_array_equal(lines["rff"].get_xdata(), [16, 256, 784])
        assert len(ax.collections) == 2  # one interquartile band per method
    # the median is drawn: rff above sr33 everywhere
    ax = axes[0]
    lines = {ln.get_gid().split("\t")[1]: ln for ln in ax.get_lines()}
    assert np.all(lines["rff"].get_ydata() > lines["sr33"].get_ydata())
    out = finish(draw_fig3(df, tmp_path, FigureOptions(formats=("png",))))
    assert (tmp_path / "fig3_walltime_map.png").is_file()
    assert (tmp_path / "fig3_walltime_map.png") in out.written
    summary = pd.read_csv(tmp_path / "fig3_summary.csv")
    assert set(summary["metric"]) == {"map", "fit", "first"}
    plt.close("all")


def test_plot_command_draws_fig3(tmp_path):
    run_and_store(walltime_cell("rff", repeats=3), tmp_path, echo=None)
    run_and_store(walltime_cell("sr33", repeats=3), tmp_path, echo=None)
    assert len(read_results(tmp_path)) == 6
    res = CliRunner().invoke(
        plot, [str(tmp_path), "--figure", "fig3", "--out", str(tmp_path / "f"), "--format", "png"]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "f/walltime/fig3_walltime_map.png").exists()
    res = CliRunner().invoke(plot, [str(tmp_path), "--figure", "fig3", "--metric", "spec"])
    assert res.exit_code != 0
    assert "valid choices: first, fit, map" in str(res.exception)
