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


def draw_figure(df: pd.DataFrame, table: pd.DataFrame, out: Path, echo: Callable) -> None:
    """``fig1_kernel_error_fro.png``: the table drawn by its figure spec
    (:data:`kernelbench.reporting.kernel_approx.FIG1`, as the site draws it)."""
    from kernelbench.baseline.figures import redraw

    redraw(out, ["fig1_kernel_error_fro"], echo)
