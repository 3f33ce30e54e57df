"""Locate and read the Hydra config tree, from a checkout or an installed wheel."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

from kernelbench.errors import choices_error


@cache
def config_dir() -> Path:
    """The directory holding ``config.yaml`` and the config groups.

    In a wheel the top-level ``configs/`` is installed as the package
    ``kernelbench.configs``; in a checkout (editable install or bare source) it
    is ``<repo>/configs``.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "configs", here.parent / "configs"):
        if (candidate / "config.yaml").is_file():
            return candidate
    try:  # editable installs map the package through an import hook
        from importlib.resources import files

        res = Path(str(files("kernelbench.configs")))
        if (res / "config.yaml").is_file():
            return res
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        pass
    raise FileNotFoundError("kernelbench configs not found (looked next to the package)")


def group_options(group: str) -> list[str]:
    """The option names of a config group (``method``, ``kernel``, ``dataset``, ...)."""
    return sorted(p.stem for p in (config_dir() / group).glob("*.yaml"))


def load_group(group: str, name: str) -> dict[str, Any]:
    """Read ``configs/<group>/<name>.yaml`` as a plain dict (interpolations resolved).

    Each file is parsed once per process; callers get their own deep copy.
    """
    path = config_dir() / group / f"{name}.yaml"
    if not path.is_file():
        raise choices_error(group, name, group_options(group))
    return copy.deepcopy(_parse(path))


@cache
def _parse(path: Path) -> dict[str, Any]:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.load(path), resolve=True)  # type: ignore[return-value]
