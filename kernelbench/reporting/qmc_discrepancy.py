"""Reporting of ``qmc_discrepancy`` (Yang et al. 2014, Fig. 3): box discrepancy beside
the Gram errors; figure ``yang_discrepancy``: both against n, one row per dataset.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.reporting import (
    REL_FRO,
    REL_SPEC,
    Figure,
    FigureOptions,
    FigureOutput,
    Metric,
    Reporting,
    register,
    saved,
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


def draw_yang_discrepancy(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yang_discrepancy.<fmt>`` (datasets x {discrepancy, spectral error} against
    n) and ``yang_discrepancy_summary.csv``/``.md`` (all three metrics)."""
    summary = QMC_DISCREPANCY.summarise(df)
    shown = summary[summary["metric"].isin(["discrepancy", options.metric or "spec"])]
    xlabel = "n (s = 2n(d + 1) points)"
    panels = QMC_DISCREPANCY.metric_panels(df, shown, "n", xlabel, options)
    intro = "Mean over runs with 95% t-interval per (dataset, method, n)."
    title = "Yang et al. 2014, Fig. 3: box discrepancy beside the Gram error"
    stems = ("yang_discrepancy", "yang_discrepancy_summary")
    return saved(panels, out, stems[0], options, summary, stems[1], title, intro)


register(
    QMC_DISCREPANCY,
    Figure(
        "yang_discrepancy",
        "Yang Fig. 3: box discrepancy and Gram error against n",
        draw_yang_discrepancy,
        metrics=tuple(QMC_DISCREPANCY.metrics),
    ),
)
