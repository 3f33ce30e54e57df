"""Calibrate the cost model (kernelbench/cost.py) against measured cell wall times.

    python scripts/calibrate_cost.py --measure /tmp/cost.json   # run the grids (~8 min of CPU)
    python scripts/calibrate_cost.py --measure /tmp/c.json --grids krr svm  # some of them
    python scripts/calibrate_cost.py --load /tmp/cost.json /tmp/c.json --fit  # refit COEF
    python scripts/calibrate_cost.py --load /tmp/cost.json --whole  # Fig. 2, Liu whole

Runs each grid of :data:`GRIDS` (the quick grid, Fig. 1's reduced grid, and small
slices of the learner protocols' and the wide datasets' grids) cell by cell in one
process, as the basic launcher does (one BLAS thread, nothing written), and prints
predicted / measured per cell, per grid and in total (the grids of the stored files;
a later file's grid replaces an earlier one's). Measured is each cell's CPU time (the
process's): with one BLAS thread it is the cell's wall time on an idle machine, and it
does not grow with the load of a shared one as wall time does (both are stored).
``--fit`` fits :data:`kernelbench.cost.COEF` by non-negative least squares on the
relative error, each grid weighing the same (the per-flop and per-draw ones timed alone
first, :func:`micro`) and prints the new coefficients (paste them into cost.py). Thin
glue: the cells, their price and their runs are the package's (kernelbench.estimate,
.cost, .experiment).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from kernelbench import cost
from kernelbench.estimate import grid_cells, grid_points
from kernelbench.launch import plan

_ONE = ["kernel=rbf", "runs=1"]
GRIDS = {
    "quick": [],
    "fig1_reduced": ["experiment=fig1_reduced"],
    # fig1_noqmc at d = 3072 and 7129 (sample-space draws), 3 runs
    "wide": ["experiment=fig1_noqmc", "kernel=rbf", "n=1,5", "runs=3"],
    # Liu Table 3 (krr): the reduced grid, and EEG at large s (the Cholesky regime)
    "krr": ["experiment=liu2020_table3_reduced"],
    "krr_large": ["experiment=liu2020_table3", "dataset=eeg", "method=rff,lev_rff", "n=32,128"]
    + _ONE,
    "krr_sample": ["experiment=liu2020_table3", "dataset=codrna,magic04", "n=16,128"]
    + ["method=rff,lev_rff,sr33"]
    + _ONE,
    # Fig. 2 (downstream): the SVM and the linear learner (without its exact score, an
    # N^3 eigendecomposition: minutes), one run per cell
    "svm": ["experiment=fig2_reduced", "method=rff,sr33", "n=1,5"] + _ONE,
    "linear": ["experiment=fig2", "protocol.learner=linear", "protocol.exact=false"]
    + ["method=rff", "n=1,5"]
    + _ONE,
    # checks beside the paper grids: the reduced Yu and Yang grids, a slice of Fig. 3
    "yu_reduced": ["experiment=yu2016_fig4_qmc_reduced"],
    "yang_reduced": ["experiment=yang2014_fig2_pca_reduced"],
    "fig3_slice": ["experiment=fig3", "protocol.points=1000", "dataset=usps,cifar100"]
    + ["method=rff,orf,sorf,sr33", "protocol.repeats=5"],
    # the protocols not above, small cells of each
    "variance_ratio": ["protocol=variance_ratio", "dataset=gaussian_pairs", "method=rff,orf"]
    + ["runs=20", "protocol.d=16"],
    "qmc_discrepancy": ["protocol=qmc_discrepancy", "method=qmc,rff", "n=1,2,4", "runs=5"]
    + ["dataset.splits.kernel_approx.samples=300"],
    "qmc_adaptive": ["protocol=qmc_adaptive", "method=qmc_adaptive", "n=1,2", "runs=2"]
    + ["method.params.max_cg_iter=6", "dataset.splits.kernel_approx.samples=200"],
    # the qmc protocols on a paper grid: Yang's Fig. 3 at its largest n, Fig. 4 at 2 runs
    "yang_fig3": ["experiment=yang2014_fig3", "n=8"],
    "yang_fig4": ["experiment=yang2014_fig4", "runs=2"],
    # a plug-in (pip install -e examples/toy_rff): priced by its probe (kernelbench.probe)
    "plugin": ["method=toy_rff,rff", "n=1,4", "runs=5", "dataset=digits,usps"],
}
#: ``--whole``: paper grids at their run counts from measured cells, each (dataset,
#: learner)'s price scaled by measured / predicted on its cells of these grids (the
#: linear learner unscaled: its slice has no exact score)
WHOLE = {"liu2020_table3": ["krr_large", "krr_sample"], "fig2": ["svm"]}


def cells_of(args: list[str]) -> list:
    hydra_args, _, _ = plan(args, bool(args))
    return grid_cells(grid_points(hydra_args))


def measure(path: str, grids: list[str]) -> None:
    from kernelbench.experiment import run_and_store

    out = {}
    for grid in grids:
        args = GRIDS[grid]
        times, walls = [], []
        for i, cell in enumerate(cells_of(args)):
            t0, c0 = time.perf_counter(), time.process_time()
            run_and_store(cell, output_dir=None, blas_threads=1, echo=None)
            times.append(time.process_time() - c0)
            walls.append(time.perf_counter() - t0)
            print(f"{grid} [{i + 1}] {cell.name}: {times[-1]:.2f} CPU-s, {walls[-1]:.2f} s wall")
        out[grid] = times
        out[f"{grid} wall"] = walls
        with open(path, "w") as f:  # after each grid: a stopped run keeps what it has
            json.dump(out, f)


def rows(grid: str) -> tuple[list, np.ndarray]:
    """The grid's cells and their work counts (one row per cell, columns of COEF)."""
    cells = cells_of(GRIDS[grid])
    return cells, np.array([[c.terms[k] for k in cost.COEF] for c in cost.price(cells)])


def _cpu(f, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        c0 = time.process_time()
        f()
        best = min(best, time.process_time() - c0)
    return best


def micro() -> dict[str, float]:
    """Seconds per unit of the terms whose unit is one kernel's work, timed alone (one
    BLAS thread, CPU time, best of 3): normals drawn, GEMM flops (the exact kernel),
    QR flops (of a map's blocks, and of the points in sample space), matrix-vector flops
    (the spectral norm), Cholesky flops, eigendecomposition p^3, a box discrepancy's sinc
    pairs (its first call compiles: timed after it); K_hat, the projections
    and the learners' Grams at the GEMM's rate. The other terms (fixed costs, Python
    per run, elementwise, libsvm) are fitted."""
    from scipy.linalg import cho_factor, eigh
    from threadpoolctl import threadpool_limits

    from kernelbench.qmc import mean_squared_error

    rng = np.random.default_rng(0)
    A, v = rng.standard_normal((1000, 1000)), rng.standard_normal(1000)
    T, P = rng.standard_normal((2000, 256)), rng.standard_normal((3000, 200))
    S = A @ A.T + 1000 * np.eye(1000)
    mean_squared_error(T[:400, :32], 1.0)  # compiled (or loaded from numba's cache)
    with threadpool_limits(1, user_api="blas"):
        out = {
            "draw": _cpu(lambda: rng.standard_normal(4_000_000)) / 4e6,
            "exact": _cpu(lambda: A @ A) / (2 * 1000**3),
            "qr": _cpu(lambda: np.linalg.qr(T)) / (2000 * 256**2),
            "spectral": _cpu(lambda: [A @ v for _ in range(200)]) / (200 * 2 * 1000**2),
            "sqr": _cpu(lambda: np.linalg.qr(P, mode="r")) / (2 * 3000 * 200**2),
            "chol": _cpu(lambda: cho_factor(S, check_finite=False)) / (1000**3 / 3),
            "eigh": _cpu(lambda: eigh(S, check_finite=False, driver="evd")) / 1000**3,
            "sinc": _cpu(lambda: mean_squared_error(T[:400, :32], 1.0)) / (400 * 399 / 2 * 32),
        }
    out["gemm"] = out["proj"] = out["exact"]  # K_hat and the projections: GEMMs
    print("timed alone: " + ", ".join(f"{k} {v:.3g} s" for k, v in out.items()))
    return out


def whole(measured: dict, data: dict, coef: np.ndarray) -> None:
    def key(c):
        return str(c.dataset["name"]), c.settings.get("learner")

    for grid, slices in WHOLE.items():
        ratio: dict = {}
        for g in slices:
            cells, A = data[g]
            for c, p, m in zip(cells, A @ coef, measured[g], strict=True):
                r = ratio.setdefault(key(c), [0.0, 0.0])
                r[0], r[1] = r[0] + m, r[1] + p
        price = cost.price(cells_of([f"experiment={grid}"]))
        total = sum(c.seconds * np.divide(*ratio.get(key(c.cell), (1, 1))) for c in price)
        print(
            f"{grid}: {len(price)} cells, model {sum(c.seconds for c in price):.0f} s, from "
            f"measured cells {total:.0f} CPU-s, {total / 7200:.2f} h on 2 workers"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", help="run the grids and store their cell times here")
    ap.add_argument("--grids", nargs="+", choices=list(GRIDS), default=list(GRIDS))
    ap.add_argument("--load", nargs="+", default=[], help="the stored cell times")
    ap.add_argument("--fit", action="store_true", help="refit COEF and print it")
    ap.add_argument("--cells", action="store_true", help="print every cell's ratio")
    ap.add_argument("--whole", action="store_true", help="price WHOLE from measured cells")
    a = ap.parse_args()
    if a.measure:
        measure(a.measure, a.grids)
    measured: dict[str, np.ndarray] = {}
    for path in a.load + ([a.measure] if a.measure else []):
        with open(path) as f:
            measured.update({k: np.array(v) for k, v in json.load(f).items() if k in GRIDS})
    grids = [g for g in GRIDS if g in measured]
    data = {g: rows(g) for g in grids}
    coef = np.array(list(cost.COEF.values()))
    if a.fit:
        from scipy.optimize import nnls

        fixed = {**micro(), "probe": 1.0}  # a probe's seconds are measured
        keys = list(cost.COEF)
        free = [k for k in keys if k not in fixed]
        A = np.vstack([data[g][1] / measured[g][:, None] for g in grids])
        known = A[:, [keys.index(k) for k in fixed]] @ np.array(list(fixed.values()))
        B = A[:, [keys.index(k) for k in free]]
        scale = np.abs(B).max(axis=0)
        scale[scale == 0] = 1.0
        # each grid weighs the same in total, whatever its number of cells
        w = np.concatenate([np.full(len(measured[g]), len(measured[g]) ** -0.5) for g in grids])
        x, _ = nnls(B / scale * w[:, None], w * np.clip(1.0 - known, 0.0, None))
        coef = np.array(
            [fixed[k] if k in fixed else x[free.index(k)] / scale[free.index(k)] for k in keys]
        )
        print("COEF = {")
        for k, v in zip(cost.COEF, coef, strict=True):
            print(f'    "{k}": {v:.3g},')
        print("}")
    total_p = total_m = 0.0
    for g in grids:
        cells, A = data[g]
        pred = A @ coef
        ratio = pred / measured[g]
        if a.cells:
            for c, p, m, r in zip(cells, pred, measured[g], ratio, strict=True):
                print(f"{g:13s} {c.name:40s} predicted {p:7.2f} s measured {m:7.2f} s  {r:.2f}")
        within = np.mean((ratio >= 0.5) & (ratio <= 2.0))
        print(
            f"{g}: {len(cells)} cells, predicted {pred.sum():.1f} s, measured "
            f"{measured[g].sum():.1f} s, total ratio {pred.sum() / measured[g].sum():.2f}; "
            f"per cell ratio min {ratio.min():.2f}, median {np.median(ratio):.2f}, "
            f"max {ratio.max():.2f}; within a factor 2: {100 * within:.0f}%"
        )
        total_p += pred.sum()
        total_m += measured[g].sum()
    print(
        f"all grids: predicted {total_p:.1f} s, measured {total_m:.1f} s, "
        f"ratio {total_p / total_m:.2f}"
    )
    if a.whole:
        whole(measured, data, coef)


if __name__ == "__main__":
    main()
