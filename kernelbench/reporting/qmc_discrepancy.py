"""Reporting of ``qmc_discrepancy`` (Yang et al. 2014, Fig. 3): box discrepancy beside
the Gram errors; figure ``yang_discrepancy``: both against n, one row per dataset.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.reporting import (
    REL_FRO,
    REL_SPEC,
    Figure,
    FigureOptions,
    FigureOutput,
    Metric,
    Reporting,
    register,
    spec_output,
)

#: What ``qmc_discrepancy``'s results are summarised, compared and drawn as.
QMC_DISCREPANCY = Reporting(
    "qmc_discrepancy",
    {
        "discrepancy": Metric("discrepancy", r"$\pi^d D(S)^2 / \prod_j b_j$", short="disc"),
        "fro": REL_FRO,
        "spec": REL_SPEC,
    },
    headline="discrepancy",
)


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
    summary = QMC_DISCREPANCY.summarise(df)
    drawn = summary
    if options.metric is not None:
        QMC_DISCREPANCY.metric(options.metric)  # one line naming the metrics if unknown
        drawn = summary[summary["metric"].isin(["discrepancy", options.metric])]
    intro = "Mean over runs with 95% t-interval per (dataset, method, n)."
    title = "Yang et al. 2014, Fig. 3: box discrepancy beside the Gram error"
    table = ("yang_discrepancy_summary", title, intro)
    return spec_output(summary, YANG_FIG3, out, "yang_discrepancy", options, table, drawn=drawn)


register(
    QMC_DISCREPANCY,
    Figure(
        "yang_discrepancy",
        "Yang Fig. 3: box discrepancy and Gram error against n",
        draw_yang_discrepancy,
        metrics=tuple(QMC_DISCREPANCY.metrics),
    ),
)
