"""Protocol settings as dataclasses: one schema per protocol, one place per default.

A protocol's ``Settings`` (a :class:`ProtocolSettings`) is registered as the Hydra
structured config ``protocol/<name>_settings``, which ``configs/protocol/<name>.yaml``
selects, so OmegaConf types every override; the protocol's ``check_settings`` checks
choices and ranges when the cell is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernelbench.errors import KernelbenchError


@dataclass
class ProtocolSettings:
    """What every protocol has: its ``name`` and ``data``, the entry of the dataset's
    ``splits`` (data recipes) it reads (None: the protocol's name)."""

    name: str = ""
    data: str | None = None


def store(protocol: str, settings: type[ProtocolSettings]) -> None:
    """Register ``settings`` as the structured config ``protocol/<protocol>_settings``."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(group="protocol", name=f"{protocol}_settings", node=settings)


def defaults(settings: type[ProtocolSettings]) -> dict[str, Any]:
    """The dataclass' defaults as a plain dict (fresh lists and dicts)."""
    return dataclasses.asdict(settings())


def typed(settings: type[ProtocolSettings], values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` over the dataclass' defaults, typed by OmegaConf as Hydra types them
    (``1`` for a float setting becomes ``1.0``); a wrong type is one line."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        merged = OmegaConf.merge(OmegaConf.structured(settings), dict(values))
    except OmegaConfBaseException as err:
        key = str(getattr(err, "full_key", "") or "")
        types = {f.name: f.type for f in dataclasses.fields(settings)}
        if key in types:
            raise KernelbenchError(
                f"{key} must be {types[key]}, got {values.get(key)!r} "
                f"(protocol {values.get('name')!r})"
            ) from None
        first = str(err).strip().splitlines()[0]
        raise KernelbenchError(f"protocol {values.get('name')!r}: {first}") from None
    return OmegaConf.to_container(merged, resolve=True)  # type: ignore[return-value]
