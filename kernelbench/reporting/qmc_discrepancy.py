"""Reporting of ``qmc_discrepancy`` (Yang et al. 2014, Fig. 3): box discrepancy beside
the Gram errors; figure ``yang_discrepancy``: both against n, one row per dataset.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output, summarise

#: Yang et al. Fig. 3, declared once: each metric (rows) against n, one column per
#: dataset; drawn by the site and the PNGs.
YANG_FIG3 = FigureSpec(
    "yang2014_fig3.csv",
    title="Fig. 3",
    rows="metric",
    xlabel="n (s = n d points)",
    ylabel="value",
    logy=True,
)


def draw_yang_discrepancy(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yang_discrepancy.<fmt>`` (:data:`YANG_FIG3`: the discrepancy and the
    metrics, or ``options.metric`` only, against n) and
    ``yang_discrepancy_summary.csv``/``.md`` (all three metrics)."""
    summary = summarise(get_protocol("qmc_discrepancy"), df)
    drawn = summary
    if options.metric is not None:
        metric_of(
            get_protocol("qmc_discrepancy"), options.metric
        )  # one line naming the metrics if unknown
        drawn = summary[summary["metric"].isin(["discrepancy", options.metric])]
    intro = "Mean over runs with 95% t-interval per (dataset, method, n)."
    title = "Yang et al. 2014, Fig. 3: box discrepancy beside the Gram error"
    table = ("yang_discrepancy_summary", title, intro)
    return spec_output(summary, YANG_FIG3, out, "yang_discrepancy", options, table, drawn=drawn)
