"""Reporting of ``qmc_adaptive`` (Yang et al. 2014, Fig. 4): discrepancy and Gram errors
per CG iteration; figure ``yang_adaptive``: the metrics against the iteration.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, metric_panels, saved, summarise


def draw_yang_adaptive(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yang_adaptive.<fmt>`` (datasets x metrics against the iteration) and
    ``yang_adaptive_summary.csv``/``.md``."""
    summary = summarise(get_protocol("qmc_adaptive"), df)
    if options.metric is not None:
        metric_of(
            get_protocol("qmc_adaptive"), options.metric
        )  # one line naming the metrics if unknown
        summary = summary[summary["metric"] == options.metric]
    xlabel = "CG iteration (0 = Halton)"
    panels = metric_panels(get_protocol("qmc_adaptive"), df, summary, "iteration", xlabel, options)
    intro = (
        "Mean over runs with 95% t-interval, per CG iteration of the box-discrepancy "
        "minimisation (iteration 0 = the Halton start, scrambled or RR2)."
    )
    title = "Yang et al. 2014, Fig. 4: adaptive QMC over the iterations"
    return saved(
        panels, out, "yang_adaptive", options, summary, "yang_adaptive_summary", title, intro
    )
