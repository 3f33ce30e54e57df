"""The reporting side of the protocols: one :class:`Reporting` per protocol in
``kernelbench/reporting/<protocol>.py``, registered in :data:`REPORTING` by its name.

Its contract (the measurement side is :class:`kernelbench.protocols.Protocol`, same
name): its metrics and headline, how a reference table reads as cells
(:meth:`Reporting.reference_cells`) and its figures. ``kernelbench plot``, ``verify``,
``report`` and ``baseline`` read only this contract and never branch on the protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.protocols import protocol_name
from kernelbench.registry import Registry


@dataclass(frozen=True)
class Metric:
    """A measured quantity: its column and axis label."""

    column: str
    label: str
    #: short name in one-line summaries
    short: str = ""


#: The relative Gram errors, shared by the protocols that record them.
REL_FRO = Metric("rel_fro_error", r"$\|K - \hat K\|_F \,/\, \|K\|_F$", short="rel_fro")
REL_SPEC = Metric("rel_spec_error", r"$\|K - \hat K\|_2 \,/\, \|K\|_2$", short="rel_spec")


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


@dataclass(frozen=True)
class Figure:
    """A figure or table drawn from a protocol's results (``kernelbench plot --figure``)."""

    name: str
    help: str
    draw: DrawFn
    #: metric ids (keys of the reporting's ``metrics``) the figure can show; first = default
    metrics: tuple[str, ...] = ()


@dataclass
class Reporting:
    """A protocol's reporting side (see the module docstring), registered with
    :func:`kernelbench.reporting.register`."""

    #: the protocol's registry id
    name: str = ""
    #: metric id -> Metric
    metrics: dict[str, Metric] = field(default_factory=dict)
    #: the metric of the one-line summary printed after each cell
    headline: str = ""
    #: figure name -> Figure
    figures: dict[str, Figure] = field(default_factory=dict)
    #: figures drawn when ``kernelbench plot`` is given no --figure
    default_figures: tuple[str, ...] = ()

    @property
    def cell_keys(self) -> tuple[str, ...]:
        """The columns that identify a cell in aggregated tables: the protocol's own
        declaration (:func:`kernelbench.cell.cell_keys`)."""
        from kernelbench.cell import cell_keys, get_protocol

        return cell_keys(get_protocol(self.name))

    def reference_cells(self, name: str, table: pd.DataFrame) -> pd.DataFrame:
        """A reference table as ``cell_keys`` (with ``method`` for ``method_label``) plus
        mean, std and runs, in the units of our rows."""
        need = {*(k if k != "method_label" else "method" for k in self.cell_keys)}
        need |= {"mean", "std", "runs"}
        missing = sorted(need - set(table.columns))
        if missing:
            raise KernelbenchError(f"reference {name!r} lacks the column(s) {', '.join(missing)}")
        return table

    def summarise(self, df: pd.DataFrame, keys: Sequence[str] | None = None) -> pd.DataFrame:
        """:func:`kernelbench.drawing.summarise` of every metric per ``keys`` (default:
        experiment and :attr:`cell_keys`)."""
        from kernelbench.drawing import summarise

        keys = ["experiment", *self.cell_keys] if keys is None else keys
        return summarise(df, keys, {m: x.column for m, x in self.metrics.items()})

    def metric(self, metric_id: str | None) -> Metric:
        """A metric by id (None: the headline)."""
        metric_id = metric_id or self.headline
        if metric_id not in self.metrics:
            raise choices_error(f"metric of protocol {self.name!r}", metric_id, self.metrics)
        return self.metrics[metric_id]

    def figure(self, name: str) -> Figure:
        """A figure by name (one line naming the figures if unknown)."""
        if name not in self.figures:
            raise choices_error(f"figure of protocol {self.name!r}", name, self.figures)
        return self.figures[name]


#: The protocols' reporting sides by protocol name; each plug-in module registers its own.
REPORTING: Registry[Reporting] = Registry("protocol reporting")


def get_reporting(cell_or_name: Mapping[str, Any] | str) -> Reporting:
    """The reporting side of a protocol, by name or by a cell's ``protocol.name``."""
    return REPORTING.get(protocol_name(cell_or_name))


def register(reporting: Reporting, *figures: Figure, default: tuple[str, ...] = ()) -> None:
    """Register ``reporting`` with ``figures`` (drawn by default: ``default``, else all)."""
    reporting.figures = {f.name: f for f in figures}
    reporting.default_figures = default or tuple(reporting.figures)
    REPORTING.add(reporting.name, reporting)


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
