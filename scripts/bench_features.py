"""Fit and transform time of every feature map, as ratios to RFF (weights + GEMM).

    python scripts/bench_features.py                       # d = 784, 3072, 7129
    python scripts/bench_features.py --dims 784 --repeats 5
    python scripts/bench_features.py --calls 10 1000 100000 --dims 16 3072 --methods orf

N = 1000 points, n = 1 (D = 2(d + 1)), Gaussian kernel. Prints, per d and method,
the best-of-repeats fit (draw) and transform times and their ratio to rff's, all
measured in this one run, plus the peak memory of fit + transform (tracemalloc)
and the size a dense D x d matrix would take. With ``--calls``: each method's map,
fitted on the N points, then transform calls of each given row count, against rff's
(CPU seconds, one BLAS thread, best of repeats, interleaved: rff, method, rff, ...).
"""

from __future__ import annotations

import argparse
import functools
import time
import tracemalloc

import numpy as np

from kernelbench import make_feature_map
from kernelbench.timing import best_time

DEFAULT_METHODS = ["rff", "orf", "sorf", "qmc", "gq", "sr33"]


def measure(method: str, X: np.ndarray, repeats: int) -> dict[str, float]:
    fm = make_feature_map(method, kernel="rbf", n=1, random_state=0)
    fit = best_time(lambda: fm.fit(X), repeats)
    fm.fit(X[:1])  # warm up compiled kernels
    fm.fit(X)
    fm.transform(X[:2])
    transform = best_time(lambda: fm.transform(X), repeats)
    tracemalloc.start()
    fm2 = make_feature_map(method, kernel="rbf", n=1, random_state=1).fit(X)
    fm2.transform(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"fit": fit, "transform": transform, "peak_mb": peak / 2**20, "D": fm.n_projections_}


def calls(args: argparse.Namespace) -> None:
    """Transform calls of each row count against rff's, interleaved, one BLAS thread."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    print(f"{'d':>6s} {'rows':>7s} " + " ".join(f"{m + '/rff':>10s}" for m in args.methods))
    with threadpool_limits(limits=1, user_api="blas"):
        for d in args.dims:
            X = rng.uniform(0, 1, (args.points, d))
            fms = {
                m: make_feature_map(m, kernel="rbf", n=1, random_state=0).fit(X)
                for m in ["rff", *args.methods]
            }
            for rows in args.calls:
                Xc = rng.uniform(0, 1, (rows, d))
                reps = max(args.repeats, min(50, 2_000_000 // (rows * d)))
                for fm in fms.values():
                    fm.transform(Xc[:2])  # warm-up: compiles, caches
                ratios = {m: [] for m in args.methods}
                for _ in range(2):  # interleaved rounds: rff, method, rff, ...
                    for m in args.methods:
                        cpu = functools.partial(best_time, repeats=reps, clock=time.process_time)
                        base = cpu(functools.partial(fms["rff"].transform, Xc))
                        mine = cpu(functools.partial(fms[m].transform, Xc))
                        ratios[m].append(mine / base)
                cols = " ".join(f"{min(r):10.2f}" for r in ratios.values())
                print(f"{d:6d} {rows:7d} {cols}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[784, 3072, 7129])
    parser.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, nargs="+", help="rows per transform call")
    args = parser.parse_args()
    if args.calls:
        calls(args)
        return
    rng = np.random.default_rng(0)
    for d in args.dims:
        X = rng.uniform(0, 1, (args.points, d))
        res = {m: measure(m, X, args.repeats) for m in args.methods}
        base = res.get("rff")
        D = next(iter(res.values()))["D"]
        print(
            f"\nd = {d}, N = {args.points}, D = {D}; a dense D x d float64 matrix: "
            f"{D * d * 8 / 2**20:.0f} MiB"
        )
        print(
            f"{'method':8s} {'fit s':>9s} {'transform s':>12s} {'total/rff':>10s} "
            f"{'fit/rff':>8s} {'transf/rff':>10s} {'peak MiB':>9s}"
        )
        for m, r in res.items():
            tot = r["fit"] + r["transform"]
            if base:
                btot = base["fit"] + base["transform"]
                ratios = (
                    f"{tot / btot:10.3f} {r['fit'] / base['fit']:8.3f} "
                    f"{r['transform'] / base['transform']:10.3f}"
                )
            else:
                ratios = f"{'':>10s} {'':>8s} {'':>10s}"
            print(f"{m:8s} {r['fit']:9.4f} {r['transform']:12.4f} {ratios} {r['peak_mb']:9.1f}")


if __name__ == "__main__":
    main()
