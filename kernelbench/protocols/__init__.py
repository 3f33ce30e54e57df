"""Experiment protocols, one module per protocol, registered by name.

============== ==================================================================
name           what a cell measures
============== ==================================================================
kernel_approx  relative Frobenius/spectral Gram errors (Munkhoeva et al. 2018, Fig. 1)
downstream     test accuracy / R^2 of a learner on the features (Munkhoeva et al., Fig. 2)
============== ==================================================================

Adding a protocol is one module here (a :class:`Protocol` subclass registered in
:data:`PROTOCOLS`), its name in ``PROTOCOL_MODULES``, and
``configs/protocol/<name>.yaml`` with its settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from kernelbench.protocols.base import Figure, FigureOptions, FigureOutput, Metric, Protocol
from kernelbench.registry import Registry

PROTOCOLS: Registry[Protocol] = Registry("protocol")

#: Protocol modules; each registers its protocol.
PROTOCOL_MODULES = ("kernel_approx", "downstream")
for _module in PROTOCOL_MODULES:
    import_module(f"kernelbench.protocols.{_module}")


def get_protocol(cell_or_name: Mapping[str, Any] | str) -> Protocol:
    """The protocol of a cell (its ``protocol.name``) or of a name."""
    if isinstance(cell_or_name, str):
        return PROTOCOLS.get(cell_or_name)
    proto = cell_or_name.get("protocol", "kernel_approx")
    name = proto.get("name") if isinstance(proto, Mapping) else proto
    return PROTOCOLS.get(name)


__all__ = [
    "PROTOCOLS",
    "PROTOCOL_MODULES",
    "Figure",
    "FigureOptions",
    "FigureOutput",
    "Metric",
    "Protocol",
    "get_protocol",
]
