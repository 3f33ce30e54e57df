"""Reporting of ``qmc_adaptive`` (Yang et al. 2014, Fig. 4): discrepancy and Gram errors
per CG iteration; figure ``yang_adaptive``: the metrics against the iteration.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.reporting import (
    REL_SPEC,
    Figure,
    FigureOptions,
    FigureOutput,
    Metric,
    Reporting,
    register,
    saved,
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


def draw_yang_adaptive(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yang_adaptive.<fmt>`` (datasets x metrics against the iteration) and
    ``yang_adaptive_summary.csv``/``.md``."""
    summary = QMC_ADAPTIVE.summarise(df)
    if options.metric is not None:
        QMC_ADAPTIVE.metric(options.metric)  # one line naming the metrics if unknown
        summary = summary[summary["metric"] == options.metric]
    xlabel = "CG iteration (0 = Halton)"
    panels = QMC_ADAPTIVE.metric_panels(df, summary, "iteration", xlabel, options)
    intro = (
        "Mean over runs with 95% t-interval, per CG iteration of the box-discrepancy "
        "minimisation (iteration 0 = the Halton start, scrambled or RR2)."
    )
    title = "Yang et al. 2014, Fig. 4: adaptive QMC over the iterations"
    return saved(
        panels, out, "yang_adaptive", options, summary, "yang_adaptive_summary", title, intro
    )


register(
    QMC_ADAPTIVE,
    Figure(
        "yang_adaptive",
        "Yang Fig. 4: discrepancy, max/mean squared and norm errors over CG iterations",
        draw_yang_adaptive,
        metrics=tuple(QMC_ADAPTIVE.metrics),
    ),
)
