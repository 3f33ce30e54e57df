"""``kernelbench migrate DIR``: bring the shards of schemas 3 and 4 to the current schema.

``kernelbench run`` reports an older shard in one line and leaves it; only this
command reads the old layout. A shard (no version stamp) is migrated when the cell its
rows name, rebuilt from today's config files, hashes to its stored hash as schema 4
computed it, or as schema 3 did where schema 4 kept the numbers (:func:`budget_changed`);
it moves to the current path, hash and version, rows unchanged. Any other shard is
listed to rerun.
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

#: The schemas this command migrates from, the latest first.
FROM_VERSIONS: tuple[int, ...] = (4, 3)


def earlier_hash(cell: Cell, version: int) -> str:
    """The config hash schema ``version`` (3 or 4) gave ``cell``: its dataset entry's
    recipes under ``protocols``, of these only the cell's data key."""
    dataset: dict[str, Any] = {
        ("protocols" if k == "splits" else k): v for k, v in cell.dataset.items()
    }
    recipes = dataset.get("protocols")
    if isinstance(recipes, Mapping):
        key = cell.data_key
        dataset["protocols"] = {key: recipes[key]} if key in recipes else {}
    payload = {**cell.payload(), "dataset": dataset, "schema_version": version}
    return hashlib.sha256(dumps(payload).encode()).hexdigest()[:16]


def budget_changed(cell: Cell) -> bool:
    """Whether schema 4 gave the cell's map another D than schema 3: sr33 rounded D to
    whole rules, so its cells with n not a whole number of rules (a multiple of 1/2, of
    1 with reflections) changed; with ``budget: s`` (D = s) all are taken as changed
    (whole rules there depend on d)."""
    from kernelbench.features import FEATURE_MAPS
    from kernelbench.features.sr import SR33
    from kernelbench.protocols.common import BUDGETS

    if not issubclass(FEATURE_MAPS.get(cell.method["name"]), SR33):
        return False
    if getattr(cell.options, "budget", BUDGETS[0]) != BUDGETS[0]:
        return True
    params = {k: v for k, v in cell.method["params"].items() if k == "reflections"}
    fm = SR33(kernel=cell.kernel["name"], n=cell.n, **params)
    return not (float(cell.n) * (1 if fm._use_reflections() else 2)).is_integer()


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
    """Migrate one shard of schema 4 or 3; its new path, or None if it must be rerun."""
    table = pq.read_table(path)
    if table.num_rows == 0:
        return None
    row = table.slice(0, 1).to_pylist()[0]
    try:
        cell = row_cell(row)
    except (KernelbenchError, KeyError, TypeError, ValueError):
        return None
    stored = row.get("config_hash")
    if stored != earlier_hash(cell, 4) and (
        stored != earlier_hash(cell, 3) or budget_changed(cell)
    ):
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
    """Move the shards of schemas 4 and 3 under OUTPUT_DIR to the current schema; list
    the rest."""
    moved, rerun = 0, []
    for path in shard_files(output_dir):
        version = shard_schema_version(path)
        if version == SCHEMA_VERSION:
            continue
        if version in FROM_VERSIONS and migrate_shard(path, output_dir) is not None:
            moved += 1
        else:
            rerun.append(f"{path} (schema {version})")
    click.echo(f"migrated {moved} shard(s) to schema {SCHEMA_VERSION}")
    for line in rerun:
        click.echo(f"rerun with overwrite=true: {line}")
