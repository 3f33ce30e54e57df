"""``hydra/launcher=slurm`` (hydra-submitit-launcher) on a real SLURM cluster: the
single node that ``.ci/slurm_up`` starts (Debian's slurm-wlm and munge; no accounting).
Under ``CI=true`` a missing cluster fails these tests; elsewhere they skip, saying why.
The partition checks (:mod:`kernelbench.slurm`) are tested without a cluster too."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelbench.errors import KernelbenchError
from kernelbench.results import read_results
from kernelbench.slurm import Partition, fit, parse_minutes, partitions
from tests.test_cli import kb
from tests.test_interrupt import assert_same_rows

SLURM = ("hydra/launcher=slurm",)


def _why_no_cluster() -> str | None:
    """None when a SLURM node answers and takes jobs, else why not."""
    try:
        import hydra_plugins.hydra_submitit_launcher  # noqa: F401
    except ImportError:
        return "hydra-submitit-launcher is not installed (pip install -e '.[slurm]')"
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "no SLURM here (sbatch, sinfo not on PATH; .ci/slurm_up starts one as root)"
    proc = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"sinfo failed: {proc.stderr.strip()[:200]} (is slurmctld running?)"
    if not re.search(r"^(idle|mix|alloc)", proc.stdout, re.MULTILINE):
        return f"no SLURM node takes jobs (sinfo states: {' '.join(proc.stdout.split())})"
    return None


@pytest.fixture(scope="module")
def cluster() -> dict[str, Partition]:
    why = _why_no_cluster()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and no SLURM cluster: {why}", pytrace=False)
        pytest.skip(why)
    return partitions()


def _args(out: Path, runs: int, *extra: str) -> list[str]:
    """Two cells (seeds 1 and 2)."""
    return [
        "run",
        "-m",
        "seed=1,2",
        "method=sr33",
        "kernel=arccos0",
        "n=1.5",
        f"runs={runs}",
        "dataset.splits.kernel_approx.samples=100",
        f"output_dir={out}",
        *extra,
    ]


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Path:
    """The two cells of 480 runs, run here (the basic launcher)."""
    out = tmp_path_factory.mktemp("local")
    kb(*_args(out, 480), cwd=out)
    return out


def _same_shards(a: Path, b: Path) -> None:
    ra, rb = read_results(a), read_results(b)
    assert len(list(a.rglob("*.parquet"))) == len(list(b.rglob("*.parquet"))) == 2
    for seed in (1, 2):
        assert_same_rows(ra[ra["seed"] == seed], rb[rb["seed"] == seed])


def test_a_sweep_on_slurm_with_the_launchers_defaults_equals_a_local_run(cluster, local, tmp_path):
    """With the launcher's defaults only: those the partition cannot hold are lowered
    to its limits in one line (the defaults ask for 4 CPUs and 120 min); the cluster
    keeps no accounting, said in one line instead of submitit's warnings; the shards
    equal a local run's bit for bit."""
    out = tmp_path / "out"
    done = kb(*_args(out, 480, *SLURM), cwd=tmp_path)
    lines = done.stderr.splitlines()
    part = next(p for p in cluster.values() if p.default)
    lowered = []
    if part.cpus < 4:
        lowered.append(f"cpus_per_task={part.cpus} (default 4)")
    if part.max_minutes is not None and part.max_minutes < 120:
        lowered.append(f"timeout_min={part.max_minutes} (default 120)")
    expected = [
        "slurm: this cluster keeps no accounting (sacct fails), so kernelbench follows the "
        "jobs by their results; squeue shows those still queued or running"
    ]
    if lowered:
        expected.insert(
            0,
            f"slurm: partition {part.name} takes at most {part.cpus} CPUs, "
            f"{part.memory_mb} MB and {part.max_minutes or 'unlimited'} min per "
            f"job: asking for {', '.join(lowered)}; set hydra.launcher.<setting> "
            "to choose",
        )
    assert lines[: len(expected)] == expected, done.stderr
    assert len(lines) == len(expected) + 1 and lines[-1].startswith("plan: 2 cells, ")
    assert "2 of 2 cells: 2 computed" in done.stdout
    _same_shards(out, local)


def _job_id(out: Path) -> str | None:
    """The SLURM job (array) the sweep under ``out`` submitted (submitit's folders)."""
    for path in out.rglob(".submitit/*"):
        if path.is_dir() and path.name.isdigit():
            return path.name
    return None


def test_scancel_mid_cell_keeps_the_finished_runs_and_a_rerun_is_bit_identical(
    cluster, local, tmp_path
):
    """``scancel`` of the sweep once both cells (one CPU each, side by side) kept runs:
    SLURM sends SIGTERM, each cell keeps its finished runs (exit 143, one line naming
    them); the rerun completes both, equal to a local run bit for bit."""
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["KERNELBENCH_CHECKPOINT"] = "0"
    one_cpu = (*SLURM, "hydra.launcher.cpus_per_task=1", "hydra.launcher.timeout_min=10")
    for runs in (480, 1920, 7680):  # a longer cell when one ended before the scancel
        out = tmp_path / f"out{runs}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernelbench.cli", *_args(out, runs, *one_cpu)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while len(list(out.rglob("*.parquet"))) < 2 and proc.poll() is None:
            time.sleep(0.01)
        job = _job_id(out)
        if proc.poll() is None and job is not None:
            subprocess.run(["scancel", job], check=True)
        stdout, stderr = proc.communicate(timeout=600)
        if proc.returncode != 0:
            break
    else:
        pytest.fail("every sweep ended before it could be cancelled")
    assert proc.returncode == 128 + signal.SIGTERM, (stdout, stderr)
    line = stderr.splitlines()[-1]
    shards = {str(p): int(read_results(p)["runs"].iloc[0]) for p in out.rglob("*.parquet")}
    kept = {p: k for p, k in shards.items() if k < runs}
    assert kept and line.endswith("; rerun to continue"), line
    for path, k in kept.items():
        assert 16 <= k and f": kept {k} of {runs} runs in {path}" in line
    again = kb(*_args(out, runs, *one_cpu), cwd=tmp_path)
    assert f"2 of 2 cells: {len(kept)} extended from kept runs" in again.stdout
    whole = local if runs == 480 else tmp_path / "whole"
    if runs != 480:
        kb(*_args(whole, runs), cwd=tmp_path)
    _same_shards(out, whole)


@pytest.mark.parametrize(
    "setting, said",
    [
        ("hydra.launcher.cpus_per_task=4096", "hydra.launcher.cpus_per_task=4096 does not fit"),
        ("hydra.launcher.mem_gb=100000", "hydra.launcher.mem_gb=100000 does not fit"),
        ("hydra.launcher.partition=nopart", "unknown partition 'nopart'; valid choices: "),
    ],
)
def test_a_request_the_cluster_cannot_satisfy_is_refused_before_submission(
    cluster, tmp_path, setting, said
):
    proc = kb(*_args(tmp_path / "out", 4, *SLURM, setting), cwd=tmp_path, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"Error: {said}")
    assert _job_id(tmp_path) is None  # nothing submitted


# -- the partition checks, without a cluster -------------------------------------------

PARTS = {
    "ci": Partition("ci", True, cpus=2, memory_mb=22900, max_minutes=60),
    "big": Partition("big", False, cpus=64, memory_mb=512000, max_minutes=None),
}
DEFAULTS = {"partition": None, "cpus_per_task": 4, "mem_gb": 8, "timeout_min": 120}


@pytest.mark.parametrize(
    "text, minutes",
    [
        ("60", 60),
        ("1:00:00", 60),
        ("30:00", 30),
        ("0:30", 1),
        ("2-12:00:00", 3600),
        ("1-2", 1560),
        ("1-0:05", 1445),
        ("infinite", None),
        ("UNLIMITED", None),
    ],
)
def test_slurm_time_formats_in_minutes(text, minutes):
    assert parse_minutes(text) == minutes


def test_defaults_beyond_the_partition_are_lowered_and_said():
    lowered, note = fit(DEFAULTS, set(), PARTS)
    assert lowered == {"cpus_per_task": 2, "timeout_min": 60}
    assert note is not None and "cpus_per_task=2 (default 4), timeout_min=60 (default 120)" in note
    assert fit({**DEFAULTS, "partition": "big"}, set(), PARTS) == ({}, None)


@pytest.mark.parametrize(
    "key, value, limit",
    [("cpus_per_task", 3, 2), ("mem_gb", 23, 22), ("timeout_min", 61, 60)],
)
def test_a_request_beyond_the_partition_is_refused_naming_what_to_set(key, value, limit):
    request = {**DEFAULTS, "cpus_per_task": 1, "timeout_min": 10, key: value}
    with pytest.raises(KernelbenchError, match=f"set hydra.launcher.{key}={limit} or less"):
        fit(request, {key}, PARTS)
    request[key] = limit  # at the limit: fits
    assert fit(request, {key}, PARTS) == ({}, None)


def test_tasks_per_node_share_the_nodes_cpus_and_an_unknown_partition_names_the_valid():
    request = {**DEFAULTS, "cpus_per_task": 2, "tasks_per_node": 2, "timeout_min": 10}
    with pytest.raises(KernelbenchError, match="2 CPUs for 2 tasks.*cpus_per_task=1 or less"):
        fit(request, {"cpus_per_task"}, PARTS)
    with pytest.raises(KernelbenchError, match="unknown partition 'x'; valid choices: big, ci"):
        fit({**DEFAULTS, "partition": "x"}, {"partition"}, PARTS)


def test_sinfo_lines_give_each_partitions_largest_node():
    class Done:
        returncode, stderr = 0, ""
        stdout = "ci*|2|22900|1:00:00\nbig|32|1000|infinite\nbig|64|900|infinite\n"

    found = partitions(run=lambda *a, **k: Done())
    assert found["ci"] == PARTS["ci"]
    assert found["big"] == Partition("big", False, cpus=64, memory_mb=1000, max_minutes=None)
