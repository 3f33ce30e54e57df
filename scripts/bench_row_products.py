"""The batch-independent product X W^T against the plain GEMM, in this one process.

    python scripts/bench_row_products.py [--threads 1] [--rounds 3] [--maps]

For d = 16 ... 3072, D = 2(d + 1) (n = 1) and N = 1 ... 10,000 rows, times numpy's
``X @ W.T`` and :func:`kernelbench.transforms.row_products` (fixed blocks of
``row_block(d, D)`` rows, W X_b^T) interleaved, A B A B, best of ``--rounds`` each, and
prints their ratio (docs/performance.md, "Batch-independent products"). N = 10,000 at
d = 3072 is left out (minutes per product on 2 cores). ``--maps``: instead, issue 40's
ratios of whole transforms, rff / sr33 and orf / rff (d = 3072, 1000 points fitted and
mapped, n = 1), interleaved; run it on the code before and after to compare.
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.features import FEATURE_MAPS
from kernelbench.timing import best_time
from kernelbench.transforms import row_block, row_products

DIMS = (16, 64, 256, 1024, 3072)
ROWS = (1, 10, 100, 1000, 10000)


def measure(d: int, N: int, rounds: int) -> tuple[float, float]:
    """(plain, blocked): the best seconds of each, taken in turn."""
    rng = np.random.default_rng(d + N)
    W = rng.standard_normal((2 * (d + 1), d))
    X = rng.standard_normal((N, d))
    reps = max(1, min(50, int(2e8 // max(1, N * d * W.shape[0]))))
    plain = blocked = float("inf")
    for _ in range(rounds):
        plain = min(plain, best_time(lambda: X @ W.T, reps))
        blocked = min(blocked, best_time(lambda: row_products(X, W), reps))
    return plain, blocked


def maps(rounds: int) -> None:
    """rff / sr33 and orf / rff: the best transform times of each, taken in turn."""
    X = np.random.default_rng(3).standard_normal((1000, 3072))
    fitted = {m: FEATURE_MAPS.get(m)(n=1, random_state=0).fit(X) for m in ("rff", "orf", "sr33")}
    best = dict.fromkeys(fitted, float("inf"))
    for _ in range(rounds):
        for m, fm in fitted.items():
            best[m] = min(best[m], best_time(lambda fm=fm: fm.transform(X), 1))
    print(
        f"d=3072, N=1000: rff {best['rff']:.3f} s, orf {best['orf']:.3f} s, sr33 "
        f"{best['sr33']:.3f} s; rff/sr33 {best['rff'] / best['sr33']:.2f}, "
        f"orf/rff {best['orf'] / best['rff']:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="BLAS threads (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--maps", action="store_true", help="issue 40's map ratios instead")
    args = ap.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if args.maps:
        with threadpool_limits(args.threads):
            maps(args.rounds)
        return
    print(f"{'d':>5} {'D':>5} {'B':>5} {'N':>6} {'plain ms':>10} {'blocked ms':>11} {'ratio':>6}")
    with threadpool_limits(args.threads):
        for d in DIMS:
            for N in ROWS:
                if d * N > 2e7:
                    continue
                plain, blocked = measure(d, N, args.rounds)
                D = 2 * (d + 1)
                print(
                    f"{d:>5} {D:>5} {row_block(d, D):>5} {N:>6} {1e3 * plain:>10.3f} "
                    f"{1e3 * blocked:>11.3f} {blocked / plain:>6.2f}",
                    flush=True,
                )
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
