"""Outputs of any experiment from its rows and its protocol's declarations (metrics,
headline, cell keys: :class:`kernelbench.protocols.Protocol`): an experiment's protocol,
its variants, per-cell summaries of every metric, and what a figure function returns
(:func:`spec_output`: its figures built from a :class:`~kernelbench.outputs.spec.FigureSpec`
and its table written; the renderer draws them, :func:`kernelbench.outputs.render.finish`).
The figure functions the protocols name live in their papers' modules
(:mod:`kernelbench.outputs.papers`); a plug-in protocol's may be its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from kernelbench.cell import Measurement, cell_keys
from kernelbench.errors import KernelbenchError
from kernelbench.outputs.spec import FigureSpec, SpecFigure, build
from kernelbench.outputs.style import summarise as summarise_metrics
from kernelbench.outputs.style import write_table
from kernelbench.protocols import Protocol, get_protocol, metric_of
from kernelbench.results import variant_labels
from kernelbench.stats import aggregate


@dataclass
class FigureOptions:
    """What ``kernelbench plot`` passes to a figure."""

    metric: str | None = None
    reference: bool = False
    log: bool | None = None
    formats: Sequence[str] = ("png", "pdf")


@dataclass
class FigureOutput:
    """What a figure wrote, notes about what it left out, and the figures still to draw
    (``pending``: figure, directory, file stem, formats; drawn by the renderer,
    :func:`kernelbench.outputs.render.finish`, their files listed first)."""

    written: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pending: list[tuple[SpecFigure, Any, str, Sequence[str]]] = field(default_factory=list)


def summarise(
    proto: Measurement, df: pd.DataFrame, keys: Sequence[str] | None = None
) -> pd.DataFrame:
    """:func:`kernelbench.outputs.style.summarise` of every metric of the protocol per ``keys``
    (default: experiment and its :func:`~kernelbench.cell.cell_keys`)."""
    keys = ["experiment", *cell_keys(proto)] if keys is None else keys
    return summarise_metrics(df, keys, {m: x.column for m, x in proto.metrics.items()})


def spec_output(
    summary: pd.DataFrame,
    spec: FigureSpec,
    out: Any,
    stem: str,
    options: FigureOptions,
    table: tuple[str, str, str],
    notes: Sequence[str] = (),
    drawn: pd.DataFrame | None = None,
) -> FigureOutput:
    """``drawn`` (default ``summary``) built by its figure spec (``options.log`` sets the
    y scale) into figures to draw as ``<stem>.<fmt>``, one per value of the spec's
    ``pages`` (``<stem>_<value>``), and ``summary`` written as ``table`` = (stem, title,
    intro) with the figures' notes."""
    if options.log is not None:
        spec = replace(spec, logy=options.log)
    figures = build(summary if drawn is None else drawn, spec, stem)
    if not figures:
        raise KernelbenchError(f"results hold no {spec.y} values to draw for {stem}")
    pending, notes = [], list(notes)
    for fig in figures:
        page = " · ".join(map(str, fig.page))
        notes += [f"{page}: {note}" if page else note for note in fig.notes()]
        pending.append((fig, out, "_".join([stem, *map(str, fig.page)]), options.formats))
    written = write_table(summary, out, *table, notes)
    return FigureOutput(written, notes, pending)


def experiment_protocol(df: pd.DataFrame, experiment: str) -> Protocol:
    """The protocol of an experiment's rows (shards without the column: kernel_approx)."""
    found = df["protocol"].dropna().astype(str).unique() if "protocol" in df.columns else []
    names = sorted(found) or ["kernel_approx"]
    if len(names) > 1:
        raise KernelbenchError(
            f"experiment {experiment!r} mixes protocols ({', '.join(names)}); "
            "give each protocol its own experiment name"
        )
    return get_protocol(names[0])


def split_variants(rows: pd.DataFrame, proto: Measurement) -> tuple[pd.DataFrame, list[str]]:
    """``rows`` with what differs between cells of one method label (seed, parameters,
    settings: :func:`~kernelbench.results.variant_labels`) appended to ``method_label``,
    and the settings that differ."""
    fixed = ("experiment", "dataset", "kernel", "method_label")
    own = cell_keys(proto)
    keys = [*fixed, *(k for k in own if k not in (*fixed, "n"))]
    variant = variant_labels(rows, keys, exclude=(*own, "runs"))
    if not (variant != "").any():
        return rows, []
    varied = sorted({part.split("=")[0] for text in variant for part in text.split() if part})
    labels = [f"{m} {v}" if v else m for m, v in zip(rows["method_label"], variant, strict=True)]
    return rows.assign(method_label=labels), varied


def headline_cells(df: pd.DataFrame) -> Iterator[tuple[str, Measurement, pd.DataFrame]]:
    """Per experiment of ``df`` (rows of any protocols): its protocol and its headline
    metric per cell over runs (:func:`kernelbench.stats.aggregate`; the variants of a
    method label told apart, :func:`split_variants`), with a ``metric`` column naming it."""
    for exp, rows in df.groupby("experiment", sort=True):
        proto = experiment_protocol(rows, str(exp))
        rows, _ = split_variants(rows, proto)
        metric = metric_of(proto, None)
        keys = [k for k in ("experiment", "dataset", "kernel", "method_label", "n") if k in rows]
        yield str(exp), proto, aggregate(rows, keys, metric.column).assign(metric=metric.column)


#: The method every ratio is taken against.
BASE_METHOD = "rff"
#: Two-sided normal quantile of the drawn intervals (95%).
Z95 = 1.959963984540054


def ratio_table(df: pd.DataFrame, spec: FigureSpec, base: str = BASE_METHOD) -> pd.DataFrame:
    """Every cell's mean over ``base``'s mean in the same cell (same facets, kernel and x),
    with a 95% interval from the delta method on the log ratio:
    exp(±1.96 sqrt((sem_m / mean_m)^2 + (sem_b / mean_b)^2)). Empty without ``base``."""
    df = spec.select(df)
    if df.empty or base not in set(df["method_label"]) or spec.y not in df:
        return pd.DataFrame()
    keys = [c for c in (*spec.pages, spec.rows, spec.cols, "kernel", spec.x) if c and c in df]
    keys = list(dict.fromkeys(keys))
    sem = df["sem"] if "sem" in df else pd.Series(np.nan, index=df.index)
    t = df.assign(_sem=sem)[[*keys, "method_label", spec.y, "_sem"]]
    b = t[t["method_label"] == base].drop(columns="method_label")
    b = b.rename(columns={spec.y: "_base", "_sem": "_base_sem"})
    m = t[t["method_label"] != base].merge(b, on=keys, how="inner")
    ratio = m[spec.y] / m["_base"]
    half = Z95 * np.sqrt((m["_sem"] / m[spec.y]) ** 2 + (m["_base_sem"] / m["_base"]) ** 2)
    out = m[[*keys, "method_label"]].copy()
    out["ratio"] = ratio
    out["ratio_low"] = ratio * np.exp(-half)
    out["ratio_high"] = ratio * np.exp(half)
    x = spec.xlabel.split(" (")[0].split(" =")[0]  # the x as the figure names it: s/d, D/d
    out = out.rename(columns={spec.x: x}) if x and x not in out else out
    return out[np.isfinite(out["ratio"])].reset_index(drop=True)
