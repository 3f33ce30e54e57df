"""Result shards: schema, atomic writes, the reader, provenance."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kernelbench.cell import cell_shard_path, shard_schema
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell
from kernelbench.protocols import get_protocol
from kernelbench.results import (
    CELL_FIELDS,
    PROVENANCE_FIELDS,
    format_n,
    make_schema,
    provenance,
    read_results,
    remove_stale_tmp,
    shard_config_hash,
    shard_files,
    write_shard,
)

SCHEMA = shard_schema(get_protocol("kernel_approx"))
COLUMNS = SCHEMA.names


def _frame(rows: int = 3, **over) -> pd.DataFrame:
    """A DataFrame with SCHEMA's columns (values of the right types)."""
    base = {
        "experiment": "e",
        "protocol": "kernel_approx",
        "protocol_params": "{}",
        "dataset": "digits",
        "kernel": "rbf",
        "kernel_params": "{}",
        "method": "rff",
        "method_label": "rff",
        "paper_label": "G",
        "method_params": "{}",
        "n": 1.0,
        "D": 130,
        "n_features": 260,
        "d": 64,
        "samples": 300,
        "runs": rows,
        "seed": 0,
        "config_hash": "abc",
        "started_at": pd.Timestamp("2024-01-01", tz="UTC"),
        "kernelbench_version": "0",
        "git_commit": None,
        "python_version": "3",
        "numpy_version": "2",
        "scipy_version": "1",
        "sklearn_version": "1",
        "blas": "openblas",
        "blas_threads": 1,
        "hostname": "h",
        "cpu_model": "c",
        "data_source": "bundled",
        "data_deviation": "none",
    }
    base.update(over)
    out = []
    for r in range(rows):
        out.append(
            {
                **base,
                "run": r,
                "rel_fro_error": 0.1 + r,
                "rel_spec_error": 0.2 + r,
                "fit_seconds": 0.01,
                "transform_seconds": 0.02,
                "draws": "weights",
            }
        )
    return pd.DataFrame(out)[COLUMNS]


def test_shard_path_names_the_cell():
    cell = make_cell("sr33", "rbf", "letter", n=2, protocol="downstream", experiment="fig2")
    cell["protocol"]["learner"] = "linear"
    levels = "fig2/letter/rbf/sr33/learner=linear/protocol=downstream"
    assert cell_shard_path(cell, "out") == Path(f"out/{levels}/n=2.parquet")
    cell = make_cell("sr33", "rbf", "letter", n=1.0, experiment="fig1")
    assert cell_shard_path(cell, "out") == Path("out/fig1/letter/rbf/sr33/n=1.parquet")
    assert format_n(2) == "2" and format_n(0.5) == "0.5"


def test_write_and_read_roundtrip(tmp_path):
    path = tmp_path / "e/digits/rbf/rff/n=1.parquet"
    write_shard(_frame(), path, SCHEMA)
    assert pq.read_schema(path).equals(SCHEMA, check_metadata=False)
    assert sorted(os.listdir(path.parent)) == ["n=1.parquet"]  # no temp file left
    df = read_results(tmp_path)
    assert list(df.columns) == COLUMNS
    assert len(df) == 3
    assert df["rel_fro_error"].tolist() == [0.1, 1.1, 2.1]
    assert shard_config_hash(path) == "abc"


def test_write_rejects_wrong_columns(tmp_path):
    with pytest.raises(ValueError, match="missing"):
        write_shard(_frame().drop(columns=["rel_spec_error"]), tmp_path / "x.parquet", SCHEMA)
    with pytest.raises(ValueError, match="extra"):
        write_shard(_frame().assign(bogus=1), tmp_path / "x.parquet", SCHEMA)
    assert not any(tmp_path.iterdir())


def test_failed_write_keeps_old_shard_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "n=1.parquet"
    write_shard(_frame(2), path, SCHEMA)
    before = path.read_bytes()

    def broken(table, where, **kw):
        where.write(b"PAR1 partial")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(KernelbenchError, match="cannot write the shard .*: disk full; the sha"):
        write_shard(_frame(3), path, SCHEMA)  # one line for the user, not a traceback
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["n=1.parquet"]


def test_reader_skips_hidden_and_temporary_files(tmp_path):
    write_shard(_frame(2), tmp_path / "e/digits/rbf/rff/n=1.parquet", SCHEMA)
    write_shard(_frame(2, experiment="f"), tmp_path / "f/digits/rbf/rff/n=1.parquet", SCHEMA)
    cell = tmp_path / "e" / "digits" / "rbf" / "rff"
    (cell / ".n=2.parquet.tmp-123").write_bytes(b"PAR1 partial")
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "junk.parquet").write_bytes(b"junk")
    assert len(shard_files(tmp_path)) == 2
    assert len(read_results(tmp_path)) == 4
    only_e = read_results(tmp_path, experiment="e")
    assert set(only_e["experiment"]) == {"e"} and len(only_e) == 2
    with pytest.raises(KernelbenchError, match="no results for experiment 'g'.*found: e, f"):
        read_results(tmp_path, experiment="g")


def test_reader_errors(tmp_path):
    with pytest.raises(KernelbenchError, match="does not exist"):
        read_results(tmp_path / "missing")
    with pytest.raises(KernelbenchError, match="no results"):
        read_results(tmp_path)


def test_stale_temp_files_of_dead_writers_are_removed(tmp_path):
    path = tmp_path / "n=1.parquet"
    dead = tmp_path / ".n=1.parquet.tmp-999999999"
    alive = tmp_path / f".n=1.parquet.tmp-{os.getppid()}"
    other = tmp_path / ".n=2.parquet.tmp-999999999"
    for f in (dead, alive, other):
        f.write_bytes(b"x")
    remove_stale_tmp(path)
    assert not dead.exists()
    assert alive.exists() and other.exists()


def test_provenance_is_complete_and_cached():
    prov = provenance()
    for key in (
        "kernelbench_version",
        "git_commit",
        "python_version",
        "numpy_version",
        "scipy_version",
        "sklearn_version",
        "hostname",
        "cpu_model",
    ):
        assert key in prov
        assert key in COLUMNS
    assert prov["numpy_version"] == np.__version__
    assert provenance() is prov


def test_protocol_schemas_share_the_common_columns_and_reject_clashes():
    extra = [("score", pa.float64())]
    schema = make_schema(extra)
    names = schema.names
    assert names[: len(CELL_FIELDS)] == [n for n, _ in CELL_FIELDS]
    assert names[-len(PROVENANCE_FIELDS) :] == [n for n, _ in PROVENANCE_FIELDS]
    assert "score" in names
    with pytest.raises(ValueError, match="clash"):
        make_schema([("run", pa.int64())])


def test_reader_unions_shards_of_different_protocols(tmp_path):
    write_shard(_frame(2), tmp_path / "e/digits/rbf/rff/n=1.parquet", SCHEMA)
    other = make_schema([("score", pa.float64())])
    df = _frame(2, experiment="f", protocol="other").drop(
        columns=["samples", "rel_fro_error", "rel_spec_error", "draws"]
    )
    df["score"] = [0.5, 0.6]
    write_shard(df, tmp_path / "f/digits/rbf/rff/n=1.parquet", other)
    both = read_results(tmp_path)
    assert len(both) == 4
    assert both.loc[both["experiment"] == "f", "rel_fro_error"].isna().all()
    assert both.loc[both["experiment"] == "e", "score"].isna().all()
    assert both.loc[both["experiment"] == "f", "score"].tolist() == [0.5, 0.6]
