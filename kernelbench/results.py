"""Result shards: their schema, atomic writes, provenance and the one reader.

One Parquet file per cell, one row per run (per run and row index), at
``<output_dir>/<experiment>/<dataset>/<kernel>/<method_label>[/<protocol parts>]
[/<variant>]/n=<n>.parquet`` (the variant: :attr:`kernelbench.cell.Cell.variant`).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kernelbench.errors import KernelbenchError
from kernelbench.packaged import source_tree

#: Bump when the meaning of a column or the numbers of a method change (part of every
#: config hash, so shards of an older version are recomputed rather than mixed).
# 2: orf draws its blocks as Householder reflectors (same law, other numbers); the
#    spectral norm is computed by Golub-Kahan-Lanczos (equal to 1e-12, other bits).
# 3: kernel_approx draws rff/orf projections in sample space where 2N < d (same law,
#    other numbers; column ``draws``).
# 4: sr33 uses rff's D = round(2n(d + 1)) at every n (the last rule truncated; it rounded
#    D to whole rules): its cells whose n is not a whole number of rules change.
# 5: a shard carries its schema version (:data:`SCHEMA_KEY`); the hash reads the data
#    recipes under ``splits`` (numbers unchanged). A shard of an earlier version is
#    reported, never adopted: rerun it with overwrite=true.
SCHEMA_VERSION = 5

#: The key of a shard's Parquet metadata that holds its schema version.
SCHEMA_KEY = b"kernelbench_schema"

#: Columns every row has, before the protocol's own: the cell and the map of the run.
CELL_FIELDS: list[tuple[str, pa.DataType]] = [
    ("experiment", pa.string()),
    ("protocol", pa.string()),
    ("protocol_params", pa.string()),  # JSON: the protocol's settings
    ("dataset", pa.string()),
    ("kernel", pa.string()),
    ("kernel_params", pa.string()),  # JSON
    ("method", pa.string()),  # registry id
    ("method_label", pa.string()),  # config file stem (variants of one method differ)
    ("paper_label", pa.string()),
    ("method_params", pa.string()),  # JSON
    ("n", pa.float64()),  # the budget (its meaning is the protocol's)
    ("D", pa.int64()),  # projections of the map
    ("n_features", pa.int64()),  # columns of the explicit feature map
    ("d", pa.int64()),
    ("runs", pa.int64()),
    ("run", pa.int64()),
    ("seed", pa.int64()),
    ("fit_seconds", pa.float64()),  # drawing the map (fit)
    ("transform_seconds", pa.float64()),  # mapping the data
]

#: Columns every row has, after the protocol's own: where and how it was computed.
PROVENANCE_FIELDS: list[tuple[str, pa.DataType]] = [
    ("config_hash", pa.string()),
    ("started_at", pa.timestamp("us", tz="UTC")),
    ("kernelbench_version", pa.string()),
    ("git_commit", pa.string()),
    ("python_version", pa.string()),
    ("numpy_version", pa.string()),
    ("scipy_version", pa.string()),
    ("sklearn_version", pa.string()),
    ("blas", pa.string()),
    ("blas_threads", pa.int64()),
    ("hostname", pa.string()),
    ("cpu_model", pa.string()),
    ("data_source", pa.string()),
    ("data_deviation", pa.string()),
]


def make_schema(fields: list[tuple[str, pa.DataType]]) -> pa.Schema:
    """The shard schema of a protocol: the common cell columns, ``fields``, provenance."""
    names = [name for name, _ in CELL_FIELDS + PROVENANCE_FIELDS]
    clash = [name for name, _ in fields if name in names]
    if clash:
        raise ValueError(f"protocol columns {clash} clash with the common columns")
    fields = CELL_FIELDS + list(fields) + PROVENANCE_FIELDS
    return pa.schema(fields, metadata={SCHEMA_KEY: str(SCHEMA_VERSION).encode()})


def format_n(n: float) -> str:
    """``1`` for 1 and 1.0, ``0.5`` for 0.5 (the ``n=`` part of a shard name)."""
    n = float(n)
    return str(int(n)) if n.is_integer() else repr(n)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True


def remove_stale_tmp(path: Path) -> None:
    """Delete temporary files of ``path`` left by killed writers (dead pids only)."""
    prefix = f".{path.name}.tmp-"
    for tmp in path.parent.glob(prefix + "*") if path.parent.is_dir() else ():
        pid = tmp.name[len(prefix) :]
        if not pid.isdigit() or not _pid_alive(int(pid)) or int(pid) == os.getpid():
            tmp.unlink(missing_ok=True)


def atomic_write(path: str | os.PathLike, write: Any) -> Path:
    """Call ``write(f)`` on a hidden temporary file (binary, named by the process id)
    next to ``path``, fsync it, rename it to ``path``: readers see the old file or the
    whole new one; those of killed writers are removed (:func:`remove_stale_tmp`)."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_tmp(path)
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return path


def write_shard(df: pd.DataFrame, path: str | os.PathLike, schema: pa.Schema) -> Path:
    """Write ``df`` (exactly the columns of ``schema``: missing or extra ones raise)
    to ``path`` (:func:`atomic_write`)."""
    missing = [c for c in schema.names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise ValueError(
            f"results columns differ from the schema: missing {missing}, extra {extra}"
        )
    table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
    try:
        return atomic_write(path, lambda f: pq.write_table(table, f))
    except OSError as err:  # a full disk, a read-only mount: one line, earlier shards kept
        raise KernelbenchError(
            f"cannot write the shard {path}: {err.strerror or err}; the shards written "
            "before are kept (rerun to resume)"
        ) from None


def shard_config_hash(path: str | os.PathLike) -> str | None:
    """The config hash stored in a shard, or None if the shard is corrupt: unreadable,
    without the column, or empty."""
    try:
        col = pq.read_table(path, columns=["config_hash"]).column("config_hash")
    except (OSError, pa.ArrowException, KeyError):
        return None
    if len(col) == 0:
        return None
    return col[0].as_py()


def shard_schema_version(path: str | os.PathLike) -> int | None:
    """The schema version a shard was written by (:data:`SCHEMA_KEY`; ``4``, the last
    version before shards carried it, when absent), or None if it is unreadable."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return None
    value = meta.get(SCHEMA_KEY, b"4")
    return int(value) if value.isdigit() else None


def shard_files(path: str | os.PathLike) -> list[Path]:
    """The shards under ``path`` (recursively), skipping hidden and temporary files."""
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise KernelbenchError(f"results directory {str(root)!r} does not exist")
    files = (p for p in root.rglob("*.parquet") if p.is_file())
    return sorted(p for p in files if not any(s[0] == "." for s in p.relative_to(root).parts))


def read_results(
    path: str | os.PathLike = "results/runs", experiment: str | None = None
) -> pd.DataFrame:
    """Every shard under ``path`` (a directory, or one shard) in one DataFrame, the
    union of the protocols' columns, sorted by experiment, dataset, kernel, method
    label, n and run; ``experiment`` keeps that experiment's rows."""
    files = shard_files(path)
    if not files:
        raise KernelbenchError(f"no results (*.parquet shards) under {str(path)!r}")
    try:
        table = pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")
    except (pa.ArrowException, OSError) as err:
        raise KernelbenchError(f"cannot read the shards under {str(path)!r}: {err}") from None
    df = table.to_pandas()
    if experiment is not None:
        found = sorted(df["experiment"].dropna().unique())
        df = df[df["experiment"] == experiment]
        if df.empty:
            raise KernelbenchError(
                f"no results for experiment {experiment!r} under {str(path)!r}; "
                f"found: {', '.join(found)}"
            )
    keys = ["experiment", "dataset", "kernel", "method_label", "n", "run"]
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


#: Row columns that tell apart cells sharing experiment, dataset, kernel, label and n
#: (JSON objects but ``seed``): what :func:`variant_labels` reads.
VARIANT_COLUMNS: tuple[str, ...] = ("seed", "kernel_params", "method_params", "protocol_params")


def variant_labels(df: pd.DataFrame, keys: list[str], exclude: tuple[str, ...] = ()) -> pd.Series:
    """Per row, what differs between the cells of ``df`` that share the ``keys`` columns:
    ``seed=1 gamma=0.1`` ('' where nothing differs), so that figures and tables do not
    pool such cells. Reads :data:`VARIANT_COLUMNS` (protocol settings named in
    ``exclude`` left out: the protocol's own cell keys, drawn apart already)."""
    cols = [c for c in VARIANT_COLUMNS if c in df.columns]
    keys = [k for k in keys if k in df.columns]
    out = pd.Series("", index=df.index, dtype=object)
    if not cols or df.empty:
        return out
    combos = df[keys + cols].astype(str).drop_duplicates()

    def settings(row: pd.Series) -> dict[str, str]:
        found: dict[str, str] = {"seed": str(row["seed"])} if "seed" in cols else {}
        for col in cols:
            if col == "seed":
                continue
            text = row[col]
            try:
                ok = isinstance(text, str) and text not in ("", "None", "nan", "<NA>")
                items = json.loads(text) if ok else {}
            except ValueError:
                items = {"?": text}
            if not isinstance(items, dict):
                items = {"?": str(items)}
            for name, value in sorted((items or {}).items()):
                if col == "protocol_params" and name in exclude:
                    continue
                text = value if isinstance(value, str) else dumps(value)
                found[name if name not in found else f"{col.split('_')[0]}.{name}"] = text
        return found

    labels: dict[tuple, str] = {}
    for _, group in combos.groupby(keys, sort=False, dropna=False) if keys else [(0, combos)]:
        parsed = [settings(row) for _, row in group.iterrows()]
        names = list(dict.fromkeys(n for p in parsed for n in p))
        varying = [n for n in names if len({p.get(n, "-") for p in parsed}) > 1]
        for (_, row), p in zip(group.iterrows(), parsed, strict=True):
            text = " ".join(f"{n}={p.get(n, '-')}" for n in varying)
            labels[tuple(row[keys + cols])] = text
    index = df[keys + cols].astype(str).apply(tuple, axis=1)
    return pd.Series([labels.get(t, "") for t in index], index=df.index, dtype=object)


# -- provenance -------------------------------------------------------------------


def _git_commit() -> str | None:
    """The commit of the source tree an editable install runs from (None for a wheel)."""
    root = source_tree()
    if root is None or not (root / ".git").exists():
        return None
    cmd = ["git", "-C", str(root), "rev-parse", "HEAD"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_info() -> tuple[str, int | None]:
    """The BLAS that numpy uses (``internal_api version``) and its current thread count."""
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        return "unknown", None
    numpy_blas = [i for i in blas if "numpy" in str(i.get("filepath", ""))]
    info = (numpy_blas or blas)[0]
    name = f"{info.get('internal_api', '?')} {info.get('version') or ''}".strip()
    return name, info.get("num_threads")


@cache
def provenance() -> dict[str, Any]:
    """Static facts about this process (computed once): versions, commit, host, CPU."""
    import numpy
    import scipy
    import sklearn

    from kernelbench import __version__

    return {
        "kernelbench_version": __version__,
        "git_commit": _git_commit(),
        "python_version": sys.version.split()[0],
        "numpy_version": numpy.__version__,
        "scipy_version": scipy.__version__,
        "sklearn_version": sklearn.__version__,
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
    }


#: Columns that differ between two computations of the same rows (provenance but the
#: data's source and deviation) or with the schema version (the config hash).
VOLATILE_COLUMNS = frozenset(
    name for name, _ in PROVENANCE_FIELDS if name not in ("data_source", "data_deviation")
)


def is_stable(column: str) -> bool:
    """Whether a row column is a number of the computation, equal bit for bit when the
    same cell is recomputed: not provenance, the config hash, a timing or a memory peak."""
    return column not in VOLATILE_COLUMNS and "seconds" not in column and "memory" not in column


def dumps(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces) used for params columns and hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
