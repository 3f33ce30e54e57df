"""Reporting of ``variance_ratio`` (Yu et al. 2016, Fig. 2): Var(method) / Var(RFF);
figure ``yu_variance``: the ratio against z, one panel per d, with Yu et al.'s Eq. (3).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, saved, summarise


def theory_curves(summary: pd.DataFrame) -> pd.DataFrame:
    """Yu et al.'s Eq. (3) and the exact ORF ratio on the z and D of ``summary`` (per d)."""
    from kernelbench.theory import orf_variance_ratio, orf_variance_ratio_exact

    rows = []
    for (kernel, d, D), _ in summary.groupby(["kernel", "d", "D"]):
        z = np.linspace(0.1, float(summary["z"].max()), 40)
        d, D = int(d), int(D)
        for label, paper, values in (
            ("orf", "Yu et al. Eq. (3)", orf_variance_ratio(z, d, D)),
            ("orf exact", "exact ORF ratio (all orders)", orf_variance_ratio_exact(z, d, D)),
        ):
            rows += [
                {
                    "kernel": kernel,
                    "d": d,
                    "method_label": label,
                    "z": zi,
                    "mean": v,
                    "paper_label": paper,
                }
                for zi, v in zip(z, values, strict=True)
            ]
    return pd.DataFrame(rows)


def draw_yu_variance(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yu_variance_<metric>.<fmt>`` and ``yu_variance_summary.csv``/``.md``."""
    from kernelbench.drawing import draw_panels, kernel_name

    metric_id = options.metric or "ratio"
    metric = metric_of(get_protocol("variance_ratio"), metric_id)
    summary = summarise(
        get_protocol("variance_ratio"),
        df,
        ["experiment", "kernel", "d", "D", "method_label", "n", "z"],
    )
    shown = summary[summary["metric"] == metric_id]
    reference = None
    if metric_id == "ratio" and (shown["method"] == "orf").any():
        reference = theory_curves(shown[shown["method"] == "orf"])
    log = False if options.log is None else options.log
    panels = draw_panels(
        shown,
        row="kernel",
        col="d",
        x="z",
        ylabel=metric.label,
        xlabel=r"$z = \|x - y\| / \sigma$",
        row_name=kernel_name,
        cols=sorted(shown["d"].unique()),
        col_name=lambda d: f"d = {int(d)}",
        log=log,
        reference=reference,
        reference_name="theory",
    )
    if not log and metric_id == "ratio":
        for ax in panels.figure.axes:
            ax.set_ylim(0.0, 1.6)
            ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
    intro = (
        "ratio = MSE of the kernel value / Var K_RFF(z, D) (Yu et al. 2016, Lemma 1), "
        "mean over runs with 95% t-interval; D = n d projections."
    )
    title = "Yu et al. 2016, Fig. 2: variance ratio against z"
    stem = f"yu_variance_{metric_id}"
    return saved(panels, out, stem, options, summary, "yu_variance_summary", title, intro)
