"""Measured: tau, how much a cell's mean error moves between independent X, Y samples.

`kernelbench verify` compares our mean error on one X, Y sample (data seed 0) with the
paper's mean on its own sample. The two differ by feature-draw noise and by the sample:
tau^2 = Var over samples of E[error | X, Y]. This script runs the verify grid at K data
seeds (different seeds = different X, Y and different feature draws), and estimates per
cell (the estimate and its pooling: :mod:`kernelbench.verify.sample_variation`)

    tau^2 = var_k(mean_k) - mean_k(s_k^2 / R)     (unbiased; may come out negative)

then pools tau^2 / mean^2 over the cells of each (dataset, kernel): the average of the
unbiased per-cell estimates and its standard error over cells. verify uses

    cv = sqrt(max(pooled + 1 standard error, 0))

an upper (84%) bound rather than the point estimate, floored at 0 only after pooling:
K = 5 seeds leave tau^2 uncertain by about its own size, and an underestimated tau
raises the false-alarm rate while an overestimate only costs some power
(docs/verification.md has the calibration). Writes

    <out>                 dataset, kernel, cv, cv_point (= sqrt(max(pooled, 0))), df
                          (cells x (seeds - 1), for the Welch-Satterthwaite df), cells,
                          seeds, runs, ...
    <out stem>_cells.csv  the per-cell estimates (for the record; verify does not read it)

Usage (seed 0 may reuse a verify results directory; seeds run one after the other):

    python scripts/measure_sample_variation.py --seeds 0 1 2 3 4 --runs 30 --ns 1 5 \\
        --work /tmp/kb_tau --reuse 0=/tmp/kb_reduced --jobs 2 \\
        --out results/baseline/sample_variation.csv
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from kernelbench.protocols import get_protocol, metric_of
from kernelbench.results import read_results
from kernelbench.verify import grid_cells, grid_experiments, load_config, run_cells
from kernelbench.verify.sample_variation import merge_rows, per_cell, pool


def seed_dir(work: Path, seed: int, reuse: dict[int, Path]) -> Path:
    return reuse.get(seed, work / f"seed={seed}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="reduced")
    ap.add_argument("--config", default="munkhoeva2018_fig1")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ns", type=float, nargs="*", default=None, help="subset of the grid's n")
    ap.add_argument("--methods", nargs="*", default=None, help="subset of the grid's methods")
    ap.add_argument("--datasets", nargs="*", default=None, help="subset of the grid's datasets")
    ap.add_argument(
        "--append",
        action="store_true",
        help="keep the rows of other (dataset, kernel) pairs already in --out and its _cells file",
    )
    ap.add_argument("--work", type=Path, required=True, help="results of seed k: WORK/seed=k")
    ap.add_argument("--reuse", action="append", default=[], help="SEED=DIR: results already run")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("results/baseline/sample_variation.csv"))
    args = ap.parse_args(argv)

    cfg = load_config(args.config)
    reuse = {int(k): Path(v) for k, v in (r.split("=", 1) for r in args.reuse)}
    experiments = grid_experiments(cfg, args.grid)

    def selected(cells: list[dict]) -> list[dict]:
        out = []
        for c in cells:
            if args.ns is not None and float(c["n"]) not in {float(n) for n in args.ns}:
                continue
            if args.methods is not None and c["method"]["label"] not in args.methods:
                continue
            if args.datasets is not None and c["dataset"]["name"] not in args.datasets:
                continue
            out.append(c)
        return out

    frames = {}
    for seed in args.seeds:
        cells = selected(grid_cells(cfg, args.grid, runs=args.runs, seed=seed))
        where = seed_dir(args.work, seed, reuse)
        if not args.no_run:
            t0 = time.perf_counter()
            run_cells(cells, where, jobs=args.jobs)
            print(f"seed {seed}: {len(cells)} cells in {where} [{time.perf_counter() - t0:.0f} s]")
        df = read_results(where)
        want = {
            (c["dataset"]["name"], c["kernel"]["name"], c["method"]["label"], float(c["n"]))
            for c in cells
        }
        keys = zip(
            df["dataset"], df["kernel"], df["method_label"], df["n"].astype(float), strict=True
        )
        df = df[[k in want for k in keys] & df["experiment"].isin(experiments).to_numpy()]
        df = df[(df["seed"] == seed) & (df["runs"] == args.runs)]
        frames[seed] = df

    cells = per_cell(frames, metric_of(get_protocol(cfg.protocol), cfg.metric).column)
    pooled = pool(cells)
    detail = args.out.with_name(args.out.stem + "_cells.csv")
    if args.append:
        pooled = merge_rows(args.out, pooled)
        cells = merge_rows(detail, cells)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pooled.to_csv(args.out, index=False, float_format="%.6g")
    cells.to_csv(detail, index=False, float_format="%.6g")
    with pd.option_context("display.width", 160):
        print(pooled.to_string(index=False))
    print(f"wrote {args.out} and {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
