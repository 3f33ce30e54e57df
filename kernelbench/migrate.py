"""``kernelbench migrate DIR``: bring the shards of schema 3 to the current schema.

Not on the run path: ``kernelbench run`` reports a shard of an earlier schema in one
line and leaves it (:func:`kernelbench.experiment.check_schema`); nothing but this
command reads the old layout. A shard of schema 3 is migrated when the cell its rows
name, rebuilt from today's config files (dataset, method label) and the row's
parameters, hashes to the shard's stored hash as schema 3 computed it (the data recipes
under their old key ``protocols``): then it moves to the cell's current path with the
current config hash and schema version, its rows unchanged. Any other shard (a dataset
override, an edited config file, schema 2) is listed to rerun.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
import pyarrow.parquet as pq

from kernelbench.cell import Cell, build_cell, cell_shard_path
from kernelbench.errors import KernelbenchError
from kernelbench.results import (
    SCHEMA_KEY,
    SCHEMA_VERSION,
    atomic_write,
    dumps,
    shard_files,
    shard_schema_version,
)

#: The schema this command migrates from.
FROM_VERSION = 3


def schema3_hash(cell: Cell) -> str:
    """The config hash schema 3 gave ``cell``: its dataset entry's recipes under
    ``protocols``, of these only the cell's data key."""
    dataset: dict[str, Any] = {
        ("protocols" if k == "splits" else k): v for k, v in cell.dataset.items()
    }
    recipes = dataset.get("protocols")
    if isinstance(recipes, Mapping):
        key = cell.data_key
        dataset["protocols"] = {key: recipes[key]} if key in recipes else {}
    payload = {**cell.payload(), "dataset": dataset}
    payload["schema_version"] = FROM_VERSION
    return hashlib.sha256(dumps(payload).encode()).hexdigest()[:16]


def row_cell(row: Mapping[str, Any]) -> Cell:
    """The cell a shard's first row names, rebuilt from today's config files."""
    from kernelbench.config import load_group

    method = load_group("method", row["method_label"])
    method.update(name=row["method"], params=json.loads(row["method_params"]))
    if row.get("paper_label"):
        method["paper_label"] = row["paper_label"]
    protocol = {"name": row["protocol"], **json.loads(row["protocol_params"])}
    return build_cell(
        {
            "experiment": row["experiment"],
            "protocol": protocol,
            "dataset": load_group("dataset", row["dataset"]),
            "kernel": {"name": row["kernel"], "params": json.loads(row["kernel_params"])},
            "method": method,
            "n": row["n"],
            "runs": int(row["runs"]),
            "seed": int(row["seed"]),
        }
    )


def migrate_shard(path: Path, output_dir: Path) -> Path | None:
    """Migrate one schema-3 shard; its new path, or None if it must be rerun."""
    table = pq.read_table(path)
    if table.num_rows == 0:
        return None
    row = table.slice(0, 1).to_pylist()[0]
    try:
        cell = row_cell(row)
    except (KernelbenchError, KeyError, TypeError, ValueError):
        return None
    if row.get("config_hash") != schema3_hash(cell):
        return None
    i = table.schema.get_field_index("config_hash")
    column = pa.array([cell.config_hash] * table.num_rows, type=table.schema.field(i).type)
    table = table.set_column(i, table.schema.field(i), column)
    meta = dict(table.schema.metadata or {})
    meta[SCHEMA_KEY] = str(SCHEMA_VERSION).encode()
    table = table.replace_schema_metadata(meta)
    target = cell_shard_path(cell, output_dir)
    atomic_write(target, lambda f: pq.write_table(table, f))
    if target != path:
        path.unlink()
    return target


@click.command("migrate")
@click.argument("output_dir", type=click.Path(path_type=Path))
def migrate(output_dir: Path) -> None:
    """Move the schema-3 shards under OUTPUT_DIR to the current schema; list the rest."""
    moved, rerun = 0, []
    for path in shard_files(output_dir):
        version = shard_schema_version(path)
        if version == SCHEMA_VERSION:
            continue
        if version == FROM_VERSION and migrate_shard(path, output_dir) is not None:
            moved += 1
        else:
            rerun.append(f"{path} (schema {version})")
    click.echo(f"migrated {moved} shard(s) to schema {SCHEMA_VERSION}")
    for line in rerun:
        click.echo(f"rerun with overwrite=true: {line}")
