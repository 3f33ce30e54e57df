"""Reporting of ``walltime`` (Munkhoeva et al. 2018, Fig. 3): fit and map times; figure
``fig3``: time against d (log-log), the median over rows with its quartiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output


def median_summary(df: pd.DataFrame, metric_ids: Sequence[str]) -> pd.DataFrame:
    """Per (experiment, points, dataset, method_label, metric): d, rows, the median and
    the quartiles."""
    keys = ["experiment", "points", "dataset", "method_label"]
    rows = []
    for metric_id in metric_ids:
        column = get_protocol("walltime").metrics[metric_id].column
        if column not in df or df[column].isna().all():
            continue
        # fit and the first call happen once per run: one value per run, not per row
        per = df if metric_id == "map" else df.drop_duplicates([*keys, "run"])
        for key, g in per.groupby(keys, sort=True):
            v = g[column].dropna().to_numpy(dtype=float)
            if v.size == 0:
                continue
            q25, med, q75 = np.quantile(v, [0.25, 0.5, 0.75])
            q25, med, q75 = float(q25), float(med), float(q75)
            rows.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "d": int(g["d"].iloc[0]),
                    "method": g["method"].iloc[0],
                    "paper_label": g["paper_label"].iloc[0],
                    "metric": metric_id,
                    "values": int(v.size),
                    "median": med,
                    "q25": q25,
                    "q75": q75,
                }
            )
    return pd.DataFrame(rows)


#: Fig. 3, declared once: the median map time against d (log-log) with its quartiles,
#: one panel per number of points; drawn by the site and ``kernelbench plot``.
FIG3 = FigureSpec(
    "fig3_walltime.csv",
    title="Fig. 3, map time",
    x="d",
    y="median",
    cols="points",
    where=(("metric", "map"),),
    xlabel="d (input dimension)",
    ylabel="median map time (s)",
    logx=True,
    logy=True,
    lo="q25",
    hi="q75",
    runs="values",
    interval="interquartile ranges",
)


def draw_fig3(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write Fig. 3 (``fig3_walltime_<metric>.<fmt>``, :data:`FIG3`) and
    ``fig3_summary.csv``/``.md`` (median and quartiles of every metric) into ``out``."""
    metric_id = options.metric or "map"
    metric = metric_of(get_protocol("walltime"), metric_id)
    if metric.column not in df or df[metric.column].isna().all():
        raise KernelbenchError(f"results hold no {metric.column} values to plot")
    summary = median_summary(df, list(get_protocol("walltime").metrics))
    ylabel = f"median {metric.label}"
    title = "Fig. 3, map time" if metric_id == "map" else f"Fig. 3, {metric.label}"
    spec = replace(FIG3, where=(("metric", metric_id),), ylabel=ylabel, title=title)
    intro = (
        "Median and quartiles over repetitions (map) or runs (fit, first call); one BLAS "
        "thread; the first call of each run is not among the map repetitions."
    )
    table = ("fig3_summary", "Figure 3 summary: walltime", intro)
    return spec_output(summary, spec, out, f"fig3_walltime_{metric_id}", options, table)
