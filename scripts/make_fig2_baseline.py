"""Aggregate Fig. 2 results (protocol ``downstream``) into our committed baseline.

Reads the shards of one experiment under a results directory (e.g. the run of
``kernelbench run -m experiment=fig2_reduced``) and writes

    <out>/fig2_baseline.csv      per cell (dataset, kernel, method_label, learner, n): d,
                                 method, paper_label, metric, runs, mean, std, sem,
                                 ci_low, ci_high of the test score, exact_score, and the
                                 mean fit/transform/train/predict seconds per run
    <out>/fig2_<learner>.png     the figure of ``kernelbench plot --figure fig2``

Usage:

    python scripts/make_fig2_baseline.py RESULTS_DIR --out results/baseline \\
        [--experiment munkhoeva2018_fig2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from kernelbench.protocols import FigureOptions, get_protocol
from kernelbench.protocols.downstream import fig2_summary
from kernelbench.results import read_results

TIMES = ("fit_seconds", "transform_seconds", "train_seconds", "predict_seconds")
KEYS = ["dataset", "kernel", "method_label", "learner", "n"]


def baseline_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the score's summary, the exact kernel's score, mean timings."""
    for key, g in df.groupby(KEYS):
        if g["config_hash"].nunique() != 1:
            raise SystemExit(f"cell {key}: results from more than one config")
    summary = fig2_summary(df).drop(columns=["experiment"])
    times = df.groupby(KEYS)[list(TIMES)].mean()
    seed = df.groupby(KEYS)["seed"].first()
    out = summary.join(times, on=KEYS).join(seed, on=KEYS)
    cols = ["dataset", "d", "kernel", "method_label", "method", "paper_label", "learner"]
    cols += ["metric", "n", "seed", "runs", "mean", "std", "sem", "ci_low", "ci_high"]
    cols += ["exact_score", *TIMES]
    out = out[cols].copy()
    out["n"] = out["n"].map(lambda n: int(n) if float(n).is_integer() else n)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--out", type=Path, default=Path("results/baseline"))
    ap.add_argument("--experiment", default="munkhoeva2018_fig2")
    ap.add_argument("--no-figure", action="store_true")
    args = ap.parse_args(argv)

    df = read_results(args.results, args.experiment)
    table = baseline_table(df)
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "fig2_baseline.csv"
    table.to_csv(csv, index=False)
    runs = sorted(int(r) for r in table["runs"].unique())
    print(f"wrote {csv} ({len(table)} cells, runs {runs})")
    if not args.no_figure:
        import matplotlib

        matplotlib.use("Agg")
        proto = get_protocol("downstream")
        own = [c for c in proto.schema().names if c in df.columns]
        result = proto.figure("fig2").draw(
            df[own], args.out / ".fig2", FigureOptions(formats=["png"])
        )
        for path in result.written:
            if path.suffix == ".png":
                target = args.out / path.name
                path.replace(target)
                print(f"wrote {target}")
            else:
                path.unlink()
        (args.out / ".fig2").rmdir()
        for note in result.notes:
            print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
