"""Each speed change against what it replaced, measured in this one process.

    KERNELBENCH_DATA=/path/to/mirror python scripts/bench_speedups.py [--big] [--repeats 3]

One BLAS thread, best of ``--repeats``; prints before, after and their ratio for

* orf: one d x d Haar block as a dense QR (``haar_orthogonal``) and a GEMM, against
  the Householder product drawn from fresh Gaussian vectors applied in WY panels;
  N = 100 points (CIFAR-100's X and Y) at d = 3072 and N = 20 (LEUKEMIA's) at d = 7129;
* orf_tallqr: the QR of a D x d Gaussian matrix and a GEMM, against the Householder
  product of its law (d = 3072, n = 1; d = 7129 with ``--big``: a minute per QR);
* the spectral norm of a Fig. 1 error matrix (550 x 550): ARPACK against Golub-Kahan;
* kernel_approx runs one by one against batched (Powerplant, LETTER, n = 1);
* butterfly rotations row by row against tiles of 16 rows (d = 3072, N = 1000 and 10);
* scrambled Halton points: scipy's ``qmc.Halton`` against ``halton_points`` (D x d);
* the Gaussian features' cos/sin: numpy's libm against the fused kernel of
  ``kernelbench.trig`` (1000 points, d = 784 and 3072, n = 1; and lev_rff's
  re-weighted columns, 4096 x 2048);
* orf's map: the Householder panels at transform time against W formed in ``fit`` by
  the default rule told the rows as the walltime protocol tells them (``map_rows`` =
  51 N: under 64 MiB by ``dorgqr``, above it by the panels' GEMMs), d = 784 and 3072,
  10 and 1000 points, what forming costs (also by ``dorgqr`` at any size), and after
  how many mapped rows it pays;
* sorf's HD blocks: block by block over the whole batch with a stage-by-stage FWHT
  (as before) against one fused pass per row (``hd_blocks_rows``), d = 3072, n = 1;
* kernel_approx's K_hat and error matrix in a reused buffer against fresh arrays per
  run (Powerplant, LETTER, n = 1, 500 runs, batched as the protocol does);
* the KRR's normal-equation solve (``ChunkedRidge._solve``, Liu et al. 2020 Table 3):
  a C-ordered Gram copied and transposed inside ``potrf``'s wrapper against a
  Fortran-ordered one factored in place, s = 1792 and 3584;
* the Fig. 3 goals as ratios of map times (transform, and fit + transform) measured
  here: rff / sr33, rff / sorf and orf / rff, with numpy's and the fused cos/sin;
* sr33's map (d = 3072, 1000 points): each rule's rotation stored, then the simplex
  pass, against the fused pass (``Butterfly.simplex_into``), with rff/sr33 and the
  floor: the rotations alone plus the cos/sin pass over the output;
* kernel_approx runs drawing W (``protocol.draws=weights``) against sample-space draws
  (the default), rff, orf and orf_tallqr (``--draw-methods``), Gaussian kernel, on the
  cells ``--draw-cells`` (dataset:n, default CIFAR-100 and LEUKEMIA at n = 1): one run
  of each kind in turn,
  ``--draw-runs`` runs (50), the ratio of their total times, and the two-sample KS
  p-value of their relative Frobenius errors (equal laws: p uniform on [0, 1]).

``--only sorf fig3 draws`` runs some of them.

Times depend on the machine and its load; the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.timing import best_time

ROWS: list[tuple[str, float, float]] = []
#: The clock of :func:`interleaved`: wall time, or with ``--cpu`` this process's CPU time
#: (one BLAS thread: the work done, whatever the other jobs' load).
CLOCK: Callable[[], float] = time.perf_counter


def report(what: str, before: float, after: float) -> None:
    ROWS.append((what, before, after))
    print(f"{what:58s} {before:10.4f} {after:10.4f} {before / after:8.1f}x", flush=True)


def orf_blocks(repeats: int, big: bool) -> None:
    from kernelbench.transforms import HouseholderProduct, haar_orthogonal

    for d, N in [(3072, 100), (7129, 20)]:
        X = np.random.default_rng(0).uniform(size=(N, d))

        def dense(d=d, X=X):
            Q = haar_orthogonal(np.random.default_rng(1), d)
            return X @ Q.T

        def householder(d=d, X=X):
            hp = HouseholderProduct.gaussian(np.random.default_rng(1), d)
            return hp.apply_rows(X * hp.r_signs[None, :])

        r = 1 if d > 5000 else repeats
        report(
            f"orf block d={d}, N={N}: dense QR vs Householder",
            best_time(dense, r),
            best_time(householder, r),
        )
    dims = [(3072, 100), (7129, 20)] if big else [(3072, 100)]
    for d, N in dims:
        D = 2 * (d + 1)
        X = np.random.default_rng(0).uniform(size=(N, d))

        def tall_dense(d=d, D=D, X=X):
            Q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((D, d)))
            return X @ Q.T

        def tall_householder(d=d, D=D, X=X):
            hp = HouseholderProduct.gaussian(np.random.default_rng(1), D, d)
            Xp = np.zeros((len(X), D))
            Xp[:, :d] = X
            return hp.apply_rows(Xp)

        r = 1 if d > 5000 else repeats
        report(
            f"orf_tallqr d={d}, D={D}, N={N}: dense QR vs Householder",
            best_time(tall_dense, r),
            best_time(tall_householder, r),
        )


def spectral(repeats: int) -> None:
    from scipy.sparse.linalg import svds

    from kernelbench import exact_kernel, make_feature_map
    from kernelbench.metrics import spectral_norm

    rng = np.random.default_rng(0)
    X, Y = rng.uniform(size=(550, 16)), rng.uniform(size=(550, 16))
    for method in ("rff", "sr33"):
        E = exact_kernel("rbf", X, Y) - make_feature_map(method, n=1, random_state=0).fit(
            X
        ).approximate_kernel(X, Y)
        v0 = np.full(550, 1.0 / np.sqrt(550))

        def arpack(E=E, v0=v0):
            return svds(E, k=1, v0=v0, return_singular_vectors=False, solver="arpack")

        report(
            f"spectral norm, 550x550 {method} error: ARPACK vs Golub-Kahan",
            best_time(arpack, 5 * repeats),
            best_time(lambda E=E: spectral_norm(E), 5 * repeats),
        )


def batching(repeats: int) -> None:
    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.protocols import get_protocol

    if not os.environ.get("KERNELBENCH_DATA"):
        print("(batching skipped: KERNELBENCH_DATA is not set)")
        return
    runs = 64
    for ds, method in [("powerplant", "rff"), ("letter", "rff"), ("letter", "sr33")]:
        cell = build_cell(make_cell(method, "rbf", ds, 1, runs=runs))
        proto = get_protocol(cell)
        ctx = proto.prepare(cell)
        proto.measure(cell, ctx, range(2))
        step = proto.spec.batch

        def one(cell=cell, ctx=ctx, proto=proto):
            return [proto.measure(cell, ctx, [r]) for r in range(runs)]

        def batched(cell=cell, ctx=ctx, proto=proto, step=step):
            return [
                proto.measure(cell, ctx, range(lo, min(runs, lo + step)))
                for lo in range(0, runs, step)
            ]

        report(
            f"{ds} {method} n=1, {runs} runs: one by one vs batches of {step}",
            best_time(one, repeats),
            best_time(batched, repeats),
        )


def butterfly(repeats: int) -> None:
    from kernelbench.transforms import Butterfly, _rotate_rows, butterfly_plan

    d = 3072
    B = Butterfly(d, 3, np.random.default_rng(1))
    plan = butterfly_plan(d)
    for N in (1000, 10):
        X = np.random.default_rng(0).standard_normal((N, d))
        out = np.empty_like(X)
        B.rotate_rows(X, out=out)

        def rows(X=X, out=out):
            _rotate_rows(X, out, *plan, B.cos, B.sin, B.perms)

        report(
            f"butterfly (B P)^3, d={d}, N={N}: row by row vs tiles",
            best_time(rows, repeats),
            best_time(lambda X=X, out=out: B.rotate_rows(X, out=out), repeats),
        )


def halton(repeats: int) -> None:
    from scipy.stats import qmc

    from kernelbench.features.qmc import halton_points

    for d in (784, 3072):
        D = 2 * (d + 1)
        report(
            f"scrambled Halton, {D} x {d}: scipy vs halton_points",
            best_time(lambda d=d, D=D: qmc.Halton(d, scramble=True, seed=1).random(D), 1),
            best_time(lambda d=d, D=D: halton_points(D, d, np.random.default_rng(1)), 1),
        )


def use_cpu_clock(cpu: bool) -> None:
    """Time :func:`interleaved` by this process's CPU seconds (``--cpu``) or wall time."""
    global CLOCK
    CLOCK = time.process_time if cpu else time.perf_counter
    if cpu:
        print("timing CPU seconds of this process (time.process_time)")


def interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best time of each function, timed round-robin (a load change hits them alike),
    by :data:`CLOCK`."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = CLOCK()
            fn()
            best[name] = min(best[name], CLOCK() - t0)
    return best


def _numpy_trig(fn: Callable[[], object]) -> Callable[[], object]:
    """fn with every cos/sin of kernelbench.trig on numpy (as before the fused kernel)."""
    from kernelbench import trig as T

    def run():
        limit = T.MIN_SIZE
        T.MIN_SIZE = np.iinfo(np.int64).max
        try:
            return fn()
        finally:
            T.MIN_SIZE = limit

    return run


def trig(repeats: int) -> None:
    from kernelbench.trig import scaled_cos_sin, scaled_cos_sin_split

    rng = np.random.default_rng(0)
    for d in (784, 3072):
        D = 2 * (d + 1)
        P = rng.standard_normal((1000, D)) * 3.0
        scale = np.full(D, np.sqrt(1.0 / D))

        def fused(P=P, scale=scale):
            return scaled_cos_sin(P, scale)

        assert np.max(np.abs(_numpy_trig(fused)() - fused())) <= 4e-16
        t = interleaved({"numpy": _numpy_trig(fused), "fused": fused}, repeats)
        report(f"cos/sin features 1000 x {D}: numpy vs fused", t["numpy"], t["fused"])
    # lev_rff / slw_rff (re-weighted columns): cos of one half, sin of the other;
    # a chunk of the KRR's rows at cod-RNA's s/d = 128 (2s = 2048 columns)
    P = rng.standard_normal((4096, 2048)) * 3.0
    scale = rng.uniform(0.5, 2.0, 2048)

    def split(P=P, scale=scale):
        return scaled_cos_sin_split(P, scale)

    assert np.max(np.abs(_numpy_trig(split)() - split()) / scale) <= 4e-16
    t = interleaved({"numpy": _numpy_trig(split), "fused": split}, repeats)
    report("re-weighted cos | sin columns 4096 x 2048: numpy vs fused", t["numpy"], t["fused"])


def _fitted(d: int, specs: dict[str, tuple[str, dict]], N: int, repeats: int):
    """The points, each map fitted to them (n = 1, Gaussian) and its best fit time."""
    from kernelbench import make_feature_map

    X = np.random.default_rng(0).uniform(size=(N, d))
    maps = {
        name: make_feature_map(method, n=1, random_state=0, **params)
        for name, (method, params) in specs.items()
    }
    fits = interleaved({k: (lambda fm=fm: fm.fit(X)) for k, fm in maps.items()}, repeats)
    for fm in maps.values():
        fm.transform(X)
    return X, maps, fits


def orf_map(repeats: int) -> None:
    for d in (784, 3072):
        for N in (10, 1000):
            specs = {
                "panels": ("orf", {"dense_limit_mb": 0}),
                "dorgqr": ("orf", {"dense_limit_mb": 1e6}),  # W by dorgqr at any size
                # the default rule, told the rows as walltime does (Fig. 3: 1 + 50 maps)
                "rule": ("orf", {"map_rows": 51 * N}),
                "rff": ("rff", {}),
            }
            X, maps, fits = _fitted(d, specs, N, 1 if d > 1000 else repeats)
            route = maps["rule"]._forms_w(d, maps["rule"].n_projections_)
            t = interleaved(
                {k: (lambda fm=fm, X=X: fm.transform(X)) for k, fm in maps.items()}, repeats
            )
            report(f"orf map d={d}, N={N}: panels vs W formed ({route})", t["panels"], t["rule"])
            # forming pays after the rows whose saving covers it: by the rule, by dorgqr
            pay = [
                (fits[k] - fits["panels"]) / (t["panels"] - t[k]) * N for k in ("rule", "dorgqr")
            ]
            pays = "; forming pays after {:.0f} mapped rows ({:.0f} by dorgqr)".format(*pay)
            print(
                f"    orf/rff map: panels {t['panels'] / t['rff']:.2f}, rule "
                f"{t['rule'] / t['rff']:.2f}, W by dorgqr {t['dorgqr'] / t['rff']:.2f}; "
                f"fit s: panels {fits['panels']:.3f}, rule {fits['rule']:.3f}, W by dorgqr "
                f"{fits['dorgqr']:.3f}, rff {fits['rff']:.3f}"
                + (pays if route else "; W not formed: 51 N < d"),
                flush=True,
            )


def sorf(repeats: int) -> None:
    import numba

    from kernelbench import make_feature_map

    @numba.njit(cache=True, nogil=True)
    def stagewise(X):  # the FWHT kernel used before, one stage at a time
        n, m = X.shape
        for r in range(n):
            h = 1
            while h < m:
                for i in range(0, m, 2 * h):
                    for j in range(i, i + h):
                        a, b = X[r, j], X[r, j + h]
                        X[r, j], X[r, j + h] = a + b, a - b
                h *= 2

    def blockwise(fm, X):  # sorf's projections as computed before
        (N, d), m, D = X.shape, fm.padded_dim_, fm.n_projections_
        out = np.empty((N, D))
        for b, signs in enumerate(fm.signs_):
            Y = np.zeros((N, m))
            Y[:, :d] = X
            for s in signs[::-1]:
                Y *= s.astype(float)[None, :]
                stagewise(Y)
                Y *= 1.0 / np.sqrt(m)
            lo, hi = b * m, min(D, (b + 1) * m)
            out[:, lo:hi] = Y[:, : hi - lo] * np.sqrt(m)
        return out

    for N in (1000, 10):
        X = np.random.default_rng(0).uniform(size=(N, 3072))
        fm = make_feature_map("sorf", n=1, random_state=0).fit(X)
        assert np.array_equal(blockwise(fm, X), fm._project(X))
        fns = {"b": lambda fm=fm, X=X: blockwise(fm, X), "f": lambda fm=fm, X=X: fm._project(X)}
        t = interleaved(fns, repeats)
        report(f"sorf projections d=3072, N={N}: blockwise vs fused", t["b"], t["f"])


def workspace(repeats: int) -> None:
    import kernelbench.protocols.kernel_approx as KA
    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.protocols import get_protocol

    if not os.environ.get("KERNELBENCH_DATA"):
        print("(workspace skipped: KERNELBENCH_DATA is not set)")
        return

    def fresh_product(Zx, Zy, float32):  # as before: a new K_hat per call
        return np.matmul(Zx, np.swapaxes(Zy, -1, -2))

    def fresh_errors(ctx, mapped, K_hat):  # as before: a new error matrix per run
        info = mapped[0]
        if info["constant"] != 0.0:
            K_hat += K_hat.dtype.type(info["constant"])
        E = ctx.K - K_hat
        return {
            "rel_fro_error": float(np.linalg.norm(E)) / ctx.fro_K,
            "rel_spec_error": KA.spectral_norm(E) / ctx.spec_K,
        }

    runs = 500
    for ds, method in [("powerplant", "rff"), ("powerplant", "sr33"), ("letter", "rff")]:
        cell = build_cell(make_cell(method, "rbf", ds, 1, runs=runs))
        proto = get_protocol(cell)
        ctx = proto.prepare(cell)
        step = proto.spec.batch

        def all_runs(cell=cell, ctx=ctx, proto=proto, step=step):
            return [
                r
                for lo in range(0, runs, step)
                for r in proto.measure(cell, ctx, range(lo, min(runs, lo + step)))
            ]

        def before(all_runs=all_runs):
            saved = KA._product, KA.KernelApprox._errors
            KA._product, KA.KernelApprox._errors = fresh_product, staticmethod(fresh_errors)
            try:
                return all_runs()
            finally:
                KA._product, KA.KernelApprox._errors = saved[0], staticmethod(saved[1])

        a, b = before(), all_runs()
        assert [r["rel_spec_error"] for r in a] == [r["rel_spec_error"] for r in b]
        t = interleaved({"before": before, "after": all_runs}, repeats)
        report(f"{ds} {method} n=1, {runs} runs: fresh K_hat vs buffer", t["before"], t["after"])


def ridge(repeats: int) -> None:
    from scipy.linalg import cho_factor, cho_solve

    from kernelbench.learners.ridge import ChunkedRidge

    def before(G, rhs, lam):  # as before: np.sum's C-ordered Gram, copied by the wrapper
        A = G.copy()
        A[np.diag_indices_from(A)] += lam
        return cho_solve(cho_factor(A, lower=False, check_finite=False), rhs)

    krr = ChunkedRidge(lambda_times_n=False)
    rng = np.random.default_rng(0)
    for s in (1792, 3584):
        Z = rng.standard_normal((s + 100, s))
        G = np.asfortranarray(np.triu(Z.T @ Z))
        Gc, rhs = np.ascontiguousarray(G), rng.standard_normal(s)
        assert np.array_equal(before(Gc, rhs, 0.05), krr._solve(G, rhs, None, 0.0, 1, 0.05)[0])
        t = interleaved(
            {
                "b": lambda Gc=Gc, rhs=rhs: before(Gc, rhs, 0.05),
                "a": lambda G=G, rhs=rhs: krr._solve(G, rhs, None, 0.0, 1, 0.05),
            },
            repeats,
        )
        report(f"KRR solve s={s}: C-ordered copy vs Fortran in place", t["b"], t["a"])


def fig3(repeats: int) -> None:
    specs = {m: (m, {}) for m in ("rff", "sr33", "sorf")}
    X, maps, fits = _fitted(3072, specs, 1000, 1)
    fns = {}
    for k, fm in maps.items():
        fns[k] = lambda fm=fm: fm.transform(X)
        fns[k + " numpy"] = _numpy_trig(fns[k])
    t = interleaved(fns, repeats)
    for label in ("numpy", "fused"):
        sfx = " numpy" if label == "numpy" else ""
        for m in ("sr33", "sorf"):
            rff, other = t["rff" + sfx], t[m + sfx]
            print(
                f"Fig. 3 d=3072, N=1000, {label} cos/sin: rff/{m} map {rff / other:.2f}, "
                f"fit+map {(rff + fits['rff']) / (other + fits[m]):.2f} "
                f"(map: rff {rff:.3f} s, {m} {other:.3f} s)",
                flush=True,
            )


def sr33(repeats: int) -> None:
    """sr33's map (d = 3072, 1000 points, n = 1: 2 rules): each rule's rotation stored and
    read again by the simplex pass, against the fused pass; and its floor, the
    rotations alone (each rule's butterflies and permutations, rows in and out) plus
    the cos/sin pass over the output."""
    from kernelbench.features.sr import SR33
    from kernelbench.transforms import simplex_into
    from kernelbench.trig import scaled_cos_sin

    specs = {"rff": ("rff", {}), "sr33": ("sr33", {})}
    X, maps, _ = _fitted(3072, specs, 1000, 1)
    fm = maps["sr33"]
    Xs = X * fm.input_scale_
    U = np.empty_like(Xs)
    P = fm.projections(X)
    scale = fm._feature_scale

    def rotate_then_simplex(self, X, rot, U, out, lo, radii, refl):
        simplex_into(rot.rotate_rows(X, out=U), out, lo, radii, refl)

    def unfused():
        fused = SR33._rule_into
        SR33._rule_into = rotate_then_simplex
        try:
            return fm.transform(X)
        finally:
            SR33._rule_into = fused

    def rotations():
        for rot in fm.rotations_:
            rot.rotate_rows(Xs, out=U)

    assert np.array_equal(unfused(), fm.transform(X))
    fns = {
        "rff": lambda: maps["rff"].transform(X),
        "unfused": unfused,
        "fused": lambda: fm.transform(X),
        "rotations": rotations,
        "cos/sin": lambda: scaled_cos_sin(P, scale),
    }
    t = interleaved(fns, repeats)
    report("sr33 map d=3072, N=1000: rotation, then simplex vs fused", t["unfused"], t["fused"])
    floor = t["rotations"] + t["cos/sin"]
    print(
        f"    rff/sr33 map: unfused {t['rff'] / t['unfused']:.2f}, fused "
        f"{t['rff'] / t['fused']:.2f} (rff {t['rff']:.4f} s); floor {floor:.4f} s = "
        f"rotations {t['rotations']:.4f} + cos/sin {t['cos/sin']:.4f}; sr33 / floor: "
        f"unfused {t['unfused'] / floor:.2f}, fused {t['fused'] / floor:.2f}; "
        f"rff / floor {t['rff'] / floor:.2f}",
        flush=True,
    )


def draws(
    repeats: int, cells: list[str], runs: int = 50, methods: tuple[str, ...] = ("rff", "orf")
) -> None:
    from scipy.stats import ks_2samp

    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.protocols import get_protocol

    if not os.environ.get("KERNELBENCH_DATA"):
        print("(draws skipped: KERNELBENCH_DATA is not set)")
        return
    for ds, n in (c.split(":") for c in cells):
        n = int(n) if float(n).is_integer() else float(n)
        for method in methods:
            cell = build_cell(make_cell(method, "rbf", ds, n, runs=runs))
            weights = dataclasses.replace(cell, settings={**cell.settings, "draws": "weights"})
            proto = get_protocol(cell)
            ctx = proto.prepare(cell)
            proto.measure(cell, ctx, [0])  # load the compiled trig kernel
            seconds = {"weights": 0.0, "sample_space": 0.0}
            errors: dict[str, list[float]] = {"weights": [], "sample_space": []}
            for r in range(runs):
                for name, c in (("weights", weights), ("sample_space", cell)):
                    t0 = time.perf_counter()
                    row = proto.measure(c, ctx, [r])[0]
                    seconds[name] += time.perf_counter() - t0
                    assert row["draws"] == name
                    errors[name].append(row["rel_fro_error"])
            report(
                f"{ds} {method} n={n}, {runs} runs: weights vs sample space",
                seconds["weights"],
                seconds["sample_space"],
            )
            p = ks_2samp(errors["weights"], errors["sample_space"]).pvalue
            mean_w, mean_s = np.mean(errors["weights"]), np.mean(errors["sample_space"])
            print(f"    KS p = {p:.3f}; mean rel_fro {mean_w:.4g} vs {mean_s:.4g}", flush=True)


SECTIONS = (
    "butterfly",
    "spectral",
    "batching",
    "orf_blocks",
    "halton",
    "trig",
    "orf_map",
    "sorf",
    "workspace",
    "ridge",
    "fig3",
    "sr33",
    "draws",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also the tall QR at d = 7129")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS)
    parser.add_argument("--draw-runs", type=int, default=50, help="runs per side (draws)")
    parser.add_argument(
        "--draw-cells", nargs="+", default=["cifar100:1", "leukemia:1"], help="dataset:n (draws)"
    )
    parser.add_argument(
        "--draw-methods", nargs="+", default=["rff", "orf", "orf_tallqr"], help="(draws)"
    )
    parser.add_argument("--cpu", action="store_true", help="time CPU seconds, not wall")
    args = parser.parse_args()
    use_cpu_clock(args.cpu)
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; one BLAS thread; seconds")
    print(f"{'':58s} {'before':>10s} {'after':>10s} {'ratio':>9s}")
    with threadpool_limits(limits=1, user_api="blas"):
        for name in args.only:
            fn = globals()[name]
            if name == "orf_blocks":
                fn(args.repeats, args.big)
            elif name == "draws":
                fn(args.repeats, args.draw_cells, args.draw_runs, tuple(args.draw_methods))
            else:
                fn(args.repeats)


if __name__ == "__main__":
    main()
