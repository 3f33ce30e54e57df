"""Where Fig. 2's and Liu Table 3's runs spend their time, stage by stage, in one process.

``fig2``: per (dataset, n) of the ``downstream`` protocol (Munkhoeva et al. 2018, Fig. 2),
one map (``--method``, ``--kernel``) fitted on the train part, then, interleaved A B A B
(``--rounds``), CPU seconds of this process (one BLAS thread):

* map: fit + transform of the train and test rows;
* K_hat: ``Z @ Z.T + c`` (GEMM, before) and :func:`symmetric_gram` (syrk, now);
* libsvm fit on K_hat;
* predict: libsvm's predict on the test Gram (before) and :class:`PrimalOvO` (now),
  with the number of test rows whose prediction differs and of decisions within
  ``1e-9`` of 0 (the rounding of another summation order can only flip those);
* ``--linear``: the linear learner's fit + predict (its F x F or N x N problem);
* ``--exact``: each learner's exact-kernel ceiling (once: the largest stage of a
  cell group, computed once per (dataset, kernel, learner)).

``linear``: the linear learner's N x N problem (features wider than the train rows, as
USPS at n = 5, and ``--exact-rows`` rows of the exact-kernel ceiling), per penalty grid
(``--grids``: the default 8 alphas, and shorter ones), by one eigendecomposition and by a
Cholesky factorisation per alpha (``linear.CHOLESKY_MAX_ALPHAS`` set for each route),
interleaved A B A B; with the alpha each chose and the largest difference of the test
decisions' predictions.

``liu``: per (dataset, method, s/d) of ``liu2020_table3``, one run of the ``krr``
protocol (its row's seconds: map fit, transform of every pass, ridge train, predict)
and the spectral error, the rest of the run's CPU time.

``liu-solve``: per (dataset, s/d), the ridge's cross-validation solves on one run's real
fold Grams (rff, the code's reading: 3 folds x 4 lambdas), interleaved A B A B (CPU
seconds): the learner's Cholesky factorisation per (fold, lambda) against one
eigendecomposition per fold reused for every lambda (``eigh``), the tridiagonal
reduction alone (``sytrd``: the lower bound of any route through it) and one Cholesky
per fold with preconditioned CG for its other lambdas (``pcg``); with each route's
largest relative difference in the coefficients, the held-out predictions whose sign
differs from the Cholesky route's, and whether the chosen lambda moves.

``liu-floor``: the floor of the whole ``liu2020_table3`` grid (the code's reading),
measured: per (dataset, s/d) the steps every run of every method must take at the
run's real shapes (the data's own split), each timed alone (CPU seconds, one BLAS
thread, best of ``--rounds``) and counted as the learner and the protocol call them:
the fold Grams (``gram_upper``'s syrk over the train rows, one fold's rows of each
4096-row chunk at a time), the k L + 1 Cholesky factorisations and solves of F x F
(F = 2s), the cos/sin of the s projections of every mapped row (the train rows twice,
the test rows and the spectral check's points), the held-out predictions of the
cross-validation pass, and the spectral norm of the 1000-point error; lev_rff adds its
scores' pass (the cos/sin of the train rows, their Gram and a factorisation), slw_rff
its own (the cos/sin of the train rows; its scores are y^T Z, not counted); under the
code's reading (``sampler=reweight``) both take the cos or sin of 2s distinct
projections per mapped row, twice the cos/sin of the others. Projections are not counted (d <= 14:
they cost less than the cos/sin; sr33 and sorf do not make them). Summed over the
grid's cells and runs against the goal's 1440 CPU-s (12 min on 2 workers); ``--methods``
defaults to the grid's eight.

``rows``: a finished run's own split (``--results DIR``, ``--log`` its ``kernelbench run``
output): per (learner, dataset), the seconds its rows record (map fit + transform,
learner train, predict; wall seconds of the worker, which ran on its own core), the exact
ceilings' seconds (``DIR/.exact/*.json``) and, from the log (each cell's line ends in its
wall seconds), the cells' seconds and the rest (data, start-up, writing shards).

    python scripts/bench_downstream_stages.py fig2 --datasets letter usps powerplant --ns 1 5
    python scripts/bench_downstream_stages.py linear --datasets usps --ns 5 --exact-rows 4500
    python scripts/bench_downstream_stages.py liu --datasets codrna eeg --ns 16 128
    python scripts/bench_downstream_stages.py liu-solve --datasets eeg codrna --ns 32 128
    python scripts/bench_downstream_stages.py liu-floor
    python scripts/bench_downstream_stages.py rows --results RUN --log run_fig2.log
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial

# one BLAS thread from the start, as joblib gives its workers (OPENBLAS_NUM_THREADS=1 in
# their environment): started with more threads and limited to one afterwards
# (threadpoolctl), ``liu-floor`` measured 13-17% more CPU time, cause not found
# (docs/performance.md); set before numpy loads OpenBLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernelbench.timing import best_time

CLOCK = time.process_time


def _timed(fn):
    t0 = CLOCK()
    out = fn()
    return out, CLOCK() - t0


def fig2(args: argparse.Namespace) -> None:
    from sklearn.svm import SVC, SVR

    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.learners import make_learner
    from kernelbench.learners.svm import PrimalOvO, symmetric_gram
    from kernelbench.protocols import get_protocol
    from kernelbench.protocols.common import feature_map, run_rng

    proto = get_protocol("downstream")
    head = "dataset     n      N      M      F stage            before     now   ratio"
    print(head, flush=True)
    for name in args.datasets:
        for n in args.ns:
            raw = make_cell(args.method, args.kernel, name, n=n, runs=1, protocol="downstream")
            raw["protocol"]["exact"] = False
            cell = build_cell(raw)
            ctx = proto.prepare(cell)
            fm = feature_map(cell, run_rng(cell, 0), d=ctx.X_train.shape[1])

            def mapped(fm=fm, ctx=ctx):
                fm.fit(ctx.X_train)
                return fm.transform(ctx.X_train), fm.transform(ctx.X_test)

            (Z, Zt), t_map = _timed(mapped)
            c = fm.constant_
            N, M, F = len(Z), len(Zt), Z.shape[1]
            task = ctx.task
            model_cls = SVC if task == "classification" else SVR
            times: dict[str, list[float]] = {k: [] for k in ("gemm", "syrk", "old", "new")}
            fit_t = []
            for _ in range(args.rounds):
                K_old, t = _timed(lambda Z=Z, c=c: Z @ Z.T + c)
                times["gemm"].append(t)
                del K_old
                K, t = _timed(lambda Z=Z, c=c: symmetric_gram(Z, c))
                times["syrk"].append(t)
                model, t = _timed(partial(model_cls(kernel="precomputed").fit, K, ctx.y_train))
                fit_t.append(t)
                del K

                def old(model=model, Z=Z, Zt=Zt, c=c):
                    return np.concatenate(
                        [model.predict(Zt[i : i + 2048] @ Z.T + c) for i in range(0, len(Zt), 2048)]
                    )

                p_old, t = _timed(old)
                times["old"].append(t)
                primal = PrimalOvO(model, Z, c, task)
                p_new, t = _timed(lambda primal=primal, Zt=Zt: primal.predict(Zt))
                times["new"].append(t)
            dec = primal.decision(Zt)
            near = int((np.abs(dec) < 1e-9).any(axis=1).sum())
            if task == "classification":
                differ = int((p_old != p_new).sum())
            else:
                differ = float(np.max(np.abs(p_old - p_new)))
            pre = f"{name:<10}{n:>3}{N:>7}{M:>7}{F:>7} "
            print(f"{pre}map          {t_map:>10.2f}", flush=True)
            g, s = min(times["gemm"]), min(times["syrk"])
            print(f"{pre}K_hat        {g:>10.2f}{s:>8.2f}{s / g:>8.2f}")
            print(f"{pre}libsvm fit   {min(fit_t):>10.2f}")
            o, w = min(times["old"]), min(times["new"])
            print(
                f"{pre}predict      {o:>10.2f}{w:>8.2f}{w / o:>8.3f}"
                f"   differ {differ}, near 0 {near}"
            )
            if args.linear:
                lin = make_learner("linear")
                fitted, t_fit = _timed(partial(lin.fit, Z, ctx.y_train, task, c))
                _, t = _timed(partial(fitted.predict, Zt))
                t += t_fit
                print(f"{pre}linear       {t:>10.2f}")
            if args.exact:
                for learner in ("svm_precomputed", "linear"):
                    raw["protocol"] |= {"exact": False, "learner": learner}
                    cx = build_cell(raw)
                    _, t = _timed(lambda cx=cx: proto._compute_exact(cx, proto.prepare(cx)))
                    print(f"{pre}exact {learner:<15}{t:>5.2f}", flush=True)


def linear(args: argparse.Namespace) -> None:
    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.kernels import exact_kernel
    from kernelbench.learners import linear as lin
    from kernelbench.learners import make_learner
    from kernelbench.protocols import get_protocol
    from kernelbench.protocols.common import feature_map, kernel_params, run_rng

    proto = get_protocol("downstream")
    grids = {8: lin.DEFAULT_ALPHAS, 4: (1e-3, 1e-1, 10.0, 1000.0), 1: (1.0,)}
    print("dataset     n  problem          N  alphas     eig  cholesky  ratio  differ")
    for name in args.datasets:
        for n in args.ns:
            raw = make_cell(args.method, args.kernel, name, n=n, runs=1, protocol="downstream")
            raw["protocol"] |= {"exact": False, "learner": "linear"}
            cell = build_cell(raw)
            ctx = proto.prepare(cell)
            fm = feature_map(cell, run_rng(cell, 0), d=ctx.X_train.shape[1])
            fm.fit(ctx.X_train)
            Z, Zt = fm.transform(ctx.X_train), fm.transform(ctx.X_test)
            rows = args.exact_rows
            X, y = ctx.X_train[:rows], ctx.y_train[:rows]
            params = kernel_params(cell)

            def kernel(A, B, params=params):
                return exact_kernel(args.kernel, A, B, **params)

            def on_features(L, Z=Z, Zt=Zt, ctx=ctx):
                return L.fit(Z, ctx.y_train, ctx.task).predict(Zt)

            def on_kernel(L, X=X, y=y, kernel=kernel, ctx=ctx):
                return L.fit_exact(kernel, X, y, ctx.task).predict(ctx.X_test[:2048])

            problems = {f"features F={Z.shape[1]}": on_features}
            if rows:
                problems["exact kernel"] = on_kernel
            for label, solve in problems.items():
                N = len(ctx.X_train) if label.startswith("features") else len(X)
                for k in args.grids:
                    learner = make_learner("linear", alphas=grids[k])
                    t = {"eig": [], "chol": []}
                    out = {}
                    for _ in range(args.rounds):
                        for route, limit in (("eig", 0), ("chol", 99)):
                            lin.CHOLESKY_MAX_ALPHAS = limit
                            got, sec = _timed(lambda s=solve, learner=learner: s(learner))
                            t[route].append(sec)
                            out[route] = got
                    e, c = min(t["eig"]), min(t["chol"])
                    if np.asarray(out["eig"]).dtype.kind == "f":
                        differ = f"{np.max(np.abs(out['eig'] - out['chol'])):.1e}"
                    else:
                        differ = f"{int(np.sum(out['eig'] != out['chol']))} rows"
                    print(
                        f"{name:<10}{n:>3}  {label:<13}{N:>6}{k:>7}{e:>8.2f}{c:>9.2f}"
                        f"{c / e:>7.2f}  {differ}",
                        flush=True,
                    )


def liu(args: argparse.Namespace) -> None:
    import types

    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.learners import ridge
    from kernelbench.protocols import common, get_protocol, krr

    # the protocol's row times its stages by wall clock: read this process's CPU clock
    # instead (a shared machine's load stretches wall time, not CPU time)
    shim = types.SimpleNamespace(perf_counter=time.process_time, process_time=time.process_time)
    for module in (krr, ridge, common):
        module.time = shim  # type: ignore[attr-defined]
    proto = get_protocol("krr")
    print("dataset  method    s/d     s  map_fit transform  train  predict  spectral+rest  total")
    for name in args.datasets:
        for method in args.methods:
            for n in args.ns:
                cell = build_cell(make_cell(method, "rbf", name, n=n, runs=1, protocol="krr"))
                ctx = proto.prepare(cell)
                t0 = CLOCK()
                (row,) = proto.run(cell, ctx, 0)
                cpu = CLOCK() - t0
                parts = [row[k] for k in ("fit_seconds", "transform_seconds")]
                parts += [row["train_seconds"], row["predict_seconds"]]
                rest = cpu - sum(parts)  # the row's parts are CPU seconds here
                print(
                    f"{name:<9}{method:<8}{n:>5}{row['s']:>6}{parts[0]:>9.2f}{parts[1]:>10.2f}"
                    f"{parts[2]:>7.2f}{parts[3]:>9.2f}{rest:>15.2f}{cpu:>7.2f}",
                    flush=True,
                )


def _eigh_route(B, rhs, lams):
    from scipy.linalg import eigh

    mu, Q = eigh(B, lower=False, driver="evd", check_finite=False)
    return Q @ ((Q.T @ rhs)[:, None] / (mu[:, None] + np.asarray(lams)))


def _sytrd_route(B, rhs, lams):
    from scipy.linalg import lapack

    lapack.dsytrd(np.array(B, order="F"), lower=0, overwrite_a=1)
    return None


def _pcg_route(B, rhs, lams, tol=1e-13, max_iter=150):
    """Cholesky at the grid's second value, preconditioned CG for the rest: to a relative
    residual ``tol`` or ``max_iter`` steps (iterations in ``_pcg_route.iterations``)."""
    from scipy.linalg import cho_factor, cho_solve

    lf = lams[min(1, len(lams) - 1)]
    A = np.array(B, order="F", copy=True)
    A[np.diag_indices_from(A)] += lf
    cf = cho_factor(A, lower=False, check_finite=False, overwrite_a=True)
    Bs = B + np.triu(B, 1).T  # the full matrix (the Grams hold the upper triangle)
    out = []
    for lam in lams:
        x = cho_solve(cf, rhs)
        if lam != lf:
            r = rhs - (Bs @ x + lam * x)
            z = cho_solve(cf, r)
            p, rz = z.copy(), r @ z
            steps = 0
            for _ in range(max_iter):
                steps += 1
                Ap = Bs @ p + lam * p
                a = rz / (p @ Ap)
                x += a * p
                r -= a * Ap
                if np.linalg.norm(r) <= tol * np.linalg.norm(rhs):
                    break
                z = cho_solve(cf, r)
                rz, rz_old = r @ z, rz
                p = z + (rz / rz_old) * p
            _pcg_route.iterations.append(steps)
        out.append(x)
    return np.array(out).T


_pcg_route.iterations = []  # type: ignore[attr-defined]


def liu_solve(args: argparse.Namespace) -> None:
    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.learners.ridge import ChunkedRidge, sign_labels
    from kernelbench.protocols import get_protocol

    proto = get_protocol("krr")
    captured: dict = {}

    class Capture(ChunkedRidge):
        def _cross_validate(self, X, y, transform, folds, G, b, zs, ys, counts, *rest):
            captured.update(X=X, y=y, transform=transform, folds=folds, G=G, b=b, zs=zs)
            captured.update(ys=ys, counts=counts, rest=rest)
            return super()._cross_validate(X, y, transform, folds, G, b, zs, ys, counts, *rest)

    print("dataset    s/d     N     F route      CPU-s  ratio  max rel coef  signs differ  lambda")
    for name in args.datasets:
        for n in args.ns:
            cell = build_cell(make_cell(args.method, "rbf", name, n=n, runs=1, protocol="krr"))
            ctx = proto.run_split(cell, proto.prepare(cell), 0)
            fm = proto.feature_map(cell, proto.run_rng(cell, 0), d=ctx.X_train.shape[1])
            fm.fit(ctx.X_train, ctx.y_train)
            krr = proto.learner(cell, 0)
            ref = Capture(**vars(krr))
            ref.fit(ctx.X_train, ctx.y_train, fm.transform)
            c = captured
            Gt, bt, zt, yt, grid = c["rest"]
            k, F = len(c["G"]), Gt.shape[0]
            systems = []
            for j in range(k):
                nj = int(c["counts"].sum() - c["counts"][j])
                mean = (yt - c["ys"][j]) / nj if ref.center else 0.0
                rhs = (bt - c["b"][j]) - mean * (zt - c["zs"][j]) if ref.center else bt - c["b"][j]
                pens = [ref._penalty(lam, nj) for lam in grid]
                systems.append((Gt - c["G"][j], rhs, mean, pens))

            def chol(B, rhs, lams, ref=ref, F=F):
                zero = np.zeros(F)
                return np.array([ref._solve(B, rhs, zero, 0.0, 1, lam)[0] for lam in lams]).T

            routes = {"cholesky": chol, "eigh": _eigh_route, "sytrd": _sytrd_route}
            routes["pcg"] = _pcg_route
            times: dict[str, list[float]] = {r: [] for r in routes}
            sols: dict[str, list] = {}
            for _ in range(args.rounds):
                for route, fn in routes.items():
                    t0 = CLOCK()
                    sols[route] = [fn(B, rhs, pens) for B, rhs, _, pens in systems]
                    times[route].append(CLOCK() - t0)
            # held-out predictions of every route: one pass over the train rows
            preds: dict[str, list] = {r: [] for r in routes if r != "sytrd"}
            y_rows = []
            for start in range(0, len(c["y"]), ref.chunk_rows):
                sl = slice(start, start + ref.chunk_rows)
                Z = np.asarray(c["transform"](c["X"][sl]), dtype=np.float64)
                f = c["folds"][sl]
                for j, (_, _, mean, _) in enumerate(systems):
                    rows = f == j
                    y_rows.append(c["y"][sl][rows])
                    for route in preds:
                        preds[route].append(Z[rows] @ sols[route][j] + mean)
            yy = np.concatenate(y_rows)[:, None]
            ref_pred = np.concatenate(preds["cholesky"])
            base = min(times["cholesky"])
            for route in routes:
                t = min(times[route])
                line = f"{name:<9}{n:>5}{len(c['y']):>7}{F:>6} {route:<9}{t:>7.2f}{t / base:>7.2f}"
                if route in preds:
                    ref_coef = np.concatenate(sols["cholesky"])
                    coef = np.concatenate(sols[route])
                    rel = float(np.abs(coef - ref_coef).max() / np.abs(ref_coef).max())
                    pred = np.concatenate(preds[route])
                    flips = int((sign_labels(pred) != sign_labels(ref_pred)).sum())
                    acc = (sign_labels(pred) == yy).mean(axis=0)
                    lam = grid[max(range(len(grid)), key=lambda i: (acc[i], i))]
                    line += f"{rel:>14.1e}{flips:>14d}  {lam:g} (learner {ref.lambda_:g})"
                print(line, flush=True)
            print(f"pcg iterations per (fold, lambda), last round: {_pcg_route.iterations[-9:]}")
            _pcg_route.iterations.clear()


#: The methods of ``liu2020_table3`` (configs/experiment/liu2020_table3.yaml) and its s/d.
LIU_METHODS = ("rff", "qmc", "qmc_fixed", "lev_rff", "slw_rff", "orf", "sorf", "sr33")
LIU_NS = (1, 2, 4, 8, 16, 32, 64, 128)


def liu_floor_steps(N: int, M: int, P: int, F: int, folds: int, lams: int, rounds: int, chunk: int):
    """CPU seconds of one run's floor steps at N train rows, M test rows, P spectral
    points and F = 2s features (each step timed alone, then counted): ``gram``, ``chol``,
    ``trig``, ``cv_predict``, ``spectral``; the extra pass of lev_rff (its Gram, a
    factorisation and the cos/sin of the train rows) and the cos/sin of the train rows
    alone (slw_rff's pass)."""
    from scipy.linalg import cho_factor, cho_solve

    from kernelbench.features.lev_rff import gram_upper
    from kernelbench.metrics import spectral_norm
    from kernelbench.trig import scaled_cos_sin

    repeats = max(1, rounds)

    def best(fn) -> float:  # this process's CPU seconds, best of ``rounds``
        return best_time(fn, repeats, CLOCK)

    rng = np.random.default_rng(0)
    rows = min(chunk, N)
    Z = rng.standard_normal((rows, F))
    parts = np.arange(rows) % folds
    G = np.zeros((F, F), order="F")

    def grams():  # one chunk: each fold's rows into its Gram, as ChunkedRidge.fit
        for j in range(folds):
            gram_upper(Z[parts == j], out=G)

    A = np.eye(F) * 2.0 + rng.uniform(0.0, 1.0 / F, (F, F))
    A = np.asfortranarray((A + A.T) / 2.0)
    rhs = rng.standard_normal(F)

    def solve():  # ChunkedRidge._solve: a Fortran copy, factorised in place, one solve
        B = np.array(A, order="F", copy=True)
        cho_solve(cho_factor(B, lower=False, check_finite=False, overwrite_a=True), rhs)

    proj, scale = rng.standard_normal((rows, F // 2)), np.ones(F // 2)
    coefs = rng.standard_normal((F, lams))
    E = rng.standard_normal((P, P))
    E = E + E.T
    per_chunk = {
        "gram": best(grams),
        "trig": best(lambda: scaled_cos_sin(proj, scale)),
        "cv_predict": best(lambda: [Z[parts == j] @ coefs for j in range(folds)]),
    }
    chol = best(solve)
    n_chol = folds * lams + 1 if folds > 1 and lams > 1 else 1
    trig_rows = 2 * N + M + P
    steps = {
        "gram": per_chunk["gram"] * N / rows,
        "chol": n_chol * chol,
        "trig": per_chunk["trig"] * trig_rows / rows,
        "cv_predict": per_chunk["cv_predict"] * N / rows,
        "spectral": best(lambda: spectral_norm(E)) if P else 0.0,
    }
    trig_train = per_chunk["trig"] * N / rows
    lev = per_chunk["gram"] * N / rows + chol + trig_train
    return steps, lev, trig_train


def liu_floor(args: argparse.Namespace) -> None:
    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.protocols import get_protocol
    from kernelbench.protocols.krr import GRAM_SCORES, LEVERAGE
    from kernelbench.trig import scaled_cos_sin

    scaled_cos_sin(np.zeros((2, 2)), np.ones(2))  # the compiled kernel loaded, not timed
    proto = get_protocol("krr")
    methods = args.methods or list(LIU_METHODS)
    names = ["gram", "chol", "trig", "cv_predict", "spectral", "lev"]
    total = dict.fromkeys(names, 0.0)
    print("dataset   s/d     N       M     F  cells runs " + " ".join(f"{k:>10}" for k in names))
    for name in args.datasets:
        base = build_cell(make_cell("rff", "rbf", name, n=1, protocol="krr"))
        ctx = proto.prepare(base)
        N, M, d = len(ctx.y_train), len(ctx.y_test), ctx.X_train.shape[1]
        opts = base.settings
        P = int(opts.get("spectral_points") or 0)
        folds, lams = int(opts["cv_folds"]), len(opts["lambdas"])
        chunk, runs = int(opts["chunk_rows"]), int(opts["runs"])
        for n in args.ns:
            F = 2 * int(round(n * d))
            steps, lev, trig_train = liu_floor_steps(N, M, P, F, folds, lams, args.rounds, chunk)
            cells = len(methods)
            got = {k: cells * runs * v for k, v in steps.items()}
            # the code's reading: lev_rff's and slw_rff's maps take cos or sin of 2s
            # distinct projections (column_W_, phase_), twice the cos/sin of the others
            twice = sum(m in LEVERAGE for m in methods) if opts["sampler"] == "reweight" else 0
            got["trig"] += twice * runs * steps["trig"]
            # a leverage map's scores pass: lev_rff's with its Gram and factorisation,
            # slw_rff's the cos/sin of the train rows alone
            got["lev"] = runs * sum(
                lev if m in GRAM_SCORES else trig_train for m in methods if m in LEVERAGE
            )
            for k in names:
                total[k] += got[k]
            print(
                f"{name:<9}{n:>4}{N:>7}{M:>8}{F:>6}{cells:>6}{runs:>5} "
                + " ".join(f"{got[k]:>10.2f}" for k in names),
                flush=True,
            )
    floor = sum(total.values())
    print("total" + " " * 43 + " ".join(f"{total[k]:>10.2f}" for k in names))
    print(
        f"floor: {floor:.0f} CPU-s, {floor / 120:.1f} min on 2 workers "
        f"({floor / 1440:.2f}x the 1440 CPU-s of 12 min x 2 workers)"
    )


def rows(args: argparse.Namespace) -> None:
    import json
    import re
    from pathlib import Path

    import pandas as pd

    root = Path(args.results)
    shards = sorted(p for p in root.rglob("*.parquet") if ".exact" not in p.parts)
    df = pd.concat([pd.read_parquet(p) for p in shards], ignore_index=True)
    df["map"] = df["fit_seconds"] + df["transform_seconds"]
    keys = ["learner", "dataset"]
    part = df.groupby(keys).agg(
        cells=("config_hash", "nunique"),
        runs=("run", "size"),
        map=("map", "sum"),
        train=("train_seconds", "sum"),
        predict=("predict_seconds", "sum"),
    )
    ceil: dict[tuple[str, str], float] = {}
    for path in sorted((root / ".exact").glob("*.json")):
        rec = json.loads(path.read_text())
        dataset = rec["dataset"]
        key = (str(rec["learner"]), str(dataset["name"] if isinstance(dataset, dict) else dataset))
        ceil[key] = ceil.get(key, 0.0) + float(rec["seconds"])
    part["ceilings"] = [ceil.get(k, 0.0) for k in part.index]
    if args.log:
        line = re.compile(r"\] (\S+) \S+ \S+ learner=(\S+) .*\[([0-9.]+) s\]$")
        cells: dict[tuple[str, str], float] = {}
        for text in Path(args.log).read_text().splitlines():
            m = line.search(text)
            if m:
                k = (m.group(2), m.group(1))
                cells[k] = cells.get(k, 0.0) + float(m.group(3))
        part["cell_seconds"] = [cells.get(k, np.nan) for k in part.index]
        stages = part[["map", "train", "predict", "ceilings"]].sum(axis=1)
        part["rest"] = part["cell_seconds"] - stages
    part.loc[("all", "all"), :] = part.sum(numeric_only=True)
    print(part.to_string(float_format="{:.0f}".format))
    unmatched = sorted(set(ceil) - set(part.index))
    if unmatched:
        print("unmatched ceilings:", unmatched)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("grid", choices=["fig2", "linear", "liu", "liu-solve", "liu-floor", "rows"])
    ap.add_argument("--datasets", nargs="+", default=None)
    ap.add_argument("--ns", nargs="+", type=float, default=None)
    ap.add_argument("--method", default="rff")
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--kernel", default="rbf")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--linear", action="store_true")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--grids", nargs="+", type=int, default=[8, 4, 1], choices=[8, 4, 1])
    ap.add_argument("--exact-rows", type=int, default=0)
    ap.add_argument("--results", help="rows: a results directory of the downstream protocol")
    ap.add_argument("--log", help="rows: the output of the kernelbench run that wrote it")
    args = ap.parse_args(argv)
    if args.grid == "rows":
        rows(args)
        return 0
    with threadpool_limits(1, user_api="blas"):
        if args.grid in ("fig2", "linear"):
            args.datasets = args.datasets or ["letter", "usps", "powerplant"]
            args.ns = [int(n) for n in (args.ns or [1, 5])]
            (fig2 if args.grid == "fig2" else linear)(args)
        else:
            args.datasets = args.datasets or ["codrna", "eeg", "magic04"]
            if args.grid == "liu-floor":
                args.ns = [int(n) for n in (args.ns or LIU_NS)]
                liu_floor(args)
                return 0
            args.ns = [int(n) for n in (args.ns or [16, 128])]
            args.methods = args.methods or ["rff"]
            (liu if args.grid == "liu" else liu_solve)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
