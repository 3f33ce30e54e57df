"""The format of our baseline tables (``results/baseline/<name>.csv``), in one place:
one row per cell (the protocol's ``cell_keys``, ``n`` an int when integral), then
``seed``, ``runs``, ``mean``, ``std`` (ddof 1) and ``sem`` of the metric
(:func:`kernelbench.stats.aggregate`), plus descriptive columns. ``kernelbench baseline``
writes it, ``kernelbench verify`` reads it (:func:`read_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.stats import aggregate

#: The cell of a kernel-approximation baseline (and of most protocols).
CELL = ("dataset", "kernel", "method_label", "n")
#: Columns every baseline table has besides its cell keys (what ``verify`` reads).
REQUIRED = ("runs", "mean", "std")
#: The columns of :func:`cell_table`, in order (for the ``CELL`` keys).
COLUMNS = tuple(
    "dataset d kernel method_label method paper_label n seed runs mean std sem median q025 q975 "
    "data_source experiment".split()
)


def int_n(n: pd.Series) -> pd.Series:
    """``n`` as the tables write it: 1 for 1.0, 0.5 for 0.5."""
    return n.map(lambda v: int(v) if float(v).is_integer() else v)


def cell_table(df: pd.DataFrame, metric: str, keys: Sequence[str] = CELL) -> pd.DataFrame:
    """One row per cell of ``df`` (a results frame): :data:`COLUMNS`. A cell whose runs
    come from more than one config (seed, settings) is an error: pick one directory."""
    keys = list(keys)
    for key, g in df.groupby(keys, sort=True, dropna=False):
        if g["seed"].nunique() != 1 or g["config_hash"].nunique() != 1:
            raise KernelbenchError(
                f"cell {key}: results from more than one config; pick one directory"
            )
    out = aggregate(df, keys, metric)
    g = df.assign(_v=df[metric].astype(float)).groupby(keys, sort=True, dropna=False)
    stats = g.agg(
        d=("d", "first"),
        method=("method", "first"),
        paper_label=("paper_label", "first"),
        median=("_v", lambda v: float(np.median(v.dropna()))),
        q025=("_v", lambda v: float(np.quantile(v.dropna(), 0.025))),
        q975=("_v", lambda v: float(np.quantile(v.dropna(), 0.975))),
        experiment=("experiment", "first"),
    ).reset_index()
    stats["d"] = stats["d"].astype(int)
    if "n" in keys:
        stats["n"] = stats["n"].astype(float)
    out = out.merge(stats, on=keys, how="left")
    if "n" in keys:
        out["n"] = int_n(out["n"])
    order = [c for c in COLUMNS if c in out.columns and c not in keys]
    cols = [*keys, *order] if tuple(keys) != CELL else [c for c in COLUMNS if c in out.columns]
    return out[cols]


def update_table(
    old: pd.DataFrame, new: pd.DataFrame, by: str = "dataset", keys: Sequence[str] = CELL
) -> pd.DataFrame:
    """``old`` without the datasets (``by="dataset"``) or the cells (``by="cell"``, the
    ``keys``) of ``new``, plus ``new``, in cell order."""
    keys = list(keys)
    cols = ["dataset"] if by == "dataset" else keys

    def cells(t: pd.DataFrame) -> pd.MultiIndex:
        return pd.MultiIndex.from_frame(t[cols].astype({"n": float} if "n" in cols else {}))

    keep = old[~cells(old).isin(cells(new))]
    out = pd.concat([keep, new], ignore_index=True)
    out = out.sort_values(keys, kind="stable").reset_index(drop=True)
    if "n" in keys:
        out["n"] = int_n(out["n"])
    return out


def read_checked(path: Path, name: str, hint: str, columns: Sequence[str]) -> pd.DataFrame:
    """The CSV table at ``path`` with ``columns``, else a one-line error naming the
    table and (``hint``) what writes it."""
    if not path.is_file():
        raise KernelbenchError(f"{name} {str(path)!r} not found ({hint})")
    table = pd.read_csv(path)
    if missing := set(columns) - set(table.columns):
        raise KernelbenchError(f"{path}: missing columns {sorted(missing)}")
    return table


def read_table(path: Path, keys: Sequence[str]) -> pd.DataFrame:
    """A baseline table, checked for its cell keys and :data:`REQUIRED` columns."""
    hint = "kernelbench baseline writes it; --no-baseline skips the check"
    return read_checked(path, "baseline table", hint, [*keys, *REQUIRED])


def write_table(table: pd.DataFrame, path: Path, float_format: str | None = None) -> Path:
    """Write a baseline table (full precision unless ``float_format``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False, float_format=float_format)
    return path
