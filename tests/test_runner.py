"""The per-cell experiment, resume, in-process grids and the override planner."""

from __future__ import annotations

import platform
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from kernelbench.cell import build_cell, cell_shard_path, shard_schema
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_and_store, run_cell, run_grid
from kernelbench.launch import plan
from kernelbench.protocols import get_protocol
from kernelbench.protocols.kernel_approx import batch_runs
from kernelbench.results import read_results
from kernelbench.validation import check_n, check_runs

SAMPLES = 60
SCHEMA = shard_schema(get_protocol("kernel_approx"))
COLUMNS = SCHEMA.names


def _cell(method="rff", kernel="rbf", n=1, runs=3, **kw):
    cell = make_cell(method, kernel, "digits", n=n, runs=runs, **kw)
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = SAMPLES
    return cell


def test_run_cell_rows_and_schema():
    df = run_cell(_cell("sr33", "arccos1", n=2, runs=4))
    assert list(df.columns) == COLUMNS
    pa.Table.from_pandas(df, schema=SCHEMA, preserve_index=False)  # types fit the schema
    assert df["run"].tolist() == [0, 1, 2, 3]
    assert (df["d"] == 64).all() and (df["samples"] == SAMPLES).all()
    assert (df["D"] == 2 * 2 * (64 + 1)).all()
    assert (df["method"] == "sr33").all() and (df["paper_label"] == "B").all()
    assert df["method_params"].iloc[0] == '{"rotation":"butterfly"}'
    for col in ("rel_fro_error", "rel_spec_error", "fit_seconds", "transform_seconds"):
        assert np.isfinite(df[col]).all() and (df[col] >= 0).all()
    assert 0 < df["rel_fro_error"].mean() < 0.5
    assert df["rel_fro_error"].nunique() == 4  # fresh draws


def test_rel_errors_match_a_direct_computation():
    from kernelbench.datasets import kernel_approx_pair
    from kernelbench.features import make_feature_map
    from kernelbench.kernels import exact_kernel
    from kernelbench.seeding import derive_rng

    cell = _cell("orf", "rbf", n=1, runs=2)
    df = run_cell(cell)
    X, Y, _ = kernel_approx_pair(cell["dataset"], 0, cell["data"])
    K = exact_kernel("rbf", X, Y)
    rng = derive_rng(0, "digits", "rbf", "orf", 1, 1)
    fm = make_feature_map("orf", kernel="rbf", n=1, random_state=rng, construction="stacked")
    E = K - fm.fit(X).approximate_kernel(X, Y)
    assert df["rel_fro_error"].iloc[1] == pytest.approx(np.linalg.norm(E) / np.linalg.norm(K))
    assert df["rel_spec_error"].iloc[1] == pytest.approx(
        np.linalg.norm(E, 2) / np.linalg.norm(K, 2), rel=1e-10
    )


def test_runs_are_independent_of_the_number_of_runs():
    a = run_cell(_cell("qmc", "arccos0", runs=2))
    b = run_cell(_cell("qmc", "arccos0", runs=4))
    cols = ["rel_fro_error", "rel_spec_error", "D"]
    assert a[cols].equals(b[cols].iloc[:2])
    again = run_cell(_cell("qmc", "arccos0", runs=2))
    assert a[cols].equals(again[cols])


def test_variants_of_one_method_get_distinct_streams():
    a = run_cell(_cell("sr33", runs=2))
    b = run_cell(_cell("sr33_haar", runs=2))
    assert (a["method"] == b["method"]).all()
    assert not np.array_equal(a["rel_fro_error"], b["rel_fro_error"])


def test_validation():
    assert check_n(2.0) == 2 and isinstance(check_n(2.0), int) and check_n(0.5) == 0.5
    for bad in (0, -1, float("nan"), "1", True, None):
        with pytest.raises(KernelbenchError, match="n must be a positive number"):
            check_n(bad)
    for bad in (0, -3, 1.5, True):
        with pytest.raises(KernelbenchError, match="runs must be a positive integer"):
            check_runs(bad)
    with pytest.raises(KernelbenchError, match="unknown protocol 'x'"):
        build_cell(_cell(protocol="x"))


def test_runs_default_to_the_protocol():
    cell = _cell(runs=None)
    proto_runs = cell["dataset"]["splits"]["kernel_approx"]["runs"]
    assert build_cell(cell).runs == proto_runs
    assert build_cell(cell).config_hash == build_cell(_cell(runs=proto_runs)).config_hash


def test_config_hash_covers_what_determines_the_numbers():
    h = build_cell(_cell()).config_hash
    assert build_cell(_cell(output_dir="elsewhere", overwrite=True)).config_hash == h
    assert build_cell(_cell(blas_threads=None)).config_hash == h
    assert build_cell(_cell(n=1.0)).config_hash == h
    changed = [
        _cell(n=2),
        _cell(runs=4),
        _cell(seed=1),
        _cell("orf"),
        _cell(kernel="arccos0"),
        _cell(experiment="other"),
    ]
    cell = _cell()
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = SAMPLES + 1
    changed.append(cell)
    cell = _cell("sorf")
    cell["method"]["params"]["n_blocks"] = 2
    changed.append(cell)
    hashes = {build_cell(c).config_hash for c in changed}
    assert h not in hashes and len(hashes) == len(changed)


def _where(cell, root):
    """The shard path and the printed name of a cell."""
    cell = build_cell(cell)
    return cell_shard_path(cell, root), cell.name


def test_resume_skips_finished_cells(tmp_path):
    lines = []
    df = run_and_store(_cell(), tmp_path, echo=lines.append)
    path, name = _where(_cell(), tmp_path)
    assert len(df) == 3 and path.is_file()
    assert lines[-1].startswith(f"{name}: rel_fro ") and "(3 runs)" in lines[-1]
    stamp = path.stat().st_mtime_ns
    assert run_and_store(_cell(), tmp_path, echo=lines.append) is None
    assert lines[-1] == f"{name}: skipped (done)"
    assert path.stat().st_mtime_ns == stamp
    # overwrite recomputes the same numbers
    again = run_and_store(_cell(), tmp_path, overwrite=True, echo=lines.append)
    assert again["rel_fro_error"].equals(df["rel_fro_error"])
    # another config of the same cell replaces the stale shard
    run_and_store(_cell(runs=2), tmp_path, echo=lines.append)
    assert lines[-2] == f"{name}: config changed, recomputing"
    assert len(read_results(tmp_path)) == 2


def test_resume_extends_a_shard_with_fewer_runs(tmp_path):
    lines = []
    run_and_store(_cell(runs=2), tmp_path, echo=lines.append)
    path, name = _where(_cell(), tmp_path)
    first = read_results(tmp_path)
    extended = run_and_store(_cell(runs=5), tmp_path, echo=lines.append)
    assert lines[-2] == f"{name}: extending 2 runs to 5"
    assert "(5 runs)" in lines[-1]
    fresh = run_cell(_cell(runs=5))
    stored = read_results(tmp_path)
    cols = ["run", "runs", "config_hash", "D", "rel_fro_error", "rel_spec_error"]
    for df in (extended, stored):
        assert df[cols].equals(fresh[cols])  # the same rows as a fresh 5-run cell
    # the two finished runs were kept, not measured again
    assert (stored["started_at"].iloc[:2] == first["started_at"]).all()
    assert (stored["started_at"].iloc[2:] > first["started_at"].iloc[0]).all()
    assert run_and_store(_cell(runs=5), tmp_path, echo=lines.append) is None
    # fewer runs recompute the cell; another seed is another cell with its own shard
    run_and_store(_cell(runs=4), tmp_path, echo=lines.append)
    assert lines[-2] == f"{name}: config changed, recomputing"
    run_and_store(_cell(runs=6, seed=1), tmp_path, echo=lines.append)
    other, other_name = _where(_cell(seed=1), tmp_path)
    assert other != path and other_name.startswith("digits rbf rff seed=1 h=")
    assert lines[-1].startswith(f"{other_name}: rel_fro ")
    assert path.is_file() and other.is_file() and len(read_results(tmp_path)) == 4 + 6


def test_run_cell_from_a_later_run():
    full = run_cell(_cell(runs=4))
    tail = run_cell(_cell(runs=4), start=2)
    assert tail["run"].tolist() == [2, 3]
    assert tail["rel_fro_error"].tolist() == full["rel_fro_error"].iloc[2:].tolist()
    with pytest.raises(ValueError, match="start"):
        run_cell(_cell(runs=4), start=4)


def test_run_grid_in_process(tmp_path, monkeypatch):
    import kernelbench.experiment as ex

    make = ex.make_cell

    def small(*args, **kwargs):  # digits with fewer samples, for speed
        cell = make(*args, **kwargs)
        cell["dataset"]["splits"]["kernel_approx"]["samples"] = SAMPLES
        return cell

    monkeypatch.setattr(ex, "make_cell", small)

    def grid(out):
        return run_grid(methods=["rff", "sr33"], kernels=["rbf"], ns=[1, 2], runs=2, output_dir=out)

    first = grid(tmp_path)
    second = grid(tmp_path)  # all skipped, read back from the shards
    memory = grid(None)
    assert len(first) == 2 * 2 * 2
    cols = ["method_label", "n", "run", "rel_fro_error", "rel_spec_error"]
    assert first[cols].equals(second[cols])
    assert first[cols].equals(memory[cols])


# -- the override planner (validation before Hydra) --------------------------------------


def test_plan_bare_run_is_the_quick_grid():
    args, multirun, cells = plan([], False)
    assert multirun and args == ["--multirun", "experiment=quick"]
    assert cells == 3 * 2 * 2
    args, multirun, _ = plan(["output_dir=/tmp/x", "runs=2"], False)
    assert args == ["--multirun", "experiment=quick", "output_dir=/tmp/x", "runs=2"]


def test_plan_single_cell_and_sweeps():
    assert plan(["method=sr33", "kernel=arccos1"], False) == (
        ["method=sr33", "kernel=arccos1"],
        False,
        1,
    )
    args, multirun, cells = plan(["method=rff,sr33", "n=range(1,4)"], True)
    assert multirun and cells == 6
    args, multirun, cells = plan(["experiment=fig1_reduced"], False)
    assert multirun and cells == 3 * 3 * 6 * 3
    _, _, cells = plan(["experiment=fig1_reduced", "dataset=letter"], False)
    assert cells == 3 * 6 * 3
    # Hydra flags pass through untouched
    args, _, _ = plan(["--cfg", "job", "method=rff"], False)
    assert args == ["--cfg", "job", "method=rff"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["method=foo"],
            "unknown method 'foo'; valid choices: fastfood, gq, lev_rff, nystrom, orf, orf_tallqr",
        ),
        (["kernel=rbf,poly"], "unknown kernel 'poly'; valid choices: arccos0, arccos1, rbf"),
        (["dataset=nope"], "unknown dataset 'nope'; valid choices: "),
        (["experiment=fig9"], "unknown experiment 'fig9'; valid choices: fig1, fig1_noqmc"),
        (["n=0"], "n must be a positive number, got 0"),
        (["n=1,-2"], "n must be a positive number, got -2"),
        (["runs=0"], "runs must be a positive integer, got 0"),
        (["runs=2.5"], "runs must be a positive integer, got 2.5"),
        (["method=[rff"], "invalid override: "),
    ],
)
def test_plan_rejects_bad_input(args, message):
    with pytest.raises(KernelbenchError) as info:
        plan(args, True)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("method", "n"), [("rff", 1), ("sr33", 2), ("orf_tallqr", 0.5)])
def test_batched_runs_give_the_rows_of_runs_one_by_one(method, n):
    """kernel_approx measures a batch with one stacked product: same rows, bit for bit."""

    cell = build_cell(make_cell(method, "arccos0", "digits", n, runs=7))
    proto = get_protocol(cell)
    assert batch_runs(cell) > 1
    ctx = proto.prepare(cell)
    batched = proto.measure(cell, ctx, range(7)) + proto.measure(cell, ctx, range(7, 9))
    single = [proto.measure(cell, ctx, [r])[0] for r in range(9)]
    keys = ["D", "n_features", "rel_fro_error", "rel_spec_error"]
    assert [[row[k] for k in keys] for row in batched] == [[row[k] for k in keys] for row in single]
    # and through the runner: rows do not depend on the batch size
    df = run_cell(cell)
    assert df["rel_fro_error"].tolist() == [row["rel_fro_error"] for row in single[:7]]


def test_a_batch_does_not_keep_the_fitted_maps():
    """A batch holds the runs' features, not their maps: with d = 512 and 10 points an
    orf_tallqr map at n = 5 stores 5130 x 512 reflector entries (21 MB) and its features
    0.8 MB, so 16 kept maps would peak at over 16 times one map."""
    import tracemalloc

    from kernelbench.kernels import exact_kernel
    from kernelbench.protocols.common import Pair, feature_map

    cell = make_cell("orf_tallqr", "rbf", "digits", 5, runs=16)
    cell["method"]["params"]["dense_limit_mb"] = 0  # the reflectors only, W not formed
    cell = build_cell(cell)
    proto = get_protocol(cell)
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(size=(10, 512)), rng.uniform(size=(10, 512))
    K = exact_kernel("rbf", X, Y)
    ctx = Pair(X, Y, K, float(np.linalg.norm(K)), float(np.linalg.norm(K, 2)), {})
    fm = feature_map(cell, 0, d=512).fit(X)
    map_bytes = sum(V.nbytes + T.nbytes for Q, _ in fm.blocks_ for _, V, T in Q.panels)
    del fm
    assert batch_runs(cell) >= 16
    tracemalloc.start()
    try:
        rows = proto.measure(cell, ctx, range(16))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) == 16
    assert peak < 4 * map_bytes


def test_a_cell_keeps_its_heap_pages(monkeypatch):
    """run_cell applies glibc's heap settings (HEAP_SETTINGS) before measuring; on glibc
    they take (mallopt returns 1), elsewhere it is a no-op that says so."""
    from kernelbench import experiment

    calls = []
    monkeypatch.setattr(experiment, "keep_heap_pages", lambda: calls.append(1) or True)
    run_cell(_cell(runs=1))
    assert calls == [1]
    monkeypatch.undo()
    assert experiment.keep_heap_pages() is (platform.libc_ver()[0] == "glibc")
    assert experiment.HEAP_SETTINGS["M_MMAP_THRESHOLD"] == 256 * 2**20


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_the_heap_settings_keep_a_freed_array_resident_for_the_next_run():
    """What the settings are for: an array of 100 MiB, freed, stays in the heap, resident,
    for the next allocation, where glibc's defaults unmap it (and the next run faults
    its zeroed pages in again). Resident memory from /proc, each way in a fresh
    interpreter."""
    code = (
        "import os, sys, numpy as np\n"
        "from kernelbench.experiment import keep_heap_pages\n"
        "if sys.argv[1] == '1': assert keep_heap_pages()\n"
        "page = os.sysconf('SC_PAGE_SIZE')\n"
        "def rss(): return int(open('/proc/self/statm').read().split()[1]) * page\n"
        "a = np.ones(100 * 2**17); before = rss(); del a\n"
        "print((before - rss()) / 2**20)\n"
    )
    freed = {
        on: float(
            subprocess.run(
                [sys.executable, "-c", code, on], capture_output=True, text=True, check=True
            ).stdout
        )
        for on in ("0", "1")
    }
    assert freed["0"] > 90  # the defaults give the 100 MiB back at once
    assert freed["1"] < 10, freed
