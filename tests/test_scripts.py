"""The scripts' own logic (scripts/: a benchmark and a one-off study), loaded from their
files, and the sample-variation table they write (:mod:`kernelbench.verify.sample_variation`).

The scripts hold no product logic: what verify reads is computed by the package; a
script is loaded here by its path, not by putting scripts/ on ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from kernelbench.verify import sample_variation
from tests.conftest import need_mirror

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """The module of ``scripts/<name>.py``, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"_script_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fig1_floor = load_script("fig1_floor")
measure_sr33_rotation = load_script("measure_sr33_rotation")
downstream_stages = load_script("bench_downstream_stages")
compare_runs = load_script("compare_runs")


def test_sample_variation_append_keeps_the_other_pairs(tmp_path: Path) -> None:
    path = tmp_path / "sv.csv"
    pd.DataFrame(
        {"dataset": ["letter", "mnist", "mnist"], "kernel": ["rbf", "rbf", "arccos0"]}
    ).assign(cv=[0.1, 0.2, 0.3]).to_csv(path, index=False)
    new = pd.DataFrame({"dataset": ["mnist"], "kernel": ["rbf"], "cv": [0.5]})
    out = sample_variation.merge_rows(path, new)
    got = {(d, k): cv for d, k, cv in zip(out["dataset"], out["kernel"], out["cv"], strict=True)}
    assert got == {("letter", "rbf"): 0.1, ("mnist", "arccos0"): 0.3, ("mnist", "rbf"): 0.5}
    assert sample_variation.merge_rows(tmp_path / "none.csv", new) is new


def test_tau_is_the_between_seed_variance_less_the_within_seed_part() -> None:
    """per_cell: tau^2 = var_k(mean_k) - mean_k(s_k^2 / R), by hand on two cells; pool:
    cv = sqrt(max(mean + se of tau^2 / mean^2, 0)) per (dataset, kernel)."""
    rng = np.random.default_rng(0)
    frames = {}
    for seed in range(3):
        rows = []
        for n in (1, 2):
            for run in range(4):
                rows.append(
                    {"dataset": "digits", "kernel": "rbf", "method_label": "rff", "n": n,
                     "run": run, "err": 1.0 + 0.1 * seed + 0.01 * rng.standard_normal()}
                )  # fmt: skip
        frames[seed] = pd.DataFrame(rows)
    cells = sample_variation.per_cell(frames, "err")
    assert len(cells) == 2 and (cells["seeds"] == 3).all()
    for n, row in cells.set_index("n").iterrows():
        means = [f[f["n"] == n]["err"].mean() for f in frames.values()]
        within = np.mean([f[f["n"] == n]["err"].var(ddof=1) / 4 for f in frames.values()])
        assert row["tau2"] == pytest.approx(np.var(means, ddof=1) - within, rel=1e-12)
    pooled = sample_variation.pool(cells)
    rel = cells["tau2_rel"].to_numpy()
    expected = np.sqrt(max(rel.mean() + rel.std(ddof=1) / np.sqrt(2), 0.0))
    assert pooled["cv"].iloc[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("d", [2, 5, 8, 13, 100])
def test_published_butterfly_is_a_rotation(d: int) -> None:
    rot = measure_sr33_rotation.PublishedButterfly(d, np.random.default_rng(d))
    Q = rot.rotate_rows(np.eye(d))
    np.testing.assert_allclose(Q @ Q.T, np.eye(d), atol=1e-12)
    assert rot.cos.shape == ((1 << int(np.ceil(np.log2(d)))) - 1,)
    if d & (d - 1):  # the angles past d - 1 are zero
        np.testing.assert_array_equal(rot.cos[d - 1 :], 1.0)


def test_fig1_floor_counts_each_step_where_a_method_needs_it(tmp_path: Path, capsys) -> None:
    from kernelbench.experiment import make_cell, run_and_store

    lines: list[str] = []
    for i, (method, kernel) in enumerate([("rff", "rbf"), ("sr33", "rbf"), ("gq", "arccos1")]):
        cell = make_cell(method, kernel, "digits", n=1, runs=2)
        cell["dataset"]["splits"]["kernel_approx"]["samples"] = 40
        run_and_store(cell, tmp_path / "res", echo=lines.append, prefix=f"[{i + 1}/3] ")
    log = tmp_path / "log.txt"
    log.write_text("\n".join(["some other line", *lines]) + "\n")
    seconds = [float(line.rsplit("[", 1)[1].split()[0]) for line in lines]
    logged = fig1_floor.logged_seconds([str(log)])
    assert list(logged.index) == ["digits"] and np.isclose(logged["digits"], sum(seconds))
    tmp_path = tmp_path / "res"
    table = fig1_floor.cells([str(tmp_path)])
    assert table["runs"].tolist() == [2, 2, 2] and (table["samples"] == 40).all()
    timer = fig1_floor.Timer(repeats=1)
    assert timer("khat", 40, 130) == timer.memo[("khat", 40, 130)]  # measured once
    assert fig1_floor.main([str(tmp_path), "--repeats", "1", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "digits" in out and "measured/floor" in out and "floor:" in out
    steps = fig1_floor.floor_steps(table, timer).set_index("method")
    assert (steps.loc[["rff", "sr33", "gq"], "khat"] > 0).all()
    assert steps.loc["rff", "trig"] > 0 and steps.loc["sr33", "trig"] > 0
    assert steps.loc["gq", "trig"] == 0  # arc-cosine: no cos/sin
    assert steps.loc["rff", "proj"] > 0 and steps.loc["gq", "proj"] > 0
    assert steps.loc["sr33", "proj"] == 0  # butterflies, no dense projection
    assert steps.loc["rff", "draw"] > 0 and steps.loc["gq", "draw"] == 0
    assert np.allclose(steps["floor"], steps[list(fig1_floor.STEPS)].sum(axis=1))
    # normals drawn: rff D d; orf d (d + 1) / 2 per block; the tall QR's reflectors
    assert fig1_floor.normals("rff", 10, 4) == 40
    assert fig1_floor.normals("orf", 10, 4) == 3 * 10  # three 4 x 4 blocks
    assert fig1_floor.normals("orf_tallqr", 10, 4) == 10 + 9 + 8 + 7
    assert fig1_floor.normals("orf_tallqr", 3, 4) == 4 + 3 + 2  # D < d: a d x D QR
    assert not table["sample_space"].any()  # digits: 2N = 80 > d = 64
    # rows drawn in sample space: 2N x D normals and R^T G, no D x d draw or projection
    ss = table.iloc[[0]].assign(sample_space=True, d=300)
    got = fig1_floor.floor_steps(ss, timer).iloc[0]
    assert got["draw"] == 2 * timer("draw", 2 * 40 * int(ss["D"].iloc[0]))
    assert got["proj"] == 2 * timer.memo[("sample", 80, 300, int(ss["D"].iloc[0]))]
    tall = ss.assign(method="orf", method_label="orf_tallqr")  # orf's tall_qr, by label
    D = int(ss["D"].iloc[0])
    assert fig1_floor.floor_steps(tall, timer).iloc[0]["draw"] == 2 * timer(
        "draw", 2 * 40 * D + 300 * 300
    )
    weights = tall.assign(sample_space=False)
    assert fig1_floor.floor_steps(weights, timer).iloc[0]["draw"] == 2 * timer(
        "draw", fig1_floor.normals("orf_tallqr", D, 300)
    )
    f32 = fig1_floor.Timer(repeats=1, product="float32")
    assert f32("khat", 40, 130) > 0 and f32.product == "float32"
    assert fig1_floor.main([str(tmp_path), "--repeats", "1", "--product", "float32"]) == 0
    assert "K_hat in float32" in capsys.readouterr().out
    # every run scores its N x N error: timed once per (N, d, D), counted per run
    assert (steps["errors"] > 0).all()
    D0 = int(table["D"].iloc[0])
    assert steps.loc["rff", "errors"] == 2 * timer.memo[("errors", 40, 64, D0)]
    # --maps: each cell's map alone (fit and the 2N points' features), less the floor's
    # draw, projection and trig; sr33's butterflies are all beyond the floor's steps
    maps = fig1_floor.map_steps(fig1_floor.floor_steps(table, timer), timer)
    maps = maps.set_index("method")
    alone = {r["method"]: 2 * timer.map_seconds(r) for _, r in table.iterrows()}
    assert maps.loc["sr33", "maps"] == pytest.approx(alone["sr33"] - maps.loc["sr33", "trig"])
    assert (maps["maps"] >= 0).all() and maps.loc["sr33", "maps"] > 0
    assert fig1_floor.main([str(tmp_path), "--repeats", "1", "--maps", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "floor+maps:" in out and "measured/(floor+maps)" in out


def test_fig1_floor_routines_are_each_maps_named_work(capsys) -> None:
    """--routines: per (dataset, method, n) the map alone, the floor's steps, the map's
    named routines and the rest; each routine computes what its map computes."""
    from kernelbench.experiment import make_cell
    from kernelbench.features.base import n_projections

    rng = np.random.default_rng(0)
    d = 12
    for label in ("orf", "orf_tallqr"):  # orthonormal columns: the Q of the maps' draw
        cell = make_cell(label, "rbf", "digits", n=1)
        out = fig1_floor.routine_job(cell, 10, d, rng)()
        for Q in out if label == "orf" else [out]:
            assert np.allclose(Q.T @ Q, np.eye(Q.shape[1]), atol=1e-12)
    D = n_projections(1.0, d)
    assert fig1_floor.routine_job(make_cell("qmc", "rbf", "digits", n=1), 10, d, rng)().shape == (
        D,
        d,
    )
    nodes = fig1_floor.routine_job(make_cell("gq", "rbf", "digits", n=1), 10, d, rng)()
    assert nodes.shape == (D, d) and len(np.unique(nodes)) <= 5  # Gauss-Hermite nodes
    # Nystroem: m = N landmarks of the 2N points: z z^T of the landmarks is their K
    Z = fig1_floor.routine_job(make_cell("nystrom", "rbf", "digits", n=1), 10, d, rng)()
    assert Z.shape == (20, 10)
    assert fig1_floor.routine_job(make_cell("rff", "rbf", "digits", n=1), 10, d, rng) is None
    # Nystroem has no cos/sin in the floor (its features are kernel values)
    ny = pd.DataFrame([{"method": "nystrom", "method_label": "nystrom", "kernel": "rbf",
                        "samples": 10, "D": 26, "d": 12, "features": 10, "runs": 1}])  # fmt: skip
    assert fig1_floor.floor_steps(ny, fig1_floor.Timer(repeats=1)).iloc[0]["trig"] == 0
    timer = fig1_floor.Timer(repeats=1)
    table = fig1_floor.routine_table(timer, [0.02])
    assert len(table) == 2 * len(fig1_floor.ROUTINE_METHODS)
    by = table.set_index(["dataset", "method"])
    assert (by.xs("rff", level="method")["routines_ms"] == 0).all()
    assert (by.drop("rff", level="method")["routines_ms"] > 0).all()
    assert np.allclose(
        table["rest_ms"], table["map_ms"] - table["floor_steps_ms"] - table["routines_ms"]
    )
    assert np.allclose(table["cpu_s"], 3 * table["runs"] * table["rest_ms"] / 1e3)
    assert set(table["runs"]) == {100, 500}  # MNIST's and USPS's Fig. 1 runs
    assert fig1_floor.main(["--routines", "0.02", "--repeats", "1"]) == 0
    assert "rest/map" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        fig1_floor.main([])


def test_downstream_rows_split_a_run_by_stage(tmp_path: Path, capsys) -> None:
    """``rows`` sums each (learner, dataset)'s recorded stages, its ceilings and, from the
    log, its cells' seconds; the rest is what no stage recorded."""
    import json

    def shard(learner, dataset, n, seconds):
        rows = pd.DataFrame(
            {
                "learner": learner,
                "dataset": dataset,
                "config_hash": f"{learner}{dataset}{n}",
                "run": [0, 1],
                "fit_seconds": seconds[0],
                "transform_seconds": seconds[1],
                "train_seconds": seconds[2],
                "predict_seconds": seconds[3],
            }
        )
        path = tmp_path / "RUN" / "exp" / dataset / f"learner={learner}" / f"n={n}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows.to_parquet(path)

    shard("linear", "usps", 1, (1.0, 2.0, 10.0, 0.5))
    shard("linear", "usps", 2, (1.0, 2.0, 20.0, 0.5))
    shard("svm_precomputed", "letter", 1, (0.5, 0.5, 3.0, 1.0))
    exact = tmp_path / "RUN" / ".exact"
    exact.mkdir()
    ceiling = {"dataset": {"name": "usps"}, "learner": "linear", "seconds": 7.0}
    (exact / "a.json").write_text(json.dumps(ceiling))
    log = tmp_path / "log.txt"
    log.write_text(
        "plan: 3 cells\n"
        "[1/3] usps rbf rff learner=linear n=1: score 0.9 (2 runs) [40.0 s]\n"
        "[2/3] usps rbf rff learner=linear n=2: score 0.9 (2 runs) [60.0 s]\n"
        "[3/3] letter rbf rff learner=svm_precomputed n=1: 1/2 runs, 3 s, ETA 3 s\n"
        "[3/3] letter rbf rff learner=svm_precomputed n=1: score 0.7 (2 runs) [11.0 s]\n"
    )
    args = ["rows", "--results", str(tmp_path / "RUN"), "--log", str(log)]
    assert downstream_stages.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    usps = next(line for line in out if "usps" in line).split()
    # cells runs map train predict ceilings cell_seconds rest
    assert usps[-8:] == ["2", "4", "12", "60", "2", "7", "100", "19"]
    letter = next(line for line in out if "letter" in line).split()
    assert letter[-8:] == ["1", "2", "2", "6", "2", "0", "11", "1"]
    assert next(line for line in out if line.startswith("all")).split()[-2:] == ["111", "20"]


def test_liu_floor_counts_each_step_as_a_run_takes_it(monkeypatch, capsys) -> None:
    """liu-floor: each step timed once (here 1 s by a stub) and counted per run as the
    learner and the protocol take it: a fold's Gram per chunk of train rows, k L + 1
    factorisations, the cos/sin of 2N + M + P rows; lev_rff's extra pass (Gram,
    factorisation, cos/sin of the train rows), slw_rff's (the cos/sin alone), and under
    the code's reading both maps' cos/sin of 2s distinct projections (twice)."""
    need_mirror("eeg.npz")
    monkeypatch.setattr(downstream_stages, "best_time", lambda fn, repeats, clock: (fn(), 1.0)[1])
    steps, lev, trig_train = downstream_stages.liu_floor_steps(50, 30, 20, 16, 3, 4, 1, 16)
    assert steps == {"gram": 50 / 16, "chol": 13.0, "trig": 150 / 16,
                     "cv_predict": 50 / 16, "spectral": 1.0}  # fmt: skip
    assert lev == 50 / 16 + 1.0 + 50 / 16 and trig_train == 50 / 16
    one, _, _ = downstream_stages.liu_floor_steps(50, 30, 0, 16, 1, 4, 1, 64)
    assert one["chol"] == 1.0 and one["spectral"] == 0.0 and one["gram"] == 1.0  # no CV
    args = ["liu-floor", "--datasets", "eeg", "--ns", "1", "--methods", "rff", "lev_rff", "slw_rff"]
    assert downstream_stages.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if line.startswith("eeg")).split()
    N, M, P = 7490, 7490, 1000  # EEG's random half and the spectral check's points
    assert row[:7] == ["eeg", "1", str(N), str(M), "28", "3", "10"]
    trig = (2 * N + M + P) / 4096
    per_cell = [N / 4096, 13.0, trig, N / 4096, 1.0]
    want = [30 * v for v in per_cell]
    want[2] += 20 * trig  # lev_rff and slw_rff: cos or sin of 2s distinct projections
    assert [float(v) for v in row[7:12]] == pytest.approx(want, abs=0.01)
    lev_pass, slw_pass = 2 * N / 4096 + 1.0, N / 4096
    assert float(row[12]) == pytest.approx(10 * (lev_pass + slw_pass), abs=0.01)
    assert out[-1].startswith("floor: ") and "1440 CPU-s of 12 min x 2 workers" in out[-1]


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.name)
def test_every_script_says_what_it_measured(path: Path) -> None:
    """A script is thin glue or a one-off study: its docstring opens with one line saying
    what it measured, and it does not put scripts/ on ``sys.path`` to share code (shared
    code belongs to the package)."""
    import ast

    text = path.read_text()
    doc = ast.get_docstring(ast.parse(text))
    assert doc, f"{path.name} has no docstring"
    first = doc.splitlines()[0]
    assert first.endswith((".", "?")) and len(first) <= 100, first
    assert "sys.path" not in text


def test_no_test_puts_scripts_on_sys_path() -> None:
    tests = Path(__file__).resolve().parent
    offenders = [
        p.name
        for p in tests.glob("*.py")
        if p.name != Path(__file__).name
        and any(
            "sys.path" in line and "script" in line.lower() for line in p.read_text().splitlines()
        )
    ]
    assert not offenders


def test_compare_runs_pairs_cells_across_settings_folders_and_measures_the_shift(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """--by-cell pairs a shard with its h=... variant; --shift gives each column's mean
    change relative and in before's standard errors (runs paired by ``run``)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])  # mean 2.5, sd 1.29, sem 0.645
    before = pd.DataFrame({"run": [0, 1, 2, 3], "dataset": "letter", "err": x})
    after = before.assign(err=x + 0.1)[::-1]  # another row order: paired by run
    (tmp_path / "a" / "e" / "letter").mkdir(parents=True)
    (tmp_path / "b" / "e" / "letter" / "h=12ab").mkdir(parents=True)
    before.to_parquet(tmp_path / "a" / "e" / "letter" / "n=1.parquet")
    after.to_parquet(tmp_path / "b" / "e" / "letter" / "h=12ab" / "n=1.parquet")
    rel, z = compare_runs.mean_shift(before, after, "err")
    assert rel == pytest.approx(0.1 / 2.5) and z == pytest.approx(0.1 / (x.std(ddof=1) / 2))
    assert compare_runs.mean_shift(before, before, "err") == (0.0, 0.0)
    assert set(compare_runs.shards(tmp_path / "b", by_cell=True)) == {"e/letter/n=1.parquet"}
    assert set(compare_runs.shards(tmp_path / "b")) == {"e/letter/h=12ab/n=1.parquet"}
    argv = ["compare_runs", str(tmp_path / "a"), str(tmp_path / "b"), "--by-cell"]
    monkeypatch.setattr(sys, "argv", [*argv, "--shift", "err"])
    compare_runs.main()
    out = capsys.readouterr().out
    assert "same paths: True" in out and "differ: 1" in out
    assert f"{0.04:.2e}" in out and f"{z:.2e}" in out
    monkeypatch.setattr(sys, "argv", argv[:-1])
    compare_runs.main()
    assert "same paths: False" in capsys.readouterr().out
    (tmp_path / "b" / "e" / "letter" / "h=34cd").mkdir()
    after.to_parquet(tmp_path / "b" / "e" / "letter" / "h=34cd" / "n=1.parquet")
    with pytest.raises(SystemExit, match="two shards of one cell"):
        compare_runs.shards(tmp_path / "b", by_cell=True)


def test_mutation_runner_tries_each_mutant_and_restores_the_file(tmp_path: Path) -> None:
    """``register`` numbers a file's mutants as mutmut does; ``try`` tests each in a
    fresh pytest and writes the unmutated file back: a killed mutant and a survivor."""
    import subprocess

    pytest.importorskip("mutmut")
    source = "def double(x):\n    return 2 * x\n\n\ndef unused():\n    return 7\n"
    (tmp_path / "mod.py").write_text(source)
    (tmp_path / "test_mod.py").write_text(
        "from mod import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    )
    script = str(SCRIPTS / "mutation_runner.py")
    reg = subprocess.run(
        [sys.executable, script, "register", str(tmp_path), "mod.py"],
        capture_output=True,
        text=True,
    )
    assert reg.returncode == 0, reg.stderr
    count = int(reg.stdout.split()[-2])
    assert count >= 3
    out = subprocess.run(
        [sys.executable, script, "try", str(tmp_path), "mod.py", f"1-{count}", "--", "test_mod.py"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == count
    verdicts = {line.split()[0]: line.split()[1] for line in lines}
    assert verdicts["1"].startswith("KILLED")  # 2 * x -> 3 * x
    assert verdicts[str(count)] == "SURVIVED"  # unused() returns 8
    assert (tmp_path / "mod.py").read_text() == source
