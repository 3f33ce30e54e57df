"""Which shards of two results directories hold bit-identical rows, and which do not.

    python scripts/compare_runs.py BEFORE_DIR AFTER_DIR [--shift COL ...]

Pairs the shards by their path relative to each directory and compares every column
but timings, memory, provenance and the config hash (``kernelbench.results.is_stable``)
bit for bit, rows ordered by run. Prints the number of
shards on each side, whether their paths are the same, how many are bit-identical,
the columns only AFTER has, and for each shard that differs the columns that differ
and its ``draws`` value. ``--by-cell``: pair the shards without the ``h=...`` folder a
non-default setting adds. ``--shift COL ...``: for the shards that differ, each column's
mean over the runs after against before (runs paired by ``run``: the same seeds), as a
relative change and in units of BEFORE's standard error of that mean (its runs' sd over
sqrt(runs)), the largest per dataset and the five largest shards.

What it measured: the reduced Fig. 1 grid (`kernelbench verify --grid reduced`, 225
shards) of commit c079a91 (before the typed Cell, the reporting split and the speed
changes) against ac1d262: the same 225 paths, 219 shards bit-identical, the 6 others
LEUKEMIA rff at n = 1, 2 (three kernels), drawn in sample space (rel_fro_error and
rel_spec_error differ; docs/performance.md), and the new column ``draws``.

Measured with ``--shift`` (docs/performance.md, "The K̂ product in float32"): the
reduced Fig. 1 grids (``fig1_reduced``, ``fig1_reduced_mnist``,
``fig1_reduced_leukemia``, 198 cells) with ``protocol.product=float32`` against
float64: every cell's mean error within 0.014 of its standard error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.results import is_stable
from kernelbench.stats import cell_stats


def mean_shift(x: pd.DataFrame, y: pd.DataFrame, column: str) -> tuple[float, float]:
    """(|mean_y - mean_x| / |mean_x|, |mean_y - mean_x| / sem_x) of ``column`` over the
    runs both hold (paired by ``run``); sem_x of :func:`kernelbench.stats.cell_stats`, z
    inf (0 for no change) where it is 0 or undefined (one run)."""
    both = x[["run", column]].merge(y[["run", column]], on="run", suffixes=("_x", "_y"))
    mean_x, _, sem = cell_stats(both[column + "_x"].to_numpy(float))  # sem NaN below 2 runs
    diff = abs(float(both[column + "_y"].mean()) - mean_x)
    return diff / abs(mean_x), (diff / sem if sem > 0 else (0.0 if diff == 0 else np.inf))


def shards(root: Path, by_cell: bool = False) -> dict[str, Path]:
    """The shards under ``root`` by their relative path; ``by_cell``: without the
    ``h=...`` folder that a non-default setting adds (one variant per cell)."""
    out: dict[str, Path] = {}
    for p in root.rglob("*.parquet"):
        parts = p.relative_to(root).parts
        if any(part.startswith(".") for part in parts):
            continue
        key = "/".join(q for q in parts if not (by_cell and q.startswith("h=")))
        if key in out:
            raise SystemExit(f"two shards of one cell under {root}: {out[key]} and {p}")
        out[key] = p
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--shift", nargs="+", default=[], metavar="COL")
    parser.add_argument("--by-cell", action="store_true", help="pair without the h= folders")
    ns = parser.parse_args()
    a, b = shards(ns.before, ns.by_cell), shards(ns.after, ns.by_cell)
    print(f"shards: {len(a)} before, {len(b)} after; same paths: {sorted(a) == sorted(b)}")
    same, differ, new, shifts = 0, [], set(), []
    for key in sorted(set(a) & set(b)):
        x = pd.read_parquet(a[key]).sort_values("run", kind="stable").reset_index(drop=True)
        y = pd.read_parquet(b[key]).sort_values("run", kind="stable").reset_index(drop=True)
        new |= set(y.columns) - set(x.columns)
        cols = [c for c in x.columns if is_stable(c)]
        bad = [c for c in cols if c not in y.columns or not x[c].equals(y[c])]
        if bad:
            draws = y["draws"].iloc[0] if "draws" in y.columns else None
            differ.append((key, bad, draws))
            if ns.shift:
                dataset = x["dataset"].iloc[0] if "dataset" in x.columns else "-"
                row = {"shard": key, "dataset": dataset}
                for c in ns.shift:
                    row[f"{c} rel"], row[f"{c} z"] = mean_shift(x, y, c)
                shifts.append(row)
        else:
            same += 1
    print(f"bit-identical: {same}; differ: {len(differ)}; columns only after: {sorted(new)}")
    for key, bad, draws in differ:
        print(f"  {key}: {', '.join(bad)} (draws: {draws})")
    if shifts:
        df = pd.DataFrame(shifts)
        num = [c for c in df.columns if c not in ("shard", "dataset")]
        print(f"mean shift, after against before, {len(df)} shards (z: before's standard errors)")
        print(df.groupby("dataset")[num].max().to_string(float_format="%.2e"))
        top = df.sort_values(num[1], ascending=False).head(5)
        print(top.to_string(index=False, float_format="%.2e"))


if __name__ == "__main__":
    main()
