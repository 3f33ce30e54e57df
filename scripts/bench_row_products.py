"""The batch-independent product X W^T against the plain GEMM, in this one process.

    python scripts/bench_row_products.py [--threads 1] [--rounds 3] [--blocks 8,64]
    python scripts/bench_row_products.py --maps [--threads 1] [--rounds 3]

For d = 16, 256, 1024, 3072, D = 2(d + 1) (n = 1) and N = 1 ... 10,000 rows, times
numpy's ``X @ W.T`` and :func:`kernelbench.transforms.row_products` (W X_b^T on fixed
blocks of B rows: the shape's ``row_block(d, D)``, and each B of ``--blocks``)
interleaved, A B A B, best of ``--rounds`` each in CPU seconds, and prints the ratios
(docs/performance.md, "Batch-independent products"). N = 10,000 at d = 3072 is left
out (a minute per product). ``--maps``: the whole transforms of rff and orf at d = 3072,
1000 points fitted and mapped (n = 1), with ``batch_invariant`` True and False,
interleaved.
"""

from __future__ import annotations

import argparse
import subprocess
import time

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.timing import best_time
from kernelbench.transforms import row_block, row_products

DIMS = (16, 256, 1024, 3072)
ROWS = (1, 10, 100, 1000, 10000)
#: CPU seconds of this process (one BLAS thread: the shared machine's load does not
#: count), or wall seconds with --wall.
CLOCK = time.process_time


def measure(d: int, N: int, blocks: list[int], rounds: int) -> list[float]:
    """The best seconds of the plain product and of each block size, taken in turn."""
    rng = np.random.default_rng(d + N)
    W = rng.standard_normal((2 * (d + 1), d))
    X = rng.standard_normal((N, d))
    reps = max(1, min(50, int(2e8 // max(1, N * d * W.shape[0]))))
    fns = [lambda: X @ W.T] + [lambda B=B: row_products(X, W, B) for B in blocks]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], best_time(fn, reps, CLOCK))
    return best


def maps(rounds: int) -> None:
    """rff and orf with and without ``batch_invariant``: best transform times, in turn."""
    from kernelbench.features import FEATURE_MAPS

    X = np.random.default_rng(3).standard_normal((1000, 3072))
    fitted = {
        (m, b): FEATURE_MAPS.get(m)(n=1, random_state=0, batch_invariant=b).fit(X)
        for m in ("rff", "orf")
        for b in (False, True)
    }
    best = dict.fromkeys(fitted, float("inf"))
    for _ in range(rounds):
        for key, fm in fitted.items():
            best[key] = min(best[key], best_time(lambda fm=fm: fm.transform(X), 1, CLOCK))
    for m in ("rff", "orf"):
        plain, inv = best[(m, False)], best[(m, True)]
        print(f"{m} d=3072 N=1000: plain {plain:.3f} s, batch_invariant {inv:.3f} s, ", end="")
        print(f"{inv / plain:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="BLAS threads (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blocks", default="", help="more block sizes B to time, e.g. 8,16,64")
    ap.add_argument("--dims", default=",".join(map(str, DIMS)))
    ap.add_argument("--maps", action="store_true", help="whole rff and orf transforms instead")
    ap.add_argument("--wall", action="store_true", help="wall seconds, not CPU seconds")
    args = ap.parse_args()
    if args.wall:
        global CLOCK
        CLOCK = time.perf_counter
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with threadpool_limits(args.threads):
        if args.maps:
            maps(args.rounds)
        else:
            extra = [int(b) for b in args.blocks.split(",") if b]
            print(f"{'d':>5} {'D':>5} {'N':>6} {'plain ms':>10}  blocked / plain (B)")
            for d in (int(x) for x in args.dims.split(",")):
                D = 2 * (d + 1)
                blocks = [row_block(d, D), *extra]
                for N in ROWS:
                    if d * N > 2e7:
                        continue
                    t = measure(d, N, blocks, args.rounds)
                    ratios = "  ".join(
                        f"{b / t[0]:6.2f} ({B})" for B, b in zip(blocks, t[1:], strict=True)
                    )
                    print(f"{d:>5} {D:>5} {N:>6} {1e3 * t[0]:>10.3f}  {ratios}", flush=True)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
