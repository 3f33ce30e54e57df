"""The reporting side of the protocols: one :class:`Reporting` per protocol in
``kernelbench/reporting/<protocol>.py``, registered in :data:`REPORTING` by its name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelbench.protocols import protocol_name
from kernelbench.registry import Registry
from kernelbench.reporting.base import (
    REL_FRO,
    REL_SPEC,
    Figure,
    FigureOptions,
    FigureOutput,
    Metric,
    Reporting,
)

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


__all__ = [
    "REL_FRO",
    "REL_SPEC",
    "REPORTING",
    "Figure",
    "FigureOptions",
    "FigureOutput",
    "Metric",
    "Reporting",
    "get_reporting",
    "register",
]
