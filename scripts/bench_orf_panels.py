"""orf's wide panels against the dense GEMM, one d x d block, per call of N rows.

For each d and N: the dense product X @ W^T of a d x d W (rff's block), and one orf
block's Q applied as :class:`kernelbench.transforms.WideReflectors` with panels of
128 to 768 reflectors, each in both layouts (the rows in BLAS's N dimension, as
calls of at most ``ROWS_IN_N_MAX`` rows take; the rows in M with the triangles by
TRMM, as longer calls take), and forming W from the panels for the call (Q applied
to the identity's d rows, then the GEMM). Prints each as a ratio to the GEMM, CPU
seconds of this process, best of ``--repeats``, ``--rounds`` interleaved rounds, one
BLAS thread (docs/performance.md, "orf at 300-row calls: the panels' floor").

    python scripts/bench_orf_panels.py --dims 2048 3072 --rows 300 1000
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
from threadpoolctl import threadpool_limits

import kernelbench.transforms as T
from kernelbench.timing import best_time

WIDTHS = (128, 256, 384, 512, 768)

#: The fastest of ``repeats`` calls, CPU seconds of this process.
best = partial(best_time, clock=time.process_time)


def measure(X, W, wide, rounds: int, repeats: int) -> dict[str, list[float]]:
    """CPU seconds of the GEMM, each panel width in each layout, and forming W, per round."""
    d = W.shape[1]
    times: dict[str, list[float]] = {"gemm": [], "form W + gemm": []}
    default_max = T.ROWS_IN_N_MAX
    formed = wide[T.APPLY_PANEL]
    try:
        for _ in range(rounds):
            times["gemm"].append(best(lambda: X @ W.T, repeats))
            for width, w in wide.items():
                for layout, limit in (("rowsN", 10**9), ("rowsM", 0)):
                    T.ROWS_IN_N_MAX = limit
                    key = f"{layout} {width}"
                    times.setdefault(key, []).append(best(lambda w=w: w.apply_rows(X), repeats))
                T.ROWS_IN_N_MAX = default_max
            times["form W + gemm"].append(best(lambda: X @ formed.apply_rows(np.eye(d)), 1))
    finally:
        T.ROWS_IN_N_MAX = default_max
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[2048, 3072])
    ap.add_argument("--rows", type=int, nargs="+", default=[300])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    threadpool_limits(1)
    default_width = T.APPLY_PANEL
    print("ratios to the dense GEMM X @ W^T (d x d); rowsN: rows in BLAS's N; rowsM: in M, TRMM")
    for d in args.dims:
        Q = T.HouseholderProduct.gaussian(rng, d)
        W = rng.standard_normal((d, d))
        wide = {}
        for width in WIDTHS:
            T.APPLY_PANEL = width
            wide[width] = T.WideReflectors.of(Q)
        T.APPLY_PANEL = default_width
        for n in args.rows:
            X = rng.standard_normal((n, d))
            times = measure(X, W, wide, args.rounds, args.repeats)
            g = min(times["gemm"])
            line = "  ".join(f"{k} {min(v) / g:.3f}" for k, v in times.items() if k != "gemm")
            print(f"d={d} rows={n} gemm {g:.4f} s  {line}", flush=True)


if __name__ == "__main__":
    main()
