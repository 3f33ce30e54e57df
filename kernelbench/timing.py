"""Timing helper of the benchmarks (``scripts/bench_*.py``, ``scripts/fig1_floor.py``): the
best of repeated wall times, the least noisy single figure on a shared machine."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(
    fn: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The smallest time of ``repeats`` calls of ``fn`` (seconds; wall time, or this
    process's CPU time with ``clock=time.process_time``): the least noisy single figure
    on a shared machine."""
    best = float("inf")
    for _ in range(repeats):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best
