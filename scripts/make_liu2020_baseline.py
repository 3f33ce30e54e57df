"""Aggregate Liu et al. 2020 Table 3 results (protocol=krr) into our committed baseline.

    python scripts/make_liu2020_baseline.py RESULTS_DIR [...] --out results/baseline

Writes ``<out>/liu2020_table3_baseline.csv``: per cell (dataset, kernel, method_label,
s/d = n) the accuracy statistics of :func:`make_baseline.baseline_table` (runs, mean,
std, sem, quantiles, seed, ...) plus ``s`` (frequencies of the map), the mean feature
time and its ratio to rff's at the same (dataset, n) in the same results
(``feature_time_vs_rff``; absolute seconds depend on the machine and its load), and the
mean peak memory of a run. ``kernelbench verify --config liu2020_table3`` and
REPRODUCTION.md (kernelbench/report/liu2020.py) read it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_baseline import baseline_table  # noqa: E402

from kernelbench.results import read_results  # noqa: E402

NAME = "liu2020_table3_baseline.csv"


def table3_baseline(df: pd.DataFrame) -> pd.DataFrame:
    """Accuracy statistics per cell plus s, feature time (ratio to rff) and peak memory."""
    df = df[df["protocol"] == "krr"]
    out = baseline_table(df, "accuracy_pct")
    keys = ["dataset", "kernel", "method_label", "n"]
    per = df.groupby(keys).agg(
        s=("s", "first"),
        feature_seconds=("feature_seconds", "mean"),
        peak_memory_mb=("peak_memory_mb", "mean"),
        rel_spec_error=("rel_spec_error", "mean"),
    )
    per = per.reset_index()
    rff = per[per["method_label"] == "rff"][["dataset", "kernel", "n", "feature_seconds"]]
    per = per.merge(rff, on=["dataset", "kernel", "n"], how="left", suffixes=("", "_rff"))
    per["feature_time_vs_rff"] = per["feature_seconds"] / per["feature_seconds_rff"]
    per = per.drop(columns=["feature_seconds_rff"])
    out["n"] = out["n"].astype(float)
    per["n"] = per["n"].astype(float)
    out = out.merge(per, on=keys, how="left")
    out["n"] = out["n"].map(lambda n: int(n) if float(n).is_integer() else n)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("results/baseline"))
    ap.add_argument("--experiment", default="liu2020_table3")
    args = ap.parse_args(argv)
    df = pd.concat([read_results(p, args.experiment) for p in args.results], ignore_index=True)
    table = table3_baseline(df)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / NAME, index=False, float_format="%.6g")
    print(f"wrote {args.out / NAME} ({len(table)} cells)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
