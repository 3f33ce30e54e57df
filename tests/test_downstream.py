"""The ``downstream`` protocol (Munkhoeva Fig. 2): rows, exact-kernel cache, errors, the
fig2 figure, and ``kernelbench run protocol=downstream`` end to end on digits."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kernelbench.cell import build_cell, cell_keys, cell_shard_path
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_and_store
from kernelbench.outputs.papers.munkhoeva2018 import FIG2, fig2_summary
from kernelbench.outputs.render import draw, finish
from kernelbench.outputs.spec import build
from kernelbench.protocols import figure_of, get_protocol
from kernelbench.protocols.common import feature_map, run_rng
from kernelbench.protocols.downstream import EXACT_DIR, exact_key
from kernelbench.results import read_results
from tests.test_cli import kb

#: digits' downstream split made small (400 train rows, the 1397 after them to test)
SMALL = "dataset.splits.downstream.train_rows=400"


def _cell(learner="svm_precomputed", **kw):
    cell = make_cell(protocol="downstream", dataset="digits", runs=2, **kw)
    cell["protocol"]["learner"] = learner
    cell["dataset"]["splits"]["downstream"]["train_rows"] = 400
    return cell


def test_registered_with_its_learner_as_a_cell_key():
    proto = get_protocol("downstream")
    assert "learner" in cell_keys(proto) and "fig2" in [f.name for f in proto.figures]
    cells = [build_cell(_cell(learner)) for learner in ("svm_precomputed", "linear")]
    paths = {cell_shard_path(c, "out") for c in cells}
    assert len(paths) == 2  # the learners' shards do not collide
    # train_rows=400 differs from configs/dataset/digits.yaml: a hash part below the learner
    assert {p.parent.parent.name for p in paths} == {"learner=svm_precomputed", "learner=linear"}


def test_errors_are_one_line_naming_the_choices():
    with pytest.raises(
        KernelbenchError, match=r"unknown learner 'knn'; valid choices: linear, svm"
    ):
        run_and_store(_cell("knn"), None, echo=None)
    cell = make_cell(protocol="downstream", dataset="powerplant", runs=2)
    cell["protocol"]["metric"] = "accuracy"
    msg = r"dataset 'powerplant': metric 'accuracy' does not apply to a regression dataset; valid"
    with pytest.raises(KernelbenchError, match=msg + " choices: r2"):
        run_and_store(cell, None, echo=None)  # checked before any data is loaded
    cell = _cell()
    cell["protocol"]["C"] = 2.0
    with pytest.raises(KernelbenchError, match="unknown setting.*valid: budget, data, exact"):
        run_and_store(cell, None, echo=None)


def test_rows_cache_and_rerun(tmp_path):
    out = tmp_path / "res"
    df = run_and_store(_cell("linear", method="sr33", n=1), out, echo=None)
    assert len(df) == 2 and set(df["learner"]) == {"linear"} and set(df["metric"]) == {"accuracy"}
    assert df["train_rows"].iloc[0] == 400 and df["test_rows"].iloc[0] == 1397
    assert df["score"].between(0.8, 1.0).all()
    assert df["exact_score"].nunique() == 1 and 0.9 < df["exact_score"].iloc[0] <= 1.0
    assert df["alpha"].notna().all()
    for col in ("fit_seconds", "transform_seconds", "train_seconds", "predict_seconds"):
        assert (df[col] >= 0).all()
    # the exact score is cached next to the results, named by its hash
    digest, payload = exact_key(build_cell(_cell("linear")), get_protocol("downstream"))
    path = out / EXACT_DIR / f"{digest}.json"
    stored = json.loads(path.read_text())
    assert stored["score"] == df["exact_score"].iloc[0] and stored["learner"] == "linear"
    assert stored["alpha"] in payload["learner_params"]["alphas"]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    # another cell reads the cache instead of recomputing (a planted value proves it)
    path.write_text(json.dumps({**stored, "score": 0.123}))
    df2 = run_and_store(_cell("linear", method="rff", n=1), out, echo=None)
    assert set(df2["exact_score"]) == {0.123}
    # a rerun of the same cell recomputes bit-identical rows
    df3 = run_and_store(_cell("linear", method="sr33", n=1), out, overwrite=True, echo=None)
    cols = ["run", "D", "score", "alpha"]
    pd.testing.assert_frame_equal(df[cols], df3[cols])


def test_both_learners_see_the_same_maps():
    a, b = (build_cell(_cell(learner, method="rff")) for learner in ("svm_precomputed", "linear"))
    wa = feature_map(a, run_rng(a, 1)).fit(np.zeros((1, 64))).weight_matrix()
    wb = feature_map(b, run_rng(b, 1)).fit(np.zeros((1, 64))).weight_matrix()
    np.testing.assert_array_equal(wa, wb)


def _fake_results() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for ds, d, metric in (("powerplant", 4, "r2"), ("letter", 16, "accuracy")):
        for kernel in ("rbf", "arccos0"):
            for method in ("rff", "sr33", "orf"):
                for n in (1, 2, 3):
                    for run in range(4):
                        rows.append(
                            {
                                "experiment": "toy",
                                "dataset": ds,
                                "d": d,
                                "kernel": kernel,
                                "method": method,
                                "method_label": method,
                                "paper_label": {"rff": "G", "sr33": "B", "orf": "Gort"}[method],
                                "learner": "svm_precomputed",
                                "metric": metric,
                                "n": float(n),
                                "run": run,
                                "score": 0.8 + 0.02 * n + 0.01 * rng.normal(),
                                "exact_score": 0.9 if kernel == "rbf" else 0.85,
                            }
                        )
    return pd.DataFrame(rows)


def test_fig2_draws_kernels_by_datasets_with_the_exact_line(tmp_path):
    from kernelbench.outputs.generic import FigureOptions

    df = _fake_results()
    (spec_fig,) = build(fig2_summary(df), FIG2, "t")  # one learner: one figure
    figure = draw(spec_fig)
    axes = figure.axes
    assert spec_fig.rows == ["rbf", "arccos0"] and spec_fig.cols == ["powerplant", "letter"]
    assert len(axes) == 4
    assert axes[0].get_title() == "Powerplant (d = 4)"
    assert axes[1].get_title() == "LETTER (d = 16)"
    for ax, exact in zip(axes, (0.9, 0.9, 0.85, 0.85), strict=True):
        lines = ax.get_lines()
        assert len(lines) == 4  # three methods and the exact kernel
        hline = [ln for ln in lines if ln.get_linestyle() == ":"]
        assert len(hline) == 1 and hline[0].get_ydata()[0] == exact
        assert sorted(ln.get_xdata().tolist() for ln in lines if ln not in hline) == [[1, 2, 3]] * 3
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    # as the site's legend: variants named only where two labels share a paper label
    assert labels == ["rff (G)", "orf (Gort)", "sr33 (B)", "exact kernel"]
    # Fig. 2's bands come from few runs: the figure says how many
    runs = df.groupby(["dataset", "kernel", "method_label", "n"]).size()
    caption = figure._suptitle.get_text()
    assert f"{runs.min()} runs per cell" in caption and "95% t-intervals" in caption
    import matplotlib.pyplot as plt

    plt.close(figure)
    fig2 = figure_of(get_protocol("downstream"), "fig2").load()
    out = finish(fig2(df, tmp_path, FigureOptions(formats=["png"])))
    assert sorted(p.name for p in out.written) == [
        "fig2_summary.csv",
        "fig2_summary.md",
        "fig2_svm_precomputed.png",
    ]
    summary = pd.read_csv(tmp_path / "fig2_summary.csv")
    assert len(summary) == 2 * 2 * 3 * 3 and set(summary["metric"]) == {"r2", "accuracy"}


def test_cli_run_and_plot_on_digits(tmp_path):
    work, out = tmp_path / "cwd", tmp_path / "res"
    work.mkdir()
    args = [
        "run",
        "-m",
        "protocol=downstream",
        "method=rff,sr33",
        "runs=2",
        SMALL,
        f"output_dir={out}",
    ]
    proc = kb(*args, "protocol.learner=linear", cwd=work)
    *lines, final = proc.stdout.strip().splitlines()
    # train_rows=400 (SMALL) is not the default: the line names the cell's hash part
    first = "[1/2] digits rbf rff learner=linear h="
    assert len(lines) == 2 and lines[0].startswith(first) and " n=1: score" in lines[0]
    assert final.endswith(f"plot: kernelbench plot {out} --experiment downstream")
    df = read_results(out)
    assert len(df) == 4 and set(df["protocol"]) == {"downstream"}
    assert df["score"].between(0.8, 1.0).all()
    assert len(list((out / EXACT_DIR).glob("*.json"))) == 1  # one ceiling for both methods
    proc = kb("plot", str(out), "--figure", "fig2", "--format", "png", cwd=work)
    assert (out / "figures" / "downstream" / "fig2_linear.png").is_file()
    bad = kb("run", "protocol=downstream", "protocol.learner=knn", cwd=work, check=False)
    assert bad.returncode != 0
    err = bad.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error: digits rbf rff learner=knn n=1: ")
    assert err[0].endswith("unknown learner 'knn'; valid choices: linear, svm_precomputed")


def test_fig2_grids_cover_the_figure():
    from kernelbench.config import experiment_sweep
    from kernelbench.launch import plan

    assert plan(["experiment=fig2"], True)[2] == 2 * 3 * 3 * 8 * 5  # learners, ..., n
    full, reduced = experiment_sweep("fig2")[1], experiment_sweep("fig2_reduced")[1]
    assert full["protocol.learner"] == ["svm_precomputed", "linear"]
    assert full["method"] == experiment_sweep("fig1")[1]["method"]  # every method of Fig. 1
    assert full["n"] == ["1", "2", "3", "4", "5"] and reduced["n"] == ["1", "3", "5"]
    assert set(full["dataset"]) == set(reduced["dataset"]) == {"powerplant", "letter", "usps"}


def test_a_ceiling_being_computed_by_another_worker_is_waited_for(tmp_path, monkeypatch):
    """Workers of one output directory compute an exact score once: while another holds
    the score's lock, a cell waits and then reads the score it wrote (computing it
    again here would raise)."""
    import dataclasses
    import threading

    from kernelbench.protocols import downstream

    proto = get_protocol("downstream")
    cell = dataclasses.replace(build_cell(_cell("linear")), output_dir=str(tmp_path))
    digest, _ = exact_key(cell, proto)
    path = tmp_path / EXACT_DIR / f"{digest}.json"
    downstream._EXACT_MEMO.pop(digest, None)

    def computed_again(self, cell, ctx):
        raise AssertionError("the ceiling was computed a second time")

    monkeypatch.setattr(downstream.Downstream, "_compute_exact", computed_again)
    got: list = []
    worker = threading.Thread(target=lambda: got.append(proto.exact_score(cell, None)))
    with downstream._exact_lock(path):  # another worker computing the same ceiling
        worker.start()
        worker.join(0.5)
        assert worker.is_alive()  # waiting for the lock
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"score": 0.625}))
    worker.join(10)
    assert got == [0.625]
