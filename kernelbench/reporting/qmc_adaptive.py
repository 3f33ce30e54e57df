"""Reporting of ``qmc_adaptive`` (Yang et al. 2014, Fig. 4): discrepancy and Gram errors
per CG iteration; figure ``yang_adaptive``: the metrics against the iteration.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.reporting import (
    REL_SPEC,
    Figure,
    FigureOptions,
    FigureOutput,
    Metric,
    Reporting,
    register,
    spec_output,
)

#: What ``qmc_adaptive``'s results are summarised, compared and drawn as.
QMC_ADAPTIVE = Reporting(
    "qmc_adaptive",
    {
        "discrepancy": Metric("discrepancy", r"$\pi^d D(S)^2 / \prod_j b_j$", short="disc"),
        "max": Metric("max_sq_error", "max squared error", short="max_sq"),
        "mean": Metric("mean_sq_error", "mean squared error", short="mean_sq"),
        "norm": REL_SPEC,
    },
    headline="norm",
)


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
    summary = QMC_ADAPTIVE.summarise(df)
    if options.metric is not None:
        QMC_ADAPTIVE.metric(options.metric)  # one line naming the metrics if unknown
        summary = summary[summary["metric"] == options.metric]
    intro = (
        "Mean over runs with 95% t-interval, per CG iteration of the box-discrepancy "
        "minimisation (iteration 0 = the Halton start, scrambled or RR2)."
    )
    title = "Yang et al. 2014, Fig. 4: adaptive QMC over the iterations"
    table = ("yang_adaptive_summary", title, intro)
    return spec_output(summary, YANG_FIG4, out, "yang_adaptive", options, table)


register(
    QMC_ADAPTIVE,
    Figure(
        "yang_adaptive",
        "Yang Fig. 4: discrepancy, max/mean squared and norm errors over CG iterations",
        draw_yang_adaptive,
        metrics=tuple(QMC_ADAPTIVE.metrics),
    ),
)
