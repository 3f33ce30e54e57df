"""Progress of a sweep: one bar on a terminal, heartbeat lines in logs.

* On a terminal, the launching process draws one bar over all cells and runs
  (:class:`Board`). Each job, in this process or a worker (joblib, submitit on this
  machine), reports its runs done and its output lines to a small JSON file in the
  board's directory (:class:`JobReport`); the board reads them, prints the lines above
  the bar and moves the bar, so parallel workers never draw over each other.
* Elsewhere (nohup, SLURM logs, a pipe) each job prints a line at least every
  :func:`heartbeat_interval` seconds while a cell runs, with its runs done and an ETA
  (:class:`Heartbeat`), so a long cell is not silent.
"""

from __future__ import annotations

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
#: Environment variable: seconds between heartbeat lines (default :data:`HEARTBEAT_S`).
ENV_HEARTBEAT = "KERNELBENCH_HEARTBEAT"
HEARTBEAT_S = 30.0


def heartbeat_interval() -> float:
    """Seconds between heartbeat lines: ``$KERNELBENCH_HEARTBEAT`` or 30."""
    try:
        value = float(os.environ.get(ENV_HEARTBEAT, HEARTBEAT_S))
    except ValueError:
        return HEARTBEAT_S
    return value if value > 0 else HEARTBEAT_S


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
        self.interval = heartbeat_interval() if interval is None else float(interval)
        self.clock = clock
        self.t0 = self.last = clock()
        self.start = self.done = 0
        self.total = 0
        self._started = False
        self._stop = threading.Event()
        self._thread = None
        if thread:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` runs; the first call sets where this session started."""
        if not self._started:
            self.start, self._started = done, True
        self.done, self.total = done, total

    def tick(self) -> bool:
        """Print a line if ``interval`` has passed since the last one; whether it did."""
        now = self.clock()
        if now - self.last < self.interval:
            return False
        self.last = now
        elapsed = now - self.t0
        left = eta(elapsed, self.done - self.start, self.total - self.start)
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


class JobReport:
    """What one job tells the board: its cell, runs done and total, and its lines
    (``<board>/<job>.json``, replaced atomically on each change)."""

    def __init__(self, board: Path, job: int) -> None:
        self.path = Path(board) / f"{job}.json"
        self.state: dict[str, Any] = {"done": 0, "total": 0, "finished": False, "lines": []}

    def _write(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(self.state))
        os.replace(tmp, self.path)

    def update(self, done: int, total: int) -> None:
        self.state.update(done=done, total=total)
        self._write()

    def echo(self, line: str) -> None:
        self.state["lines"].append(line)
        self._write()

    def finish(self) -> None:
        self.state["finished"] = True
        self._write()


class Board:
    """One progress bar over ``cells`` cells and their runs, fed by :class:`JobReport`
    files in ``directory`` (read by a thread every ``every`` seconds)."""

    def __init__(self, directory: Path, cells: int, every: float = 0.25) -> None:
        from tqdm.auto import tqdm

        self.directory, self.cells, self.every = Path(directory), cells, every
        self.printed: dict[str, int] = {}
        self.bar = tqdm(
            total=cells,
            desc=f"0/{cells} cells",
            bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
            leave=False,
            file=sys.stderr,
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def poll(self) -> None:
        """Print the jobs' new lines above the bar and move the bar."""
        finished, fraction, done, total = 0, 0.0, 0, 0
        paths = self.directory.glob("*.json")
        for path in sorted(paths, key=lambda p: (len(p.stem), p.stem)):
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            lines = state.get("lines") or []
            for line in lines[self.printed.get(path.name, 0) :]:
                self.bar.write(line, file=sys.stdout)
            self.printed[path.name] = len(lines)
            done, total = done + int(state.get("done", 0)), total + int(state.get("total", 0))
            if state.get("finished"):
                finished += 1
            elif state.get("total"):
                fraction += min(1.0, state["done"] / state["total"])
        self.bar.n = min(self.cells, finished + fraction)
        self.bar.set_description_str(f"{finished}/{self.cells} cells, {done}/{total} runs", False)
        self.bar.refresh()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.poll()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.poll()
        self.bar.close()
