"""The floor of the whole Fig. 1 protocol on this machine, float64 or float32 K_hat.

    python scripts/fig1_floor.py RESULTS_DIR [RESULTS_DIR ...] [--repeats 3]
        [--product float64|float32] [--maps] [--log RUN_OUTPUT ...]
    python scripts/fig1_floor.py --routines [N ...]

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
Every run also scores its error matrix E = K - K_hat (the subtraction, ||E||_F and
``kernelbench.metrics.spectral_norm``, timed on the error of an rff map of the cell's
shape on Gaussian points; the spectral norm's Lanczos steps depend on E). With
``--maps`` the script also times, per cell, each map's fit and the features of the 2N
points alone as the run computes them (``fit`` then ``transform``, or
``fit_sample_space`` then ``features``; the cell's own method parameters, random points
of the cell's shape) and reports what they take beyond the floor's draw, projection and
trig steps (column ``maps``: orf's Householder products, QMC's points, Nystroem's kernel
and eigendecomposition, the structured transforms): the maps' own work as implemented,
not a floor. ``--routines`` (no results needed) splits the maps of MNIST and USPS,
which hold most of that work, at the Gaussian kernel and n = 1..5: each map alone
against the floor's steps of one run and the map's named routines
(:func:`routine_job`: orf's Householder draws and ``dorgqr``, QMC's Halton points and
``ndtri``, gq's nodes, Nystroem's kernel blocks and ``eigh``), and prints the rest, what
no named routine does (validation, copies, scaling), summed over Fig. 1's runs.
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
import json
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
STEPS = ["khat", "trig", "proj", "draw", "errors"]


def cells(dirs: list[str]) -> pd.DataFrame:
    """One row per cell: runs and the first run's shape (D as the rows record it)."""
    df = pd.concat([read_results(d) for d in dirs], ignore_index=True)
    df = df[df["protocol"] == "kernel_approx"]
    if "draws" not in df:  # results from before sample-space draws
        df = df.assign(draws="weights")
    return df.groupby(CELL, as_index=False).agg(
        method=("method", "first"),
        method_params=("method_params", "first"),
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
        if step == "errors":  # E = K - K_hat, ||E||_F and ||E||_2 of an N x N error
            return self._errors(*shape)
        rng = np.random.default_rng(1)  # draw: this many normals
        return lambda: rng.standard_normal(shape[0])

    def _errors(self, N: int, d: int, D: int):
        from kernelbench.features import make_feature_map
        from kernelbench.kernels import exact_kernel
        from kernelbench.metrics import spectral_norm

        X, Y = (self.rng.standard_normal((N, d)) / np.sqrt(d) for _ in range(2))
        K = exact_kernel("rbf", X, Y, gamma=0.5)
        fm = make_feature_map("rff", n=max(D, 1) / (2 * (d + 1)), random_state=0, gamma=0.5)
        fm.fit(X)
        K_hat = fm.transform(X) @ fm.transform(Y).T
        E = np.empty_like(K)

        def job():
            np.subtract(K, K_hat, out=E)
            np.linalg.norm(E)
            spectral_norm(E)

        return job

    def map_seconds(self, row: pd.Series) -> float:
        """The cell's map alone: fit, then the features of its 2N points, as a run."""
        from kernelbench.features import make_feature_map

        N, d = int(row["samples"]), int(row["d"])
        params = json.loads(row["method_params"] or "{}")
        key = ("map", row["method"], row["kernel"], float(row["n"]), N, d, str(params))
        if key not in self.memo:
            A = self.rng.standard_normal((2 * N, d)) / np.sqrt(d)
            seeds = iter(range(10**6))

            def job():
                fm = make_feature_map(
                    row["method"], row["kernel"], float(row["n"]), next(seeds), **params
                )
                if row["sample_space"]:
                    fm.features(fm.fit_sample_space(A))
                else:
                    fm.fit(A[:N])
                    fm.transform(A[:N])
                    fm.transform(A[N:])

            self.memo[key] = best_time(job, self.repeats)
        return self.memo[key]


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
        table.loc[i, "errors"] = runs * timer("errors", N, d, D)
        if row["kernel"] == "rbf" and method != "nystrom":  # Nystroem: kernel values
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


def map_steps(table: pd.DataFrame, timer: Timer) -> pd.DataFrame:
    """``table`` (of :func:`floor_steps`) with column ``maps``: each cell's maps timed
    alone over its runs, less the floor's draw, projection and trig (at least 0)."""
    table = table.copy()
    alone = [int(r["runs"]) * timer.map_seconds(r) for _, r in table.iterrows()]
    table["maps"] = np.maximum(0.0, np.array(alone) - table[["draw", "proj", "trig"]].sum(axis=1))
    return table


#: ``--routines``: the datasets that hold most of the maps' own work (MNIST and USPS,
#: 2470 of its 2932 CPU-s in the float32 run of docs/performance.md), and the methods
#: whose work beyond the floor is a named routine (sr33 and sorf: their transforms are
#: the map; rff: none).
ROUTINE_DATASETS = ("mnist", "usps")
ROUTINE_METHODS = ("rff", "orf", "orf_tallqr", "nystrom", "qmc", "gq")


def routine_job(cell: dict, N: int, d: int, rng: np.random.Generator):
    """The named routines of a Gaussian-kernel map (``cell``'s method), alone at its
    shape (N fitted rows, 2N mapped, d columns): orf's Householder draws and ``dorgqr``
    per d x d block, orf_tallqr's for one D x d Q, QMC's Halton points and ``ndtri``,
    gq's node draw, Nystroem's two kernel blocks, ``eigh``, K_LL^{+1/2} and the feature
    product; None for rff (nothing beyond the floor's normals, GEMM and cos/sin)."""
    from scipy.special import ndtri

    from kernelbench.features import make_feature_map
    from kernelbench.features.base import n_projections
    from kernelbench.features.gq import choose_nodes, gauss_hermite
    from kernelbench.features.qmc import halton_points
    from kernelbench.kernels import exact_kernel
    from kernelbench.transforms import HouseholderProduct

    method, D = cell["method"]["label"], n_projections(float(cell["n"]), d)
    eps = np.finfo(np.float64).eps
    if method == "orf":
        return lambda: [HouseholderProduct.gaussian(rng, d).reduced() for _ in range(-(-D // d))]
    if method == "orf_tallqr":
        return lambda: HouseholderProduct.gaussian(rng, max(D, d), min(D, d)).reduced()
    if method == "qmc":
        return lambda: ndtri(np.clip(halton_points(D, d, rng), eps, 1.0 - eps))
    if method == "gq":
        fm = make_feature_map("gq", "rbf", float(cell["n"]), 0, **cell["method"]["params"])
        nodes, probs = gauss_hermite(int(fm.n_nodes))
        return lambda: choose_nodes(rng, nodes, probs, (D, d))
    if method == "nystrom":
        A = rng.standard_normal((2 * N, d)) / np.sqrt(d)
        L = A[: min(N, 2 * D)]

        def job():
            vals, vecs = np.linalg.eigh(exact_kernel("rbf", L, L, gamma=1.0 / d))
            root = (vecs / np.sqrt(np.maximum(vals, eps))) @ vecs.T
            return exact_kernel("rbf", A, L, gamma=1.0 / d) @ root

        return job
    return None


def routine_table(timer: Timer, ns: list[float]) -> pd.DataFrame:
    """Per (dataset, method, n): the map alone, the floor's steps of a run, the map's
    named routines (:func:`routine_job`) and the rest, in ms per run; with ``cpu_s``,
    the rest over the cell's Fig. 1 runs and its three kernels."""
    from kernelbench.datasets import DATASETS
    from kernelbench.experiment import make_cell
    from kernelbench.features.base import n_projections

    rows = []
    for name in ROUTINE_DATASETS:
        d = DATASETS.get(name).d
        for label in ROUTINE_METHODS:
            for n in ns:
                cell = make_cell(label, "rbf", name, n=n)
                split = cell["dataset"]["splits"]["kernel_approx"]
                N, runs = int(split["samples"]), int(split["runs"])
                D = n_projections(float(n), d)
                method = cell["method"]["name"]
                row = pd.Series(
                    {"method": method, "method_label": label, "kernel": "rbf", "n": n,
                     "samples": N, "d": d, "D": D, "features": 2 * D, "runs": 1,
                     "sample_space": False, "method_params": json.dumps(cell["method"]["params"])}
                )  # fmt: skip
                floor = floor_steps(pd.DataFrame([row]), timer).iloc[0]
                steps = float(floor[["draw", "proj", "trig"]].sum())
                mapped = timer.map_seconds(row)
                job = routine_job(cell, N, d, timer.rng)
                named = 0.0 if job is None else best_time(job, timer.repeats)
                if label in GAUSSIAN:  # their routines draw the floor's normals too
                    named = max(0.0, named - float(floor["draw"]))
                rest = mapped - steps - named
                rows.append(
                    {"dataset": name, "method": label, "n": n, "runs": runs,
                     "map_ms": 1e3 * mapped, "floor_steps_ms": 1e3 * steps,
                     "routines_ms": 1e3 * named, "rest_ms": 1e3 * rest,
                     "rest/map": rest / mapped, "cpu_s": 3 * runs * rest}
                )  # fmt: skip
    return pd.DataFrame(rows)


def print_routines(timer: Timer, ns: list[float]) -> int:
    """Print :func:`routine_table` and its sums per method over the n given."""
    table = routine_table(timer, ns)
    pd.set_option("display.width", 200)
    print("ms per run (one BLAS thread, Gaussian kernel), rest = map - floor steps - routines:")
    print(table.round(3).to_string(index=False))
    per = table.groupby("method", sort=False)[["map_ms", "routines_ms", "rest_ms", "cpu_s"]].sum()
    per["rest/map"] = per["rest_ms"] / per["map_ms"]
    print("summed over the n given; cpu_s: the rest over Fig. 1's runs of 3 kernels:")
    print(per.round(3).to_string())
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="*")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--log", nargs="+", default=[], help="kernelbench run output(s)")
    ap.add_argument("--product", choices=PRODUCTS, default=PRODUCTS[0], help="K_hat's GEMM")
    ap.add_argument("--maps", action="store_true", help="also time each cell's map alone")
    ap.add_argument(
        "--routines", nargs="*", type=float, metavar="N",
        help="instead: MNIST's and USPS's maps against their named routines at these n",
    )  # fmt: skip
    args = ap.parse_args(argv)
    timer = Timer(args.repeats, args.product)
    if args.routines is not None:
        return print_routines(timer, args.routines or [1.0, 2.0, 3.0, 4.0, 5.0])
    if not args.results:
        ap.error("give RESULTS_DIR(s), or --routines")
    table = floor_steps(cells(args.results), timer)
    columns = ["runs", *STEPS, "floor"]
    if args.maps:
        table = map_steps(table, timer)
        table["floor+maps"] = table["floor"] + table["maps"]
        columns += ["maps", "floor+maps"]
    per = table.groupby("dataset")[columns].sum()
    per.insert(0, "cells", table.groupby("dataset").size())
    per.loc["total"] = per.sum()
    if args.log:
        measured = logged_seconds(args.log)
        per["measured"] = measured.reindex(per.index)
        per.loc["total", "measured"] = measured.sum()
        per["measured/floor"] = per["measured"] / per["floor"]
        if args.maps:
            per["measured/(floor+maps)"] = per["measured"] / per["floor+maps"]
    pd.set_option("display.width", 200)
    print(f"CPU-seconds per dataset (one BLAS thread, K_hat in {args.product}):")
    print(per.round(2).to_string())
    for col in ("floor", "floor+maps")[: 1 + args.maps]:
        total = float(per.loc["total", col])
        print(
            f"{col}: {total:.0f} CPU-s, {total / 120:.1f} min on 2 workers "
            f"({total / 5400:.2f}x the 5400 CPU-s of 45 min x 2 workers)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
