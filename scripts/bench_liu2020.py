"""Speed of Liu et al. 2020's Table 3 (protocol=krr): wall time and feature-time ratios.

    python scripts/bench_liu2020.py                           # the whole Table 3 grid
    python scripts/bench_liu2020.py --datasets eeg magic04 --ns 1 2 4 8 --runs 10

Runs the grid of ``configs/experiment/liu2020_table3.yaml`` (``--config``; its datasets,
methods, s/d and runs unless narrowed by the options) in this one process into
``--out`` (shards: finished cells are skipped, so a rerun resumes), and prints

* per cell: wall seconds; in total: the measured wall time, and the extrapolated time
  of the same cells on ``--workers`` workers (sum of cell times / workers: an
  extrapolation, labelled as such, since the cells are independent);
* slw_rff's (and every method's) feature time as a ratio to rff's at the same
  (dataset, s), both measured in this run (Liu et al.: within 1.5x): the means of the
  grid's rows, and with ``--ratio-repeats R`` a best-of-R measurement of fit + chunked
  transform of the train and test rows for rff and slw_rff alone, interleaved.

Timings on a shared machine are noisy; only the ratios within one run are meaningful.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import pandas as pd

from kernelbench.cell import Cell, build_cell
from kernelbench.config import experiment_sweep
from kernelbench.experiment import make_cell, run_and_store
from kernelbench.learners.ridge import CHUNK_ROWS
from kernelbench.protocols import get_protocol
from kernelbench.results import read_results

#: The experiment config whose grid is measured (configs/experiment/).
CONFIG = "liu2020_table3"


def feature_time(cell: Cell, ctx, method: str) -> float:
    """Seconds of fit + transform of the train and test rows (chunked, as the KRR does)."""
    proto = get_protocol("krr")
    cell = dataclasses.replace(cell, method=build_cell(make_cell(method, protocol="krr")).method)
    fm = proto.feature_map(cell, np.random.default_rng(0), d=ctx.X_train.shape[1])
    t0 = time.perf_counter()
    fm.fit(ctx.X_train, ctx.y_train)
    for X in (ctx.X_train, ctx.X_test):
        for start in range(0, len(X), CHUNK_ROWS):
            fm.transform(X[start : start + CHUNK_ROWS])
    return time.perf_counter() - t0


def ratio_table(datasets: list[str], ns: list[float], repeats: int) -> pd.DataFrame:
    """Best-of-``repeats`` feature time of lev_rff and slw_rff over rff's per
    (dataset, s/d), the three measured interleaved in this process."""
    from threadpoolctl import threadpool_limits

    proto = get_protocol("krr")
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for ds in datasets:
            for n in ns:
                cell = make_cell("rff", "rbf", ds, n=n, runs=1, protocol="krr")
                cell["protocol"]["spectral_points"] = 0
                cell = build_cell(cell)
                ctx = proto.prepare(cell)
                best = {"rff": np.inf, "lev_rff": np.inf, "slw_rff": np.inf}
                for _ in range(repeats):
                    for m in best:
                        best[m] = min(best[m], feature_time(cell, ctx, m))
                rows.append(
                    {
                        "dataset": ds,
                        "s_over_d": n,
                        "s": int(n * ctx.X_train.shape[1]),
                        "rff_s": best["rff"],
                        "lev_rff_s": best["lev_rff"],
                        "slw_rff_s": best["slw_rff"],
                        "lev_rff_vs_rff": best["lev_rff"] / best["rff"],
                        "slw_rff_vs_rff": best["slw_rff"] / best["rff"],
                    }
                )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=CONFIG, help="configs/experiment/<name> (its grid)")
    ap.add_argument("--datasets", nargs="+", default=None, help="[default: the config's]")
    ap.add_argument("--methods", nargs="+", default=None, help="[default: the config's]")
    ap.add_argument("--ns", nargs="+", type=float, default=None, help="[default: the config's]")
    ap.add_argument("--runs", type=int, default=None, help="[default: the config's]")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="results/runs")
    ap.add_argument("--ratio-repeats", type=int, default=0, help="best-of-R ratio (0: skip)")
    ap.add_argument("--ratio-only", action="store_true", help="skip the grid")
    ap.add_argument("--ratio-out", default=None, help="write the ratio table (CSV) here")
    args = ap.parse_args()
    fixed, sweep = experiment_sweep(args.config)
    args.datasets = args.datasets or sweep["dataset"]
    args.methods = args.methods or sweep["method"]
    args.ns = args.ns or [int(n) if float(n).is_integer() else float(n) for n in sweep["n"]]
    args.runs = args.runs or fixed["runs"]
    args.experiment = fixed["experiment"]
    if args.ratio_repeats:
        r = ratio_table(args.datasets, args.ns, args.ratio_repeats)
        print("feature time / rff's, best of", args.ratio_repeats, "(this run):")
        print(r.round(4).to_string(index=False))
        v = r["slw_rff_vs_rff"]
        print(f"slw_rff / rff: median {v.median():.2f}, max {v.max():.2f}")
        if args.ratio_out:
            r.to_csv(args.ratio_out, index=False, float_format="%.4g")
    if args.ratio_only:
        return

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
