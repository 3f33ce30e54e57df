"""Shard identity: every setting that changes a cell's rows is part of its shard path;
the config hash covers only what the cell's protocol reads; corrupt and earlier shards."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelbench.cell import (
    build_cell,
    cell_shard_path,
    protocol_dataset,
)
from kernelbench.experiment import make_cell, run_and_store
from kernelbench.results import (
    SCHEMA_VERSION,
    dumps,
    read_results,
    shard_config_hash,
    shard_files,
    shard_schema_version,
)
from tests.test_cli import kb

SAMPLES = 40


def _identity(cell) -> str:
    """Everything that tells two resolved cells apart, but runs (a shard is extended)."""
    payload = {k: v for k, v in cell.payload().items() if k != "runs"}
    payload["dataset"] = protocol_dataset(cell)
    return dumps(payload)


# -- no two different cells share a path -------------------------------------------

_VALUES = st.sampled_from([None, 0.1, 1, 1.0, 2.5, "nn50", "0.1", "true", True, "a,b", [1, 2]])


@st.composite
def cells(draw: st.DrawFn) -> dict:
    protocol = draw(st.sampled_from(["kernel_approx", "downstream"]))
    cell = make_cell(
        method=draw(st.sampled_from(["rff", "sorf", "sr33"])),
        kernel=draw(st.sampled_from(["rbf", "arccos1"])),
        dataset=draw(st.sampled_from(["digits", "letter"])),
        n=draw(st.sampled_from([1, 2, 0.5])),
        runs=draw(st.sampled_from([2, 3])),
        seed=draw(st.sampled_from([0, 1, 12])),
        experiment=draw(st.sampled_from([None, "quick", "yang2014_table1", "kernel_approx"])),
        protocol=protocol,
    )
    for group in ("kernel", "method"):
        for key in draw(st.lists(st.sampled_from(["gamma", "n_blocks", "seed", "h", "x"]))):
            cell[group]["params"][key] = draw(_VALUES)
        if draw(st.booleans()) and cell[group]["params"]:
            del cell[group]["params"][sorted(cell[group]["params"])[0]]
    if draw(st.booleans()):
        cell["method"]["paper_label"] = "other"
    data = cell["dataset"]["splits"][protocol]
    for key in draw(st.lists(st.sampled_from(["samples", "train_rows", "scaling"]))):
        data[key] = draw(st.sampled_from([100, 300, None, "max"]))
    other = "downstream" if protocol == "kernel_approx" else "kernel_approx"
    if draw(st.booleans()):  # another protocol's data settings: not part of the identity
        cell["dataset"]["splits"][other]["runs"] = 99
    if protocol == "downstream" and draw(st.booleans()):
        cell["protocol"]["learner"] = "linear"
    return build_cell(cell)


@settings(max_examples=150, deadline=None)
@given(cells(), cells())
def test_distinct_cells_have_distinct_shard_paths(a, b):
    same = _identity(a) == _identity(b)
    assert (cell_shard_path(a, "out") == cell_shard_path(b, "out")) == same
    assert (build_cell(a).config_hash == build_cell(b).config_hash) == (same and a.runs == b.runs)


def test_default_cells_have_no_variant_directory():
    cell = build_cell(make_cell("sr33", "arccos1", "digits", n=2, runs=3))
    assert cell.variant == ()
    assert cell_shard_path(cell, "out") == Path("out/kernel_approx/digits/arccos1/sr33/n=2.parquet")
    assert cell.name == "digits arccos1 sr33 n=2"


def test_readable_parts_name_what_differs():
    cell = make_cell("sorf", "rbf", "digits", runs=2, seed=1)
    cell["kernel"]["params"]["gamma"] = 0.1
    cell["method"]["params"]["n_blocks"] = 2
    cell = build_cell(cell)
    assert cell.variant == ("seed=1", "gamma=0.1", "n_blocks=2")
    assert cell_shard_path(cell, "out").parent.name == "seed=1,gamma=0.1,n_blocks=2"
    assert cell.name == "digits rbf sorf seed=1 gamma=0.1 n_blocks=2 n=1"


def test_paper_grid_settings_are_their_experiments_defaults():
    """yang2014_table1 fixes gamma=nn50, data, learner, metric and budget: no variant."""
    cell = make_cell("rff", "rbf", "cpu", n=100, runs=2, experiment="yang2014_table1")
    cell["protocol"] = {
        **make_cell(protocol="downstream")["protocol"],
        "data": "yang2014",
        "learner": "linear",
        "metric": "rel_error",
        "budget": "s",
    }
    cell["kernel"]["params"]["gamma"] = "nn50"
    cell = build_cell(cell)
    assert cell.variant == ()
    kernel = {**cell.kernel, "params": {**cell.kernel["params"], "gamma": "nn20"}}
    cell = dataclasses.replace(cell, kernel=kernel)  # a Cell is frozen: build another
    assert cell.variant == ("gamma=nn20",)


# -- the config hash covers what the protocol reads --------------------------------


def test_other_protocols_data_settings_leave_the_hash_alone():
    cell = build_cell(make_cell("rff", "rbf", "digits", runs=2))
    edited = copy.deepcopy(cell)
    edited.dataset["splits"]["downstream"]["train_rows"] = 1000
    assert build_cell(edited).config_hash == build_cell(cell).config_hash
    assert cell_shard_path(edited, "out") == cell_shard_path(cell, "out")
    own = copy.deepcopy(cell)
    own.dataset["splits"]["kernel_approx"]["samples"] = 100
    assert build_cell(own).config_hash != build_cell(cell).config_hash


# -- corrupt shards and shards of earlier versions ---------------------------------


def _small(**kw) -> dict:
    cell = make_cell("rff", "rbf", "digits", runs=2, **kw)
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = SAMPLES
    return cell


def test_a_corrupt_shard_is_reported_as_corrupt(tmp_path):
    lines: list[str] = []
    first = run_and_store(_small(), tmp_path, echo=lines.append)
    path = cell_shard_path(build_cell(_small()), tmp_path)
    path.write_bytes(path.read_bytes()[:100])  # truncated
    again = run_and_store(_small(), tmp_path, echo=lines.append)
    name = build_cell(_small()).name
    assert lines[-2] == f"{name}: corrupt shard {path} (unreadable), recomputing"
    assert again["rel_fro_error"].equals(first["rel_fro_error"])
    assert shard_config_hash(path) == build_cell(_small()).config_hash


def test_a_shard_of_an_earlier_schema_is_one_line_never_adopted(tmp_path):
    """A shard without the current schema version stops the run with one line; it is
    left as it is, and overwrite=true replaces it."""
    import pyarrow.parquet as pq

    from kernelbench.errors import KernelbenchError

    cell = build_cell(_small(seed=2))
    fresh = run_and_store(cell, tmp_path, echo=None)
    path = cell_shard_path(cell, tmp_path)
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({}), path)  # as schemas 4 and earlier wrote it
    before = path.read_bytes()
    with pytest.raises(KernelbenchError) as err:
        run_and_store(cell, tmp_path, echo=None)
    assert str(err.value) == (f"{path}: written by schema 4; rerun with overwrite=true")
    assert path.read_bytes() == before
    again = run_and_store(cell, tmp_path, overwrite=True, echo=None)
    assert again["rel_fro_error"].equals(fresh["rel_fro_error"])
    assert shard_schema_version(path) == SCHEMA_VERSION


# -- a sweep keeps every shard -----------------------------------------------------


def test_a_sweep_over_seed_and_parameters_keeps_every_shard(tmp_path):
    out = tmp_path / "res"
    args = [
        "run",
        "-m",
        "method=sorf",
        "seed=0,1",
        "kernel.params.gamma=0.1,nn50",
        "method.params.n_blocks=1,2",
        "dataset=digits",
        "runs=2",
        f"dataset.splits.kernel_approx.samples={SAMPLES}",
        f"output_dir={out}",
    ]
    proc = kb(*args, cwd=tmp_path)
    *lines, final = proc.stdout.strip().splitlines()
    assert final.startswith("8 of 8 cells: 8 computed; shards in ")
    assert len(lines) == 8 and len({line.split(": ")[0][6:] for line in lines}) == 8
    assert "[1/8] digits rbf sorf gamma=0.1 n_blocks=1 h=" in lines[0]
    assert not any("recomputing" in line for line in lines)
    files = shard_files(out)
    assert len(files) == 8
    variants = {f.parent.name.rsplit(",h=", 1)[0] for f in files}
    assert variants == {
        f"{seed}gamma={g},n_blocks={b}"
        for seed in ("", "seed=1,")
        for g in ("0.1", "nn50")
        for b in (1, 2)
    }
    df = read_results(out)
    assert len(df) == 16
    assert df.groupby(["seed", "kernel_params", "method_params"]).ngroups == 8
    *again, final = kb(*args, cwd=tmp_path).stdout.strip().splitlines()
    assert len(again) == 8 and all(line.endswith("skipped (done)") for line in again)
    assert final.startswith("8 of 8 cells: 8 skipped (already done); shards in ")


# -- plot and verify tell such cells apart -------------------------------------------


def test_plot_and_verify_do_not_pool_cells_of_another_seed(tmp_path):
    from kernelbench.outputs.plot import make_plots, split_variants
    from kernelbench.protocols import get_protocol
    from kernelbench.verify.command import grid_rows

    for seed in (0, 1):
        run_and_store(_small(seed=seed), tmp_path, echo=None)
    proto = get_protocol("kernel_approx")
    df = read_results(tmp_path)
    rows, varied = split_variants(df, proto)
    assert varied == ["seed"]
    assert sorted(set(rows["method_label"])) == ["rff seed=0", "rff seed=1"]
    report = make_plots(tmp_path, tmp_path / "fig", formats=["png"])
    assert any("cells differ in seed" in note for note in report.notes)
    kept = grid_rows(df, proto, [build_cell(_small(seed=1))])
    assert set(kept["seed"]) == {1} and len(kept) == 2
    alone = df[df["seed"] == 0]  # one cell under the key: kept as before
    assert len(grid_rows(alone, proto, [build_cell(_small(seed=1))])) == 2


# -- a changed default that moves a stored cell out of reach -------------------------


def test_a_changed_default_that_orphans_a_shard_is_one_line_naming_it(tmp_path, monkeypatch):
    """A shard's path names what differs from the defaults when it is written: sorf with
    n_blocks=2 (the default 3) lands in ``n_blocks=2/``. After the default becomes 2 the
    same cell has no variant; its run names the setting and the stored shard, in one
    line, and the shard of another cell beside it (n_blocks=1) is not mistaken for it."""
    import kernelbench.cell as cell_mod

    def sorf(n_blocks):
        cell = make_cell("sorf", "rbf", "digits", runs=2)
        cell["method"]["params"]["n_blocks"] = n_blocks
        return cell

    lines: list[str] = []
    run_and_store(sorf(2), tmp_path, echo=lines.append)
    run_and_store(sorf(1), tmp_path, echo=lines.append)
    old = cell_shard_path(sorf(2), tmp_path)
    assert old.parent.name == "n_blocks=2" and not any("default" in x for x in lines)

    group_file = cell_mod._group_file

    def edited(group, name):  # configs/method/sorf.yaml with params: {n_blocks: 2}
        found = group_file(group, name)
        if group == "method" and name == "sorf":
            found = {**found, "params": {**found["params"], "n_blocks": 2}}
        return found

    monkeypatch.setattr(cell_mod, "_group_file", edited)  # the cell now takes the default
    new = cell_shard_path(sorf(2), tmp_path)
    assert new == old.parent.parent / "n=1.parquet"
    lines.clear()
    run_and_store(sorf(2), tmp_path, echo=lines.append)
    moved = [x for x in lines if "default" in x]
    assert len(moved) == 1 and "\n" not in moved[0], lines
    assert "the default of n_blocks changed" in moved[0]
    assert f"mv {old} {new}, then rerun" in moved[0]
    lines.clear()
    run_and_store(sorf(2), tmp_path, echo=lines.append)  # now stored here: skipped
    assert lines == [f"{build_cell(sorf(2)).name}: skipped (done)"]
