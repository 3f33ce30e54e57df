"""Rows unchanged across refactors and machines: one small cell (or sweep) of every
protocol, run through ``kernelbench run`` as a user would, against rows stored before.

The stored rows (``tests/data/rows_golden.json``) hold, per shard path relative to the
output directory, every column but timings and provenance, and the config hash. A
refactor of the experiment layer must leave all of them unchanged: same shard paths,
same hashes (a finished shard is still recognised), same columns, and in every row the
same integers, strings and types, and floats within the tolerance of
``tests/data/rows_tolerance.toml`` (:mod:`tests.rows_tolerance`), which also names the
columns not compared. Both sit beside the golden rows, outside the package under test.
A change of ``SCHEMA_VERSION`` fails here until the golden rows are regenerated in the
same commit (``python tests/test_rows_unchanged.py`` prints the config hashes it moves).

Floats are not compared bitwise: the file was written on another machine (AMD EPYC,
OpenBLAS 0.3.31 with its Haswell kernel, numpy 2.4.6, whose SIMD loops differ where the
processor does), and another BLAS kernel or SIMD loop rounds differently. The
tolerance is a multiple of the spread measured on the golden cases
(``python tests/test_rows_unchanged.py --out FILE`` under each set-up, then
``--spread FILE ...``): the largest difference per column between three set-ups of an
AMD EPYC without AVX-512 (OpenBLAS's default Haswell kernel; OPENBLAS_CORETYPE=
Sandybridge, AVX without FMA; the same with numpy's SIMD loops limited to SSE4.2,
NPY_DISABLE_CPU_FEATURES=X86_V3; all set in the shell, never here), and between the
stored file and each of them:

=================================== ========= ========= ==============
columns                             this      stored    tolerance
                                    machine   vs this   rel; floor
=================================== ========= ========= ==============
kernel_approx* errors               3.8e-15   5.3e-15   1e-12; 1e-12
pair_mse mse, rel_fro_error         5.1e-16   2.2e-15   1e-12; 1e-12
variance_ratio ratio, sq_error, ... 9.9e-15   1.8e-14   1e-12; 1e-12
krr rel_spec_error                  2.0e-14   2.0e-14   1e-12; 1e-12
downstream, krr accuracies, lambda_ 0         0         1e-12; 1e-12
qmc_discrepancy discrepancy         2.7e-13   3.7e-12   1e-12; 1e-11
qmc_adaptive (every float column)   3.5e-10   1.5e-9    1e-8; 1e-8
=================================== ========= ========= ==============

(relative to max(|a|, |b|); the floor is relative to the column's median |value|). On
an AMD EPYC with AVX-512 (OpenBLAS's SkylakeX kernel, numpy's AVX-512 loops) the stored
file differs by at most 8.4e-15 (qmc_adaptive 3.3e-9). The
causes are in docs/verification.md, "Golden rows across machines". Bit-identity holds
on one machine and is tested there: rerun, resume and every launcher
(tests/test_runner.py, tests/test_cli.py). Regenerate (only for a change meant to
alter rows, with the reason in the commit): ``python tests/test_rows_unchanged.py``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

if __name__ == "__main__":  # run as a script: the repository root holds ``tests``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import need_mirror  # noqa: E402
from tests.rows_tolerance import compared, disagreements, tolerance  # noqa: E402

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
    return not compared(column)


def _machine() -> dict[str, str]:
    """Where the file was written (a record: the comparison does not depend on it)."""
    import numpy
    import scipy
    from threadpoolctl import threadpool_info

    from kernelbench.results import _cpu_model, blas_info

    kernels = [i.get("architecture") for i in threadpool_info() if i.get("user_api") == "blas"]
    return {
        "cpu": _cpu_model(),
        "blas": blas_info()[0],
        "blas_kernel": str(kernels[0] if kernels else None),
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


def check_schema(golden: dict, schema_version: int) -> None:
    """Fail, saying what to do, where the golden rows predate the current schema: the
    config hashes are then compared against rows of another schema and cannot agree."""
    assert golden["schema_version"] == schema_version, (
        f"SCHEMA_VERSION is {schema_version}, the golden rows were written under "
        f"{golden['schema_version']}: regenerate them in the same commit "
        "(python tests/test_rows_unchanged.py, which prints the config hashes it moves) "
        "and show that hash diff in the commit message"
    )


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("name", list(CELLS))
def test_rows_unchanged(name, golden, tmp_path):
    from kernelbench.results import SCHEMA_VERSION

    if name in NEEDS_MIRROR:
        need_mirror("eeg.npz")
    check_schema(golden, SCHEMA_VERSION)
    want = golden["cells"][name]
    have = run_rows(name, tmp_path / "out")
    assert sorted(have) == sorted(want), "shard paths changed"
    for shard, rows in want.items():
        got = have[shard]
        assert got["config_hash"] == rows["config_hash"], f"{shard}: config hash changed"
        assert sorted(got["columns"]) == sorted(rows["columns"]), f"{shard}: columns changed"
        protocol = shard.split("/", 1)[0]
        for column, values in rows["columns"].items():
            new = got["columns"][column]
            assert len(new) == len(values), f"{shard}: {column} has other rows"
            bad = disagreements(protocol, column, new, values)
            assert not bad, (
                f"{shard}: {column} changed beyond {tolerance(protocol, column)} in rows "
                f"{bad[:5]}: {[new[i] for i in bad[:3]]} vs {[values[i] for i in bad[:3]]}"
            )


def main(argv: list[str] | None = None) -> None:
    """Write ``tests/data/rows_golden.json`` from this checkout (``--out FILE``: write
    the rows elsewhere, e.g. under another BLAS kernel; ``--spread A B ...``: print the
    largest difference per float column between such files)."""
    import argparse
    import tempfile

    from kernelbench.results import SCHEMA_VERSION

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--out", type=Path, default=GOLDEN)
    parser.add_argument("--spread", type=Path, nargs="+", metavar="ROWS")
    args = parser.parse_args(argv)
    if args.spread:
        _print_spread([json.loads(f.read_text())["cells"] for f in args.spread])
        return
    if not os.environ.get("KERNELBENCH_DATA"):
        raise SystemExit("set KERNELBENCH_DATA: the krr cell reads the mirror")
    cells = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in CELLS:
            cells[name] = run_rows(name, Path(tmp) / name)
            print(name, len(cells[name]), "shards", flush=True)
    payload = {"schema_version": SCHEMA_VERSION, "machine": _machine(), "cells": cells}
    if args.out.is_file():
        _print_hash_diff(json.loads(args.out.read_text()), payload)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")


def hash_diff(old: dict, new: dict) -> list[str]:
    """One line per shard whose config hash moves between two golden files (``-`` where
    a shard is absent from one of them), after the schema versions."""
    lines = [f"schema_version {old.get('schema_version')} -> {new['schema_version']}"]
    for name in sorted({*old["cells"], *new["cells"]}):
        a, b = old["cells"].get(name, {}), new["cells"].get(name, {})
        for shard in sorted({*a, *b}):
            ha = ",".join(a[shard]["config_hash"]) if shard in a else "-"
            hb = ",".join(b[shard]["config_hash"]) if shard in b else "-"
            if ha != hb:
                lines.append(f"{shard}: {ha} -> {hb}")
    return lines


def _print_hash_diff(old: dict, new: dict) -> None:
    lines = hash_diff(old, new)
    print(f"config hashes moved in {len(lines) - 1} shards:", *lines, sep="\n")


def _print_spread(runs: list[dict]) -> None:
    """Per (cell, column): the largest |a - b| over rows and over pairs of ``runs``,
    that difference relative to max(|a|, |b|), and the column's median |value|."""
    first = runs[0]
    for name, shards in first.items():
        seen: dict[str, list[float]] = {}
        for shard, rows in shards.items():
            for column, values in rows["columns"].items():
                if not any(isinstance(v, float) for v in values):
                    continue
                entry = seen.setdefault(column, [0.0, 0.0, 0.0])
                floats = [abs(v) for v in values if isinstance(v, float)]
                entry[2] = max(entry[2], float(np.median(floats)))
                for other in runs[1:]:
                    for a, b in zip(values, other[name][shard]["columns"][column], strict=True):
                        if a == b or not (isinstance(a, float) and isinstance(b, float)):
                            continue
                        entry[0] = max(entry[0], abs(a - b))
                        entry[1] = max(entry[1], abs(a - b) / max(abs(a), abs(b)))
        for column, (diff, rel, typical) in sorted(seen.items()):
            print(
                f"{name:24s} {column:28s} abs {diff:9.2e}  rel {rel:9.2e}  |median| {typical:9.2e}"
            )


if __name__ == "__main__":
    main()
