"""The floor of the whole Fig. 1 protocol on this machine, float64 or float32 K_hat.

    python scripts/fig1_floor.py RESULTS_DIR [RESULTS_DIR ...] [--repeats 3]
        [--product float64|float32]

Every run of every method must form K_hat = z(X) z(Y)^T, an (N x F) (F x N) product
with N = the cell's samples and F its features, to score the relative Frobenius error
(Munkhoeva et al. 2018, Sec. 6: ||K - K_hat||_F / ||K||_F); the Gaussian kernel's
features are also cos and sin of 2N x D projections (F = 2D; timed with
``kernelbench.trig.scaled_cos_sin``, the fused float64 kernel the maps use). The dense methods (rff,
orf, orf_tallqr, qmc, gq) also project the 2N points with a D x d matrix, a
(2N x d) (d x D) product (orf's Householder panels do at least these flops), and rff,
orf and orf_tallqr draw standard normals: D d (rff), d (d + 1) / 2 per d x d block
(orf: one Householder reflector per column) and D d - d (d - 1) / 2 (orf_tallqr, the
reflectors of a D x d QR). Rows drawn in sample space (column ``draws``, 2N < d) have
no D x d draw or projection: their draw is 2N x D normals and their projection
R^T G, an (2N x 2N) (2N x D) product after the thin QR of the 2N points (d x 2N);
orf_tallqr's reflectors add d^2 normals there.
``--product float32`` times K_hat as the option ``protocol.product=float32`` computes
it (both factors cast to float32, one SGEMM, the result cast back). This script times
exactly these steps (one BLAS thread, numpy's default Generator, best of ``--repeats``)
at the shape of every cell found in the results (runs, samples, D, d and n_features as
stored) and sums them over the runs: a lower bound on the protocol's CPU time that no
change to the code around them removes. Per dataset it prints each step's CPU-seconds
and, given the output of the ``kernelbench run`` that computed the results (``--log``:
each cell's summary line ends in its wall seconds), the measured CPU-seconds of the
cells and how far above the floor they are; the 45-minute goal (issue 40) with 2
workers is 5400 CPU-s. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from kernelbench.results import read_results  # noqa: E402
from kernelbench.timing import best_time

CELL = ["dataset", "kernel", "method_label", "n"]
DENSE = {"rff", "orf", "orf_tallqr", "qmc", "gq"}
PRODUCTS = ("float64", "float32")
GAUSSIAN = {"rff", "orf", "orf_tallqr"}
STEPS = ["khat", "trig", "proj", "draw"]


def cells(dirs: list[str]) -> pd.DataFrame:
    """One row per cell: runs and the first run's shape (D as the rows record it)."""
    df = pd.concat([read_results(d) for d in dirs], ignore_index=True)
    df = df[df["protocol"] == "kernel_approx"]
    if "draws" not in df:  # results from before sample-space draws
        df = df.assign(draws="weights")
    return df.groupby(CELL, as_index=False).agg(
        method=("method", "first"),
        runs=("run", "nunique"),
        samples=("samples", "first"),
        D=("D", "first"),
        d=("d", "first"),
        features=("n_features", "first"),
        sample_space=("draws", lambda s: bool((s == "sample_space").all())),
    )


class Timer:
    """Best-of-``repeats`` times of each step at a shape, measured once per shape."""

    def __init__(self, repeats: int, product: str = "float64") -> None:
        self.repeats = repeats
        self.product = product
        self.rng = np.random.default_rng(0)
        self.memo: dict[tuple, float] = {}

    def __call__(self, step: str, *shape: int) -> float:
        key = (step, *shape)
        if key not in self.memo:
            self.memo[key] = best_time(self._job(step, *shape), self.repeats)
        return self.memo[key]

    def _job(self, step: str, *shape: int):
        g = self.rng.standard_normal
        if step == "khat":  # (N x F) (F x N)
            N, F = shape
            A, B = g((N, F)), g((N, F))
            if self.product == "float32":
                f4 = np.float32
                return lambda: (A.astype(f4) @ B.astype(f4).T).astype(np.float64)
            return lambda: A @ B.T
        if step == "trig":  # cos and sin of (2N x D), as the maps compute them
            from kernelbench.trig import scaled_cos_sin

            P, a = g(shape), np.ones(shape[1])
            return lambda: scaled_cos_sin(P, a)
        if step == "proj":  # (2N x d) (d x D)
            M, d, D = shape
            X, W = g((M, d)), g((D, d))
            return lambda: X @ W.T
        if step == "sample":  # thin QR of the m points, then R^T (m x m) G (m x D)
            m, d, D = shape
            A, G = g((d, m)), g((m, D))
            return lambda: np.linalg.qr(A, mode="r").T @ G
        rng = np.random.default_rng(1)  # draw: this many normals
        return lambda: rng.standard_normal(shape[0])


#: ``[3/420] mnist rbf rff n=3: rel_fro 0.0029 ± 8.1e-05 (100 runs) [37.7 s]``
SUMMARY = re.compile(r"^(?:\[\d+/\d+\] )?(\S+) \S+ \S+ .*n=\S+: .*\(\d+ runs\) \[([\d.]+) s\]$")


def logged_seconds(paths: list[str]) -> pd.Series:
    """Per dataset, the sum of the cells' wall seconds in ``kernelbench run`` output."""
    total: dict[str, float] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            m = SUMMARY.match(line.strip())
            if m:
                total[m[1]] = total.get(m[1], 0.0) + float(m[2])
    return pd.Series(total, dtype=float)


def normals(method: str, D: int, d: int) -> int:
    """How many standard normals a map of ``method`` draws for D projections of R^d."""
    if method == "orf":  # ceil(D / d) Haar blocks, d (d + 1) / 2 normals each
        return -(-D // d) * d * (d + 1) // 2
    if method == "orf_tallqr":  # reflector i of the m x k QR (D x d, or d x D): m - i
        m, k = max(D, d), min(D, d)
        return m * k - k * (k - 1) // 2
    return D * d


def floor_steps(table: pd.DataFrame, timer: Timer) -> pd.DataFrame:
    """``table`` with each step's CPU-seconds over the cell's runs, and their sum."""
    table = table.copy()
    for step in STEPS:
        table[step] = 0.0
    for i, row in table.iterrows():
        N, D, d, F, runs = (int(row[k]) for k in ("samples", "D", "d", "features", "runs"))
        # orf_tallqr is orf's construction tall_qr: its label names the draw
        method = row["method_label"] if row["method_label"] in GAUSSIAN else row["method"]
        table.loc[i, "khat"] = runs * timer("khat", N, F)
        if row["kernel"] == "rbf":
            table.loc[i, "trig"] = runs * timer("trig", 2 * N, F // 2)
        if row.get("sample_space", False):  # the draws of the 2N points themselves
            table.loc[i, "proj"] = runs * timer("sample", 2 * N, d, D)
            # the tall QR's reflectors are drawn whole: d^2 normals (orf.tall_qr_projections)
            tall = d * d if method == "orf_tallqr" else 0
            table.loc[i, "draw"] = runs * timer("draw", 2 * N * D + tall)
            continue
        if method in DENSE:
            table.loc[i, "proj"] = runs * timer("proj", 2 * N, d, D)
        if method in GAUSSIAN:
            table.loc[i, "draw"] = runs * timer("draw", normals(method, D, d))
    table["floor"] = table[STEPS].sum(axis=1)
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--log", nargs="+", default=[], help="kernelbench run output(s)")
    ap.add_argument("--product", choices=PRODUCTS, default=PRODUCTS[0], help="K_hat's GEMM")
    args = ap.parse_args(argv)
    table = floor_steps(cells(args.results), Timer(args.repeats, args.product))
    per = table.groupby("dataset")[["runs", *STEPS, "floor"]].sum()
    per.insert(0, "cells", table.groupby("dataset").size())
    per.loc["total"] = per.sum()
    if args.log:
        measured = logged_seconds(args.log)
        per["measured"] = measured.reindex(per.index)
        per.loc["total", "measured"] = measured.sum()
        per["measured/floor"] = per["measured"] / per["floor"]
    pd.set_option("display.width", 200)
    print(f"CPU-seconds per dataset (one BLAS thread, K_hat in {args.product}):")
    print(per.round(2).to_string())
    total = float(per.loc["total", "floor"])
    print(
        f"floor: {total:.0f} CPU-s, {total / 120:.1f} min on 2 workers "
        f"({total / 5400:.2f}x the 5400 CPU-s of 45 min x 2 workers)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
