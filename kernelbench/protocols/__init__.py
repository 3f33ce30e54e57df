"""Experiment protocols, one module per protocol, registered by name.

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

Adding a protocol (as an Objective in benchopt) is one module (a :class:`Protocol`
subclass registered in :data:`PROTOCOLS`: how a cell is measured), its reporting side
(``kernelbench/reporting/<name>.py``: metrics, figures, reference cells; registered in
:data:`kernelbench.reporting.REPORTING` under the same name), and
``configs/protocol/<name>.yaml`` with its settings.

Its contract (:class:`kernelbench.cell.Measurement`) is eight names: ``name``;
``Settings``, its settings dataclass (selected by ``configs/protocol/<name>.yaml``);
``spec``, its declarations (:class:`kernelbench.cell.Spec`: columns, the settings that
identify a cell, ...), from which the cell layer derives the row schema, shard path
parts, row and cell keys; ``check_settings``; ``check`` (before any data is loaded);
``prepare`` (what every run shares); ``cell_columns``; ``measure`` (the rows of a batch
of runs). The measuring helpers every protocol shares are functions of a cell in
:mod:`kernelbench.protocols.common`. The runner (:mod:`kernelbench.experiment`) only
calls these hooks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from kernelbench.cell import PROTOCOLS, Spec, get_protocol, protocol_name
from kernelbench.errors import choices_error
from kernelbench.protocols.common import BUDGETS, check_map, exact_pair
from kernelbench.settings import ProtocolSettings, store, typed

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell

__all__ = ["PROTOCOLS", "Protocol", "get_protocol", "protocol_name"]

#: A protocol's settings dataclass.
S = TypeVar("S", bound=ProtocolSettings)


class Protocol(Generic[S]):
    """Base class of the protocols (see the module docstring); ``S`` is its settings
    dataclass (:attr:`Settings`), read from a cell as ``cell.options``."""

    #: registry id, the stem of configs/protocol/<name>.yaml
    name: ClassVar[str] = ""
    #: the settings' schema and defaults (:mod:`kernelbench.settings`)
    Settings: ClassVar[type[ProtocolSettings]] = ProtocolSettings
    #: the declarations of its cells and rows
    spec: ClassVar[Spec] = Spec()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Registers ``Settings`` as the structured config ``protocol/<name>_settings``."""
        super().__init_subclass__(**kwargs)
        if "Settings" in cls.__dict__ and cls.name:
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

    def check(self, cell: Cell) -> None:
        """Validate what can be checked before loading data (method, kernel, settings)."""
        check_map(cell)

    def prepare(self, cell: Cell) -> Any:
        """Load the data and compute what every run of the cell shares (default: the
        sample pair of :func:`kernelbench.protocols.common.exact_pair`)."""
        return exact_pair(cell)

    def cell_columns(self, cell: Cell, ctx: Any) -> dict[str, Any]:
        """Columns with one value per cell: at least d, data_source and data_deviation
        (default: those of the sample pair)."""
        return ctx.columns()

    def measure(self, cell: Cell, ctx: Any, runs: Sequence[int]) -> list[dict]:
        """The rows of ``runs`` in order, run r's map drawn from
        :func:`kernelbench.protocols.common.run_rng`: D, n_features, fit_seconds,
        transform_seconds and the protocol's columns, one row per run, or several rows
        per run that each name their ``run`` (e.g. one per iteration). Rows do not
        depend on how runs are batched. Default: the rows of each run's ``_run``."""
        return [row for run in runs for row in self._run(cell, ctx, run)]

    def _run(self, cell: Cell, ctx: Any, run: int) -> list[dict]:
        """The rows of run ``run`` (see :meth:`measure`)."""
        raise NotImplementedError
