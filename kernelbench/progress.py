"""Progress of a sweep: one bar on a terminal, heartbeat lines in logs.

On a terminal the launching process draws one bar (:class:`Board`) from the reports
each job writes to the board's directory (:class:`JobReport`), so parallel workers
never draw over each other; elsewhere each job prints a line with its runs done and an
ETA every ``$KERNELBENCH_HEARTBEAT`` seconds, 30 by default (:class:`Heartbeat`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

#: Environment variable: the board's directory (set by the launching process).
ENV_BOARD = "KERNELBENCH_PROGRESS_DIR"
#: Environment variable: "1" where the launching process draws the bar (a terminal).
ENV_BAR = "KERNELBENCH_PROGRESS_BAR"


def env_seconds(name: str, default: float, zero: bool = False) -> float:
    """Seconds from the environment variable ``name``: ``default`` when unset, not a
    number, negative, or 0 (unless ``zero``)."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 or (zero and value == 0) else default


def checkpoint_interval() -> float:
    """Seconds between checkpoints of a cell's finished runs: ``$KERNELBENCH_CHECKPOINT``
    or 60; 0: after every batch of runs (the runs finished when a cell is interrupted
    are kept in any case)."""
    return env_seconds("KERNELBENCH_CHECKPOINT", 60.0, zero=True)


def format_seconds(seconds: float) -> str:
    """``45 s``, ``3 min 05 s``, ``2 h 04 min``."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def eta(elapsed: float, done: float, total: float) -> str:
    """Time left at the rate so far (``?`` before the first unit is done)."""
    if done <= 0 or total <= 0:
        return "?"
    return format_seconds(elapsed * (total - done) / done)


class Heartbeat:
    """Prints ``<name>: 14/20 runs, 45 s, ETA 20 s`` every ``interval`` seconds while a
    cell runs (a thread calls :meth:`tick`; ``clock`` and ``thread=False`` let a test
    drive it). The ETA counts only the runs measured in this session."""

    def __init__(
        self,
        name: str,
        stream: TextIO | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        thread: bool = True,
    ) -> None:
        self.name, self.stream = name, stream if stream is not None else sys.stderr
        default = env_seconds("KERNELBENCH_HEARTBEAT", 30.0)
        self.interval = default if interval is None else float(interval)
        self.clock = clock
        self.t0 = self.last = clock()
        self.done = self.total = 0
        self.start: int | None = None  # where this session started: the first update
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True) if thread else None
        if self._thread is not None:
            self._thread.start()

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` runs; the first call sets where this session started."""
        self.start = done if self.start is None else self.start
        self.done, self.total = done, total

    def tick(self) -> bool:
        """Print a line if ``interval`` has passed since the last one; whether it did."""
        now = self.clock()
        if now - self.last < self.interval:
            return False
        self.last = now
        elapsed = now - self.t0
        start = self.start or 0
        left = eta(elapsed, self.done - start, self.total - start)
        self.stream.write(
            f"{self.name}: {self.done}/{self.total} runs, {format_seconds(elapsed)}, ETA {left}\n"
        )
        self.stream.flush()
        return True

    def _loop(self) -> None:
        while not self._stop.wait(min(1.0, self.interval / 4)):
            self.tick()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


#: How a job ended (:meth:`JobReport.finish`), in the order :func:`summary` lists them.
OUTCOMES = ("computed", "extended", "skipped", "failed", "interrupted")


class JobReport:
    """What one job tells the launching process: its runs done and total, its lines
    (shown above the bar, on a terminal) and how it ended, with its shard
    (``<board>/<job>.json``, replaced atomically on each change); ``pid`` is the process
    running the job (the launcher forwards an interrupt to it)."""

    def __init__(self, board: Path, job: int) -> None:
        self.path = Path(board) / f"{job}.json"
        self.state: dict[str, Any] = {
            "done": 0,
            "total": 0,
            "finished": False,
            "lines": [],
            "pid": os.getpid(),
        }
        self.start: int | None = None
        self._write()  # the launcher sees the job (and its process) from the start

    def _write(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(self.state))
        os.replace(tmp, self.path)

    def update(self, done: int, total: int) -> None:
        if self.start is None:  # where this session started (> 0: runs kept before)
            self.start = done
        self.state.update(done=done, total=total)
        self._write()

    def echo(self, line: str) -> None:
        self.state["lines"].append(line)
        self._write()

    def finish(
        self,
        outcome: str = "computed",
        shard: str | None = None,
        results: str | None = None,
        message: str | None = None,
    ) -> None:
        """The job ended: ``outcome`` one of :data:`OUTCOMES` (``computed`` becomes
        ``extended`` when runs kept before were extended), its shard, the results
        directory it was written under and, when interrupted, what it kept."""
        if outcome == "computed" and self.start:
            outcome = "extended"
        self.state.update(finished=True, outcome=outcome, shard=shard, results=results)
        if message is not None:
            self.state["message"] = message
        self._write()


def read_reports(directory: Path) -> dict[str, dict[str, Any]]:
    """File name -> report of the jobs in ``directory``, by job (unreadable ones left out)."""
    out = {}
    for path in sorted(Path(directory).glob("*.json"), key=lambda p: (len(p.stem), p.stem)):
        with contextlib.suppress(OSError, ValueError):
            out[path.name] = json.loads(path.read_text())
    return out


def summary(reports: list[dict[str, Any]], cells: int) -> str:
    """One line over a sweep's job reports (:func:`read_reports`): the cells computed,
    extended, skipped as finished, failed; where their shards are; and the command
    that plots them."""
    import shlex

    reports = [r for r in reports if r.get("finished")]
    counts = {o: sum(r.get("outcome") == o for r in reports) for o in OUTCOMES}
    labels = {"extended": "extended from kept runs", "skipped": "skipped (already done)"}
    parts = [f"{counts[o]} {labels.get(o, o)}" for o in OUTCOMES if counts[o]]
    unit = "cell" if cells == 1 else "cells"
    line = f"{len(reports)} of {cells} {unit}: {', '.join(parts) or 'none finished'}"
    shards = [Path(r["shard"]) for r in reports if r.get("shard")]
    roots = sorted({r["results"] for r in reports if r.get("shard") and r.get("results")})
    if not shards:
        return line
    where = shards[0] if len(shards) == 1 else Path(os.path.commonpath(shards))
    line += f"; shards in {where}"
    if len(roots) == 1:
        root = Path(roots[0])
        top = where.relative_to(root).parts[:1] if where.is_relative_to(root) else ()
        cmd = ["kernelbench", "plot", str(root)] + (["--experiment", top[0]] if top else [])
        line += f"; plot: {shlex.join(cmd)}"
    return line


class Board:
    """One progress bar over ``cells`` cells and their runs, fed by :class:`JobReport`
    files in ``directory`` (read by a thread every ``every`` seconds)."""

    def __init__(self, directory: Path, cells: int, every: float = 0.25) -> None:
        from tqdm.auto import tqdm

        self.directory, self.cells, self.every = Path(directory), cells, every
        self.printed: dict[str, int] = {}
        self.stream = sys.stderr
        self.bar = tqdm(
            total=cells,
            desc=f"0/{cells} cells",
            bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
            leave=False,
            file=self.stream,
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def poll(self) -> None:
        """Print the jobs' new lines above the bar and move the bar."""
        finished, fraction, done, total = 0, 0.0, 0, 0
        for name, state in read_reports(self.directory).items():
            lines = state.get("lines") or []
            new = lines[self.printed.get(name, 0) :]
            if new:
                self._print(new)
            self.printed[name] = len(lines)
            done, total = done + int(state.get("done", 0)), total + int(state.get("total", 0))
            if state.get("finished"):
                finished += 1
            elif state.get("total"):
                fraction += min(1.0, state["done"] / state["total"])
        self.bar.n = min(self.cells, finished + fraction)
        self.bar.set_description_str(f"{finished}/{self.cells} cells, {done}/{total} runs", False)
        self.bar.refresh()

    def _print(self, lines: list[str]) -> None:
        """Lines on stdout, the bar (on stderr) erased first and drawn again below them
        (tqdm's ``write`` misses a bar on a stream a launch replaced)."""
        with self.bar.get_lock():
            self.bar.clear(nolock=True)
            self.stream.flush()
            sys.stdout.write("".join(f"{line}\n" for line in lines))
            sys.stdout.flush()
            self.bar.refresh(nolock=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.poll()

    def close(self) -> None:
        """Stop polling, print the last lines and erase the bar (nothing is left of it)."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.poll()
        with self.bar.get_lock():
            self.bar.clear(nolock=True)
            self.stream.flush()
        self.bar.close()
