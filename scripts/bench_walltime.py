"""Measured: Munkhoeva et al. Fig. 3 map/fit times (``experiment=fig3``), one process.

    KERNELBENCH_DATA=/path/to/mirror python scripts/bench_walltime.py \\
        --out results/runs --csv results/baseline/fig3_walltime.csv

Runs ``kernelbench run -m experiment=fig3`` in this process (the grid of
``configs/experiment/fig3.yaml``, not a copy of it: Gaussian kernel, n = 1, one BLAS
thread, 10 and 1000 points of its datasets and methods), one map per cell, ``--repeats``
timed map calls after its first call (``--repeats-large`` at 1000 points, where one call
of a dense map takes seconds at d = 7129); ``--datasets``/``--methods`` narrow the
grid; ``--config`` measures another walltime experiment file's grid (the
leaderboard's map time: ``--config leaderboard_map_time --points 1000``). Finished
cells are skipped (delete ``--out`` to remeasure). Writes the median
summary of ``kernelbench plot --figure fig3`` (median and quartiles of the map, fit and
first-call times) to ``--csv`` and prints the issue's goals as ratios measured in this one run:

* sr33's map vs rff's at 10 points, d = 7129 (goal >= 15x) and d = 3072 (>= 6x);
* sr33's fit + map vs rff's at 1000 points, d = 3072 (goal >= 5x).

Times depend on the machine and its load; only ratios within one run are compared.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import pandas as pd

from kernelbench.config import experiment_sweep
from kernelbench.launch import launch
from kernelbench.outputs.papers.munkhoeva2018 import median_summary
from kernelbench.results import read_results

#: The experiment config whose grid is measured (configs/experiment/fig3.yaml).
CONFIG = "fig3"
#: (points, d, goal): sr33's speed-up over rff that the issue asks for
GOALS = [("map", 10, 7129, 15.0), ("map", 10, 3072, 6.0), ("fit+map", 1000, 3072, 5.0)]


def run(args: argparse.Namespace) -> pd.DataFrame:
    """The grid of :data:`CONFIG` through ``kernelbench run``, one sweep per number of
    points (each with its own repeats); the experiment's rows."""
    fixed, _ = experiment_sweep(args.config)
    narrow = [f"{key}={','.join(values)}" for key, values in
              (("dataset", args.datasets), ("method", args.methods)) if values]  # fmt: skip
    for points in args.points:
        repeats = args.repeats if points <= 100 else args.repeats_large
        overrides = [f"protocol.points={points}", f"protocol.repeats={repeats}", *narrow]
        launch([f"experiment={args.config}", f"output_dir={args.out}", *overrides], multirun=True)
    df = read_results(Path(args.out) / str(fixed["experiment"]))
    return df[df["protocol"] == "walltime"]


def goals(summary: pd.DataFrame) -> list[str]:
    """The issue's goals as sr33-vs-rff ratios of medians from this run."""
    med = summary.set_index(["metric", "points", "d", "method_label"])["median"]
    lines = []
    for what, points, d, goal in GOALS:
        try:
            if what == "map":
                rff = med[("map", points, d, "rff")]
                sr33 = med[("map", points, d, "sr33")]
            else:
                rff = med[("map", points, d, "rff")] + med[("fit", points, d, "rff")]
                sr33 = med[("map", points, d, "sr33")] + med[("fit", points, d, "sr33")]
        except KeyError:
            lines.append(f"{what} at {points} points, d = {d}: not measured")
            continue
        ratio = rff / sr33
        verdict = "met" if ratio >= goal else "NOT met"
        lines.append(
            f"{what} at {points} points, d = {d}: rff {rff:.3g} s, sr33 {sr33:.3g} s, "
            f"sr33 {ratio:.1f}x faster (goal >= {goal:g}x: {verdict})"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="results/runs", help="results directory (shards)")
    parser.add_argument("--config", default=CONFIG, help="a walltime experiment file")
    parser.add_argument("--csv", default=None, help="write the median summary here")
    parser.add_argument("--datasets", nargs="+", default=None, help="[default: fig3.yaml's]")
    parser.add_argument("--methods", nargs="+", default=None, help="[default: fig3.yaml's]")
    parser.add_argument("--points", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--repeats", type=int, default=50, help="map calls at <= 100 points")
    parser.add_argument("--repeats-large", type=int, default=50, help="map calls at > 100")
    args = parser.parse_args()
    print(
        f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, load "
        f"{os.getloadavg()[0]:.2f}; KERNELBENCH_DATA={os.environ.get('KERNELBENCH_DATA')}"
    )
    df = run(args)
    summary = median_summary(df, ["map", "fit", "first"])
    cols = ["points", "dataset", "d", "method_label", "paper_label", "metric", "values"]
    table = summary[[*cols, "median", "q25", "q75"]].sort_values(
        ["metric", "points", "d", "method_label"]
    )
    if args.csv:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.csv, index=False, float_format="%.6g")
        print(f"wrote {args.csv}")
    for line in goals(summary) if args.config == CONFIG else []:
        print(line)


if __name__ == "__main__":
    main()
