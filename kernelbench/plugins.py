"""Plug-ins: modules named by entry points of the group ``kernelbench.plugins``.

kernelbench's own modules are found as other packages' are (docs/plugins.md): each
entry point names a module that registers what it defines when imported; they are
imported once, the first time a registry is queried, kernelbench's first (its one
entry point, :mod:`kernelbench.builtin`). A module may set ``CONFIG_DIR``, a directory
laid out like ``configs/``, appended to the config search path after kernelbench's.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from types import ModuleType

from kernelbench.errors import KernelbenchError

#: The entry-point group scanned for plug-in modules.
GROUP = "kernelbench.plugins"
#: The distribution whose entry points are the built-in plug-ins.
BUILTIN = "kernelbench"

_loaded: list[tuple[metadata.EntryPoint, ModuleType]] | None = None
_loading = False
#: entry-point name -> the one line saying why that plug-in cannot be used
_broken: dict[str, str] = {}
_tolerant = False


def _dist_name(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) or ""
    return name.lower().replace("_", "-")


@functools.cache
def entry_points() -> tuple[metadata.EntryPoint, ...]:
    """The entry points of :data:`GROUP`, kernelbench's first, by distribution and name
    (the metadata scanned once per process)."""
    eps = metadata.entry_points(group=GROUP)
    return tuple(sorted(eps, key=lambda ep: (_dist_name(ep) != BUILTIN, _dist_name(ep), ep.name)))


@contextlib.contextmanager
def tolerant() -> Iterator[dict[str, str]]:
    """Inside, a plug-in that fails to load is left out (and recorded in the dict
    yielded: entry-point name -> problem) instead of failing the query, so that
    ``kernelbench list`` can show the others and name the broken ones."""
    global _tolerant
    before, _tolerant = _tolerant, True
    try:
        yield _broken
    finally:
        _tolerant = before


def _raise_broken() -> None:
    if _broken and not _tolerant:
        raise KernelbenchError(next(iter(_broken.values())))


def load() -> list[tuple[metadata.EntryPoint, ModuleType]]:
    """Import every plug-in module once (re-entrant: a query made while the modules are
    being imported sees what is registered so far) and return them with their entry
    points. A plug-in that fails to import is one line naming it (outside
    :func:`tolerant`)."""
    global _loaded, _loading
    if _loaded is not None:
        _raise_broken()
        return _loaded
    if _loading:
        return []
    _loading = True
    try:
        eps = entry_points()
        if not any(_dist_name(ep) == BUILTIN for ep in eps):
            raise KernelbenchError(
                f"no {GROUP!r} entry points of kernelbench found: install the package "
                "(pip install -e .) so that its metadata lists its built-in plug-ins"
            )
        loaded = []
        for ep in eps:
            try:
                loaded.append((ep, _import(ep)))
            except KernelbenchError as err:
                if _dist_name(ep) == BUILTIN:
                    raise
                _broken.setdefault(ep.name, str(err))
        _loaded = loaded
    finally:
        _loading = False
    _raise_broken()
    return _loaded


def _import(ep: metadata.EntryPoint) -> ModuleType:
    """The module an entry point names, imported (one line if it fails or is no module)."""
    try:
        module = ep.load()
    except KernelbenchError:
        raise
    except Exception as err:
        where = _dist_name(ep) or "?"
        raise KernelbenchError(
            f"plug-in {ep.name} = {ep.value} (from {where}) failed to load: "
            f"{type(err).__name__}: {err}"
        ) from err
    if not isinstance(module, ModuleType):
        raise KernelbenchError(
            f"plug-in {ep.name} = {ep.value}: an entry point of {GROUP!r} names a "
            "module, not an object"
        )
    return module


def import_package(name: str) -> list[ModuleType]:
    """Import the module or package ``name`` and, for a package, every module in it
    (``pkgutil.iter_modules``, sorted by name; not subpackages, nor names starting with
    ``_``): each registers what it defines as it is imported."""
    package = importlib.import_module(name)
    modules = [package]
    for info in sorted(
        pkgutil.iter_modules(getattr(package, "__path__", [])), key=lambda i: i.name
    ):
        if not info.ispkg and not info.name.startswith("_"):
            modules.append(importlib.import_module(f"{name}.{info.name}"))
    return modules


def config_dirs() -> dict[Path, str]:
    """The ``CONFIG_DIR`` of every plug-in module that sets one, in load order, with the
    name of its entry point (the first, if several share one).

    kernelbench's own modules keep their configs in its ``configs/`` and are not
    imported for this (so that listing config options, e.g. for an argument error,
    does not import every feature map); the other packages' modules are."""
    out: dict[Path, str] = {}
    for ep in entry_points():
        if _dist_name(ep) == BUILTIN or ep.name in _broken:
            continue
        try:
            value = getattr(_import(ep), "CONFIG_DIR", None)
        except KernelbenchError as err:
            _broken.setdefault(ep.name, str(err))
            continue
        if value is None:
            continue
        path = Path(value).resolve()
        if not path.is_dir():
            _broken.setdefault(
                ep.name, f"plug-in {ep.name}: CONFIG_DIR {str(path)!r} is not a directory"
            )
            continue
        out.setdefault(path, ep.name)
    _raise_broken()
    return out
