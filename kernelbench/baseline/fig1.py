"""Munkhoeva et al. 2018 Fig. 1 baseline: ``fig1_baseline.csv`` (per cell,
:func:`kernelbench.baseline.format.cell_table`) and ``fig1_kernel_error_fro.png`` (as
``kernelbench plot --reference``). ``--update``/``--update-cells`` replace only the
datasets/cells found; the figure is drawn from the whole table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from kernelbench.baseline.format import cell_table, update_table, write_table

METRIC = "rel_fro_error"
NAME = "fig1_baseline.csv"


def table_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The baseline table as the Fig. 1 summary (metric ``fro``, 95% t-intervals)."""
    from scipy import stats

    s = table.copy()
    s["metric"] = "fro"
    half = stats.t.ppf(0.975, (s["runs"] - 1).clip(lower=1)) * s["sem"]
    half = half.where(s["runs"] > 1)
    s["ci_low"] = s["mean"] - half
    s["ci_high"] = s["mean"] + half
    return s


def draw_figure(table: pd.DataFrame, out: Path, echo: Callable[[str], None] = print) -> list[Path]:
    """``fig1_kernel_error_fro.png``: the table drawn as ``kernelbench plot --reference``."""
    import matplotlib

    matplotlib.use("Agg")
    from kernelbench.drawing import save_figure
    from kernelbench.reference import load_reference
    from kernelbench.reporting.kernel_approx import FIG1_REFERENCE, fig1_summary_panels

    panels, notes = fig1_summary_panels(
        table_summary(table), "fro", load_reference(FIG1_REFERENCE), log=True
    )
    for note in notes:
        echo(f"note: {note}")
    return save_figure(panels.figure, out, "fig1_kernel_error_fro", ["png"])


def write(
    df: pd.DataFrame,
    out: Path,
    update: str | None = None,
    figure: bool = True,
    echo: Callable[[str], None] = print,
) -> None:
    """Write ``fig1_baseline.csv`` (and its figure); ``update``: None (replace the
    table), ``dataset`` or ``cell`` (replace only those found)."""
    table = cell_table(df, METRIC)
    csv = out / NAME
    if update and csv.is_file():
        table = update_table(pd.read_csv(csv), table, by=update)
    write_table(table, csv)
    echo(f"wrote {csv} ({len(table)} cells, runs {sorted(int(r) for r in table['runs'].unique())})")
    if figure:
        for path in draw_figure(table, out, echo):
            echo(f"wrote {path}")
