"""Rows bit-identical across refactors: one small cell (or sweep) of every protocol,
run through ``kernelbench run`` as a user would, against rows stored before.

The stored rows (``tests/data/rows_golden.json``) hold, per shard path relative to the
output directory, every column but timings and provenance, and the config hash. A
refactor of the experiment layer must leave all of them unchanged: same shard paths,
same hashes (a finished shard is still recognised), same numbers to the last bit.

The numbers are compared exactly when this machine's CPU, BLAS and library versions
are those the file was written on; elsewhere a fused multiply-add or another BLAS
kernel may round differently, and they are compared to 1e-12 relative (the rounding
bound of tests/test_trig.py). Regenerate (only for a change meant to alter rows, with
the reason in the commit): ``python tests/test_rows_unchanged.py``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "data" / "rows_golden.json"

#: One ``kernelbench run`` per entry: a small cell or sweep of each protocol.
CELLS: dict[str, list[str]] = {
    "kernel_approx": [
        "-m",
        "method=rff,orf,sorf,sr33,qmc,gq",
        "n=1,2",
        "runs=2",
        "dataset.splits.kernel_approx.samples=100",
    ],
    "kernel_approx_arccos": [
        "-m",
        "kernel=arccos0,arccos1",
        "method=rff,sr33",
        "runs=2",
        "dataset.splits.kernel_approx.samples=100",
    ],
    "kernel_approx_variants": [
        "-m",
        "method=sorf",
        "seed=0,1",
        "method.params.n_blocks=1,3",
        "kernel.params.gamma=nn50",
        "runs=2",
        "dataset.splits.kernel_approx.samples=60",
    ],
    "pair_mse": [
        "protocol=pair_mse",
        "method=orf",
        "n=2",
        "runs=2",
        "dataset.splits.kernel_approx.samples=60",
    ],
    "qmc_adaptive": [
        "protocol=qmc_adaptive",
        "method=qmc_adaptive",
        "runs=2",
        "method.params.max_cg_iter=6",
        "dataset.splits.kernel_approx.samples=80",
    ],
    "qmc_discrepancy": [
        "-m",
        "protocol=qmc_discrepancy",
        "method=qmc,rff",
        "runs=2",
        "dataset.splits.kernel_approx.samples=80",
    ],
    "variance_ratio": [
        "protocol=variance_ratio",
        "dataset=gaussian_pairs",
        "method=orf",
        "runs=20",
        "protocol.d=16",
        "protocol.z_step=0.5",
        "protocol.z_max=2.0",
    ],
    "downstream": [
        "-m",
        "protocol=downstream",
        "method=rff,sr33",
        "runs=2",
        "dataset.splits.downstream.train_rows=400",
    ],
    "walltime": ["protocol=walltime", "method=sr33", "protocol.repeats=2"],
    "krr": [
        "-m",
        "protocol=krr",
        "dataset=eeg",
        "method=rff,slw_rff",
        "runs=2",
        "protocol.spectral_points=200",
        "protocol.cv_folds=3",
    ],
}

#: Cells that read the dataset mirror (skipped without KERNELBENCH_DATA).
NEEDS_MIRROR = {"krr"}


def _volatile(column: str) -> bool:
    """Timings, memory, provenance and the config hash (compared apart)."""
    from kernelbench.results import is_stable

    return not is_stable(column)


def _machine() -> dict[str, str]:
    """What decides the last bits: CPU, BLAS and library versions."""
    import numpy
    import scipy

    from kernelbench.results import _cpu_model, blas_info

    return {
        "cpu": _cpu_model(),
        "blas": blas_info()[0],
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
    }


def _plain(value):
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def run_rows(name: str, out: Path) -> dict[str, dict]:
    """Run ``CELLS[name]`` into ``out``; per shard: config hash and the stable columns."""
    import pandas as pd

    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    args = [sys.executable, "-m", "kernelbench.cli", "run", *CELLS[name], f"output_dir={out}"]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)}\nexit {proc.returncode}\n{proc.stderr}")
    shards: dict[str, dict] = {}
    for path in sorted(out.rglob("*.parquet")):
        df = pd.read_parquet(path).sort_values("run", kind="stable")
        hashes = sorted(set(df["config_hash"]))
        columns = {c: [_plain(v) for v in df[c].tolist()] for c in df.columns if not _volatile(c)}
        shards[path.relative_to(out).as_posix()] = {"config_hash": hashes, "columns": columns}
    return shards


def _same(a, b, exact: bool) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if exact or a == b:
            return a == b or (math.isnan(a) and math.isnan(b))
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return a == b


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("name", list(CELLS))
def test_rows_unchanged(name, golden, tmp_path):
    from kernelbench.results import SCHEMA_VERSION

    if name in NEEDS_MIRROR and not os.environ.get("KERNELBENCH_DATA"):
        pytest.skip("KERNELBENCH_DATA is not set: no dataset mirror")
    want = golden["cells"][name]
    have = run_rows(name, tmp_path / "out")
    assert sorted(have) == sorted(want), "shard paths changed"
    exact = golden["machine"] == _machine()
    for shard, rows in want.items():
        got = have[shard]
        if golden["schema_version"] == SCHEMA_VERSION:
            assert got["config_hash"] == rows["config_hash"], f"{shard}: config hash changed"
        assert sorted(got["columns"]) == sorted(rows["columns"]), f"{shard}: columns changed"
        for column, values in rows["columns"].items():
            new = got["columns"][column]
            assert len(new) == len(values), f"{shard}: {column} has other rows"
            bad = [
                i
                for i, (a, b) in enumerate(zip(new, values, strict=True))
                if not _same(a, b, exact)
            ]
            assert not bad, (
                f"{shard}: {column} changed ({'bitwise' if exact else 'rtol 1e-12'}) in "
                f"rows {bad[:5]}: {[new[i] for i in bad[:3]]} vs {[values[i] for i in bad[:3]]}"
            )


def main() -> None:
    """Write ``tests/data/rows_golden.json`` from this checkout."""
    import tempfile

    from kernelbench.results import SCHEMA_VERSION

    if not os.environ.get("KERNELBENCH_DATA"):
        raise SystemExit("set KERNELBENCH_DATA: the krr cell reads the mirror")
    cells = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in CELLS:
            cells[name] = run_rows(name, Path(tmp) / name)
            print(name, len(cells[name]), "shards", flush=True)
    payload = {"schema_version": SCHEMA_VERSION, "machine": _machine(), "cells": cells}
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
