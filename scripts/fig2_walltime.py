"""Wall time of Munkhoeva Fig. 2 (protocol ``downstream``): measured and extrapolated.

Reads the shards of results directories (their per-run fit/transform/train/predict
seconds) and the cached exact-kernel scores (``<dir>/.exact/*.json``, with the seconds
each took), and prints per (dataset, learner):

* what was measured: cells, runs and their summed seconds;
* the whole figure extrapolated from it: 3 kernels x 7 methods x n = 1..5 x RUNS runs,
  each (dataset, learner, kernel, method, n) at the mean per-run seconds measured for
  that n (linearly interpolated in n where n was not run; kernels or methods not
  measured take the mean of those measured), plus one exact ceiling per kernel (the
  measured seconds, else scaled from another dataset's by N^3 for ``linear`` and N^2
  for ``svm_precomputed``).

    python scripts/fig2_walltime.py RESULTS_DIR [RESULTS_DIR ...] [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.results import read_results

KERNELS, METHODS, NS = 3, 7, (1, 2, 3, 4, 5)
PARTS = ["fit_seconds", "transform_seconds", "train_seconds", "predict_seconds"]
POWER = {"linear": 3, "svm_precomputed": 2}


def exact_seconds(dirs: list[Path]) -> pd.DataFrame:
    rows = []
    for d in dirs:
        for path in sorted((d / ".exact").glob("*.json")):
            info = json.loads(path.read_text())
            train = info["dataset"]["protocols"][info["data"]].get("train_rows")
            rows.append(
                {
                    "dataset": info["dataset"]["name"],
                    "kernel": info["kernel"],
                    "learner": info["learner"],
                    "train_rows": train,
                    "seconds": info.get("seconds", np.nan),
                }
            )
    return pd.DataFrame(rows).drop_duplicates(["dataset", "kernel", "learner"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args(argv)
    df = pd.concat([read_results(p) for p in args.results], ignore_index=True)
    df = df[df["protocol"] == "downstream"]
    df["seconds"] = df[PARTS].sum(axis=1)
    exact = exact_seconds(args.results)
    total = 0.0
    print(
        f"{'dataset':<11}{'learner':<17}{'cells':>6}{'runs':>6}{'measured s':>12}"
        f"{'per run s (n=1..5)':>36}{'exact s':>10}{'figure s':>11}"
    )
    for (ds, learner), g in df.groupby(["dataset", "learner"]):
        per_n = g.groupby("n")["seconds"].mean()
        ns = per_n.index.to_numpy(dtype=float)
        est = np.interp(NS, ns, per_n.to_numpy())
        e = exact[(exact["dataset"] == ds) & (exact["learner"] == learner)]
        scaled = not len(e)
        if not scaled:
            ceil = float(e["seconds"].mean()) * KERNELS
        else:
            other = exact[exact["learner"] == learner].dropna(subset=["train_rows"])
            rows = int(g["train_rows"].iloc[0])
            ceil = float(
                (other["seconds"] * (rows / other["train_rows"]) ** POWER[learner]).mean() * KERNELS
            )
        figure = KERNELS * METHODS * args.runs * float(est.sum()) + ceil
        total += figure
        per = " ".join(f"{v:6.2f}" for v in est)
        print(
            f"{ds:<11}{learner:<17}{g.groupby(['kernel', 'method_label', 'n']).ngroups:>6}"
            f"{len(g):>6}{g['seconds'].sum():>12.0f}{per:>36}{ceil:>10.0f}{figure:>11.0f}"
            + (" (exact scaled)" if scaled else "")
        )
    print(
        f"whole figure ({args.runs} runs, every kernel, method and n = 1..5): "
        f"{total:.0f} s = {total / 3600:.2f} h of one process"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
