"""One Fig. 1 MNIST run (rbf, rff, n = 5, X and Y of 550 points), broken down.

    KERNELBENCH_DATA=/path/to/mirror python scripts/bench_mnist_run.py [--repeats 7]

One BLAS thread. Times the whole run as ``kernel_approx`` measures it
(``measure`` of one run: fit, both transforms, K_hat, both errors) and, on the same arrays,
each of its steps alone: the Gaussian draw of W (D x d), the projections X W^T and
Y W^T, the cos/sin features, the K_hat product z(X) z(Y)^T, the error matrix with its
Frobenius norm, and the spectral norm. The goal of issue 20 compares the run with its
three GEMMs alone (the two projections and the K_hat product): run / GEMMs <= 1.5.
Functions are timed round-robin in one process, best of the repeats.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits


def interleaved(
    fns: dict[str, Callable[[], object]], repeats: int, clock: Callable[[], float]
) -> dict[str, float]:
    """Best time of each function, timed round-robin (a load change hits them alike)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            best[name] = min(best[name], clock() - t0)
    return best


def main() -> None:
    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.metrics import spectral_norm
    from kernelbench.protocols import get_protocol
    from kernelbench.protocols.common import feature_map, run_rng
    from kernelbench.trig import scaled_cos_sin

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="time CPU seconds, not wall")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    cell = build_cell(make_cell("rff", "rbf", "mnist", args.n, runs=1))
    proto = get_protocol(cell)
    ctx = proto.prepare(cell)
    fm = feature_map(cell, run_rng(cell, 0), d=ctx.X.shape[1]).fit(ctx.X)
    Xs = ctx.X * fm.input_scale_
    Ys = ctx.Y * fm.input_scale_
    W = fm.W_
    D, d = W.shape
    scale = fm._feature_scale
    Px, Py = Xs @ W.T, Ys @ W.T
    Zx, Zy = scaled_cos_sin(Px, scale), scaled_cos_sin(Py, scale)
    K_hat = Zx @ Zy.T
    E = ctx.K - K_hat
    print(
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; one BLAS thread; "
        f"X, Y {ctx.X.shape[0]} x {d}, D = {D}, best of {args.repeats}, "
        f"{'CPU' if args.cpu else 'wall'} seconds"
    )
    steps = {
        "run (measure)": lambda: proto.measure(cell, ctx, [0]),
        "draw W (D x d Gaussian)": lambda: np.random.default_rng(0).standard_normal((D, d)),
        "projections X W^T, Y W^T": lambda: (Xs @ W.T, Ys @ W.T),
        "cos/sin features (2 x)": lambda: (scaled_cos_sin(Px, scale), scaled_cos_sin(Py, scale)),
        "K_hat product": lambda: Zx @ Zy.T,
        "error matrix + Frobenius": lambda: np.linalg.norm(ctx.K - K_hat),
        "spectral norm": lambda: spectral_norm(E),
    }
    with threadpool_limits(limits=1, user_api="blas"):
        proto.measure(cell, ctx, [0])
        t = interleaved(steps, args.repeats, clock)
    run = t["run (measure)"]
    gemms = t["projections X W^T, Y W^T"] + t["K_hat product"]
    for k, v in t.items():
        print(f"{k:28s} {v:8.4f} s  {v / run:6.1%}")
    parts = sum(v for k, v in t.items() if k != "run (measure)")
    print(f"{'sum of the steps':28s} {parts:8.4f} s  {parts / run:6.1%}")
    print(f"run / its three GEMMs: {run / gemms:.2f} (goal <= 1.5; GEMMs {gemms:.4f} s)")


if __name__ == "__main__":
    main()
