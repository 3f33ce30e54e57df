"""The resolved Cell, the protocols' settings dataclasses and the one grid expansion."""

from __future__ import annotations

import dataclasses

import pytest
from omegaconf import OmegaConf

from kernelbench.cell import Cell, build_cell
from kernelbench.config import config_dir, expand, experiment_grid, experiment_sweep, load_group
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell
from kernelbench.launch import plan
from kernelbench.protocols import PROTOCOLS
from kernelbench.settings import defaults

BUILT_IN = sorted(p.stem for p in (config_dir() / "protocol").glob("*.yaml"))


@pytest.mark.parametrize("name", BUILT_IN)
def test_protocol_files_only_select_their_dataclass(name):
    """Each default lives in the dataclass: the YAML file restates none."""
    raw = OmegaConf.to_container(OmegaConf.load(config_dir() / "protocol" / f"{name}.yaml"))
    assert raw == {"defaults": [f"{name}_settings", "_self_"]}
    assert load_group("protocol", name) == defaults(PROTOCOLS.get(name).Settings)


def test_a_cell_is_built_once_and_frozen():
    cell = build_cell(make_cell("rff", "rbf", "digits", runs=2))
    assert isinstance(cell, Cell) and build_cell(cell) is cell
    assert cell.data_key == "kernel_approx" and cell.data_settings["samples"] == 300
    with pytest.raises(dataclasses.FrozenInstanceError):
        cell.runs = 3  # type: ignore[misc]
    assert cell.with_runs(5).runs == 5 and cell.runs == 2
    assert not hasattr(cell, "__getitem__")  # read by attribute only


def test_derived_settings_are_resolved_when_the_cell_is_built():
    cell = build_cell(make_cell("rff", "rbf", "eeg", protocol="krr", runs=1))
    assert cell.settings["row_scaling"] is True and cell.settings["cv_folds"] == 3  # code
    assert cell.options is not None and cell.options.reading == "code"


def test_settings_are_typed_and_checked_once():
    cell = make_cell("rff", "rbf", "eeg", protocol="krr", runs=1)
    cell["protocol"]["sigma"] = 2  # an int for a float setting: typed as Hydra types it
    assert build_cell(cell).settings["sigma"] == 2.0
    cell["protocol"]["chunk_rows"] = "many"
    with pytest.raises(KernelbenchError, match="chunk_rows must be int, got 'many'"):
        build_cell(cell)


def test_one_expansion_for_plan_verify_and_the_python_api():
    points = expand({"a": [1, 2], "b": ["x"], "c": [], "d": [3, 4, 5]})
    assert points[:2] == [{"a": 1, "b": "x", "d": 3}, {"a": 1, "b": "x", "d": 4}]
    assert len(points) == 6  # a key without values is left out
    _, sweep = experiment_sweep("fig1_reduced")
    cells = experiment_grid("fig1_reduced", ["runs=2"])
    assert len(cells) == len(expand(sweep)) == plan(["experiment=fig1_reduced"], False)[2]
    assert all(c[0] == "experiment=fig1_reduced" and c[-1] == "runs=2" for c in cells)


@pytest.mark.parametrize("protocol", ["kernel_approx", "downstream", "walltime"])
def test_a_job_builds_its_cell_once(protocol, tmp_path, monkeypatch):
    """From the Hydra job's config to its shard (and a rerun that skips it), the cell is
    built once per run: every step after receives the Cell."""
    import sys

    import kernelbench.cell
    from kernelbench.launch import _job

    original = kernelbench.cell.build_cell
    built: list[str] = []

    def counting(config):
        if not isinstance(config, Cell):
            built.append(config["method"]["name"])
        return original(config)

    for name, module in list(sys.modules.items()):
        if name.startswith("kernelbench") and getattr(module, "build_cell", None) is original:
            monkeypatch.setattr(module, "build_cell", counting)
    config = make_cell("rff", "rbf", "digits", runs=2, protocol=protocol)
    config["dataset"]["splits"]["kernel_approx"]["samples"] = 40
    config.update(output_dir=str(tmp_path), overwrite=False)
    for _ in range(2):  # computed, then skipped
        _job(OmegaConf.create(config))
    assert built == ["rff", "rff"]
    assert len(list(tmp_path.rglob("*.parquet"))) == 1


def test_a_defaults_entry_naming_no_config_is_one_line():
    """A config file's ``defaults`` naming a structured config that neither a file nor a
    plug-in registers: one line naming it, after the plug-ins were loaded."""
    from kernelbench.config import _stored

    with pytest.raises(KernelbenchError, match="defaults names protocol/no_such_settings"):
        _stored("protocol", "no_such_settings")
    assert _stored("protocol", "kernel_approx_settings") is not None
