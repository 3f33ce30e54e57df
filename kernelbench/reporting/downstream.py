"""Reporting of ``downstream`` (Munkhoeva et al. 2018, Fig. 2): the learner's score;
figure ``fig2``: score against n, kernels x datasets, one figure per learner, with the
exact kernel's score.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import get_protocol
from kernelbench.reporting import FigureOptions, FigureOutput, summarise

METRIC_LABELS = {
    "accuracy": "accuracy",
    "r2": "$R^2$",
    "rel_error": r"$\|\hat y - y\|_2 / \|y\|_2$ (lower is better)",
}


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


def fig2_panels(df: pd.DataFrame, learner: str, summary: pd.DataFrame | None = None) -> Any:
    """Fig. 2 for one learner: kernels x datasets (by d), score against n with 95%
    t-interval bands and the exact kernel's score as a dotted line."""
    from kernelbench.drawing import dataset_name, dataset_order, runs_caption
    from kernelbench.reporting import kernel_panels

    summary = fig2_summary(df) if summary is None else summary
    shown = summary[summary["learner"] == learner]
    if shown.empty:
        raise KernelbenchError(f"no results for learner {learner!r}")
    exact = shown.drop_duplicates(["kernel", "dataset"])[["kernel", "dataset", "exact_score"]]
    hlines = exact.dropna().rename(columns={"exact_score": "value"}).assign(label="exact kernel")
    metric = shown.groupby("dataset")["metric"].first()
    dims = df.groupby("dataset")["d"].first()

    def title(ds: str, _cell: pd.DataFrame) -> str:
        name = METRIC_LABELS.get(str(metric.get(ds)), str(metric.get(ds)))
        return f"{dataset_name(ds)} (d = {int(dims[ds])}): {name}"

    return kernel_panels(
        shown,
        [ds for ds in dataset_order(df) if ds in set(shown["dataset"])],
        title,
        ylabel=f"test score ({learner})",
        xlabel="n",
        log=False,
        hlines=hlines,
        caption=runs_caption(shown),
    )


def draw_fig2(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``fig2_<learner>.<fmt>`` per learner and ``fig2_summary.csv``/``.md``."""
    from kernelbench.drawing import save_figure, write_table

    summary = fig2_summary(df)
    written: list[Any] = []
    notes: list[str] = []
    if options.reference:
        notes.append("Fig. 2 has no table of numbers in the paper: no reference to overlay")
    for learner in sorted(summary["learner"].unique()):
        panels = fig2_panels(df, learner, summary)
        written += save_figure(panels.figure, out, f"fig2_{learner}", options.formats)
        notes += [f"{learner}: {note}" for note in panels.notes]
    intro = (
        "Test score (accuracy, or R^2 or ||y_hat - y||/||y|| for regression) over runs: "
        "mean, sample std, standard error and 95% t-interval; exact_score is the same "
        "learner on the exact kernel."
    )
    written += write_table(summary, out, "fig2_summary", "Figure 2 summary", intro, notes)
    return FigureOutput(written, notes)
