"""The protocols' figures: ``kernelbench/reporting/<protocol>.py`` holds the drawing
functions that a protocol's ``figures`` name (:class:`kernelbench.cell.Figure`), and this
module what they share. What a protocol reports (metrics, headline, cell keys) is
declared on the protocol itself (:class:`kernelbench.protocols.Protocol`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kernelbench.cell import Measurement, cell_keys


@dataclass
class FigureOptions:
    """What ``kernelbench plot`` passes to a figure."""

    metric: str | None = None
    reference: bool = False
    log: bool | None = None
    formats: Sequence[str] = ("png", "pdf")


@dataclass
class FigureOutput:
    """What a figure wrote, and notes about what it left out."""

    written: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


#: draw(results of one experiment, output directory, options) -> FigureOutput
DrawFn = Callable[[pd.DataFrame, Any, FigureOptions], FigureOutput]


def summarise(
    proto: Measurement, df: pd.DataFrame, keys: Sequence[str] | None = None
) -> pd.DataFrame:
    """:func:`kernelbench.drawing.summarise` of every metric of the protocol per ``keys``
    (default: experiment and its :func:`~kernelbench.cell.cell_keys`)."""
    from kernelbench.drawing import summarise as summarise_metrics

    keys = ["experiment", *cell_keys(proto)] if keys is None else keys
    return summarise_metrics(df, keys, {m: x.column for m, x in proto.metrics.items()})


def metric_panels(
    proto: Measurement,
    df: pd.DataFrame,
    shown: pd.DataFrame,
    x: str,
    xlabel: str,
    options: FigureOptions,
) -> Any:
    """The summary ``shown`` drawn as datasets (rows, in ``df``'s order) x the protocol's
    metrics (columns, in their declared order) against ``x``."""
    from kernelbench.drawing import dataset_name, dataset_order, draw_panels

    return draw_panels(
        shown,
        row="dataset",
        col="metric",
        x=x,
        ylabel="",
        xlabel=xlabel,
        rows=[ds for ds in dataset_order(df) if ds in set(shown["dataset"])],
        cols=[m for m in proto.metrics if m in set(shown["metric"])],
        row_name=dataset_name,
        col_name=lambda m: proto.metrics[m].label,
        log=True if options.log is None else options.log,
    )


def kernel_panels(
    shown: pd.DataFrame, datasets: Sequence[str], col_title: Callable, **options: Any
) -> Any:
    """``shown`` drawn as kernels (rows) x ``datasets`` (columns titled by ``col_title``)
    against n, by :func:`kernelbench.drawing.draw_panels` with ``options``."""
    from kernelbench.drawing import dataset_name, draw_panels, kernel_name, kernel_rank

    return draw_panels(
        shown,
        row="kernel",
        col="dataset",
        x="n",
        rows=sorted(shown["kernel"].unique(), key=kernel_rank),
        cols=datasets,
        row_name=kernel_name,
        col_name=dataset_name,
        col_title=col_title,
        **options,
    )


def saved(
    panels: Any,
    out: Any,
    stem: str,
    options: FigureOptions,
    table: pd.DataFrame,
    table_stem: str,
    title: str,
    intro: str,
) -> FigureOutput:
    """Save ``panels`` as ``<stem>.<fmt>`` and ``table`` as ``<table_stem>.csv``/``.md``."""
    from kernelbench.drawing import save_figure, write_table

    written = save_figure(panels.figure, out, stem, options.formats)
    written += write_table(table, out, table_stem, title, intro, panels.notes)
    return FigureOutput(written, panels.notes)
