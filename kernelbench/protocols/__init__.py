"""Experiment protocols, one module per protocol, each a :class:`Protocol` registered by
its name.

=============== ==================================================================
name            what a cell measures
=============== ==================================================================
kernel_approx   relative Frobenius/spectral Gram errors (Munkhoeva et al. 2018, Fig. 1)
variance_ratio  Var(method) / Var(RFF) for synthetic pairs at distance z sigma
                (Yu et al. 2016, Fig. 2); one row per (run, z)
pair_mse        kernel MSE over pairs, d zero-padded to a power of two, against D/d
                (Yu et al. 2016, Figs. 4 and 5(c))
qmc_adaptive    box discrepancy and Gram errors per CG iteration of adaptive QMC
                (Yang et al. 2014, Fig. 4); one row per (run, iteration)
qmc_discrepancy box discrepancy of the frequencies beside the Gram errors
                (Yang et al. 2014, Fig. 3)
walltime        fit and map time on a few points, one thread (Munkhoeva et al. 2018, Fig. 3)
krr             KRR test accuracy and feature time (Liu et al. 2020, Table 3, Fig. 1)
downstream      test accuracy / R^2 of a learner on the features (Munkhoeva et al., Fig. 2)
=============== ==================================================================

Adding a protocol (as an Objective in benchopt) is one class and
``configs/protocol/<name>.yaml`` with its settings. Defining a :class:`Protocol`
subclass with a ``name`` registers it under that name, once. Its contract
(:class:`kernelbench.cell.Measurement`):

- declarations, class attributes: ``name``, ``Settings`` (its settings dataclass),
  ``columns`` (its own row columns), ``keys`` and ``index`` (what identifies a cell and
  a row besides dataset, kernel, method and n), ``budget``, ``batch``, ``extendable``,
  ``data_runs``; what it reports: ``metrics``, ``headline`` and ``figures`` (drawn by
  ``kernelbench plot``, named ``module:function`` so that nothing here imports a
  renderer);
- hooks: ``check_settings``, ``skip`` (why it cannot measure a cell, before any data is
  loaded), ``prepare`` (what every run shares), ``cell_columns``, ``run`` (the rows of
  one run), ``measure`` (the rows of a batch of runs: default, ``run`` per run) and
  ``read_reference`` (a paper's table as cells) and ``price`` (what a cell costs before it
  runs, counted in the terms of :mod:`kernelbench.cost`; default: a sample pair's).

The measuring helpers every protocol shares are functions of a cell in
:mod:`kernelbench.protocols.common`. The runner (:mod:`kernelbench.experiment`), verify,
the plan and the output commands read only this contract.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import pyarrow as pa

from kernelbench.cell import PROTOCOLS, Figure, Measurement, Metric, get_protocol, protocol_name
from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.protocols.common import BUDGETS, check_map, exact_pair
from kernelbench.settings import ProtocolSettings, store, typed

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from kernelbench.cell import Cell
    from kernelbench.cost import Work

__all__ = [
    "PROTOCOLS",
    "Figure",
    "Metric",
    "Protocol",
    "figure_of",
    "get_protocol",
    "metric_of",
    "protocol_name",
    "reference_cells",
]

#: A protocol's settings dataclass.
S = TypeVar("S", bound=ProtocolSettings)

#: The relative Gram errors, reported by the protocols that record them.
REL_FRO = Metric("rel_fro_error", r"$\|K - \hat K\|_F \,/\, \|K\|_F$", short="rel_fro")
REL_SPEC = Metric("rel_spec_error", r"$\|K - \hat K\|_2 \,/\, \|K\|_2$", short="rel_spec")


class Protocol(Generic[S]):
    """Base class of the protocols (see the module docstring); ``S`` is its settings
    dataclass (:attr:`Settings`), read from a cell as ``cell.options``."""

    #: registry id, the stem of configs/protocol/<name>.yaml
    name: ClassVar[str] = ""
    #: the settings' schema and defaults (:mod:`kernelbench.settings`)
    Settings: ClassVar[type[ProtocolSettings]] = ProtocolSettings
    #: its own columns of a row, between the common cell and provenance ones
    columns: ClassVar[tuple[tuple[str, pa.DataType], ...]] = ()
    #: settings that identify a cell beside dataset, kernel, method and n (e.g. the
    #: learner): each a shard path level ``<key>=<value>``, a row column and a cell key
    keys: ClassVar[tuple[str, ...]] = ()
    #: columns that tell apart the rows of one run (e.g. an iteration)
    index: ClassVar[tuple[str, ...]] = ()
    #: what the cell's n counts where its settings name no ``budget``: ``n``
    #: (D = 2 n (d + 1)), ``s`` (D = s, Yang et al. 2014) or ``d`` (D = n d)
    budget: ClassVar[str] = "n"
    #: runs measured by one :meth:`measure` call (progress is per batch)
    batch: ClassVar[int] = 1
    #: whether a shard with fewer runs may be extended (run r's row depends on r alone)
    extendable: ClassVar[bool] = True
    #: whether ``runs: null`` takes the dataset's data settings' runs before the protocol's
    data_runs: ClassVar[bool] = True
    #: metric id -> Metric: what verify compares, the plan summarises and figures show
    metrics: ClassVar[Mapping[str, Metric]] = {}
    #: the metric of the one-line summary after each cell and of a baseline table
    headline: ClassVar[str] = ""
    #: its figures (``kernelbench plot`` draws them all unless given --figure)
    figures: ClassVar[tuple[Figure, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that sets ``name`` is registered under it: its ``Settings`` as the
        structured config ``protocol/<name>_settings``, an instance in :data:`PROTOCOLS`."""
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and cls.name:
            PROTOCOLS.add(cls.name, cast(Measurement, cls()))
            store(cls.name, cls.Settings)

    def _opts(self, cell: Cell) -> S:
        return cast(S, cell.options)

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The settings validated (unknown keys are one-line errors), those left out
        filled from ``Settings`` and typed as Hydra types them; a ``budget`` must be one
        of :data:`BUDGETS`, its default dropped (a cell's settings and hash are those
        without it). Called once per cell, when it is built."""
        from kernelbench.validation import check_params

        valid = {f.name for f in dataclasses.fields(self.Settings)} - {"name"}
        check_params(f"protocol {self.name!r}", set(settings) - {"name"}, valid, "setting")
        out = typed(self.Settings, settings)
        if "budget" in out:
            if out["budget"] not in BUDGETS:
                raise choices_error(f"budget of protocol {self.name!r}", out["budget"], BUDGETS)
            if out["budget"] == BUDGETS[0]:
                del out["budget"]
        return out

    def skip(self, cell: Cell) -> str | None:
        """Why the protocol cannot measure the cell (one line: a kernel or method it does
        not take), else None; checked before any data is loaded. Default: the method's
        parameters are validated, and a map whose fit needs the labels is refused."""
        return self._check_map(cell)

    def _check_map(self, cell: Cell, params: dict | None = None) -> str | None:
        """:func:`~kernelbench.protocols.common.check_map` (kernel ``params``, default the
        cell's), and the reason to refuse a map whose fit needs the labels."""
        if check_map(cell, params).needs_labels:
            return (
                f"method {cell.method['name']!r} is supervised (its fit needs the labels y); "
                f"protocol {self.name!r} fits maps without labels: use protocol 'krr'"
            )
        return None

    def prepare(self, cell: Cell) -> Any:
        """Load the data and compute what every run of the cell shares (default: the
        sample pair of :func:`kernelbench.protocols.common.exact_pair`)."""
        return exact_pair(cell)

    def cell_columns(self, cell: Cell, ctx: Any) -> dict[str, Any]:
        """Columns with one value per cell: at least d, data_source and data_deviation
        (default: those of the sample pair)."""
        return ctx.columns()

    def measure(self, cell: Cell, ctx: Any, runs: Sequence[int]) -> list[dict]:
        """The rows of ``runs`` in order (default: those of :meth:`run`, run by run).
        Rows do not depend on how runs are batched."""
        return [row for r in runs for row in self.run(cell, ctx, r)]

    def run(self, cell: Cell, ctx: Any, run: int) -> list[dict]:
        """The rows of run ``run``, its map drawn from
        :func:`kernelbench.protocols.common.run_rng`: D, n_features, fit_seconds,
        transform_seconds and the protocol's columns; one row, or several that each name
        their ``run`` (e.g. one per iteration)."""
        raise NotImplementedError

    def price(self, cell: Cell) -> Work:
        """What the cell costs before it runs (:mod:`kernelbench.cost`, the plan line):
        its shapes and the protocol's work besides its maps, as counts of the cost
        model's terms (:class:`~kernelbench.cost.Work`). Default: the sample pair of the
        default :meth:`prepare` (:func:`~kernelbench.cost.pair_work`: K once, per run the
        map of X and Y, K_hat and its error's spectral norm), so a protocol without
        pricing code gets a finite price; one whose runs do other work overrides it."""
        from kernelbench.cost import pair_work
        from kernelbench.protocols.common import pair_shapes

        return pair_work(cell, pair_shapes(cell))

    def read_reference(self, table: pd.DataFrame) -> pd.DataFrame:
        """A reference table as cells (:func:`reference_cells`); default: as it is."""
        return table


def metric_of(proto: Measurement, metric_id: str | None) -> Metric:
    """A protocol's metric by id (None: its headline); one line naming them if unknown."""
    metric_id = metric_id or proto.headline
    if metric_id not in proto.metrics:
        raise choices_error(f"metric of protocol {proto.name!r}", metric_id, proto.metrics)
    return proto.metrics[metric_id]


def figure_of(proto: Measurement, name: str) -> Figure:
    """A protocol's figure by name; one line naming them if unknown."""
    found = {f.name: f for f in proto.figures}
    if name not in found:
        raise choices_error(f"figure of protocol {proto.name!r}", name, found)
    return found[name]


def reference_cells(proto: Measurement, name: str, table: pd.DataFrame) -> pd.DataFrame:
    """The reference table ``name`` read as the protocol's cells
    (:meth:`Protocol.read_reference`): its cell keys (``method`` for ``method_label``)
    with mean, std and runs, in the units of our rows; one line for a missing column."""
    from kernelbench.cell import cell_keys

    table = proto.read_reference(table)
    need = {k if k != "method_label" else "method" for k in cell_keys(proto)}
    missing = sorted((need | {"mean", "std", "runs"}) - set(table.columns))
    if missing:
        raise KernelbenchError(f"reference {name!r} lacks the column(s) {', '.join(missing)}")
    return table
