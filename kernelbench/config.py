"""Locate and read the Hydra config tree, from a checkout or an installed wheel, plus
the config directories of plug-in packages (:func:`config_dirs`)."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from kernelbench.errors import KernelbenchError, choices_error


@cache
def config_dir() -> Path:
    """The directory of ``config.yaml`` and the config groups: the package
    ``kernelbench.configs`` (``configs/`` of the source tree, mapped in pyproject.toml),
    found through :mod:`importlib.resources` in a wheel and an editable install alike."""
    from importlib.resources import files

    path = Path(str(files("kernelbench.configs")))
    if not (path / "config.yaml").is_file():
        raise FileNotFoundError(f"kernelbench configs not found (no config.yaml in {path})")
    return path


def config_dirs() -> list[Path]:
    """The config search path: kernelbench's :func:`config_dir`, then the ``CONFIG_DIR``
    of each plug-in module that has one (:func:`kernelbench.plugins.config_dirs`)."""
    from kernelbench.plugins import config_dirs as plugin_dirs

    main = config_dir()
    return [main, *(p for p in plugin_dirs() if p != main)]


def searchpath_overrides() -> list[str]:
    """The Hydra override that adds the plug-ins' config directories to Hydra's search
    path (``hydra.searchpath``, after kernelbench's own); [] when no plug-in has one."""
    extra = config_dirs()[1:]
    if not extra:
        return []
    return ["hydra.searchpath=[" + ",".join(f"'file://{p}'" for p in extra) + "]"]


def group_options(group: str) -> list[str]:
    """The option names of a config group (``method``, ``kernel``, ``dataset``, ...)."""
    return sorted({p.stem for d in config_dirs() for p in (d / group).glob("*.yaml")})


def config_file(group: str, name: str, kind: str | None = None) -> Path:
    """``<group>/<name>.yaml`` in the first directory of :func:`config_dirs` that has it;
    an unknown name raises one line naming the valid ones."""
    for d in config_dirs():
        path = d / group / f"{name}.yaml"
        if path.is_file():
            return path
    raise choices_error(kind or group, name, group_options(group))


def group_files(group: str) -> list[Path]:
    """The file of each option of a config group (:func:`config_file`), by option name:
    the one lookup behind every reader of a whole group (built-ins and plug-ins alike)."""
    return [config_file(group, name) for name in group_options(group)]


def config_origin(path: Path) -> str:
    """Who ships a config file: ``kernelbench`` or ``plug-in <entry point>``."""
    from kernelbench.plugins import config_dirs as plugin_dirs

    path = Path(path).resolve()
    if is_builtin(path):
        return "kernelbench"
    name = next((n for d, n in plugin_dirs().items() if path.is_relative_to(d)), None)
    return f"plug-in {name}" if name else str(path.parent)


def is_builtin(path: Path) -> bool:
    """Whether a config file is one of kernelbench's own (in :func:`config_dir`)."""
    return Path(path).resolve().is_relative_to(config_dir().resolve())


def default_option(group: str, experiment: str | None = None) -> str | None:
    """The option of ``group`` a cell gets without an override: the experiment file's
    ``override /group``, else the defaults list of ``configs/config.yaml``."""
    files = [config_dir() / "config.yaml"]
    if experiment is not None:
        files.insert(0, config_file("experiment", experiment))
    for path in files:
        for entry in _defaults(path):
            if isinstance(entry, dict):
                for k, v in entry.items():
                    if k.removeprefix("override ").strip("/ ") == group:
                        return None if v is None else str(v)
    return None


@cache
def _defaults(path: Path) -> list[Any]:
    """The defaults list of a config file (parsed once)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.load(path)).get("defaults") or []  # type: ignore[union-attr]


def load_group(group: str, name: str) -> dict[str, Any]:
    """``configs/<group>/<name>.yaml`` as a plain dict (parsed once; a deep copy each)."""
    return copy.deepcopy(_parse(config_file(group, name)))


@cache
def _parse(path: Path) -> dict[str, Any]:
    """A group file as a dict; a file whose defaults list selects structured configs of
    its group (``configs/protocol/krr.yaml``: ``[krr_settings, _self_]``, registered in
    Hydra's ConfigStore by the plug-in that defines them) is merged over them, as
    Hydra composes it."""
    from omegaconf import OmegaConf

    raw = OmegaConf.load(path)
    defaults = raw.pop("defaults", None) if hasattr(raw, "pop") else None
    if defaults:
        parts = [raw if e == "_self_" else _stored(path.parent.name, str(e)) for e in defaults]
        raw = OmegaConf.merge(*parts, *([] if "_self_" in defaults else [raw]))
    return OmegaConf.to_container(raw, resolve=True)  # type: ignore[return-value]


def _stored(group: str, name: str) -> Any:
    """The structured config ``<group>/<name>`` of Hydra's ConfigStore (the plug-in
    modules, which register them, are imported first)."""
    from hydra.core.config_store import ConfigStore
    from hydra.plugins.config_source import ConfigLoadError

    from kernelbench.plugins import load

    key = f"{group}/{name}.yaml"
    try:
        return ConfigStore.instance().load(key).node
    except ConfigLoadError:  # not registered yet: import the plug-ins
        load()
    try:
        return ConfigStore.instance().load(key).node
    except ConfigLoadError as err:
        raise KernelbenchError(
            f"defaults names {group}/{name}: no config file or registered structured config {key}"
        ) from err


def experiment_sweep(name: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """An experiment file (``configs/experiment/<name>.yaml``): its top-level values
    (experiment name, runs, ...) and its sweep (``hydra.sweeper.params``) as lists of
    override strings, in file order."""
    from omegaconf import OmegaConf

    raw = OmegaConf.load(config_file("experiment", name))
    params = OmegaConf.select(raw, "hydra.sweeper.params") or {}
    sweep = {str(k): [s.strip() for s in str(v).split(",")] for k, v in params.items()}
    top = OmegaConf.to_container(raw, resolve=False)
    top = {k: v for k, v in top.items() if k not in ("hydra", "defaults")}  # type: ignore[union-attr]
    return top, sweep


def experiment_names() -> list[str]:
    """The experiment names results carry: the ``experiment:`` of every experiment file
    (its file name where it has none), kernelbench's and the plug-ins'."""
    names = {
        str(experiment_sweep(n)[0].get("experiment") or n) for n in group_options("experiment")
    }
    return sorted(names)


def expand(sweep: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The one grid expansion: a dict per element of the product of the sweep's value
    lists, the first key outermost (Hydra's basic sweeper); keys without values left out."""
    keys = [k for k, values in sweep.items() if len(values)]
    return [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(sweep[k] for k in keys))
    ]


def experiment_grid(
    name: str,
    overrides: Sequence[str] = (),
    add: Mapping[str, Sequence[str]] | None = None,
) -> list[list[str]]:
    """The cells of an experiment file as override lists, one per cell, that compose
    (:func:`compose`) as ``kernelbench run experiment=<name> OVERRIDES`` composes its
    jobs: the file's sweep (:func:`experiment_sweep`) with the values of ``add``
    appended to its lists (a verify grid's ``add_methods``), then ``overrides``."""
    _, sweep = experiment_sweep(name)
    for key, values in (add or {}).items():
        sweep[key] = list(dict.fromkeys([*sweep.get(key, []), *values]))
    return [
        [f"experiment={name}", *(f"{k}={v}" for k, v in point.items()), *overrides]
        for point in expand(sweep)
    ]


def compose(overrides: list[str]) -> dict[str, Any]:
    """The config ``kernelbench run OVERRIDES`` composes for one job, by Hydra, as a
    plain dict (cached; a deep copy each)."""
    return copy.deepcopy(_compose(tuple(overrides)))


@cache
def _compose(overrides: tuple[str, ...]) -> dict[str, Any]:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf

    from kernelbench.errors import KernelbenchError
    from kernelbench.plugins import load

    load()  # the plug-ins register their structured configs (protocol settings)
    if GlobalHydra.instance().is_initialized():  # pragma: no cover - inside a Hydra app
        GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
            cfg = hydra_compose(
                config_name="config", overrides=[*searchpath_overrides(), *overrides]
            )
    except HydraException as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        cause = str(err.__cause__ or "").strip().splitlines()
        if cause:  # a typed setting (OmegaConf): say what is wrong with it
            first = f"{first}: {cause[0]}"
        raise KernelbenchError(first) from None
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
