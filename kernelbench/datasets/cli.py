"""``kernelbench datasets list | fetch | info``."""

from __future__ import annotations

import textwrap
from functools import cache
from pathlib import Path
from typing import Any

import click

from kernelbench.datasets.sources import (
    Locations,
    fetch_dataset,
    mirror_checksum,
    read_manifest,
    where,
)
from kernelbench.datasets.spec import DATASETS
from kernelbench.datasets.splits import dataset_config, recipes
from kernelbench.errors import KernelbenchError
from kernelbench.validation import check_output_dir


@cache
def _config_data() -> dict[str, Any]:
    """The ``data`` node of the main config (mirror, cache), {} when there is none."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException
    from yaml import YAMLError

    from kernelbench.config import config_dir

    try:
        path = config_dir() / "config.yaml"
    except FileNotFoundError:  # no main config: the environment decides
        return {}
    try:
        node = OmegaConf.load(path).get("data")
        return dict(OmegaConf.to_container(node, resolve=True)) if node else {}  # type: ignore[arg-type]
    except (OSError, YAMLError, OmegaConfBaseException, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise KernelbenchError(f"cannot read the data settings of {path}: {first}") from err


def _location_option(name: str, help: str) -> Any:
    """``--<name>``: a directory, by default the ``data.<name>`` config (else the environment)."""
    return click.option(
        f"--{name}",
        type=click.Path(file_okay=False),
        callback=lambda ctx, param, value: value or _config_data().get(name),
        help=help,
    )


mirror_option = _location_option(
    "mirror", "Mirror directory of <name>.npz (default: data.mirror, then $KERNELBENCH_DATA)."
)
cache_option = _location_option(
    "cache", "Cache directory (default: data.cache, $KERNELBENCH_CACHE, ~/.cache/kernelbench)."
)


@click.group()
def datasets() -> None:
    """List, fetch and describe the benchmark datasets."""


@datasets.command("list")
@mirror_option
@cache_option
def list_cmd(mirror: str | None, cache: str | None) -> None:
    """Name, task, N, d, classes and where the data is (mirror, cache or missing)."""
    header = f"{'name':<11}{'task':<15}{'N':>8}{'d':>6}{'classes':>9}  where"
    click.echo(header)
    for name, spec in DATASETS.items():
        state, path = where(name, mirror, cache)
        classes = "-" if spec.n_classes is None else str(spec.n_classes)
        location = f"{state} ({path})" if path else state
        if state == "mirror" and path:
            status = read_manifest(Path(path).parent).get(name, {}).get("status", "ok")
            location += f" [{status}]" if status != "ok" else ""
            digest, expected = mirror_checksum(spec, Path(path))
            if expected and digest != expected:
                location += " [CORRUPT: fails its checksum; replace the file]"
        if spec.optional and state == "missing":
            location += " [optional]"
        click.echo(f"{name:<11}{spec.task:<15}{spec.n_total:>8}{spec.d:>6}{classes:>9}  {location}")


@datasets.command("fetch")
@click.argument("names", nargs=-1, required=True)
@mirror_option
@cache_option
@click.option("--force", is_flag=True, help="Download even if the mirror or cache has it.")
def fetch_cmd(names: tuple[str, ...], mirror: str | None, cache: str | None, force: bool) -> None:
    """Download datasets NAMES into the cache ('all' = every downloadable one)."""
    from tqdm.auto import tqdm

    if names == ("all",):
        names = tuple(n for n, s in DATASETS.items() if s.downloader is not None)
    for name in names:
        DATASETS.get(name)  # unknown names fail before anything is downloaded
    due = [n for n in names if force or where(n, mirror, cache)[0] not in ("mirror", "cache")]
    if any(DATASETS.get(n).bundled is None for n in due):  # the cache must take a download
        check_output_dir(Locations.resolve(None, cache).cache, "--cache")
    failed: list[str] = []
    with tqdm(names, desc="datasets", unit="dataset", disable=len(names) < 2) as bar:
        for name in bar:
            bar.set_postfix_str(name)
            spec = DATASETS.get(name)
            if spec.bundled is not None:
                tqdm.write(f"{name}: bundled with scikit-learn, nothing to fetch")
                continue
            state, path = where(name, mirror, cache)
            if state in ("mirror", "cache") and not force:
                tqdm.write(f"{name}: already in the {state} ({path})")
                continue
            try:
                out = fetch_dataset(name, cache=cache, progress=True, force=force)
            except KernelbenchError as err:
                if len(names) == 1:
                    raise
                tqdm.write(f"{name}: {err}")
                failed.append(name)
                continue
            tqdm.write(f"{name}: cached at {out}")
    if failed:
        raise KernelbenchError(f"could not fetch {', '.join(failed)} (see the lines above)")


def _wrap(label: str, text: str) -> str:
    return textwrap.fill(text, width=100, initial_indent=f"{label:<12}", subsequent_indent=" " * 12)


@datasets.command("info")
@click.argument("name")
@mirror_option
@cache_option
def info_cmd(name: str, mirror: str | None, cache: str | None) -> None:
    """Provenance of dataset NAME and its known deviations from the papers' data."""
    spec = DATASETS.get(name)
    state, path = where(name, mirror, cache)
    classes = "-" if spec.n_classes is None else spec.n_classes
    fields = {
        "task": f"{spec.task}; N={spec.n_total} (train {spec.n_train}, test {spec.n_test}); "
        f"d={spec.d}; classes={classes}",
        "source": f"{spec.source}: {' '.join(spec.urls)}",
        "openml id": str(spec.openml_id) if spec.openml_id else "none",
        "citation": spec.citation,
        "licence": spec.licence,
        "sha256": spec.sha256 or "not recorded",
        "location": f"{state} ({path})" if path else state,
        "deviation": f"mirror: {spec.mirror_deviation}",
        "": f"download: {spec.download_deviation}",
    }
    lines = [f"{spec.name}: {spec.title}", *(_wrap(k, v) for k, v in fields.items())]
    locs = Locations.resolve(mirror, cache)
    entry = read_manifest(locs.mirror).get(name) if locs.mirror else None
    if entry:
        lines.append(_wrap("mirror", f"status {entry.get('status')}: {entry.get('notes', '')}"))
    try:
        protocols = recipes(dataset_config(name))
    except KernelbenchError:  # no configs/dataset/<name>.yaml
        protocols = {}
    for proto, values in protocols.items():
        settings = ", ".join(f"{k}={v}" for k, v in (values or {}).items())
        lines.append(_wrap("protocol", f"{proto}: {settings}"))
    click.echo("\n".join(lines))


__all__ = ["datasets"]
