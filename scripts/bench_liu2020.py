"""Speed of Liu et al. 2020's Table 3 (protocol=krr): wall time and feature-time ratios.

    python scripts/bench_liu2020.py                           # the whole Table 3 grid
    python scripts/bench_liu2020.py --datasets eeg magic04 --ns 1 2 4 8 --runs 10

Runs the grid (datasets x methods x s/d, ``--runs`` each) in this one process into
``--out`` (shards: finished cells are skipped, so a rerun resumes), and prints

* per cell: wall seconds; in total: the measured wall time, and the extrapolated time
  of the same cells on ``--workers`` workers (sum of cell times / workers: an
  extrapolation, labelled as such, since the cells are independent);
* slw_rff's (and every method's) feature time as a ratio to rff's at the same
  (dataset, s), both measured in this run (Liu et al.: within 1.5x).

Timings on a shared machine are noisy; only the ratios within one run are meaningful.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from kernelbench.experiment import make_cell, run_and_store
from kernelbench.results import read_results

METHODS = ["rff", "qmc", "lev_rff", "slw_rff", "orf", "sorf", "sr33"]
NS = [1, 2, 4, 8, 16, 32, 64, 128]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["eeg", "codrna", "magic04"])
    ap.add_argument("--methods", nargs="+", default=METHODS)
    ap.add_argument("--ns", nargs="+", type=float, default=NS)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--experiment", default="liu2020_table3")
    ap.add_argument("--out", default="results/runs")
    args = ap.parse_args()

    times = []
    t_all = time.perf_counter()
    for ds in args.datasets:
        for n in args.ns:
            for m in args.methods:
                cell = make_cell(m, "rbf", ds, n=n, runs=args.runs, protocol="krr")
                cell["experiment"] = args.experiment
                t0 = time.perf_counter()
                df = run_and_store(cell, args.out, blas_threads=1, echo=print)
                if df is not None:
                    times.append((ds, n, m, time.perf_counter() - t0))
    wall = time.perf_counter() - t_all
    total = sum(t for *_, t in times)
    print(f"\nmeasured: {len(times)} cells computed in {wall:.0f} s (1 process)")
    print(
        f"extrapolated to {args.workers} workers: {total / args.workers:.0f} s "
        f"(sum of cell times / workers; not measured)"
    )

    df = read_results(f"{args.out}/{args.experiment}")
    df = df[df["dataset"].isin(args.datasets) & df["n"].isin(args.ns)]
    t = df.groupby(["dataset", "n", "method_label"])["feature_seconds"].mean().unstack()
    if "rff" in t:
        ratio = t.div(t["rff"], axis=0)
        pd.set_option("display.width", 160)
        print("\nfeature time / rff's at the same (dataset, s/d), this run:")
        print(ratio.round(2).to_string())
        if "slw_rff" in ratio:
            r = ratio["slw_rff"].dropna()
            print(
                f"\nslw_rff / rff: median {r.median():.2f}, max {r.max():.2f} over {len(r)} cells"
            )


if __name__ == "__main__":
    main()
