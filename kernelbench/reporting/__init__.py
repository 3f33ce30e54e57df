"""The reporting side of the protocols, one module per protocol, registered by name.

Each ``kernelbench/reporting/<protocol>.py`` holds a :class:`Reporting` subclass (metrics,
headline, figures, reference cells) registered in :data:`REPORTING` under its
protocol's name; the measurement side is :mod:`kernelbench.protocols`. ``kernelbench
plot``, ``verify``, ``report`` and ``baseline`` find a protocol's reporting here by name
(:func:`get_reporting`) and draw, compare and summarise through it alone.
"""

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
]
