"""Yang et al. 2014, Tables 1-2 (kernel ridge regression on cpu and census): the
``rel_error`` metric, the ``budget: s`` setting, the experiment files, the offline
boundary (cpu and census are download-only) and the same settings end to end on
powerplant from the mirror."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pytest

from kernelbench.cell import Cell, build_cell
from kernelbench.config import compose, experiment_sweep
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_and_store
from kernelbench.learners import check_task, rel_error, score
from kernelbench.protocols import get_protocol
from kernelbench.protocols.common import feature_map, map_n
from tests.conftest import need_mirror
from tests.test_cli import kb

#: experiment file -> (experiment name, dataset, s values, methods), from the paper
TABLES = {
    "yang2014_table1_cpu": (
        "yang2014_table1",
        "cpu",
        [100, 500, 1000],
        ["qmc_halton_rr2", "qmc", "qmc_sobol", "qmc_lattice", "qmc_digital_net", "rff"],
    ),
    "yang2014_table1_census": (
        "yang2014_table1",
        "census",
        [400, 1200, 1800],
        ["qmc_halton_rr2", "qmc", "qmc_sobol", "qmc_lattice", "qmc_digital_net", "rff"],
    ),
    "yang2014_table2_cpu": (
        "yang2014_table2",
        "cpu",
        [100, 300, 500],
        ["qmc", "qmc_adaptive", "qmc_adaptive_quarter"],
    ),
    "yang2014_table2_census": (
        "yang2014_table2",
        "census",
        [400, 800, 1200, 1800, 2200],
        ["qmc", "qmc_adaptive", "qmc_adaptive_quarter"],
    ),
}


def _cells(exp: str) -> list[dict]:
    """The experiment's cells, composed as ``kernelbench run -m experiment=<exp>`` does."""
    _, sweep = experiment_sweep(exp)
    keys = list(sweep)
    return [
        compose([f"experiment={exp}", *(f"{k}={v}" for k, v in zip(keys, combo, strict=True))])
        for combo in itertools.product(*(sweep[k] for k in keys))
    ]


# -- the metric ----------------------------------------------------------------------


def test_rel_error_is_the_relative_l2_norm_of_the_residual():
    y = np.array([3.0, 4.0, 0.0])
    y_hat = np.array([3.0, 5.0, 0.0])
    assert rel_error(y, y_hat) == pytest.approx(1.0 / 5.0)  # ||(0, 1, 0)|| / ||(3, 4, 0)||
    assert score("rel_error", y, y_hat) == pytest.approx(0.2)
    assert score("rel_error", y, y) == 0.0
    rng = np.random.default_rng(0)
    y, y_hat = rng.normal(size=50), rng.normal(size=50)
    expected = np.sqrt(np.sum((y_hat - y) ** 2)) / np.sqrt(np.sum(y**2))
    assert score("rel_error", y, y_hat) == pytest.approx(expected, rel=1e-12)


def test_rel_error_applies_to_regression_only():
    assert check_task("regression", "rel_error") == "rel_error"
    assert check_task("regression") == "r2"  # the default is unchanged
    with pytest.raises(KernelbenchError, match="valid choices: accuracy$"):
        check_task("classification", "rel_error")
    with pytest.raises(KernelbenchError, match="valid choices: accuracy, r2, rel_error"):
        score("mae", np.zeros(2), np.zeros(2))


# -- the budget ----------------------------------------------------------------------


def _downstream(budget: str | None = None, n: float = 100, method: str = "rff") -> Cell:
    cell = make_cell(protocol="downstream", dataset="powerplant", method=method, n=n, runs=2)
    if budget is not None:
        cell["protocol"]["budget"] = budget
    return build_cell(cell)


@pytest.mark.parametrize("d", [4, 16, 21])
@pytest.mark.parametrize("method", ["rff", "qmc", "qmc_sobol", "qmc_adaptive_quarter"])
def test_budget_s_gives_d_equal_to_s(d, method):
    adaptive = method.startswith("qmc_adaptive")  # its CG costs O(s^2 d): small s, 1 step
    for s in (100, 300) if adaptive else (100, 300, 1800):
        cell = _downstream("s", n=s, method=method)
        if adaptive:
            params = {**cell.method["params"], "max_cg_iter": 1}
            cell = dataclasses.replace(cell, method={**cell.method, "params": params})
        assert map_n(cell, d) == pytest.approx(s / (2 * (d + 1)))
        fm = feature_map(cell, np.random.default_rng(0), d=d)
        fm.fit(np.random.default_rng(1).uniform(size=(30, d)))
        assert fm.n_projections_ == s  # D = s points
        assert fm.n_features_out_ == 2 * s  # a cos and a sin feature each
    default = _downstream(n=2)
    assert map_n(default, d) == 2  # budget n: D = 2 n (d + 1)


def test_default_budget_leaves_cells_and_hashes_as_they_were():
    default = _downstream()
    assert "budget" not in default.settings  # the default is dropped
    explicit = _downstream("n")
    assert explicit.payload() == default.payload()
    assert build_cell(explicit).config_hash == build_cell(default).config_hash
    with_s = _downstream("s")
    assert (
        with_s.settings["budget"] == "s"
        and build_cell(with_s).config_hash != build_cell(default).config_hash
    )


def test_bad_budget_is_one_line_naming_the_choices():
    with pytest.raises(KernelbenchError, match=r"unknown budget.*'D'; valid choices: n, s$"):
        _downstream("D")


# -- the experiment files ------------------------------------------------------------


@pytest.mark.parametrize("exp", sorted(TABLES))
def test_experiment_files_compose_and_every_cell_resolves(exp):
    name, dataset, s_values, methods = TABLES[exp]
    cells = _cells(exp)
    assert len(cells) == len(s_values) * len(methods)
    seen = set()
    for raw in cells:
        cell = build_cell(raw)
        proto = get_protocol(cell)
        assert proto.skip(cell) is None  # method, kernel and settings; no data is loaded
        assert proto.name == "downstream" and cell.experiment == name
        assert cell.dataset["name"] == dataset and cell.runs == 10
        assert cell.kernel == {"name": "rbf", "params": {"gamma": "nn50"}}
        settings = cell.settings
        assert settings["data"] == "yang2014" and settings["budget"] == "s"
        assert settings["learner"] == "linear" and settings["metric"] == "rel_error"
        assert proto.metric_name(cell) == "rel_error"
        assert cell.data["download"] is False  # the command line turns it on
        seen.add((cell.method_label, cell.n))
    assert seen == {(m, s) for m in methods for s in s_values}
    if "table2" in exp:
        boxes = {c["method"]["label"]: c["method"]["params"].get("box_scale") for c in cells}
        assert boxes == {"qmc": None, "qmc_adaptive": 1.0, "qmc_adaptive_quarter": 0.25}


@pytest.mark.parametrize("exp", ["yang2014_table1_cpu", "yang2014_table2_census"])
def test_offline_run_is_one_line_exit_2(tmp_path, exp):
    """No network, no mirror copy: `kernelbench run` stops at the data with one line."""
    work, empty = tmp_path / "cwd", tmp_path / "mirror"
    work.mkdir()
    empty.mkdir()
    name, dataset, s_values, methods = TABLES[exp]
    proc = kb(
        "run",
        "-m",
        f"experiment={exp}",
        f"method={methods[0]}",
        f"n={s_values[0]}",
        f"data.mirror={empty}",
        f"data.cache={tmp_path / 'cache'}",
        f"output_dir={tmp_path / 'res'}",
        cwd=work,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    plan_line, err = proc.stderr.strip().splitlines()  # the plan, then one error line
    assert plan_line.startswith("plan: 1 cells, 10 runs, ")
    assert err.startswith(
        f"Error: {dataset} rbf {methods[0]} learner=linear n={s_values[0]}: "
        f"dataset {dataset!r} is not available offline; searched mirror {empty}"
    )
    assert err.endswith(f"download it with `kernelbench datasets fetch {dataset}`")
    assert "Traceback" not in proc.stderr and "HYDRA_FULL_ERROR" not in proc.stderr
    assert not (tmp_path / "res" / name).exists()


# -- end to end on a regression dataset of the mirror ---------------------------------


@pytest.fixture(scope="module")
def mirror() -> Path:
    return need_mirror("powerplant.npz")


def _powerplant(metric: str, mirror: Path) -> dict:
    cell = make_cell(protocol="downstream", dataset="powerplant", method="qmc", n=40, runs=2)
    cell["protocol"].update(learner="linear", metric=metric, budget="s")
    cell["kernel"]["params"]["gamma"] = "nn50"
    cell["dataset"]["splits"]["downstream"]["train_rows"] = 500
    cell["data"] = {"mirror": str(mirror), "cache": None, "download": False}
    return cell


def test_yang_settings_end_to_end_on_powerplant(tmp_path, mirror):
    from kernelbench.datasets import protocol_split

    df = run_and_store(_powerplant("rel_error", mirror), tmp_path / "res", echo=None)
    assert len(df) == 2 and set(df["metric"]) == {"rel_error"}
    assert set(df["D"]) == {40} and set(df["n_features"]) == {80}  # D = s
    assert (df["train_rows"] == 500).all() and (df["alpha"] > 0).all()
    assert df["score"].between(0.0, 0.1).all()  # a few percent of ||y||
    assert np.isfinite(df["exact_score"]).all() and (df["exact_score"] > 0).all()
    # The same maps and alpha (LOO picks by R^2, i.e. by ||y_hat - y||) scored by R^2:
    # ||y_hat - y||^2 = (1 - R^2) ||y - mean(y)||^2 gives the relative error again.
    r2 = run_and_store(_powerplant("r2", mirror), tmp_path / "res_r2", echo=None)
    np.testing.assert_array_equal(r2["alpha"], df["alpha"])
    cell = build_cell(_powerplant("r2", mirror))
    y = protocol_split(cell.dataset, "downstream", cell.seed, cell.data).y_test
    expected = np.sqrt((1.0 - r2["score"]) * np.sum((y - y.mean()) ** 2)) / np.linalg.norm(y)
    np.testing.assert_allclose(df["score"], expected, rtol=1e-9)


def test_download_true_runs_a_table_cell_through_the_network_boundary(tmp_path, monkeypatch):
    """``data.download=true`` with OpenML replaced at its boundary (``net.openml_frame``):
    a Table 1 cell fetches cpu into the cache and records D = s rows."""
    from kernelbench.datasets import clear_cache, net
    from tests.test_datasets_yang import fake_table

    calls: list[int] = []

    def fake(openml_id: int):
        calls.append(openml_id)
        return fake_table("cpu", n_rows=240, seed=3), "usr"

    monkeypatch.setattr(net, "openml_frame", fake)
    monkeypatch.setenv("KERNELBENCH_CACHE", str(tmp_path / "default-cache"))
    clear_cache()
    empty = tmp_path / "mirror"
    empty.mkdir()
    cell = next(c for c in _cells("yang2014_table1_cpu") if c["method"]["label"] == "rff")
    cell.update(runs=2, data={"mirror": str(empty), "cache": str(tmp_path), "download": True})
    try:
        df = run_and_store(cell, tmp_path / "res", echo=None)
    finally:
        clear_cache()  # the fake cpu stays out of later tests
    assert calls == [197]  # cpu_act, once
    assert len(df) == 2 and set(df["experiment"]) == {"yang2014_table1"}
    assert set(df["D"]) == {cell["n"]} and set(df["metric"]) == {"rel_error"}
    assert (df["train_rows"] == 120).all() and (df["test_rows"] == 120).all()  # halves
    assert set(df["data_source"]) <= {"download", "cache"}
    assert np.isfinite(df["score"]).all() and (df["score"] > 0).all()
