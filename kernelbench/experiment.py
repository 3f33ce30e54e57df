"""One cell measured run by run by its protocol, stored as one shard; the same for
every protocol: :func:`run_cell` (the rows), :func:`run_and_store` (resume, the atomic
shard write), :func:`run_grid` (a grid in-process)."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from kernelbench.cell import (
    Cell,
    Measurement,
    base_config,
    build_cell,
    cell_folder,
    cell_shard_path,
    row_keys,
    shard_schema,
)
from kernelbench.errors import Interrupted, KernelbenchError
from kernelbench.progress import checkpoint_interval
from kernelbench.results import (
    SCHEMA_VERSION,
    blas_info,
    dumps,
    provenance,
    read_results,
    shard_config_hash,
    shard_schema_version,
    write_shard,
)

# -- measurement --------------------------------------------------------------------

#: glibc heap settings of a process that measures cells (``mallopt``, malloc.h). Its runs
#: allocate and free arrays of a few to a few hundred MiB each (projections, features, a
#: chunk's fold rows), and by default glibc maps every array above 32 MiB afresh and
#: gives freed memory back, so each run faults the same pages in again, zeroed by the
#: kernel: about 9% of a USPS Fig. 1 cell's CPU time, 15-19% of a Liu cod-RNA cell's and
#: 7% of an EEG one's (its 13 F x F copies), in system time, gone with these settings;
#: the rows are the same bits (docs/performance.md). ``M_TOP_PAD``: bytes kept at the
#: heap's top when it grows; ``M_MMAP_THRESHOLD``: arrays below it come from the heap and
#: are reused (larger ones, such as LEUKEMIA's weight draws, are still mapped and
#: returned on free); ``M_TRIM_THRESHOLD``: free memory at the heap's top beyond it goes
#: back. A worker's resident memory still never exceeds its own peak, but may stay near it
#: between cells.
HEAP_SETTINGS = {
    "M_TOP_PAD": 64 * 2**20,
    "M_MMAP_THRESHOLD": 256 * 2**20,
    "M_TRIM_THRESHOLD": 1536 * 2**20,
}

_MALLOPT = {"M_TRIM_THRESHOLD": -1, "M_TOP_PAD": -2, "M_MMAP_THRESHOLD": -3}  # malloc.h


@functools.cache
def keep_heap_pages() -> bool:
    """Apply :data:`HEAP_SETTINGS` in this process, once; False where the C library is
    not glibc (nothing changes there) or a setting is refused."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        gnu = libc.gnu_get_libc_version  # glibc only
        gnu.restype = ctypes.c_char_p
        gnu()
        done = [libc.mallopt(_MALLOPT[k], v) for k, v in HEAP_SETTINGS.items()]
        return all(bool(ok) for ok in done)
    except (OSError, AttributeError):
        return False


def run_cell(
    cell: Cell | Mapping[str, Any],
    on_run: Callable[[int, int], None] | None = None,
    start: int = 0,
    keep: Callable[[Callable[[], pd.DataFrame], bool], None] | None = None,
) -> pd.DataFrame:
    """Measure one cell: its protocol checks it, prepares what the runs share and
    measures the runs in batches of its ``batch``. Run r's row does not depend on
    the order of runs or their number, so ``start=k`` measures runs k, ..., runs - 1
    (extending a shard of k runs). ``on_run(done, total)`` is called first and after
    each batch; ``keep(rows, interrupted)`` after each batch and once more,
    ``interrupted=True``, before an interrupt propagates; ``rows()`` builds the frame
    of the runs finished so far."""
    cell = build_cell(cell)
    keep_heap_pages()
    proto = cell.protocol
    started = datetime.now(UTC)
    runs = cell.runs
    if not 0 <= start < runs:
        raise ValueError(f"start must be in [0, {runs - 1}], got {start}")
    if on_run is not None:
        on_run(start, runs)
    reason = proto.skip(cell)
    if reason is not None:
        raise KernelbenchError(reason)
    ctx = proto.prepare(cell)
    rows: list[dict[str, Any]] = []
    so_far = functools.partial(_frame, cell, ctx, started, rows)  # the rows measured yet
    try:
        step = max(1, int(proto.batch))
        for lo in range(start, runs, step):
            batch = range(lo, min(runs, lo + step))
            rows += _batch_rows(proto, batch, proto.measure(cell, ctx, batch))
            if on_run is not None:
                on_run(batch.stop, runs)
            if keep is not None:
                keep(so_far, False)
    except KeyboardInterrupt:
        if keep is not None:
            keep(so_far, True)
        raise
    return _frame(cell, ctx, started, rows)


def _frame(cell: Cell, ctx: Any, started: datetime, rows: list[dict]) -> pd.DataFrame:
    """The shard rows of a cell: the measured ``rows`` with the cell's common columns,
    in the protocol's schema."""
    proto = cell.protocol
    runs = cell.runs
    blas, threads = blas_info()
    method = cell.method
    common = {
        "experiment": cell.experiment,
        "protocol": proto.name,
        "protocol_params": dumps({k: v for k, v in cell.settings.items() if k != "name"}),
        "dataset": cell.dataset["name"],
        "kernel": cell.kernel["name"],
        "kernel_params": dumps(cell.kernel["params"]),
        "method": method["name"],
        "method_label": method["label"],
        "paper_label": method.get("paper_label") or "",
        "method_params": dumps(method["params"]),
        "n": float(cell.n),
        "runs": runs,
        "seed": cell.seed,
        "config_hash": cell.config_hash,
        "started_at": pd.Timestamp(started),
        **provenance(),
        "blas": blas,
        "blas_threads": threads,
        **row_keys(cell),
        **proto.cell_columns(cell, ctx),
    }
    schema = shard_schema(proto)
    if not rows:
        return pd.DataFrame(columns=schema.names)
    df = pd.DataFrame([{**common, **row} for row in rows])
    missing = [c for c in schema.names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:  # pragma: no cover - a protocol bug
        raise RuntimeError(f"{proto.name} rows: missing {missing}, extra {extra}")
    return df[schema.names]


def _batch_rows(proto: Measurement, batch: range, measured: list[dict]) -> list[dict]:
    """The rows of a batch with their ``run``: one row per run in order, or rows that
    name their run themselves (a protocol may record several rows per run)."""
    if all("run" in row for row in measured):
        if {row["run"] for row in measured} != set(batch):  # pragma: no cover - a bug
            raise RuntimeError(f"{proto.name}: rows do not cover runs {list(batch)}")
        return measured
    if len(measured) != len(batch):  # pragma: no cover - a protocol bug
        raise RuntimeError(f"{proto.name}: {len(measured)} rows for {len(batch)} runs")
    return [{"run": r, **row} for r, row in zip(batch, measured, strict=True)]


def summary_line(cell: Cell, df: pd.DataFrame, seconds: float) -> str:
    """``letter rbf sr33 n=1: rel_fro 0.0123 ± 0.0045 (30 runs) [2.1 s]``."""
    from kernelbench.protocols import metric_of

    metric = metric_of(cell.protocol, None)
    v = df[metric.column].to_numpy(dtype=float)
    std = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return (
        f"{cell.name}: {metric.short or metric.column} {v.mean():.4g} ± {std:.2g} "
        f"({len(v)} runs) [{seconds:.1f} s]"
    )


def run_and_store(
    cell: Cell | Mapping[str, Any],
    output_dir: str | Path | None = "results/runs",
    overwrite: bool = False,
    blas_threads: int | None = None,
    echo: Callable[[str], None] | None = print,
    prefix: str = "",
    on_run: Callable[[int, int], None] | None = None,
) -> pd.DataFrame | None:
    """Run a cell unless its shard holds the same config; write the shard. A shard of
    the cell with fewer runs is extended by the missing runs; any other change is
    recomputed, an unreadable shard reported and recomputed, one of an earlier schema
    refused in one line. Returns the rows, None when skipped;
    ``output_dir=None`` writes nothing; ``on_run(done, total)`` after each batch."""
    # where a protocol may cache work shared by cells (not part of the config hash)
    out = None if output_dir is None else str(output_dir)
    cell = dataclasses.replace(build_cell(cell), output_dir=out)
    label = cell.name
    path = None
    done, start = None, 0

    def say(text: str) -> None:
        if echo is not None:
            echo(f"{prefix}{label}: {text}")

    if output_dir is not None:
        path = cell_shard_path(cell, output_dir)
        if path.exists() and not overwrite:
            version = shard_schema_version(path)
            if version is not None and version < SCHEMA_VERSION:
                raise KernelbenchError(
                    f"{path}: written by schema {version}; rerun with overwrite=true"
                )
            stored = shard_config_hash(path)
            if stored == cell.config_hash:
                say("skipped (done)")
                return None
            done = _fewer_runs(path, cell, stored)
            if done is not None:
                start = int(done["runs"].iloc[0])
                say(f"extending {start} runs to {cell.runs}")
            elif stored is None:
                say(f"corrupt shard {path} (unreadable), recomputing")
            else:
                say("config changed, recomputing")
        if done is None and (moved := moved_by_default(cell, path, output_dir)):
            say(moved)
    t0 = time.perf_counter()
    keep = None
    if path is not None and cell.protocol.extendable:
        keep = _Checkpoint(cell, path, done, start)
    try:  # BLAS threads limited inside (None: left as they are)
        with threadpool_limits(limits=blas_threads, user_api="blas"):
            df = run_cell(cell, start=start, on_run=on_run, keep=keep)
    except KeyboardInterrupt as err:
        if keep is not None and keep.kept:
            what = f"kept {keep.kept} of {cell.runs} runs in {path}; rerun to continue"
        elif keep is not None:
            what = "no run had finished"
        else:
            what = f"nothing kept ({cell.protocol.name} cells are not resumed)"
        raise Interrupted(f"{prefix}{label}: {what}", getattr(err, "signum", None)) from None
    seconds = time.perf_counter() - t0
    if done is not None:
        done["runs"] = cell.runs
        done["config_hash"] = df["config_hash"].iloc[0]
        df = pd.concat([done[df.columns], df], ignore_index=True)
    if path is not None:
        write_shard(df, path, shard_schema(cell.protocol))
    if echo is not None:
        echo(prefix + summary_line(cell, df, seconds))
    return df


class _Checkpoint:
    """Keeps a running cell's finished runs in its shard, as the shard of the same cell
    with k runs (:meth:`Cell.with_runs`: rows, runs and config hash as if it had k
    runs), which a rerun extends (:func:`_fewer_runs`). Written atomically
    (:func:`write_shard`) at most every :func:`checkpoint_interval` seconds and when
    the cell is interrupted; the final shard replaces it."""

    def __init__(self, cell: Cell, path: Path, done: pd.DataFrame | None, start: int) -> None:
        self.cell, self.path, self.done = cell, path, done
        self.kept = start  # runs stored in the shard at ``path``
        self.every = checkpoint_interval()
        self.last = time.monotonic()

    def __call__(self, rows: Callable[[], pd.DataFrame], interrupted: bool) -> None:
        if not interrupted and time.monotonic() - self.last < self.every:
            return
        df = rows()
        k = int(df["run"].max()) + 1 if len(df) else 0
        if k <= self.kept or (k >= self.cell.runs and not interrupted):
            return  # nothing new, or the final write follows
        if self.done is not None:
            df = pd.concat([self.done[df.columns], df], ignore_index=True)
        fewer = self.cell.with_runs(k)
        df["runs"] = k
        df["config_hash"] = fewer.config_hash
        write_shard(df, self.path, shard_schema(self.cell.protocol))
        self.kept, self.last = k, time.monotonic()


def moved_by_default(cell: Cell, path: Path, output_dir: str | Path) -> str | None:
    """One line where this very cell (its config hash) is stored beside ``path``, in
    another variant folder of its method label: a path names what differs from the
    defaults when it is written, so a default changed since (the setting named by the
    folders' difference) and moved the cell out of that shard's reach."""
    folder = cell_folder(cell, output_dir)
    for other in sorted([folder / path.name, *folder.glob(f"*/{path.name}")]):
        if other == path or not other.is_file() or shard_config_hash(other) != cell.config_hash:
            continue
        old = set(other.parent.name.split(",")) if other.parent != folder else set()
        new = set(path.parent.name.split(",")) if path.parent != folder else set()
        names = sorted({p.split("=", 1)[0] for p in old ^ new} - {"h"}) or ["a setting"]
        return (
            f"the default of {', '.join(names)} changed since this same cell was stored in "
            f"{other}; computing it anew here (to reuse the old shard: mv {other} {path}, "
            "then rerun)"
        )
    return None


def _fewer_runs(path: Path, cell: Cell, stored: str | None) -> pd.DataFrame | None:
    """The rows of the shard at ``path`` if it holds this cell with fewer runs and the
    protocol allows extending them (``extendable``), else None."""
    if stored is None or not cell.protocol.extendable:
        return None
    try:
        df = read_results(path)
    except KernelbenchError:  # unreadable: recomputed
        return None
    if not {"runs", "run"} <= set(df.columns):
        return None
    k = int(df["runs"].iloc[0])
    if not 0 < k < cell.runs:
        return None
    if cell.with_runs(k).config_hash != stored:
        return None
    return df if set(df["run"]) == set(range(k)) else None


# -- in-process grids ---------------------------------------------------------------


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
    """A cell from config names, as ``kernelbench run`` composes it (``extra``: top-level keys)."""
    from kernelbench.config import load_group

    return {
        **base_config(),
        "method": load_group("method", method),
        "kernel": load_group("kernel", kernel),
        "dataset": load_group("dataset", dataset),
        "protocol": load_group("protocol", protocol),
        "n": n,
        "runs": runs,
        "seed": seed,
        "experiment": experiment or protocol,
        **extra,
    }


def run_grid(
    methods: Iterable[str] = ("rff",),
    kernels: Iterable[str] = ("rbf",),
    datasets: Iterable[str] = ("digits",),
    ns: Iterable[float] = (1,),
    output_dir: str | Path | None = None,
    overwrite: bool = False,
    blas_threads: int | None = None,
    echo: Callable[[str], None] | None = None,
    **settings: Any,
) -> pd.DataFrame:
    """Run the product datasets x kernels x methods x ns in this process (the grid
    expansion of ``kernelbench run`` and ``verify``, :func:`kernelbench.config.expand`);
    ``settings``: the other arguments of :func:`make_cell` (runs, seed, protocol, ...).

    With ``output_dir`` the shards are written (and finished cells skipped and
    read back); without, nothing touches the disk. Returns all rows.
    """
    from kernelbench.config import expand

    frames = []
    sweep = {"dataset": list(datasets), "kernel": list(kernels), "method": list(methods)}
    for point in expand({**sweep, "n": list(ns)}):
        cell = make_cell(**point, **settings)
        df = run_and_store(cell, output_dir, overwrite, blas_threads, echo=echo)
        if df is None and output_dir is not None:  # skipped: read the stored shard
            df = read_results(cell_shard_path(cell, output_dir))
        frames.append(df)
    if not frames:
        raise KernelbenchError("empty grid")
    return pd.concat(frames, ignore_index=True)
