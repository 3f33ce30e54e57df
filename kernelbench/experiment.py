"""The kernel approximation experiment: one cell of a grid, measured run by run.

A *cell* is a plain dict shaped like the composed Hydra config (``configs/config.yaml``)::

    {"experiment": ..., "protocol": "kernel_approx", "n": 1, "runs": None, "seed": 0,
     "method": {"name", "label", "paper_label", "params"},
     "kernel": {"name", "params"}, "dataset": {"name", "protocols", ...},
     "data": {"mirror", "cache", "download"}}

:func:`run_cell` measures it and returns one row per run (the columns of
:data:`kernelbench.results.SCHEMA`); :func:`run_and_store` adds resume and the
atomic shard write; :func:`run_grid` loops over a product of cells in-process.
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

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.metrics import spectral_norm
from kernelbench.results import (
    SCHEMA_VERSION,
    blas_info,
    dumps,
    provenance,
    shard_config_hash,
    shard_path,
    write_shard,
)
from kernelbench.seeding import derive_rng

#: Config keys that select a cell (the rest is where and how to run it).
CELL_KEYS = ("experiment", "protocol", "dataset", "kernel", "method", "n", "runs", "seed")

SUPPORTED_PROTOCOLS = ("kernel_approx",)


# -- validation -------------------------------------------------------------------


def check_n(n: Any) -> int | float:
    """A positive feature budget; integral values become ints (they name seeds and files)."""
    if isinstance(n, bool) or not isinstance(n, int | float | np.integer | np.floating):
        raise KernelbenchError(f"n must be a positive number, got {n!r}")
    if not np.isfinite(n) or n <= 0:
        raise KernelbenchError(f"n must be a positive number, got {n!r}")
    return int(n) if float(n).is_integer() else float(n)


def check_runs(runs: Any) -> int:
    """A positive integer number of runs."""
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs <= 0:
        raise KernelbenchError(f"runs must be a positive integer, got {runs!r}")
    return int(runs)


def protocol_config(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset's settings for the cell's protocol (``dataset.protocols.<protocol>``)."""
    protocol = cell.get("protocol", "kernel_approx")
    if protocol not in SUPPORTED_PROTOCOLS:
        raise KernelbenchError(
            f"unknown protocol {protocol!r}; valid choices: {', '.join(SUPPORTED_PROTOCOLS)}"
        )
    protocols = cell["dataset"].get("protocols") or {}
    if protocol not in protocols:
        raise KernelbenchError(
            f"dataset {cell['dataset'].get('name')!r} has no {protocol!r} protocol"
        )
    return dict(protocols[protocol])


def resolve_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a cell and fill its defaults: ``runs`` from the protocol, ``n`` normalised."""
    out = {k: v for k, v in cell.items()}
    out["n"] = check_n(cell["n"])
    runs = cell.get("runs")
    if runs is None:
        runs = protocol_config(cell).get("runs")
        if runs is None:
            raise KernelbenchError(
                f"runs is null and dataset {cell['dataset'].get('name')!r} sets no default"
            )
    else:
        protocol_config(cell)
    out["runs"] = check_runs(runs)
    out["seed"] = int(cell.get("seed", 0))
    out.setdefault("experiment", "kernel_approx")
    out.setdefault("protocol", "kernel_approx")
    out.setdefault("data", {"mirror": None, "cache": None, "download": False})
    method = dict(cell["method"])
    method.setdefault("label", method["name"])
    method.setdefault("paper_label", "")
    method["params"] = dict(method.get("params") or {})
    out["method"] = method
    kernel = dict(cell["kernel"])
    kernel["params"] = dict(kernel.get("params") or {})
    out["kernel"] = kernel
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


@lru_cache(maxsize=4)
def _pair_cached(dataset_json: str, seed: int, data_json: str) -> tuple:
    import json

    from kernelbench.datasets import kernel_approx_pair

    X, Y, prov = kernel_approx_pair(json.loads(dataset_json), seed, json.loads(data_json))
    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    X.setflags(write=False)
    Y.setflags(write=False)
    return X, Y, dict(prov)


def load_pair(cell: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """X, Y and the data provenance of a resolved cell (cached per process)."""
    return _pair_cached(dumps(cell["dataset"]), cell["seed"], dumps(cell.get("data") or {}))


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
) -> pd.DataFrame:
    """Measure one cell: ``runs`` fresh feature maps, one row per run.

    Run r draws its map from ``derive_rng(seed, dataset, kernel, method_label, n, r)``,
    so every row is independent of the order in which cells and runs execute.
    """
    from kernelbench.features import make_feature_map
    from kernelbench.kernels import exact_kernel

    cell = resolve_cell(cell)
    started = datetime.now(UTC)
    dataset = cell["dataset"]["name"]
    kname = cell["kernel"]["name"]
    kparams = cell["kernel"]["params"]
    method = cell["method"]
    label = method["label"]
    n, runs, seed = cell["n"], cell["runs"], cell["seed"]
    # validate the method and its parameters before loading any data
    make_feature_map(method["name"], kernel=kname, n=n, **kparams, **method["params"])

    X, Y, prov = load_pair(cell)
    K = exact_kernel(kname, X, Y, **kparams)
    fro_K = float(np.linalg.norm(K))
    spec_K = spectral_norm(K)
    if fro_K == 0.0 or spec_K == 0.0:
        raise KernelbenchError(f"the exact kernel of {dataset!r} is zero; errors are undefined")

    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=runs,
            desc=f"{dataset} {kname} {label} n={n}",
            leave=False,
            unit="run",
            disable=None,
        )
    try:
        for r in range(runs):
            rng = derive_rng(seed, dataset, kname, label, n, r)
            fm = make_feature_map(
                method["name"], kernel=kname, n=n, random_state=rng, **kparams, **method["params"]
            )
            t0 = time.perf_counter()
            fm.fit(X)
            t1 = time.perf_counter()
            Zx = fm.transform(X)
            Zy = fm.transform(Y)
            t2 = time.perf_counter()
            K_hat = Zx @ Zy.T
            if fm.constant_ != 0.0:
                K_hat += K_hat.dtype.type(fm.constant_)
            E = K - K_hat
            rows.append(
                {
                    "run": r,
                    "D": int(fm.n_projections_),
                    "n_features": int(fm.n_features_out_),
                    "rel_fro_error": float(np.linalg.norm(E)) / fro_K,
                    "rel_spec_error": spectral_norm(E) / spec_K,
                    "fit_seconds": t1 - t0,
                    "transform_seconds": t2 - t1,
                }
            )
            if bar is not None:
                bar.update(1)
            if on_run is not None:
                on_run(r)
    finally:
        if bar is not None:
            bar.close()

    blas, threads = blas_info()
    common = {
        "experiment": cell["experiment"],
        "protocol": cell["protocol"],
        "dataset": dataset,
        "kernel": kname,
        "kernel_params": dumps(kparams),
        "method": method["name"],
        "method_label": label,
        "paper_label": method.get("paper_label") or "",
        "method_params": dumps(method["params"]),
        "n": float(n),
        "d": int(X.shape[1]),
        "samples": int(X.shape[0]),
        "runs": runs,
        "seed": seed,
        "config_hash": config_hash(cell),
        "started_at": pd.Timestamp(started),
        **provenance(),
        "blas": blas,
        "blas_threads": threads,
        "data_source": prov.get("data_source"),
        "data_deviation": prov.get("data_deviation"),
    }
    df = pd.DataFrame([{**common, **row} for row in rows])
    from kernelbench.results import COLUMNS

    return df[COLUMNS]


def summary_line(cell: Mapping[str, Any], df: pd.DataFrame, seconds: float) -> str:
    """``letter rbf sr33 n=1: rel_fro 0.0123 ± 0.0045 (30 runs) [2.1 s]``."""
    err = df["rel_fro_error"].to_numpy()
    std = float(err.std(ddof=1)) if len(err) > 1 else 0.0
    return (
        f"{cell['dataset']['name']} {cell['kernel']['name']} {cell['method']['label']} "
        f"n={check_n(cell['n'])}: rel_fro {err.mean():.4g} ± {std:.2g} "
        f"({len(err)} runs) [{seconds:.1f} s]"
    )


def run_and_store(
    cell: Mapping[str, Any],
    output_dir: str | Path | None = "results",
    overwrite: bool = False,
    blas_threads: int | None = None,
    progress: bool = False,
    echo: Callable[[str], None] | None = print,
    prefix: str = "",
) -> pd.DataFrame | None:
    """Run a cell unless its shard already holds the same config; write the shard.

    Returns the cell's rows, or None when it was skipped. ``output_dir=None``
    computes without writing.
    """
    cell = resolve_cell(cell)
    label = (
        f"{cell['dataset']['name']} {cell['kernel']['name']} {cell['method']['label']} "
        f"n={cell['n']}"
    )
    path = None
    if output_dir is not None:
        path = shard_path(
            output_dir,
            cell["experiment"],
            cell["dataset"]["name"],
            cell["kernel"]["name"],
            cell["method"]["label"],
            cell["n"],
        )
        if path.exists() and not overwrite:
            stored = shard_config_hash(path)
            if stored == config_hash(cell):
                if echo is not None:
                    echo(f"{prefix}{label}: skipped (done)")
                return None
            if echo is not None:
                echo(f"{prefix}{label}: config changed, recomputing")
    t0 = time.perf_counter()
    with blas_limit(blas_threads):
        df = run_cell(cell, progress=progress)
    seconds = time.perf_counter() - t0
    if path is not None:
        write_shard(df, path)
    if echo is not None:
        echo(prefix + summary_line(cell, df, seconds))
    return df


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
    experiment: str = "kernel_approx",
    **extra: Any,
) -> dict[str, Any]:
    """A cell from config names (``configs/<group>/<name>.yaml``), like ``kernelbench run``."""
    from kernelbench.config import load_group

    cell = base_config()
    cell.update(
        method=load_group("method", method),
        kernel=load_group("kernel", kernel),
        dataset=load_group("dataset", dataset),
        n=n,
        runs=runs,
        seed=seed,
        experiment=experiment,
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
    experiment: str = "kernel_approx",
    output_dir: str | Path | None = None,
    overwrite: bool = False,
    blas_threads: int | None = None,
    echo: Callable[[str], None] | None = None,
    **extra: Any,
) -> pd.DataFrame:
    """Run the product datasets x kernels x methods x ns in this process.

    With ``output_dir`` the shards are written (and finished cells skipped and
    read back); without, nothing touches the disk. Returns all rows.
    """
    from kernelbench.results import read_results

    frames = []
    for ds, kern, meth, n in itertools.product(datasets, kernels, methods, ns):
        cell = make_cell(meth, kern, ds, n, runs, seed, experiment, **extra)
        df = run_and_store(cell, output_dir, overwrite, blas_threads, echo=echo)
        if df is None:  # skipped: read the stored shard
            c = resolve_cell(cell)
            df = read_results(
                shard_path(output_dir, experiment, ds, kern, c["method"]["label"], c["n"])
            )
        frames.append(df)
    if not frames:
        raise KernelbenchError("empty grid")
    return pd.concat(frames, ignore_index=True)
