"""Aggregate the Yu et al. 2016 and Yang et al. 2014 experiments into results/baseline/.

Reads the shards of one experiment under a results directory, draws its figure with
``kernelbench plot``'s code (:func:`kernelbench.plot.make_plots`) and keeps two files:
the figure as ``<experiment>.png`` and the summary table (mean, std, sem, 95%
t-interval per cell) as ``<experiment>.csv``.

    kernelbench run experiment=yu2016_fig2          # and the others below
    kernelbench baseline yu2016_fig2 results/runs [--out results/baseline]
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from kernelbench.plot import make_plots

#: experiment -> (figure, metric, the figure's summary table, the figure file)
EXPERIMENTS = {
    "yu2016_fig2": ("yu_variance", "ratio", "yu_variance_summary.csv", "yu_variance_ratio.png"),
    "yu2016_fig4": ("yu_mse", "mse", "yu_mse_summary.csv", "yu_mse_mse.png"),
    "yang2014_fig2": ("fig1", "spec", "fig1_summary.csv", "fig1_kernel_error_spec.png"),
    "yang2014_fig4": ("yang_adaptive", None, "yang_adaptive_summary.csv", "yang_adaptive.png"),
    "yang2014_fig4_nn50": (
        "yang_adaptive",
        None,
        "yang_adaptive_summary.csv",
        "yang_adaptive.png",
    ),
}


def write(
    results: Path,
    experiment: str,
    out: Path,
    echo: Callable[[str], None] = print,
    rows_of: str | None = None,
) -> None:
    """Write ``<experiment>.csv`` and ``<experiment>.png`` from the shards under ``results``
    (of experiment ``rows_of`` if given)."""
    figure, metric, table, png = EXPERIMENTS[experiment]
    source = rows_of or experiment
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        make_plots(results, tmp, figure=figure, metric=metric, formats=["png"], experiment=source)
        shutil.copyfile(Path(tmp) / source / table, out / f"{experiment}.csv")
        shutil.copyfile(Path(tmp) / source / png, out / f"{experiment}.png")
    echo(f"{experiment}: wrote {out / experiment}.csv and .png")
