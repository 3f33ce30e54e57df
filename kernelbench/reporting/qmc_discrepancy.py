"""Reporting of ``qmc_discrepancy`` (Yang et al. 2014, Fig. 3): box discrepancy beside
the Gram errors; figure ``yang_discrepancy``: both against n, one row per dataset.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.protocols import get_protocol
from kernelbench.reporting import FigureOptions, FigureOutput, metric_panels, saved, summarise


def draw_yang_discrepancy(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yang_discrepancy.<fmt>`` (datasets x {discrepancy, spectral error} against
    n) and ``yang_discrepancy_summary.csv``/``.md`` (all three metrics)."""
    summary = summarise(get_protocol("qmc_discrepancy"), df)
    shown = summary[summary["metric"].isin(["discrepancy", options.metric or "spec"])]
    xlabel = "n (s = 2n(d + 1) points)"
    panels = metric_panels(get_protocol("qmc_discrepancy"), df, shown, "n", xlabel, options)
    intro = "Mean over runs with 95% t-interval per (dataset, method, n)."
    title = "Yang et al. 2014, Fig. 3: box discrepancy beside the Gram error"
    stems = ("yang_discrepancy", "yang_discrepancy_summary")
    return saved(panels, out, stems[0], options, summary, stems[1], title, intro)
