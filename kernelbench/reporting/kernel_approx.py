"""Reporting of ``kernel_approx`` (Munkhoeva et al. 2018, Fig. 1): the relative
Frobenius and spectral Gram errors; figure ``fig1``: kernels x datasets, error against n,
with the paper's means.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, summarise

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.drawing import Panels


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
    ylabel="Frobenius error ‖K − K̂‖ / ‖K‖",
    logy=True,
    paper=fig1_paper,
)


def _reference_lines(summary: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """The reference means to overlay, labelled like the line they are compared with
    (:data:`PAPER_CONSTRUCTION`, else the label itself, else one of the same method); an
    overlay beside another construction than the paper's says so in its legend."""
    present = summary[["method_label", "method"]].drop_duplicates()
    labels = set(present["method_label"])
    rows = []
    for target in sorted(set(ref["method"])):
        same_method = sorted(present.loc[present["method"] == target, "method_label"])
        preferred = [PAPER_CONSTRUCTION.get(target), target, *same_method]
        lab = next((p for p in preferred if p is not None and p in labels), None)
        if lab is None:
            continue
        r = ref[ref["method"] == target].copy()
        r["method_label"] = lab
        paper = str(r["paper_method"].iloc[0]) if "paper_method" in r else target
        wanted = PAPER_CONSTRUCTION.get(target, target)
        if lab != wanted:  # e.g. only our true ORF is present: not what the paper drew
            paper += f" (published {wanted}, drawn beside our {lab})"
        r["paper_label"] = paper
        rows.append(r)
    if not rows:
        return pd.DataFrame(columns=["kernel", "dataset", "method_label", "n", "mean"])
    out = pd.concat(rows, ignore_index=True)
    out["dataset"] = out["dataset"].astype(str).str.lower()
    return out


def fig1_panels(
    df: pd.DataFrame,
    metric_id: str = "fro",
    reference: pd.DataFrame | None = None,
    log: bool = True,
) -> tuple[Panels, pd.DataFrame, list[str]]:
    """Fig. 1 from results: (panels, the summary of both metrics, notes): kernels x
    datasets (by d), error against n with 95% t-interval bands, the paper's table
    (``reference``, Frobenius error only) dashed."""
    metric = metric_of(get_protocol("kernel_approx"), metric_id)
    if metric.column not in df or df[metric.column].isna().all():
        raise KernelbenchError(f"results hold no {metric.column} values to plot")
    summary = summarise(get_protocol("kernel_approx"), df)
    panels, notes = fig1_summary_panels(summary, metric_id, reference, log)
    return panels, summary, notes


def fig1_summary_panels(
    summary: pd.DataFrame,
    metric_id: str = "fro",
    reference: pd.DataFrame | None = None,
    log: bool = True,
) -> tuple[Panels, list[str]]:
    """Fig. 1 from a :func:`kernelbench.drawing.summarise` summary (e.g. one rebuilt
    from a baseline table): (panels, notes)."""
    from kernelbench.drawing import (
        dataset_name,
        dataset_order,
        draw_panels,
        kernel_name,
        kernel_rank,
        runs_caption,
    )

    metric = metric_of(get_protocol("kernel_approx"), metric_id)
    shown = summary[summary["metric"] == metric_id]
    notes: list[str] = []
    if reference is not None and metric_id != "fro":
        notes.append(
            f"reference numbers are Frobenius errors; not overlaid on the {metric_id} metric"
        )
        reference = None
    lines = _reference_lines(shown, reference) if reference is not None else None
    datasets = [ds for ds in dataset_order(shown) if ds in set(shown["dataset"])]
    dims = shown.groupby("dataset")["d"].first()

    def title(ds: str, _cell: pd.DataFrame) -> str:
        d = dims.get(ds)
        return f"{dataset_name(ds)} (d = {int(d)})" if pd.notna(d) else dataset_name(ds)

    # the layout of the figure's spec (FIG1: kernels x datasets against n), as the site's
    panels = draw_panels(
        shown,
        row=FIG1.rows,
        col=FIG1.cols,
        x=FIG1.x,
        rows=sorted(shown[FIG1.rows].unique(), key=kernel_rank),
        cols=datasets,
        row_name=kernel_name,
        col_name=dataset_name,
        col_title=title,
        ylabel=metric.label,
        xlabel=FIG1.xlabel,
        log=log,
        reference=lines,
        caption=runs_caption(shown),
    )
    return panels, notes + panels.notes


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
    """Write Fig. 1 (``fig1_kernel_error_<metric>.<fmt>``) and its summary table
    (``fig1_summary.csv``/``.md``, both metrics) into ``out``."""
    from kernelbench.drawing import save_figure, write_table
    from kernelbench.reference import load_reference

    metric_id = options.metric or "fro"
    reference = load_reference(FIG1_REFERENCE) if options.reference else None
    log = True if options.log is None else options.log
    stem = f"fig1_kernel_error_{metric_id}"
    panels, summary, notes = fig1_panels(df, metric_id, reference, log)
    sparse = sparse_datasets(summary[summary["metric"] == metric_id])
    if sparse is None:
        written = save_figure(panels.figure, out, stem, options.formats)
    else:  # only the cells present: one figure per dataset
        import matplotlib.pyplot as plt

        plt.close(panels.figure)
        notes = [f"sparse grid: one figure per dataset ({stem}_<dataset>)"]
        written = []
        for ds in sparse:
            one, ds_notes = fig1_summary_panels(
                summary[summary["dataset"] == ds], metric_id, reference, log
            )
            written += save_figure(one.figure, out, f"{stem}_{ds}", options.formats)
            notes += ds_notes
        notes = list(dict.fromkeys(notes))
    intro = (
        "Mean over runs, sample std, standard error and 95% t-interval "
        "(ci_low, ci_high = mean -/+ t_{0.975, runs-1} · std / √runs)."
    )
    title = "Figure 1 summary: relative kernel approximation error"
    written += write_table(summary, out, "fig1_summary", title, intro, notes)
    return FigureOutput(written, notes)
