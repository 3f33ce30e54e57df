"""The helpers of the maintenance scripts (scripts/): tau tables, sr33 study."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import fig1_floor  # noqa: E402
import measure_sample_variation  # noqa: E402
import measure_sr33_rotation  # noqa: E402


def test_sample_variation_append_keeps_the_other_pairs(tmp_path: Path) -> None:
    path = tmp_path / "sv.csv"
    pd.DataFrame(
        {"dataset": ["letter", "mnist", "mnist"], "kernel": ["rbf", "rbf", "arccos0"]}
    ).assign(cv=[0.1, 0.2, 0.3]).to_csv(path, index=False)
    new = pd.DataFrame({"dataset": ["mnist"], "kernel": ["rbf"], "cv": [0.5]})
    out = measure_sample_variation.merge_rows(path, new)
    got = {(d, k): cv for d, k, cv in zip(out["dataset"], out["kernel"], out["cv"], strict=True)}
    assert got == {("letter", "rbf"): 0.1, ("mnist", "arccos0"): 0.3, ("mnist", "rbf"): 0.5}
    assert measure_sample_variation.merge_rows(tmp_path / "none.csv", new) is new


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
