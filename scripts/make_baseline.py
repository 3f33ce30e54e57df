"""Aggregate Fig. 1 results into our committed baseline (``results/baseline/``).

Reads the shards under one or more results directories (e.g. the full protocol run
of ``kernelbench run -m experiment=fig1`` and ``experiment=fig1_noqmc``), and writes

    <out>/fig1_baseline.csv        per cell: dataset, d, kernel, method_label, method,
                                   paper_label, n, seed, runs, mean, std, sem, median,
                                   q025, q975, data_source, experiment
    <out>/fig1_kernel_error_fro.png  the figure of ``kernelbench plot --reference``

``kernelbench verify`` compares the reduced grid with this table (same data seed, so
tau = 0; see docs/verification.md). With ``--update`` only the datasets found in the
results are replaced and the other rows of the table are kept (e.g. LEUKEMIA rerun on a
new version of the data), with ``--update-cells`` only the cells found (e.g. a method
added on the same data); the figure is always drawn from the whole table. Usage:

    python scripts/make_baseline.py RESULTS_DIR [RESULTS_DIR ...] --out results/baseline \\
        [--experiment munkhoeva2018_fig1] [--update | --update-cells]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from kernelbench.results import read_results
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


def update_table(old: pd.DataFrame, new: pd.DataFrame, by: str = "dataset") -> pd.DataFrame:
    """``old`` without the datasets (``by="dataset"``) or the cells (``by="cell"``) of
    ``new``, plus ``new``, in cell order."""
    if by == "dataset":
        keep = old[~old["dataset"].isin(set(new["dataset"]))]
    else:

        def keys(t: pd.DataFrame) -> pd.Series:
            return pd.Series(
                list(
                    zip(
                        t["dataset"],
                        t["kernel"],
                        t["method_label"],
                        t["n"].astype(float),
                        strict=True,
                    )
                ),
                index=t.index,
            )

        keep = old[~keys(old).isin(set(keys(new)))]
    out = pd.concat([keep, new], ignore_index=True)
    out = out.sort_values(CELL, kind="stable").reset_index(drop=True)
    out["n"] = out["n"].map(lambda n: int(n) if float(n).is_integer() else n)
    return out


def table_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The baseline table as the Fig. 1 summary (metric ``fro``, 95% t-intervals)."""
    s = table.copy()
    s["metric"] = "fro"
    half = stats.t.ppf(0.975, (s["runs"] - 1).clip(lower=1)) * s["sem"]
    half = half.where(s["runs"] > 1)
    s["ci_low"] = s["mean"] - half
    s["ci_high"] = s["mean"] + half
    return s


def draw_figure(table: pd.DataFrame, out: Path) -> list[Path]:
    """``fig1_kernel_error_fro.png``: the table drawn as ``kernelbench plot --reference``."""
    import matplotlib

    matplotlib.use("Agg")
    from kernelbench.plotting import save_figure
    from kernelbench.protocols.kernel_approx import FIG1_REFERENCE, fig1_summary_panels
    from kernelbench.reference import load_reference

    panels, notes = fig1_summary_panels(
        table_summary(table), "fro", load_reference(FIG1_REFERENCE), log=True
    )
    for note in notes:
        print(f"note: {note}")
    return save_figure(panels.figure, out, "fig1_kernel_error_fro", ["png"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("results/baseline"))
    ap.add_argument("--experiment", default=None, help="keep only this experiment's rows")
    ap.add_argument(
        "--update",
        action="store_true",
        help="replace only the datasets found in RESULTS; keep the table's other rows",
    )
    ap.add_argument(
        "--update-cells",
        action="store_true",
        help="replace only the cells found in RESULTS (e.g. a method added or rerun at "
        "more runs on the same data); keep every other row",
    )
    ap.add_argument("--no-figure", action="store_true")
    args = ap.parse_args(argv)

    frames = [read_results(p, args.experiment) for p in args.results]
    df = pd.concat(frames, ignore_index=True)
    table = baseline_table(df)
    csv = args.out / "fig1_baseline.csv"
    if (args.update or args.update_cells) and csv.is_file():
        by = "cell" if args.update_cells else "dataset"
        table = update_table(pd.read_csv(csv), table, by=by)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(csv, index=False)  # full precision: the CI check can be exact
    print(f"wrote {csv} ({len(table)} cells, runs {sorted(table['runs'].unique())})")

    if not args.no_figure:
        for path in draw_figure(table, args.out):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
