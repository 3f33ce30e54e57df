"""One sr33 rule's butterfly rotation against the memory floor of its rows (a copy).

    python scripts/bench_butterfly_floor.py            # d = 3072, 1000 rows
    python scripts/bench_butterfly_floor.py --dim 784 --rows 5000

A :class:`kernelbench.transforms.Butterfly` of 3 factors (one sr33 rule's rotation) maps
the rows into a preallocated output; the floor is ``np.copyto`` of the same rows (each
read and written once). CPU seconds, one BLAS thread, best of repeats, interleaved.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.timing import best_time
from kernelbench.transforms import Butterfly


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dim", type=int, default=3072)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    X = np.random.default_rng(0).uniform(0, 1, (a.rows, a.dim))
    B = Butterfly(a.dim, 3, np.random.default_rng(1))
    out = np.empty_like(X)
    B.rotate_rows(X[:4], out=out[:4])  # compile
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(3):
            rot = best_time(lambda: B.rotate_rows(X, out=out), a.repeats, clock=time.process_time)
            copy = best_time(lambda: np.copyto(out, X), a.repeats, clock=time.process_time)
            print(f"rotation {rot:.4f} s  copy {copy:.4f} s  rotation / copy {rot / copy:.1f}")


if __name__ == "__main__":
    main()
