"""Reporting of ``downstream`` (Munkhoeva et al. 2018, Fig. 2): the learner's score;
figure ``fig2``: score against n, kernels x datasets, one figure per learner, with the
exact kernel's score.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output, summarise

#: Fig. 2, declared once: kernels x datasets, the test score against n, one figure per
#: learner, the exact kernel's score dotted; drawn by the site and the PNGs.
FIG2 = FigureSpec(
    "fig2_baseline.csv",
    title="Fig. 2",
    rows="kernel",
    cols="dataset",
    pages=("learner",),
    ylabel="test score (R² or accuracy)",
    hline="exact_score",
    hline_label="exact kernel",
)


def fig2_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and 95% t-interval of the score per (dataset, kernel, method, learner, n),
    with the metric and the exact kernel's score."""
    if "score" not in df or df["score"].isna().all():
        raise KernelbenchError("results hold no downstream scores to plot")
    summary = summarise(get_protocol("downstream"), df)
    extra = df.groupby(["dataset", "kernel", "learner"]).agg(
        score_metric=("metric", "first"), exact_score=("exact_score", "first")
    )
    summary = summary.join(extra, on=["dataset", "kernel", "learner"])
    summary["metric"] = summary.pop("score_metric")
    return summary


def draw_fig2(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``fig2_<learner>.<fmt>`` per learner (:data:`FIG2`) and
    ``fig2_summary.csv``/``.md``."""
    summary = fig2_summary(df)
    notes = []
    if options.reference:
        notes.append("Fig. 2 has no table of numbers in the paper: no reference to overlay")
    intro = (
        "Test score (accuracy, or R^2 or ||y_hat - y||/||y|| for regression) over runs: "
        "mean, sample std, standard error and 95% t-interval; exact_score is the same "
        "learner on the exact kernel."
    )
    table = ("fig2_summary", "Figure 2 summary", intro)
    return spec_output(summary, FIG2, out, "fig2", options, table, notes)
