"""An interrupted cell keeps its finished runs; a rerun continues from the next run and
ends with the rows of an uninterrupted run, bit for bit (the stable columns)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from kernelbench.cell import build_cell, cell_shard_path
from kernelbench.errors import Interrupted
from kernelbench.experiment import make_cell, run_and_store
from kernelbench.protocols import get_protocol
from kernelbench.results import is_stable, read_results, shard_config_hash
from tests.conftest import need_mirror
from tests.test_cli import kb


def stable(df: pd.DataFrame) -> pd.DataFrame:
    df = df.sort_values("run", kind="stable").reset_index(drop=True)
    return df[[c for c in df.columns if is_stable(c)]]


def assert_same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    a, b = stable(a), stable(b)
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for col in a.columns:  # bit for bit (NaN where both are)
        assert a[col].equals(b[col]), col


def _interrupt_at(monkeypatch, protocol: str, run: int, signum: int | None = None) -> None:
    """The protocol's measure raises an interrupt (as Ctrl-C or SIGTERM would) when it
    reaches ``run``: the batches before it finished."""
    proto = get_protocol(protocol)
    measure = type(proto).measure

    def interrupted(self, cell, ctx, runs):
        if run in runs:
            raise KeyboardInterrupt() if signum is None else Interrupted("terminated", signum)
        return measure(self, cell, ctx, runs)

    monkeypatch.setattr(type(proto), "measure", interrupted)


def _digits(runs: int, method: str = "sr33", **kw) -> dict:
    cell = make_cell(method, "arccos0", "digits", n=1.5, runs=runs, **kw)
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = 40  # 16 runs per batch
    return cell


@pytest.mark.parametrize("stop", [5, 40])
def test_an_interrupted_cell_keeps_its_batches_and_a_rerun_completes_it(
    tmp_path, monkeypatch, stop
):
    """Interrupted at run 5 (first batch: nothing finished) or 40 (two batches of 16
    finished), then once more while extending, then completed: the rows of one
    uninterrupted run."""
    monkeypatch.setenv("KERNELBENCH_CHECKPOINT", "3600")  # kept on the interrupt alone
    path = cell_shard_path(build_cell(_digits(50)), tmp_path)
    name = build_cell(_digits(50)).name
    lines: list[str] = []
    with monkeypatch.context() as m:
        _interrupt_at(m, "kernel_approx", stop)
        with pytest.raises(Interrupted) as err:
            run_and_store(_digits(50), tmp_path, echo=lines.append)
    kept = 32 if stop == 40 else 0
    if not kept:
        assert str(err.value) == f"{name}: no run had finished"
        assert not path.exists()
        return
    assert str(err.value) == f"{name}: kept 32 of 50 runs in {path}; rerun to continue"
    part = read_results(path)
    assert sorted(part["run"]) == list(range(32)) and set(part["runs"]) == {32}
    # the partial shard is the cell with 32 runs: done for runs=32, extended for more
    assert shard_config_hash(path) == build_cell(_digits(32)).config_hash
    assert run_and_store(_digits(32), tmp_path, echo=None) is None
    with monkeypatch.context() as m:  # interrupted again while extending: keeps 48
        _interrupt_at(m, "kernel_approx", 48)
        with pytest.raises(Interrupted, match="kept 48 of 50 runs"):
            run_and_store(_digits(50), tmp_path, echo=lines.append)
    assert lines[-1].endswith("extending 32 runs to 50")
    run_and_store(_digits(50), tmp_path, echo=lines.append)
    assert "extending 48 runs to 50" in lines[-2]
    whole = run_and_store(_digits(50), tmp_path / "whole", echo=None)
    final = read_results(path)
    assert_same_rows(final, whole)
    assert set(final["runs"]) == {50}
    assert shard_config_hash(path) == build_cell(_digits(50)).config_hash


def test_sigterm_keeps_runs_and_a_cell_that_is_not_resumed_keeps_none(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_CHECKPOINT", "3600")
    with monkeypatch.context() as m:
        _interrupt_at(m, "kernel_approx", 20, signum=signal.SIGTERM)
        with pytest.raises(Interrupted, match="kept 16 of 30 runs") as err:
            run_and_store(_digits(30), tmp_path, echo=None)
    assert err.value.signum == signal.SIGTERM
    cell = make_cell("sr33", "rbf", "digits", n=1, runs=3, protocol="walltime")
    cell["protocol"]["repeats"] = 1
    with monkeypatch.context() as m:
        _interrupt_at(m, "walltime", 1)
        with pytest.raises(Interrupted, match=r"nothing kept \(walltime cells are not resumed\)"):
            run_and_store(cell, tmp_path, echo=None)


def test_periodic_checkpoints_keep_runs_a_kill_would_lose(tmp_path, monkeypatch):
    """With checkpoints after every batch, the shard holds the finished batches while
    the cell runs (what survives a SIGKILL); each is a valid shard of fewer runs."""
    monkeypatch.setenv("KERNELBENCH_CHECKPOINT", "0")
    path = cell_shard_path(build_cell(_digits(40)), tmp_path)
    seen: list[int] = []
    proto = get_protocol("kernel_approx")
    measure = type(proto).measure

    def watched(self, cell, ctx, runs):
        if path.exists():
            seen.append(int(read_results(path)["runs"].iloc[0]))
        return measure(self, cell, ctx, runs)

    monkeypatch.setattr(type(proto), "measure", watched)
    df = run_and_store(_digits(40), tmp_path, echo=None)
    assert seen == [16, 32]
    assert_same_rows(read_results(path), df)


def _run_args(out: Path, runs: int, *extra: str) -> list[str]:
    return [
        "run",
        *extra,
        "method=sr33",
        "kernel=arccos0",
        "n=1.5",
        f"runs={runs}",
        "dataset.splits.kernel_approx.samples=100",
        f"output_dir={out}",
    ]


#: A joblib sweep of two cells (seeds 1 and 2) run by two workers at once.
JOBLIB = ("-m", "seed=1,2", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")


def _interrupt_run(
    tmp_path: Path, signum: int, extra: tuple[str, ...] = (), cells: int = 1, group: bool = False
) -> tuple[subprocess.Popen, str, str, Path, int]:
    """``kernelbench run`` (checkpoints after every batch) sent ``signum`` once each of
    its ``cells`` has kept its first runs (polled for the shards, not timed): to the
    launching process, or to its process group (``group``: a terminal's Ctrl-C, which
    reaches joblib's workers too). (process, stdout, stderr, output dir, runs)."""
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["KERNELBENCH_CHECKPOINT"] = "0"
    # On a loaded machine the poller may sleep through a whole run: then the run ended
    # before the signal (exit 0, nothing interrupted), and the cell is retried 4x longer
    # (a fresh directory each try).
    for runs in (480, 1920, 7680, 30720):
        out = tmp_path / f"out{runs}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernelbench.cli", *_run_args(out, runs, *extra)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal's job
        )
        while len(list(out.rglob("*.parquet"))) < cells and proc.poll() is None:
            time.sleep(0.01)
        if proc.poll() is None:
            if group:
                os.killpg(proc.pid, signum)
            else:
                proc.send_signal(signum)
        # a bound that only a hung process reaches (stopping takes a second)
        stdout, stderr = proc.communicate(timeout=900)
        if proc.returncode != 0:
            return proc, stdout, stderr, out, runs
    pytest.fail("every try ended before its first checkpoint could be interrupted")


@pytest.mark.parametrize(
    "signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_a_signal_to_kernelbench_run_keeps_runs_and_the_rerun_is_bit_identical(
    tmp_path, signum, code
):
    """A real Ctrl-C (SIGINT) or ``kill`` (SIGTERM) sent to ``kernelbench run`` once its
    first runs are kept: exit 128 + the signal and one line saying what was kept; the
    rerun continues from the next run, and its shard equals an uninterrupted run's."""
    proc, stdout, stderr, out, runs = _interrupt_run(tmp_path, signum)
    assert proc.returncode == code, (stdout, stderr)
    assert stdout == ""
    plan_line, line = stderr.splitlines()  # the plan, then what was kept
    assert plan_line.startswith("plan: 1 cells, ")
    path = next(out.rglob("*.parquet"))
    kept = read_results(path)
    k = int(kept["runs"].iloc[0])
    assert 16 <= k < runs and sorted(kept["run"]) == list(range(k))
    name = "digits arccos0 sr33 h=" + path.parent.name.removeprefix("h=") + " n=1.5"
    assert line == f"Interrupted: {name}: kept {k} of {runs} runs in {path}; rerun to continue"
    again = kb(*_run_args(out, runs), cwd=tmp_path)
    assert again.stdout.splitlines()[0] == f"{name}: extending {k} runs to {runs}"
    whole = tmp_path / "whole"
    kb(*_run_args(whole, runs), cwd=tmp_path)
    assert_same_rows(read_results(out), read_results(whole))


_LINE = re.compile(r"Interrupted: (.+?)( \(\d finished cells? kept\))?; rerun to continue")
_KEPT = re.compile(r"\[(\d)/2\] (.+?): kept (\d+) of (\d+) runs in (\S+)")


@pytest.mark.parametrize(
    "signum, code, group",
    [(signal.SIGINT, 130, True), (signal.SIGTERM, 143, False)],
    ids=["SIGINT-group", "SIGTERM"],
)
def test_a_signal_under_joblib_keeps_each_workers_runs_and_the_rerun_is_bit_identical(
    tmp_path, signum, code, group
):
    """Under the joblib launcher (two workers, two cells): a Ctrl-C (SIGINT to the
    process group, workers included) or a ``kill`` of the launching process (SIGTERM,
    forwarded to the workers, which joblib would otherwise kill) once both cells kept
    runs: exit 128 + the signal, one line naming what each cell kept (a cell that
    finished meanwhile counted as kept); the rerun ends with an uninterrupted run's
    shards, bit for bit."""
    proc, stdout, stderr, out, runs = _interrupt_run(tmp_path, signum, JOBLIB, 2, group)
    assert proc.returncode == code, (stdout, stderr)
    plan_line, line = stderr.splitlines()
    assert plan_line.startswith("plan: 2 cells, ")
    said = _LINE.fullmatch(line)
    assert said, line
    parts = [_KEPT.fullmatch(part) for part in said[1].split("; ")]
    assert all(parts), line
    kept = {m[5]: int(m[3]) for m in parts if m}
    assert all(int(m[4]) == runs for m in parts if m)
    shards = {str(p): int(read_results(p)["runs"].iloc[0]) for p in out.rglob("*.parquet")}
    assert kept == {p: k for p, k in shards.items() if k < runs} and kept, line
    finished = [p for p, k in shards.items() if k == runs]  # a cell done before the signal
    assert said[2] == (f" ({len(finished)} finished cell kept)" if finished else None)
    # stdout: the summary line of each finished cell, nothing else
    summary = rf"\[\d/2\] digits arccos0 sr33 seed=\d .*: rel_fro .* \({runs} runs\) \[[\d.]+ s\]"
    assert len(stdout.splitlines()) == len(finished), stdout
    assert all(re.fullmatch(summary, s) for s in stdout.splitlines()), stdout
    assert len(kept) + len(finished) == 2
    for path, k in kept.items():
        assert 16 <= k and sorted(read_results(Path(path))["run"]) == list(range(k))
    again = kb(*_run_args(out, runs, *JOBLIB), cwd=tmp_path)
    assert f"2 of 2 cells: {len(kept)} extended from kept runs" in again.stdout
    whole = tmp_path / "whole"
    kb(*_run_args(whole, runs, "-m", "seed=1,2"), cwd=tmp_path)  # the basic launcher
    rerun, uninterrupted = read_results(out), read_results(whole)
    for seed in (1, 2):
        assert_same_rows(rerun[rerun["seed"] == seed], uninterrupted[uninterrupted["seed"] == seed])


def _downstream() -> dict:
    cell = make_cell("sr33", "rbf", "digits", n=1.5, runs=4, protocol="downstream")
    cell["dataset"]["splits"]["downstream"]["train_rows"] = 400
    return cell


def _krr() -> dict:
    cell = make_cell("slw_rff", "rbf", "eeg", n=1, runs=3, protocol="krr")
    cell["protocol"].update(spectral_points=200, cv_folds=3)  # shared_draw: true (code)
    return cell


@pytest.mark.parametrize("make", [_downstream, _krr], ids=["downstream", "krr"])
def test_protocols_with_shared_state_resume_bit_identically(tmp_path, monkeypatch, make):
    """downstream (one split and exact-kernel score per cell) and krr (per-run splits and
    folds; rff, lev_rff, slw_rff of one run share a draw) measure runs one at a time:
    an interrupt at run 2 keeps runs 0-1, and the rerun ends with the uninterrupted rows."""
    if make is _krr:
        need_mirror("eeg.npz")
    monkeypatch.setenv("KERNELBENCH_CHECKPOINT", "3600")
    cell = make()
    protocol = cell["protocol"]["name"]
    with monkeypatch.context() as m:
        _interrupt_at(m, protocol, 2 if protocol == "downstream" else 1)
        with pytest.raises(Interrupted, match="kept .* runs in"):
            run_and_store(make(), tmp_path / "a", echo=None)
    run_and_store(make(), tmp_path / "a", echo=None)
    whole = run_and_store(make(), tmp_path / "b", echo=None)
    assert_same_rows(read_results(tmp_path / "a"), whole)
