"""Timing helper of the benchmarks (``scripts/bench_*.py``, ``scripts/fig1_floor.py``): the
best of repeated wall times, the least noisy single figure on a shared machine."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """The smallest wall time of ``repeats`` calls of ``fn`` (seconds): the least noisy
    single figure on a shared machine."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
