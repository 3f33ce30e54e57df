"""The tables kernelbench ships as package data, found through :mod:`importlib.resources`
(never by walking up from a module's path): the committed baselines (``results/baseline``
of the source tree, the package ``kernelbench.baseline_data``) and the papers' reference
tables (``results/reference``, ``kernelbench.reference_data``); pyproject.toml maps each
directory to its package, for a wheel and an editable install alike."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from kernelbench.errors import KernelbenchError

#: the source tree's directory of each data package (what docs and configs call it)
PACKAGES = {
    "results/baseline": "kernelbench.baseline_data",
    "results/reference": "kernelbench.reference_data",
}


@cache
def data_dir(tree: str) -> Path:
    """The installed directory of the data package of ``tree`` (a key of
    :data:`PACKAGES`): the source tree's own in an editable install, the copy in
    site-packages in a wheel."""
    package = PACKAGES[tree]
    try:
        path = Path(str(files(package)))
    except (ModuleNotFoundError, TypeError):
        path = None
    if path is None or not path.is_dir():
        raise KernelbenchError(f"{tree} not found: the package {package} is not installed")
    return path


def baseline_dir() -> Path:
    """The committed baseline tables (``results/baseline``)."""
    return data_dir("results/baseline")


def shipped(name: str | Path) -> Path:
    """The installed file of a shipped path written as in the source tree
    (``results/baseline/fig1_baseline.csv``); another relative path is returned as is."""
    text = Path(name).as_posix()
    for tree in PACKAGES:
        if text.startswith(tree + "/"):
            return data_dir(tree) / text.removeprefix(tree + "/")
    return Path(name)


def tree_name(path: str | Path) -> str | None:
    """The inverse of :func:`shipped`: a shipped file's path as in the source tree
    (``results/baseline/...``), None for a path outside the data packages."""
    p = Path(path).resolve()
    for tree in PACKAGES:
        try:
            return f"{tree}/{p.relative_to(data_dir(tree).resolve()).as_posix()}"
        except (ValueError, KernelbenchError):
            continue
    return None


@cache
def source_tree() -> Path | None:
    """The source tree of an editable install (its ``direct_url.json``, PEP 610); None
    for a wheel."""
    import json
    from importlib.metadata import distributions
    from urllib.parse import unquote, urlparse

    for dist in distributions(name="kernelbench"):  # a build's egg-info has no direct_url
        try:
            info = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        url = urlparse(str(info.get("url", "")))
        if (info.get("dir_info") or {}).get("editable") and url.scheme == "file":
            return Path(unquote(url.path))
    return None
