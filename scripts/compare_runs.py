"""Which shards of two results directories hold bit-identical rows, and which do not.

    python scripts/compare_runs.py BEFORE_DIR AFTER_DIR

Pairs the shards by their path relative to each directory and compares every column
but timings, memory, provenance and the config hash (``kernelbench.results.is_stable``)
bit for bit, rows ordered by run. Prints the number of
shards on each side, whether their paths are the same, how many are bit-identical,
the columns only AFTER has, and for each shard that differs the columns that differ
and its ``draws`` value.

What it measured: the reduced Fig. 1 grid (`kernelbench verify --grid reduced`, 225
shards) of commit c079a91 (before the typed Cell, the reporting split and the speed
changes) against ac1d262: the same 225 paths, 219 shards bit-identical, the 6 others
LEUKEMIA rff at n = 1, 2 (three kernels), drawn in sample space (rel_fro_error and
rel_spec_error differ; docs/performance.md), and the new column ``draws``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from kernelbench.results import is_stable


def shards(root: Path) -> dict[str, Path]:
    return {
        p.relative_to(root).as_posix(): p
        for p in root.rglob("*.parquet")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    ns = parser.parse_args()
    a, b = shards(ns.before), shards(ns.after)
    print(f"shards: {len(a)} before, {len(b)} after; same paths: {sorted(a) == sorted(b)}")
    same, differ, new = 0, [], set()
    for key in sorted(set(a) & set(b)):
        x = pd.read_parquet(a[key]).sort_values("run", kind="stable").reset_index(drop=True)
        y = pd.read_parquet(b[key]).sort_values("run", kind="stable").reset_index(drop=True)
        new |= set(y.columns) - set(x.columns)
        cols = [c for c in x.columns if is_stable(c)]
        bad = [c for c in cols if c not in y.columns or not x[c].equals(y[c])]
        if bad:
            draws = y["draws"].iloc[0] if "draws" in y.columns else None
            differ.append((key, bad, draws))
        else:
            same += 1
    print(f"bit-identical: {same}; differ: {len(differ)}; columns only after: {sorted(new)}")
    for key, bad, draws in differ:
        print(f"  {key}: {', '.join(bad)} (draws: {draws})")


if __name__ == "__main__":
    main()
