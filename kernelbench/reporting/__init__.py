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
from kernelbench.errors import KernelbenchError


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


def spec_output(
    summary: pd.DataFrame,
    spec: Any,
    out: Any,
    stem: str,
    options: FigureOptions,
    table: tuple[str, str, str],
    notes: Sequence[str] = (),
    drawn: pd.DataFrame | None = None,
) -> FigureOutput:
    """``drawn`` (default ``summary``) drawn by its figure spec
    (:func:`kernelbench.figspec.draw`, as the site draws it; ``options.log`` sets the y
    scale) into ``<stem>.<fmt>``, one file per value of the spec's ``pages``
    (``<stem>_<value>``), and ``summary`` written as ``table`` = (stem, title, intro)."""
    from dataclasses import replace

    from kernelbench.drawing import save_figure, write_table
    from kernelbench.figspec import build, draw

    if options.log is not None:
        spec = replace(spec, logy=options.log)
    figures = build(summary if drawn is None else drawn, spec, stem)
    if not figures:
        raise KernelbenchError(f"results hold no {spec.y} values to draw for {stem}")
    written, notes = [], list(notes)
    for fig in figures:
        page = " · ".join(map(str, fig.page))
        notes += [f"{page}: {note}" if page else note for note in fig.notes()]
        name = "_".join([stem, *map(str, fig.page)])
        written += save_figure(draw(fig), out, name, options.formats)
    written += write_table(summary, out, *table, notes)
    return FigureOutput(written, notes)
