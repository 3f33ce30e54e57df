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

    def metric_panels(
        self, df: pd.DataFrame, shown: pd.DataFrame, x: str, xlabel: str, options: FigureOptions
    ) -> Any:
        """The summary ``shown`` drawn as datasets (rows, in ``df``'s order) x its metrics
        (columns, in :attr:`metrics`' order) against ``x``."""
        from kernelbench.drawing import dataset_name, dataset_order, draw_panels

        return draw_panels(
            shown,
            row="dataset",
            col="metric",
            x=x,
            ylabel="",
            xlabel=xlabel,
            rows=[ds for ds in dataset_order(df) if ds in set(shown["dataset"])],
            cols=[m for m in self.metrics if m in set(shown["metric"])],
            row_name=dataset_name,
            col_name=lambda m: self.metrics[m].label,
            log=True if options.log is None else options.log,
        )

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
