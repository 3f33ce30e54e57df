"""Aggregate Fig. 1 results into our committed baseline (``results/baseline/``).

Reads the shards under one or more results directories (e.g. the full protocol run
of ``kernelbench run -m experiment=fig1`` and ``experiment=fig1_noqmc``), and writes

    <out>/fig1_baseline.csv        per cell: dataset, d, kernel, method_label, method,
                                   paper_label, n, seed, runs, mean, std, sem, median,
                                   q025, q975, data_source, experiment
    <out>/fig1_kernel_error_fro.png  the figure of ``kernelbench plot --reference``

``kernelbench verify`` compares the reduced grid with this table (same data seed, so
tau = 0; see docs/verification.md). Usage:

    python scripts/make_baseline.py RESULTS_DIR [RESULTS_DIR ...] --out results/baseline \\
        [--experiment munkhoeva2018_fig1] [--note "MNIST: 100 runs ..."]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.protocols import get_protocol
from kernelbench.results import read_results, shard_path, write_shard
from kernelbench.verify import CELL

METRIC = "rel_fro_error"


def baseline_table(df: pd.DataFrame, metric: str = METRIC) -> pd.DataFrame:
    """One row per cell (dataset, kernel, method_label, n); raises on mixed seeds."""
    rows = []
    for key, g in df.groupby(CELL, sort=True):
        if g["seed"].nunique() != 1 or g["config_hash"].nunique() != 1:
            raise SystemExit(f"cell {key}: results from more than one config; pick one directory")
        v = g[metric].to_numpy(dtype=float)
        std = float(v.std(ddof=1)) if v.size > 1 else float("nan")
        rows.append(
            {
                "dataset": key[0],
                "d": int(g["d"].iloc[0]),
                "kernel": key[1],
                "method_label": key[2],
                "method": g["method"].iloc[0],
                "paper_label": g["paper_label"].iloc[0],
                "n": float(key[3]),
                "seed": int(g["seed"].iloc[0]),
                "runs": int(v.size),
                "mean": float(v.mean()),
                "std": std,
                "sem": std / np.sqrt(v.size),
                "median": float(np.median(v)),
                "q025": float(np.quantile(v, 0.025)),
                "q975": float(np.quantile(v, 0.975)),
                "data_source": g["data_source"].iloc[0],
                "experiment": g["experiment"].iloc[0],
            }
        )
    out = pd.DataFrame(rows)
    out["n"] = out["n"].map(lambda n: int(n) if float(n).is_integer() else n)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("results/baseline"))
    ap.add_argument("--experiment", default=None, help="keep only this experiment's rows")
    ap.add_argument("--no-figure", action="store_true")
    args = ap.parse_args(argv)

    frames = [read_results(p, args.experiment) for p in args.results]
    df = pd.concat(frames, ignore_index=True)
    table = baseline_table(df)
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "fig1_baseline.csv"
    table.to_csv(csv, index=False)  # full precision: the CI check can be exact
    print(f"wrote {csv} ({len(table)} cells, runs {sorted(table['runs'].unique())})")

    if not args.no_figure:
        from kernelbench.plot import make_plots

        with tempfile.TemporaryDirectory() as tmp:
            # one directory holding exactly the aggregated rows (all inputs, filtered)
            merged = Path(tmp) / "results"
            schema = get_protocol("kernel_approx").schema()
            for key, g in df.groupby(["experiment", *CELL], sort=False):
                write_shard(g[schema.names], shard_path(merged, *key), schema)
            report = make_plots(
                merged,
                Path(tmp) / "fig",
                reference=True,
                formats=["png"],
                experiment=args.experiment,
            )
            for paths in report.written.values():
                for path in paths:
                    if path.suffix == ".png":
                        shutil.copy(path, args.out / path.name)
                        print(f"wrote {args.out / path.name}")
            for note in report.notes:
                print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
