"""Reporting of ``variance_ratio`` (Yu et al. 2016, Fig. 2): Var(method) / Var(RFF);
figure ``yu_variance``: the ratio against z, one panel per d, with Yu et al.'s Eq. (3).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output, summarise


def eq3(df: pd.DataFrame) -> pd.Series:
    """Yu et al. (2016) Eq. (3): the ORF variance ratio at each orf row's z, d and D."""
    from kernelbench.theory import orf_variance_ratio

    out = pd.Series(np.nan, index=df.index)
    for (d, D), g in df[df["method"] == "orf"].groupby(["d", "D"]):
        out[g.index] = orf_variance_ratio(g["z"].to_numpy(dtype=float), int(d), int(D))
    return out


#: Yu et al. Fig. 2, declared once: the variance ratio against z, one panel per d, Eq. (3)
#: dashed and 1 (as RFF) dotted; drawn by the site and the PNGs.
YU_FIG2 = FigureSpec(
    "yu2016_fig2.csv",
    title="Fig. 2",
    x="z",
    rows="kernel",
    cols="d",
    where=(("metric", "ratio"),),
    xlabel="z = ‖x − y‖/σ",
    ylabel="variance ratio to RFF",
    paper=eq3,
    hline=1.0,
    hline_label="as RFF (ratio 1)",
)


def draw_yu_variance(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yu_variance_<metric>.<fmt>`` (:data:`YU_FIG2`) and
    ``yu_variance_summary.csv``/``.md``."""
    metric_id = options.metric or "ratio"
    metric = metric_of(get_protocol("variance_ratio"), metric_id)
    summary = summarise(
        get_protocol("variance_ratio"),
        df,
        ["experiment", "kernel", "d", "D", "method_label", "n", "z"],
    )
    spec = YU_FIG2
    if metric_id != "ratio":  # Eq. (3) and 1 are ratios
        where = (("metric", metric_id),)
        spec = replace(spec, where=where, ylabel=metric.label, hline=None, paper=None)
    intro = (
        "ratio = MSE of the kernel value / Var K_RFF(z, D) (Yu et al. 2016, Lemma 1), "
        "mean over runs with 95% t-interval; D = n d projections."
    )
    title = "Yu et al. 2016, Fig. 2: variance ratio against z"
    table = ("yu_variance_summary", title, intro)
    return spec_output(summary, spec, out, f"yu_variance_{metric_id}", options, table)
