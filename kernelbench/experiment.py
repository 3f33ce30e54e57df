"""One cell of a grid, measured run by run by its protocol, stored as one shard.

A *cell* is a plain dict shaped like the composed Hydra config (``configs/config.yaml``)::

    {"experiment": ..., "protocol": {"name": "kernel_approx", "data": ...},
     "n": 1, "runs": None, "seed": 0,
     "method": {"name", "label", "paper_label", "params"},
     "kernel": {"name", "params"}, "dataset": {"name", "protocols", ...},
     "data": {"mirror", "cache", "download"}}

The protocol (:mod:`kernelbench.protocols`) measures it; this module is the same for
every protocol: :func:`run_cell` returns one row per run (the protocol's schema),
:func:`run_and_store` adds resume and the atomic shard write, :func:`run_grid` loops
over a product of cells in-process.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import Protocol, get_protocol
from kernelbench.results import (
    EARLIER_SCHEMAS,
    SCHEMA_VERSION,
    blas_info,
    dumps,
    provenance,
    read_results,
    set_shard_config_hash,
    shard_config_hash,
    shard_path,
    write_shard,
)
from kernelbench.validation import check_n, check_runs

#: Config keys that select a cell (the rest is where and how to run it).
CELL_KEYS = ("experiment", "protocol", "dataset", "kernel", "method", "n", "runs", "seed")


# -- validation -------------------------------------------------------------------


def resolve_protocol(cell: Mapping[str, Any]) -> tuple[Protocol, dict[str, Any]]:
    """The cell's protocol and its validated settings (a name is read from
    ``configs/protocol/<name>.yaml``)."""
    from kernelbench.config import load_group

    settings = cell.get("protocol", "kernel_approx")
    if settings is None or isinstance(settings, str):
        name = settings or "kernel_approx"
        get_protocol(name)  # one line naming the protocols if unknown
        settings = load_group("protocol", name)
    if not isinstance(settings, Mapping) or "name" not in settings:
        raise KernelbenchError(
            f"protocol must be a name or a mapping with a name, got {settings!r}"
        )
    proto = get_protocol(str(settings["name"]))
    return proto, proto.check_settings(settings)


def resolve_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a cell and fill its defaults: the protocol's settings, ``runs`` from the
    dataset's data settings for the protocol, ``n`` normalised, the experiment name."""
    out = {k: v for k, v in cell.items()}
    proto, out["protocol"] = resolve_protocol(cell)
    out["n"] = check_n(cell["n"])
    out["seed"] = int(cell.get("seed", 0))
    out["experiment"] = cell.get("experiment") or proto.name
    out.setdefault("data", {"mirror": None, "cache": None, "download": False})
    method = dict(cell["method"])
    method.setdefault("label", method["name"])
    method.setdefault("paper_label", "")
    method["params"] = dict(method.get("params") or {})
    out["method"] = method
    kernel = dict(cell["kernel"])
    kernel["params"] = dict(kernel.get("params") or {})
    out["kernel"] = kernel
    runs = cell.get("runs")
    if runs is None:
        runs = proto.default_runs(out)
        if runs is None:
            raise KernelbenchError(
                f"runs is null and neither dataset {cell['dataset'].get('name')!r} nor "
                f"protocol {proto.name!r} sets a default"
            )
    else:
        proto.data_settings(out)
    out["runs"] = check_runs(runs)
    return out


def protocol_dataset(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a resolved cell's dataset entry that its protocol reads: every key
    but ``protocols``, and of ``protocols`` only the entry ``protocol.data`` (default
    the protocol's name), so editing another protocol's data settings leaves it alone."""
    dataset = dict(cell["dataset"])
    protocols = dataset.get("protocols")
    if isinstance(protocols, Mapping):
        key = get_protocol(cell).data_key(cell)
        dataset["protocols"] = {key: protocols[key]} if key in protocols else {}
    return dataset


def _hash_payload(cell: Mapping[str, Any], dataset: Any, version: int = SCHEMA_VERSION) -> str:
    payload = {k: cell[k] for k in CELL_KEYS}
    payload["dataset"] = dataset
    payload["schema_version"] = version
    return hashlib.sha256(dumps(payload).encode()).hexdigest()[:16]


def config_hash(cell: Mapping[str, Any]) -> str:
    """SHA-256 (16 hex digits) of everything that determines a cell's numbers.

    The experiment, the protocol's settings, the part of the dataset entry the protocol
    reads (:func:`protocol_dataset`), kernel, method, n, runs, seed and
    :data:`SCHEMA_VERSION`; not the output directory, overwrite, the launcher or BLAS
    threads. ``cell`` must be resolved (:func:`resolve_cell`). Equal to
    :func:`legacy_config_hash` when the dataset has data settings for this protocol only.
    """
    return _hash_payload(cell, protocol_dataset(cell))


def legacy_config_hash(cell: Mapping[str, Any]) -> str:
    """The config hash of shards written before :func:`protocol_dataset` (the whole
    dataset entry): such a shard is still recognised as done, and its hash updated."""
    return _hash_payload(cell, cell["dataset"])


def earlier_config_hashes(cell: Mapping[str, Any]) -> set[str]:
    """The config hashes of shards of earlier schema versions (:data:`EARLIER_SCHEMAS`)
    that hold this cell's numbers (:meth:`Protocol.earlier_cell`; either dataset part):
    such a shard is still recognised as done, and its hash updated. May load the data."""
    out: set[str] = set()
    proto = get_protocol(cell)
    for version in EARLIER_SCHEMAS:
        old = proto.earlier_cell(cell, version)
        if old is not None:
            out |= {
                _hash_payload(old, protocol_dataset(old), version),
                _hash_payload(old, old["dataset"], version),
            }
    return out


def holds_cell(cell: Mapping[str, Any], stored: str | None) -> bool:
    """Whether a shard's stored hash is this cell's: :func:`config_hash`,
    :func:`legacy_config_hash` or an earlier version's (checked last: it may load data)."""
    if stored is None:
        return False
    return stored in (config_hash(cell), legacy_config_hash(cell)) or stored in (
        earlier_config_hashes(cell)
    )


# -- shard identity ------------------------------------------------------------------

#: Names of the path parts that are not kernel or method parameters.
_RESERVED_PARTS = frozenset({"protocol", "seed", "h", "n"})
_READABLE_STR = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{0,31}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
_MISSING = object()


def _readable(value: Any) -> str | None:
    """``value`` as an unambiguous path fragment, or None (then it goes to the hash).

    Numbers keep their type (``1`` vs ``1.0``); strings must start with a letter and
    not read as another type (``true``, ``null``, ``nan``, ...)."""
    if value is None or isinstance(value, bool):
        return dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str) and _READABLE_STR.fullmatch(value):
        if value.lower() not in {"true", "false", "null", "none", "nan", "inf", "infinity"}:
            return value
    return None


@lru_cache(maxsize=64)
def _experiment_fixed(experiment: str) -> dict[str, Any]:
    """Settings that every experiment file naming its results ``experiment`` fixes to
    one value (dotted key -> value, e.g. ``kernel.params.gamma: nn50``, ``protocol``):
    the defaults of that experiment's cells, so a paper grid's shards keep short paths."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    parser = OverridesParser.create()
    found: list[dict[str, Any]] = []
    for path in sorted((config_dir() / "experiment").glob("*.yaml")):
        raw = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        if not isinstance(raw, dict) or raw.get("experiment") != experiment:
            continue
        fixed: dict[str, Any] = {}
        for entry in raw.get("defaults") or []:
            if isinstance(entry, dict):
                for key, value in entry.items():
                    fixed[str(key).replace("override", "").strip().lstrip("/")] = value
        for key, value in raw.items():
            if key not in ("defaults", "hydra", "experiment") and not isinstance(value, dict):
                fixed[str(key)] = value
        params = ((raw.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
        for key, value in params.items():
            ov = parser.parse_override(f"{key}={value}")
            if not ov.is_sweep_override():
                fixed[str(key)] = ov.value()
        found.append(fixed)
    if not found:
        return {}
    return {k: v for k, v in found[0].items() if all(k in f and f[k] == v for f in found[1:])}


def _group_file(group: str, name: Any) -> dict[str, Any] | None:
    from kernelbench.config import config_dir, load_group

    if not isinstance(name, str) or not (config_dir() / group / f"{name}.yaml").is_file():
        return None
    return load_group(group, name)


def _set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    *head, last = key.split(".")
    for part in head:
        nxt = tree.get(part)
        if not isinstance(nxt, dict):
            nxt = tree[part] = {}
        tree = nxt
    tree[last] = value


def default_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """What a resolved cell's settings are when none is overridden: the config files of
    its kernel, method label, dataset and protocol (``configs/<group>/``) and
    ``seed`` of ``configs/config.yaml``, with the settings its experiment's files fix
    (:func:`_experiment_fixed`). A part missing a file is None."""
    fixed = _experiment_fixed(str(cell["experiment"]))
    proto_name = fixed.get("protocol")
    if not isinstance(proto_name, str):
        from kernelbench.protocols import PROTOCOLS

        exp = str(cell["experiment"])
        proto_name = exp if exp in PROTOCOLS else _default_protocol()
    out: dict[str, Any] = {
        "seed": base_config()["seed"],
        "kernel": _group_file("kernel", cell["kernel"]["name"]),
        "method": _group_file("method", cell["method"]["label"]),
        "dataset": _group_file("dataset", cell["dataset"]["name"]),
        "protocol": _group_file("protocol", proto_name),
    }
    for key, value in fixed.items():
        top = key.split(".")[0]
        if "." in key and isinstance(out.get(top), dict):
            _set_dotted(out, key, value)
        elif key == "seed":
            out["seed"] = value
    for group in ("kernel", "method"):
        if isinstance(out[group], dict):
            out[group]["params"] = dict(out[group].get("params") or {})
    if isinstance(out["method"], dict):
        out["method"].setdefault("label", out["method"].get("name"))
        out["method"].setdefault("paper_label", "")
    if isinstance(out["protocol"], dict):
        try:
            out["protocol"] = get_protocol(proto_name).check_settings(out["protocol"])
        except KernelbenchError:
            out["protocol"] = None
    return out


@lru_cache(maxsize=1)
def _default_protocol() -> str:
    """The protocol of ``configs/config.yaml``'s defaults list."""
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    raw = OmegaConf.to_container(OmegaConf.load(config_dir() / "config.yaml"), resolve=False)
    for entry in raw.get("defaults") or []:  # type: ignore[union-attr]
        if isinstance(entry, dict) and "protocol" in entry:
            return str(entry["protocol"])
    return "kernel_approx"  # pragma: no cover


def shard_variant(cell: Mapping[str, Any]) -> tuple[str, ...]:
    """The parts of a resolved cell's shard path beyond experiment, dataset, kernel,
    method label, the protocol's parts and n: what differs from :func:`default_cell`.

    In order: ``protocol=<name>`` (a protocol other than the experiment's),
    ``seed=<s>``, then ``<key>=<value>`` for each kernel parameter and each method
    parameter that differs, and ``h=<8 hex>`` (a hash of the whole identity) when
    anything else differs or a value has no readable form: a changed dataset or
    protocol setting, a removed parameter, a method parameter named like a kernel
    parameter. Parts decode uniquely, so two cells that differ in anything but
    ``runs`` (kept out: a shard with fewer runs is extended) never share a path.
    Empty for a default cell: its path is the one of earlier versions.
    """
    proto = get_protocol(cell)
    base = default_cell(cell)
    parts: list[str] = []
    rest = False
    if base["protocol"] is None or proto.name != base["protocol"]["name"]:
        parts.append(f"protocol={proto.name}")
        base["protocol"] = _group_file("protocol", proto.name)
        if base["protocol"] is not None:
            try:
                base["protocol"] = proto.check_settings(base["protocol"])
            except KernelbenchError:
                base["protocol"] = None
    if cell["seed"] != base["seed"]:
        parts.append(f"seed={int(cell['seed'])}")
    kernel_keys: set[str] = set()
    for group in ("kernel", "method"):
        have, want = cell[group], base[group]
        if want is None:
            rest = True
            continue
        if {k: v for k, v in have.items() if k != "params"} != {
            k: v for k, v in want.items() if k != "params"
        }:
            rest = True
        params, defaults = have["params"], want["params"]
        if group == "kernel":
            kernel_keys = set(defaults)
        for key in sorted(set(params) | set(defaults)):
            value = params.get(key, _MISSING)
            if value == defaults.get(key, _MISSING):
                continue
            text = None if value is _MISSING else _readable(value)
            named = bool(_KEY.fullmatch(key)) and key not in _RESERVED_PARTS
            if group == "kernel":
                named &= key in defaults
            else:
                named &= key not in kernel_keys
            if text is None or not named:
                rest = True
            else:
                parts.append(f"{key}={text}")
    if base["protocol"] is None:
        rest = True
    else:
        shown = set(proto.path_settings)
        have = {k: v for k, v in cell["protocol"].items() if k not in shown}
        want = {k: v for k, v in base["protocol"].items() if k not in shown}
        rest |= have != want
    if base["dataset"] is None:
        rest = True
    else:
        base_cell = {**cell, "dataset": base["dataset"]}
        rest |= protocol_dataset(cell) != protocol_dataset(base_cell)
    if rest:
        parts.append(_identity_hash(cell))
    return tuple(parts)


def _identity_hash(cell: Mapping[str, Any]) -> str:
    """``h=<8 hex>``: SHA-256 of everything in the config hash but ``runs``."""
    payload = {k: cell[k] for k in CELL_KEYS if k != "runs"}
    payload["dataset"] = protocol_dataset(cell)
    return "h=" + hashlib.sha256(dumps(payload).encode()).hexdigest()[:8]


# -- measurement --------------------------------------------------------------------


@contextlib.contextmanager
def blas_limit(threads: int | None):
    """Limit BLAS threads inside the block (None: leave them as they are)."""
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(threads), user_api="blas"):
        yield


def run_cell(
    cell: Mapping[str, Any],
    progress: bool = False,
    on_run: Callable[[int], None] | None = None,
    start: int = 0,
) -> pd.DataFrame:
    """Measure one cell: ``runs`` fresh feature maps, one row per run.

    The protocol validates the cell before any data is loaded, prepares what the runs
    share, and measures the runs in batches of :meth:`Protocol.batch_size`. Run r
    draws its map from :meth:`Protocol.run_rng`, so every row is independent of the
    order in which cells and runs execute, and of how many runs the cell has:
    ``start=k`` measures only runs k, ..., runs - 1: the rows that a shard of the same
    cell with k runs lacks (:func:`run_and_store` extends such a shard).
    """
    cell = resolve_cell(cell)
    proto = get_protocol(cell)
    started = datetime.now(UTC)
    proto.check(cell)
    ctx = proto.prepare(cell)
    runs = cell["runs"]
    if not 0 <= start < runs:
        raise ValueError(f"start must be in [0, {runs - 1}], got {start}")
    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=runs - start, desc=cell_name(cell), leave=False, unit="run", disable=None)
    try:
        step = max(1, int(proto.batch_size(cell)))
        for lo in range(start, runs, step):
            batch = range(lo, min(runs, lo + step))
            rows += _batch_rows(proto, batch, proto.measure(cell, ctx, batch))
            if bar is not None:
                bar.update(len(batch))
            if on_run is not None:
                for r in batch:
                    on_run(r)
    finally:
        if bar is not None:
            bar.close()

    blas, threads = blas_info()
    method = cell["method"]
    common = {
        "experiment": cell["experiment"],
        "protocol": proto.name,
        "protocol_params": dumps({k: v for k, v in cell["protocol"].items() if k != "name"}),
        "dataset": cell["dataset"]["name"],
        "kernel": cell["kernel"]["name"],
        "kernel_params": dumps(cell["kernel"]["params"]),
        "method": method["name"],
        "method_label": method["label"],
        "paper_label": method.get("paper_label") or "",
        "method_params": dumps(method["params"]),
        "n": float(cell["n"]),
        "runs": runs,
        "seed": cell["seed"],
        "config_hash": config_hash(cell),
        "started_at": pd.Timestamp(started),
        **provenance(),
        "blas": blas,
        "blas_threads": threads,
        **proto.row_keys(cell),
        **proto.cell_columns(cell, ctx),
    }
    schema = proto.schema()
    df = pd.DataFrame([{**common, **row} for row in rows])
    missing = [c for c in schema.names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:  # pragma: no cover - a protocol bug
        raise RuntimeError(f"{proto.name} rows: missing {missing}, extra {extra}")
    return df[schema.names]


def _batch_rows(proto: Protocol, batch: range, measured: list[dict]) -> list[dict]:
    """The rows of a batch with their ``run``: one row per run in order, or rows that
    name their run themselves (a protocol may record several rows per run)."""
    if all("run" in row for row in measured):
        if {row["run"] for row in measured} != set(batch):  # pragma: no cover - a bug
            raise RuntimeError(f"{proto.name}: rows do not cover runs {list(batch)}")
        return measured
    if len(measured) != len(batch):  # pragma: no cover - a protocol bug
        raise RuntimeError(f"{proto.name}: {len(measured)} rows for {len(batch)} runs")
    return [{"run": r, **row} for r, row in zip(batch, measured, strict=True)]


def cell_name(cell: Mapping[str, Any]) -> str:
    """``letter rbf sr33 n=1``, with the protocol's own path parts and what differs from
    the defaults (:func:`shard_variant`): ``letter rbf sr33 seed=1 n_blocks=2 n=1``."""
    parts = [
        str(cell["dataset"]["name"]),
        str(cell["kernel"]["name"]),
        str(cell["method"].get("label") or cell["method"]["name"]),
    ]
    try:
        proto = get_protocol(cell)
        parts += list(proto.path_parts(cell))
        parts += list(shard_variant(resolve_cell(cell)))
    except (KernelbenchError, AttributeError, KeyError, TypeError, ValueError):
        pass
    return " ".join(parts) + f" n={check_n(cell['n'])}"


def summary_line(cell: Mapping[str, Any], df: pd.DataFrame, seconds: float) -> str:
    """``letter rbf sr33 n=1: rel_fro 0.0123 ± 0.0045 (30 runs) [2.1 s]``."""
    proto = get_protocol(cell)
    metric = proto.metric(proto.headline)
    v = df[metric.column].to_numpy(dtype=float)
    std = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return (
        f"{cell_name(cell)}: {metric.short or metric.column} {v.mean():.4g} ± {std:.2g} "
        f"({len(v)} runs) [{seconds:.1f} s]"
    )


#: Longest variant directory name; a longer one is replaced by its ``h=`` part alone.
_MAX_VARIANT = 120


def cell_shard_path(cell: Mapping[str, Any], output_dir: str | Path) -> Path:
    """Where a resolved cell's shard lives: :func:`kernelbench.results.shard_path` with
    the cell's variant (:func:`shard_variant`, comma-joined) as the last directory."""
    variant = ",".join(shard_variant(cell))
    if len(variant) > _MAX_VARIANT:
        variant = _identity_hash(cell)
    return _layout_path(cell, output_dir, *([variant] if variant else []))


def legacy_shard_path(cell: Mapping[str, Any], output_dir: str | Path) -> Path:
    """Where earlier versions stored a resolved cell's shard (no variant directory)."""
    return _layout_path(cell, output_dir)


def _layout_path(cell: Mapping[str, Any], output_dir: str | Path, *variant: str) -> Path:
    return shard_path(
        output_dir,
        cell["experiment"],
        cell["dataset"]["name"],
        cell["kernel"]["name"],
        cell["method"]["label"],
        cell["n"],
        *get_protocol(cell).path_parts(cell),
        *variant,
    )


def run_and_store(
    cell: Mapping[str, Any],
    output_dir: str | Path | None = "results/runs",
    overwrite: bool = False,
    blas_threads: int | None = None,
    progress: bool = False,
    echo: Callable[[str], None] | None = print,
    prefix: str = "",
    on_run: Callable[[int, int], None] | None = None,
) -> pd.DataFrame | None:
    """Run a cell unless its shard already holds the same config; write the shard.

    A shard of the same cell with fewer runs is extended: its rows are kept and only
    the missing runs are measured (run r's row does not depend on the number of runs,
    so the result equals a fresh run). Any other change recomputes the cell; an
    unreadable shard is reported as corrupt and recomputed. A shard of an earlier
    version (at :func:`legacy_shard_path`, or with :func:`legacy_config_hash`) that
    holds this cell is moved to the cell's path and its config hash updated, its rows
    unchanged. Returns the cell's rows, or None when it was skipped.
    ``output_dir=None`` computes without writing. ``on_run(done, total)`` is called
    after each batch of runs.
    """
    cell = resolve_cell(cell)
    label = cell_name(cell)
    path = None
    # where a protocol may cache work shared by cells (not part of the config hash)
    cell["output_dir"] = None if output_dir is None else str(output_dir)
    done, start = None, 0

    def say(text: str) -> None:
        if echo is not None:
            echo(f"{prefix}{label}: {text}")

    if output_dir is not None:
        path = cell_shard_path(cell, output_dir)
        if not overwrite:
            _adopt_legacy(cell, path, legacy_shard_path(cell, output_dir), say)
        if path.exists() and not overwrite:
            stored = shard_config_hash(path)
            if holds_cell(cell, stored):
                if stored != config_hash(cell):
                    set_shard_config_hash(path, config_hash(cell))
                say("skipped (done)")
                return None
            done = _fewer_runs(path, cell, stored)
            if done is not None:
                start = int(done["runs"].iloc[0])
                say(f"extending {start} runs to {cell['runs']}")
            elif stored is None:
                say(f"corrupt shard {path} (unreadable), recomputing")
            else:
                say("config changed, recomputing")
    t0 = time.perf_counter()
    total = cell["runs"]

    def ran(r: int) -> None:
        if on_run is not None:
            on_run(r + 1, total)

    if on_run is not None:
        on_run(start, total)
    with blas_limit(blas_threads):
        df = run_cell(cell, progress=progress, start=start, on_run=ran)
    seconds = time.perf_counter() - t0
    if done is not None:
        done["runs"] = cell["runs"]
        done["config_hash"] = df["config_hash"].iloc[0]
        df = pd.concat([done[df.columns], df], ignore_index=True)
    if path is not None:
        write_shard(df, path, get_protocol(cell).schema())
    if echo is not None:
        echo(prefix + summary_line(cell, df, seconds))
    return df


def _adopt_legacy(
    cell: Mapping[str, Any], path: Path, legacy: Path, say: Callable[[str], None]
) -> None:
    """Move a shard of this cell from the layout of earlier versions to ``path``.

    Only a shard whose stored hash is this cell's (any number of runs, either hash)
    moves: the last cell of an earlier sweep that overwrote its siblings."""
    if legacy == path or path.exists() or not legacy.exists():
        return
    stored = shard_config_hash(legacy)
    if stored is None:
        return
    runs = _shard_runs(legacy)
    fewer = None if runs is None else {**cell, "runs": runs}
    if not holds_cell(cell, stored) and (fewer is None or not holds_cell(fewer, stored)):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(legacy, path)
    say(f"moved the shard of an earlier version from {legacy} to {path}")


def _shard_runs(path: Path) -> int | None:
    try:
        df = read_results(path)
    except KernelbenchError:
        return None
    return int(df["runs"].iloc[0]) if "runs" in df and len(df) else None


def _fewer_runs(path: Path, cell: Mapping[str, Any], stored: str | None) -> pd.DataFrame | None:
    """The rows of the shard at ``path`` if it holds this cell with fewer runs and the
    protocol allows extending them (:attr:`Protocol.extendable`), else None."""
    if stored is None or not get_protocol(cell).extendable:
        return None
    try:
        df = read_results(path)
    except KernelbenchError:  # unreadable: recomputed
        return None
    if not {"runs", "run"} <= set(df.columns):
        return None
    k = int(df["runs"].iloc[0])
    fewer = {**cell, "runs": k}
    if not 0 < k < cell["runs"] or not holds_cell(fewer, stored):
        return None
    return df if set(df["run"]) == set(range(k)) else None


# -- in-process grids ---------------------------------------------------------------


def base_config() -> dict[str, Any]:
    """The top-level values of ``configs/config.yaml`` (no groups, no hydra settings)."""
    return copy.deepcopy(_base_config())


@lru_cache(maxsize=1)
def _base_config() -> dict[str, Any]:
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    raw = OmegaConf.to_container(OmegaConf.load(config_dir() / "config.yaml"), resolve=False)
    return {k: v for k, v in raw.items() if k not in ("defaults", "hydra")}


def make_cell(
    method: str = "rff",
    kernel: str = "rbf",
    dataset: str = "digits",
    n: float = 1,
    runs: int | None = None,
    seed: int = 0,
    experiment: str | None = None,
    protocol: str = "kernel_approx",
    **extra: Any,
) -> dict[str, Any]:
    """A cell from config names (``configs/<group>/<name>.yaml``), like ``kernelbench run``.

    ``experiment`` defaults to the protocol's name; ``extra`` sets top-level keys.
    """
    from kernelbench.config import load_group

    cell = base_config()
    cell.update(
        method=load_group("method", method),
        kernel=load_group("kernel", kernel),
        dataset=load_group("dataset", dataset),
        protocol=load_group("protocol", protocol),
        n=n,
        runs=runs,
        seed=seed,
        experiment=experiment or protocol,
    )
    cell.update(extra)
    return cell


def run_grid(
    methods: Iterable[str] = ("rff",),
    kernels: Iterable[str] = ("rbf",),
    datasets: Iterable[str] = ("digits",),
    ns: Iterable[float] = (1,),
    runs: int | None = None,
    seed: int = 0,
    experiment: str | None = None,
    output_dir: str | Path | None = None,
    overwrite: bool = False,
    blas_threads: int | None = None,
    echo: Callable[[str], None] | None = None,
    protocol: str = "kernel_approx",
    **extra: Any,
) -> pd.DataFrame:
    """Run the product datasets x kernels x methods x ns in this process.

    With ``output_dir`` the shards are written (and finished cells skipped and
    read back); without, nothing touches the disk. Returns all rows.
    """
    from kernelbench.results import read_results

    frames = []
    for ds, kern, meth, n in itertools.product(datasets, kernels, methods, ns):
        cell = make_cell(meth, kern, ds, n, runs, seed, experiment, protocol, **extra)
        df = run_and_store(cell, output_dir, overwrite, blas_threads, echo=echo)
        if df is None:  # skipped: read the stored shard
            df = read_results(cell_shard_path(resolve_cell(cell), output_dir))
        frames.append(df)
    if not frames:
        raise KernelbenchError("empty grid")
    return pd.concat(frames, ignore_index=True)
