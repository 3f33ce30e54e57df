"""Reporting of ``kernel_approx`` (Munkhoeva et al. 2018, Fig. 1): the relative
Frobenius and spectral Gram errors; figure ``fig1``: kernels x datasets, error against n,
with the paper's means.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output, summarise

FIG1_REFERENCE = "munkhoeva2018_fig1_kernel_error"


#: The method label that implements the paper's construction of a reference method,
#: where it is not the method itself: the paper's Gort is the published tall-QR code.
PAPER_CONSTRUCTION: dict[str, str] = {"orf": "orf_tallqr"}


def fig1_paper(df: pd.DataFrame) -> pd.Series:
    """Munkhoeva et al. (2018) Fig. 1: the paper's mean error of each row's cell, on the
    label that implements the paper's construction (:data:`PAPER_CONSTRUCTION`; where
    that label is absent, the method's own)."""
    from kernelbench.reference import load_reference

    ref = load_reference(FIG1_REFERENCE)
    labels = set(df["method_label"])
    ref = ref.assign(
        method_label=[
            PAPER_CONSTRUCTION[m] if PAPER_CONSTRUCTION.get(m) in labels else m
            for m in ref["method"]
        ],
        n=ref["n"].astype(float),
        dataset=ref["dataset"].astype(str).str.lower(),
    )[["dataset", "kernel", "method_label", "n", "mean"]].rename(columns={"mean": "paper"})
    keys = df[["dataset", "kernel", "method_label", "n"]].assign(n=df["n"].astype(float))
    return keys.merge(ref, on=["dataset", "kernel", "method_label", "n"], how="left")["paper"]


#: Fig. 1, declared once: kernels x datasets, the relative Frobenius error against n, the
#: paper's means dashed; drawn by the site (Plotly) and the baseline PNG (matplotlib).
FIG1 = FigureSpec(
    "fig1_baseline.csv",
    title="Fig. 1",
    rows="kernel",
    cols="dataset",
    where=(("metric", "fro"),),
    ylabel="Frobenius error ‖K − K̂‖ / ‖K‖",
    logy=True,
    paper=fig1_paper,
)
#: The y label of each metric (``kernelbench plot --metric``).
YLABELS = {"fro": FIG1.ylabel, "spec": "spectral error ‖K − K̂‖₂ / ‖K‖₂"}


def fig1_spec(
    summary: pd.DataFrame, metric_id: str = "fro", reference: bool = False
) -> tuple[FigureSpec, list[str]]:
    """:data:`FIG1` for a summary of results: its ``metric_id``, the paper's means only
    with ``reference`` (Frobenius error only), one figure per dataset on a sparse grid
    (:func:`sparse_datasets`); and the notes."""
    metric = metric_of(get_protocol("kernel_approx"), metric_id)
    if summary.empty or metric_id not in set(summary["metric"]):
        raise KernelbenchError(f"results hold no {metric.column} values to plot")
    notes = []
    if reference and metric_id != "fro":
        notes.append(
            f"reference numbers are Frobenius errors; not overlaid on the {metric_id} metric"
        )
    ylabel = YLABELS.get(metric_id, metric.label)
    paper = fig1_paper if reference and metric_id == "fro" else None
    spec = replace(FIG1, where=(("metric", metric_id),), ylabel=ylabel, paper=paper)
    if sparse_datasets(summary[summary["metric"] == metric_id]) is not None:
        spec = replace(spec, pages=("dataset",))
        notes.append("sparse grid: one figure per dataset (<figure>_<dataset>)")
    return spec, notes


def sparse_datasets(summary: pd.DataFrame) -> list[str] | None:
    """The datasets of a sparse grid (half or more of its kernel x dataset panels empty),
    else None."""
    datasets = sorted(summary["dataset"].unique())
    kernels = summary["kernel"].unique()
    filled = len(summary[["kernel", "dataset"]].drop_duplicates())
    total = len(datasets) * len(kernels)
    if len(datasets) < 2 or 2 * (total - filled) < total:
        return None
    return datasets


def draw_fig1(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write Fig. 1 (``fig1_kernel_error_<metric>.<fmt>``, drawn by :data:`FIG1`) and its
    summary table (``fig1_summary.csv``/``.md``, both metrics) into ``out``."""
    metric_id = options.metric or "fro"
    summary = summarise(get_protocol("kernel_approx"), df)
    spec, notes = fig1_spec(summary, metric_id, options.reference)
    intro = (
        "Mean over runs, sample std, standard error and 95% t-interval "
        "(ci_low, ci_high = mean -/+ t_{0.975, runs-1} · std / √runs)."
    )
    title = "Figure 1 summary: relative kernel approximation error"
    table = ("fig1_summary", title, intro)
    stem = f"fig1_kernel_error_{metric_id}"
    return spec_output(summary, spec, out, stem, options, table, notes)
