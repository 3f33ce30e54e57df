"""Aggregate the Yu et al. 2016 and Yang et al. 2014 experiments into results/baseline/.

Reads the shards of one experiment under a results directory, draws its figure with
``kernelbench plot``'s code (:func:`kernelbench.plot_command.make_plots`) and keeps two files:
the figure as ``<experiment>.png`` and the summary table (mean, std, sem, 95%
t-interval per cell) as ``<experiment>.csv``.

    kernelbench run experiment=yu2016_fig2          # and the others below
    kernelbench baseline yu2016_fig2 results/runs [--out results/baseline]

``--methods`` updates only those methods' rows of an experiment's committed table, from
shards of those methods alone (e.g. `kernelbench run experiment=yu2016_fig4
method=qmc_digital_net` after a change to that method only; the other rows stay, and
so does the figure, which needs every method's shards).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from kernelbench.plot_command import make_plots

#: experiment -> (figure, metric, the figure's summary table, the figure file)
EXPERIMENTS = {
    "yu2016_fig2": ("yu_variance", "ratio", "yu_variance_summary.csv", "yu_variance_ratio.png"),
    "yu2016_fig4": ("yu_mse", "mse", "yu_mse_summary.csv", "yu_mse_mse.png"),
    "yu2016_fig4_qmc": ("yu_mse", "mse", "yu_mse_summary.csv", "yu_mse_mse.png"),
    "yu2016_fig4_qmc_reduced": ("yu_mse", "mse", "yu_mse_summary.csv", "yu_mse_mse.png"),
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


def write(
    results: Path,
    experiment: str,
    out: Path,
    echo: Callable[[str], None] = print,
    rows_of: str | None = None,
    methods: list[str] | None = None,
) -> None:
    """Write ``<experiment>.csv`` and ``<experiment>.png`` from the shards under ``results``
    (of experiment ``rows_of`` if given); with ``methods``, replace only their rows."""
    figure, metric, table, png = EXPERIMENTS[experiment]
    source = rows_of or experiment
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        make_plots(results, tmp, figure=figure, metric=metric, formats=["png"], experiment=source)
        if methods:
            _replace_rows(Path(tmp) / source / table, out / f"{experiment}.csv", methods)
            echo(f"{experiment}: replaced the rows of {', '.join(methods)} in {experiment}.csv")
            return
        shutil.copyfile(Path(tmp) / source / table, out / f"{experiment}.csv")
        shutil.copyfile(Path(tmp) / source / png, out / f"{experiment}.png")
    echo(f"{experiment}: wrote {out / experiment}.csv and .png")


def _replace_rows(new: Path, committed: Path, methods: list[str]) -> None:
    """``committed`` with the rows of ``methods`` taken from ``new``, in place (same
    cell keys and columns; every replaced row must have a fresh counterpart)."""
    import pandas as pd

    from kernelbench.errors import KernelbenchError

    keys = ["experiment", "dataset", "kernel", "method_label", "n", "metric"]
    fresh = pd.read_csv(new).set_index(keys)
    old = pd.read_csv(committed)
    mine = old["method_label"].isin(methods)
    index = pd.MultiIndex.from_frame(old.loc[mine, keys])
    missing = index.difference(fresh.index)
    if len(missing):
        raise KernelbenchError(f"no fresh rows for {len(missing)} cells, e.g. {missing[0]}")
    values = fresh.loc[index, [c for c in old.columns if c not in keys]]
    old.loc[mine, values.columns] = values.to_numpy()
    old.to_csv(committed, index=False)
