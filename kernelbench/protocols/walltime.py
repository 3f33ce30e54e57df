"""``walltime``: the time of the explicit feature map (Munkhoeva et al. 2018, Fig. 3).

Per cell (dataset, kernel, method, n, ``points``): ``points`` random rows of the
dataset's scaled train part (the data settings of ``protocol.data``, Fig. 1's by
default; drawn once per (seed, dataset, points), with replacement only when the
train part has fewer rows), BLAS limited to one thread. Per run, a fresh map from
:meth:`Protocol.run_rng`:

* ``fit_seconds``: drawing the map (``fit``), timed once per run;
* ``first_map_seconds``: the first ``transform`` of that map (compilation, caches),
  reported separately and not among the repetitions;
* ``map_seconds`` (= ``transform_seconds``): ``repeats`` further ``transform`` calls
  on the same points with the weights already drawn, one row per repetition.

Figure ``fig3``: time against d (log-log), the median over rows with its
interquartile band, one line per method, one panel per number of points.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import PROTOCOLS
from kernelbench.protocols.base import Figure, FigureOptions, FigureOutput, Metric, Protocol
from kernelbench.protocols.settings import ProtocolSettings
from kernelbench.seeding import derive_rng
from kernelbench.validation import check_int


@dataclass(frozen=True)
class Points:
    """The rows every run of a cell maps, and their provenance."""

    X: np.ndarray
    provenance: dict[str, Any]


@lru_cache(maxsize=4)
def _points_cached(dataset_json: str, seed: int, data_json: str, key: str, points: int) -> tuple:
    from kernelbench.datasets.splits import protocol_config, train_part

    dataset = json.loads(dataset_json)
    name = str(dataset["name"])
    part = train_part(name, protocol_config(dataset, key), json.loads(data_json))
    rng = derive_rng(seed, "walltime", name, points)
    replace = points > part.n_rows
    X = np.ascontiguousarray(part.rows(rng.choice(part.n_rows, size=points, replace=replace)))
    X.setflags(write=False)
    ds = part.dataset
    deviation = ds.deviation or ""
    if replace:
        note = f"{points} points drawn with replacement from {part.n_rows} train rows"
        deviation = f"{deviation}; {note}" if deviation else note
    return X, {"data_source": ds.source, "data_deviation": deviation or None}


@dataclass
class WalltimeSettings(ProtocolSettings):
    """Settings of ``walltime`` (Munkhoeva et al. 2018, Fig. 3): ``points`` random rows
    of the scaled train part that are mapped (10 in the paper), ``repeats`` timed
    transform calls per drawn map after its first (warm-up) call, and ``runs`` maps
    drawn per cell (each with its timed fit)."""

    name: str = "walltime"
    data: str | None = "kernel_approx"
    points: int = 10
    repeats: int = 50
    runs: int | None = 1


class Walltime(Protocol):
    """Fit and map time of a feature map on a few points (Fig. 3), one thread."""

    name = "walltime"
    Settings = WalltimeSettings
    title = "Munkhoeva et al. 2018, Fig. 3: walltime of the explicit mapping"
    columns = (
        ("points", pa.int64()),
        ("repetition", pa.int64()),
        ("map_seconds", pa.float64()),
        ("first_map_seconds", pa.float64()),
    )
    cell_keys = ("dataset", "kernel", "method_label", "n", "points")
    metrics = {
        "map": Metric("map_seconds", "map time (s)", short="map_s"),
        "fit": Metric("fit_seconds", "fit (draw) time (s)", short="fit_s"),
        "first": Metric("first_map_seconds", "first map call (s)", short="first_s"),
    }
    headline = "map"
    extendable = False  # timings of one session are not stitched to another's

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        out = super().check_settings(settings)
        out["points"] = check_int("points", out["points"], 1)
        out["repeats"] = check_int("repeats", out["repeats"], 1)
        return out

    def default_runs(self, cell: Mapping[str, Any]) -> int | None:
        """Maps drawn per cell: the protocol's ``runs`` (not the data settings' runs,
        which count Fig. 1's error runs)."""
        self.data_settings(cell)
        return cell["protocol"].get("runs")

    path_settings = ("points",)

    def path_parts(self, cell: Mapping[str, Any]) -> tuple[str, ...]:
        return (f"points={int(cell['protocol']['points'])}",)

    def row_keys(self, cell: Mapping[str, Any]) -> dict[str, Any]:
        return {"points": int(cell["protocol"]["points"])}

    def prepare(self, cell: Mapping[str, Any]) -> Points:
        X, prov = _points_cached(*self.pair_key(cell), int(cell["protocol"]["points"]))
        return Points(X, prov)

    def cell_columns(self, cell: Mapping[str, Any], ctx: Points) -> dict[str, Any]:
        return {
            "d": int(ctx.X.shape[1]),
            "data_source": ctx.provenance.get("data_source"),
            "data_deviation": ctx.provenance.get("data_deviation"),
        }

    def measure(self, cell: Mapping[str, Any], ctx: Points, runs: Sequence[int]) -> list[dict]:
        from threadpoolctl import threadpool_limits

        rows: list[dict] = []
        with threadpool_limits(limits=1, user_api="blas"):
            for run in runs:
                rows += self._time_run(cell, ctx, run)
        return rows

    def _time_run(self, cell: Mapping[str, Any], ctx: Points, run: int) -> list[dict]:
        X = ctx.X
        fm = self.feature_map(cell, self.run_rng(cell, run), d=X.shape[1], ctx=ctx)
        t0 = time.perf_counter()
        fm.fit(X)
        fit_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        fm.transform(X)
        first = time.perf_counter() - t0
        common = {
            "run": run,
            "D": int(fm.n_projections_),
            "n_features": int(fm.n_features_out_),
            "fit_seconds": fit_seconds,
            "first_map_seconds": first,
        }
        rows = []
        for rep in range(int(cell["protocol"]["repeats"])):
            t0 = time.perf_counter()
            fm.transform(X)
            seconds = time.perf_counter() - t0
            rows.append(
                {**common, "repetition": rep, "map_seconds": seconds, "transform_seconds": seconds}
            )
        return rows


# --------------------------------------------------------------------------- figure


def median_summary(df: pd.DataFrame, metric_ids: Sequence[str]) -> pd.DataFrame:
    """Per (experiment, points, dataset, method_label, metric): d, rows, the median and
    the quartiles (``ci_low``/``ci_high`` = q25/q75 for :func:`draw_panels`)."""
    proto = PROTOCOLS.get("walltime")
    keys = ["experiment", "points", "dataset", "method_label"]
    rows = []
    for metric_id in metric_ids:
        column = proto.metrics[metric_id].column
        if column not in df or df[column].isna().all():
            continue
        # fit and the first call happen once per run: one value per run, not per row
        per = df if metric_id == "map" else df.drop_duplicates([*keys, "run"])
        for key, g in per.groupby(keys, sort=True):
            v = g[column].dropna().to_numpy(dtype=float)
            if v.size == 0:
                continue
            q25, med, q75 = np.quantile(v, [0.25, 0.5, 0.75])
            rows.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "d": int(g["d"].iloc[0]),
                    "method": g["method"].iloc[0],
                    "paper_label": g["paper_label"].iloc[0],
                    "metric": metric_id,
                    "values": int(v.size),
                    "median": float(med),
                    "q25": float(q25),
                    "q75": float(q75),
                    "mean": float(med),
                    "ci_low": float(q25),
                    "ci_high": float(q75),
                }
            )
    return pd.DataFrame(rows)


def fig3_panels(df: pd.DataFrame, metric_id: str = "map", log: bool = True):
    """Fig. 3 drawn from results: (panels, the median summary of every metric).

    One panel per number of points, time against d (log-log), the median over
    rows with its interquartile band, one line per method label.
    """
    from kernelbench.plotting import draw_panels

    proto = PROTOCOLS.get("walltime")
    metric = proto.metric(metric_id)
    if metric.column not in df or df[metric.column].isna().all():
        raise KernelbenchError(f"results hold no {metric.column} values to plot")
    summary = median_summary(df, list(proto.metrics))
    shown = summary[summary["metric"] == metric_id].copy()
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
    from kernelbench.plotting import save_figure, write_table

    metric_id = options.metric or "map"
    panels, summary = fig3_panels(df, metric_id, True if options.log is None else options.log)
    written = save_figure(panels.figure, out, f"fig3_walltime_{metric_id}", options.formats)
    table = summary.drop(columns=["mean", "ci_low", "ci_high"])
    intro = (
        "Median and quartiles over repetitions (map) or runs (fit, first call); one BLAS "
        "thread; the first call of each run is not among the map repetitions."
    )
    written += write_table(
        table, out, "fig3_summary", "Figure 3 summary: walltime", intro, panels.notes
    )
    return FigureOutput(written, panels.notes)


Walltime.figures = {
    "fig3": Figure(
        "fig3",
        "Munkhoeva Fig. 3: map (or fit) time vs d, log-log, median and interquartile band",
        draw_fig3,
        metrics=("map", "fit", "first"),
    )
}
Walltime.default_figures = ("fig3",)
PROTOCOLS.add("walltime", Walltime())
