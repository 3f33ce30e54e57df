"""Munkhoeva et al. 2018 Fig. 1 baseline: ``fig1_baseline.csv`` (per cell,
:func:`kernelbench.baseline.format.cell_table` of :data:`METRIC`) and
``fig1_kernel_error_fro.png`` (as ``kernelbench plot --reference``), drawn from the whole
table after ``--update``/``--update-cells``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

METRIC = "rel_fro_error"


def table_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The baseline table as the Fig. 1 summary (metric ``fro``, 95% t-intervals)."""
    from scipy import stats

    half = stats.t.ppf(0.975, (table["runs"] - 1).clip(lower=1)) * table["sem"]
    half = half.where(table["runs"] > 1)
    return table.assign(metric="fro", ci_low=table["mean"] - half, ci_high=table["mean"] + half)


def draw_figure(df: pd.DataFrame, table: pd.DataFrame, out: Path, echo: Callable) -> None:
    """``fig1_kernel_error_fro.png``: the table drawn by its figure spec
    (:data:`kernelbench.reporting.kernel_approx.FIG1`, as the site draws it)."""
    import matplotlib

    matplotlib.use("Agg")
    from kernelbench.drawing import save_figure
    from kernelbench.figspec import build, draw
    from kernelbench.reporting.kernel_approx import FIG1

    (fig,) = build(table, FIG1, "fig1")
    for note in fig.clip_notes():
        echo(f"note: {note}")
    for path in save_figure(draw(fig), out, "fig1_kernel_error_fro", ["png"]):
        echo(f"wrote {path}")
