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
    SCHEMA_VERSION,
    blas_info,
    dumps,
    provenance,
    read_results,
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


def config_hash(cell: Mapping[str, Any]) -> str:
    """SHA-256 (16 hex digits) of everything that determines a cell's numbers.

    Not the output directory, overwrite, the launcher or BLAS threads. ``cell``
    must be resolved (:func:`resolve_cell`).
    """
    payload = {k: cell[k] for k in CELL_KEYS}
    payload["schema_version"] = SCHEMA_VERSION
    return hashlib.sha256(dumps(payload).encode()).hexdigest()[:16]


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
    """``letter rbf sr33 n=1`` (and the protocol's own path parts, if any)."""
    parts = [
        str(cell["dataset"]["name"]),
        str(cell["kernel"]["name"]),
        str(cell["method"].get("label") or cell["method"]["name"]),
    ]
    try:
        proto = get_protocol(cell)
        parts += list(proto.path_parts(cell))
    except (KernelbenchError, AttributeError, KeyError, TypeError):
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


def cell_shard_path(cell: Mapping[str, Any], output_dir: str | Path) -> Path:
    """Where a resolved cell's shard lives."""
    return shard_path(
        output_dir,
        cell["experiment"],
        cell["dataset"]["name"],
        cell["kernel"]["name"],
        cell["method"]["label"],
        cell["n"],
        *get_protocol(cell).path_parts(cell),
    )


def run_and_store(
    cell: Mapping[str, Any],
    output_dir: str | Path | None = "results/runs",
    overwrite: bool = False,
    blas_threads: int | None = None,
    progress: bool = False,
    echo: Callable[[str], None] | None = print,
    prefix: str = "",
) -> pd.DataFrame | None:
    """Run a cell unless its shard already holds the same config; write the shard.

    A shard of the same cell with fewer runs is extended: its rows are kept and only
    the missing runs are measured (run r's row does not depend on the number of runs,
    so the result equals a fresh run). Any other change recomputes the cell.
    Returns the cell's rows, or None when it was skipped. ``output_dir=None``
    computes without writing.
    """
    cell = resolve_cell(cell)
    label = cell_name(cell)
    path = None
    # where a protocol may cache work shared by cells (not part of the config hash)
    cell["output_dir"] = None if output_dir is None else str(output_dir)
    done, start = None, 0
    if output_dir is not None:
        path = cell_shard_path(cell, output_dir)
        if path.exists() and not overwrite:
            stored = shard_config_hash(path)
            if stored == config_hash(cell):
                if echo is not None:
                    echo(f"{prefix}{label}: skipped (done)")
                return None
            done = _fewer_runs(path, cell, stored)
            if done is not None:
                start = int(done["runs"].iloc[0])
            if echo is not None:
                if done is not None:
                    echo(f"{prefix}{label}: extending {start} runs to {cell['runs']}")
                elif stored is None:  # unreadable, or no config hash: not a finished cell
                    echo(f"{prefix}{label}: corrupt shard {path}, recomputing")
                else:
                    echo(f"{prefix}{label}: config changed, recomputing")
    t0 = time.perf_counter()
    with blas_limit(blas_threads):
        df = run_cell(cell, progress=progress, start=start)
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


def _fewer_runs(path: Path, cell: Mapping[str, Any], stored: str | None) -> pd.DataFrame | None:
    """The rows of the shard at ``path`` if it holds this cell with fewer runs and the
    protocol allows extending them (:attr:`Protocol.extendable`), else None."""
    if not get_protocol(cell).extendable:
        return None
    try:
        df = read_results(path)
    except KernelbenchError:  # unreadable: recomputed
        return None
    if not {"runs", "run"} <= set(df.columns):
        return None
    k = int(df["runs"].iloc[0])
    if not 0 < k < cell["runs"] or stored != config_hash({**cell, "runs": k}):
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
