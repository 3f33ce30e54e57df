"""Reporting of ``walltime`` (Munkhoeva et al. 2018, Fig. 3): fit and map times; figure
``fig3``: time against d (log-log), the median over rows with its quartiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, saved


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


def fig3_panels(df: pd.DataFrame, metric_id: str = "map", log: bool = True):
    """Fig. 3 drawn from results: (panels, the median summary of every metric).

    One panel per number of points, time against d (log-log), the median over
    rows with its interquartile band, one line per method label.
    """
    from kernelbench.drawing import draw_panels

    metric = metric_of(get_protocol("walltime"), metric_id)
    if metric.column not in df or df[metric.column].isna().all():
        raise KernelbenchError(f"results hold no {metric.column} values to plot")
    summary = median_summary(df, list(get_protocol("walltime").metrics))
    shown = summary[summary["metric"] == metric_id]  # ci_low/ci_high: the quartiles
    shown = shown.assign(mean=shown["median"], ci_low=shown["q25"], ci_high=shown["q75"])
    shown["row"] = metric.label
    panels = draw_panels(
        shown,
        row="row",
        col="points",
        x="d",
        ylabel="",
        xlabel="d",
        rows=[metric.label],
        cols=sorted(shown["points"].unique()),
        row_name=str,
        col_name=lambda p: f"{int(p)} points",
        log=log,
        logx=True,
        caption=_caption(shown),
    )
    dims = sorted(shown["d"].unique())
    for ax in panels.figure.axes:  # the datasets' d as ticks, slanted: 3072 and 7129 are close
        ax.set_xticks(dims, [str(int(d)) for d in dims], minor=False)
        ax.set_xticks([], minor=True)
        ax.tick_params(axis="x", labelrotation=45)
    return panels, summary


def _caption(shown: pd.DataFrame) -> str:
    """``lines: median over 50 timings per cell; bands: interquartile range``."""
    if shown.empty:
        return ""
    lo, hi = int(shown["values"].min()), int(shown["values"].max())
    count = f"{lo}" if lo == hi else f"{lo}-{hi}"
    return f"lines: median over {count} timings per cell; bands: interquartile range"


def draw_fig3(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write Fig. 3 (``fig3_walltime_<metric>.<fmt>``) and ``fig3_summary.csv``/``.md``
    (median and quartiles of every metric) into ``out``."""
    metric_id = options.metric or "map"
    panels, summary = fig3_panels(df, metric_id, True if options.log is None else options.log)
    intro = (
        "Median and quartiles over repetitions (map) or runs (fit, first call); one BLAS "
        "thread; the first call of each run is not among the map repetitions."
    )
    title = "Figure 3 summary: walltime"
    stem = f"fig3_walltime_{metric_id}"
    return saved(panels, out, stem, options, summary, "fig3_summary", title, intro)
