"""Reporting of ``qmc_adaptive`` (Yang et al. 2014, Fig. 4): discrepancy and Gram errors
per CG iteration; figure ``yang_adaptive``: the metrics against the iteration.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output, summarise

#: Yang et al. Fig. 4, declared once: each metric (rows) per CG iteration, one column
#: per dataset; drawn by the site and the PNGs.
YANG_FIG4 = FigureSpec(
    "yang2014_fig4.csv",
    title="Fig. 4",
    x="iteration",
    rows="metric",
    xlabel="iteration",
    ylabel="value",
    logy=True,
)


def draw_yang_adaptive(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yang_adaptive.<fmt>`` (:data:`YANG_FIG4`: the metrics, or
    ``options.metric``, against the iteration) and ``yang_adaptive_summary.csv``/``.md``."""
    summary = summarise(get_protocol("qmc_adaptive"), df)
    if options.metric is not None:
        metric_of(
            get_protocol("qmc_adaptive"), options.metric
        )  # one line naming the metrics if unknown
        summary = summary[summary["metric"] == options.metric]
    intro = (
        "Mean over runs with 95% t-interval, per CG iteration of the box-discrepancy "
        "minimisation (iteration 0 = the Halton start, scrambled or RR2)."
    )
    title = "Yang et al. 2014, Fig. 4: adaptive QMC over the iterations"
    table = ("yang_adaptive_summary", title, intro)
    return spec_output(summary, YANG_FIG4, out, "yang_adaptive", options, table)
