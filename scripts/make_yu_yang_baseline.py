"""Aggregate the Yu et al. 2016 and Yang et al. 2014 experiments into results/baseline/.

Reads the shards of each experiment under ``--runs`` (results/runs by default), draws
its figure with ``kernelbench plot``'s code (:func:`kernelbench.plot.make_plots`) and
keeps two files per experiment: the figure as ``<experiment>.png`` and the summary
table (mean, std, sem, 95% t-interval per cell) as ``<experiment>.csv``.

    kernelbench run experiment=yu2016_fig2          # and the others below
    python scripts/make_yu_yang_baseline.py [--runs results/runs] [--out results/baseline]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from kernelbench.plot import make_plots

#: experiment -> (figure, metric, the figure's summary table, the figure file)
EXPERIMENTS = {
    "yu2016_fig2": ("yu_variance", "ratio", "yu_variance_summary.csv", "yu_variance_ratio.png"),
    "yu2016_fig4": ("yu_mse", "mse", "yu_mse_summary.csv", "yu_mse_mse.png"),
    "yu2016_fig4_qmc": ("yu_mse", "mse", "yu_mse_summary.csv", "yu_mse_mse.png"),
    "yang2014_fig2": ("fig1", "spec", "fig1_summary.csv", "fig1_kernel_error_spec.png"),
    "yang2014_fig2_pca": ("fig1", "spec", "fig1_summary.csv", "fig1_kernel_error_spec.png"),
    "yang2014_fig2_pca_reduced": (
        "fig1",
        "spec",
        "fig1_summary.csv",
        "fig1_kernel_error_spec.png",
    ),
    "yang2014_fig3": (
        "yang_discrepancy",
        None,
        "yang_discrepancy_summary.csv",
        "yang_discrepancy.png",
    ),
    "yang2014_fig3_half": (
        "yang_discrepancy",
        None,
        "yang_discrepancy_summary.csv",
        "yang_discrepancy.png",
    ),
    "yang2014_fig4": ("yang_adaptive", None, "yang_adaptive_summary.csv", "yang_adaptive.png"),
    "yang2014_fig4_nn50": (
        "yang_adaptive",
        None,
        "yang_adaptive_summary.csv",
        "yang_adaptive.png",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=Path("results/runs"))
    parser.add_argument("--out", type=Path, default=Path("results/baseline"))
    parser.add_argument("--only", nargs="*", choices=sorted(EXPERIMENTS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for exp, (figure, metric, table, png) in EXPERIMENTS.items():
        if args.only and exp not in args.only:
            continue
        if not (args.runs / exp).is_dir():
            print(f"{exp}: no results under {args.runs / exp}; skipped")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            make_plots(
                args.runs, tmp, figure=figure, metric=metric, formats=["png"], experiment=exp
            )
            shutil.copyfile(Path(tmp) / exp / table, args.out / f"{exp}.csv")
            shutil.copyfile(Path(tmp) / exp / png, args.out / f"{exp}.png")
        print(f"{exp}: wrote {args.out / exp}.csv and .png")


if __name__ == "__main__":
    main()
