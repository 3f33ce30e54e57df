"""Calibrate the cost model (kernelbench/cost.py) against measured cell wall times.

    python scripts/calibrate_cost.py --measure /tmp/cost.json   # run the grids (~5 min)
    python scripts/calibrate_cost.py --load /tmp/cost.json      # ratios of the stored times
    python scripts/calibrate_cost.py --load /tmp/cost.json --fit  # and refit COEF

Runs the quick grid (``kernelbench run``) and Fig. 1's reduced grid
(``kernelbench run experiment=fig1_reduced``) cell by cell in one process, as the basic
launcher does (one BLAS thread, nothing written), and prints predicted / measured per
cell, per grid and in total. ``--fit`` fits :data:`kernelbench.cost.COEF` by
non-negative least squares on the relative error and prints the new coefficients
(paste them into cost.py). Thin glue: the cells, their price and their runs are the
package's (kernelbench.estimate, kernelbench.cost, kernelbench.experiment).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from kernelbench import cost
from kernelbench.estimate import grid_cells, grid_points
from kernelbench.launch import plan

GRIDS = {"quick": [], "fig1_reduced": ["experiment=fig1_reduced"]}


def cells_of(args: list[str]) -> list:
    hydra_args, _, _ = plan(args, False)
    return grid_cells(grid_points(hydra_args))


def measure(path: str) -> None:
    from kernelbench.experiment import run_and_store

    out = {}
    for grid, args in GRIDS.items():
        times = []
        for i, cell in enumerate(cells_of(args)):
            t0 = time.perf_counter()
            run_and_store(cell, output_dir=None, blas_threads=1, echo=None)
            times.append(time.perf_counter() - t0)
            print(f"{grid} [{i + 1}] {cell.name}: {times[-1]:.2f} s", flush=True)
        out[grid] = times
    with open(path, "w") as f:
        json.dump(out, f)


def rows(grid: str) -> tuple[list, np.ndarray]:
    """The grid's cells and their work counts (one row per cell, columns of COEF)."""
    cells = cells_of(GRIDS[grid])
    return cells, np.array([[c.terms[k] for k in cost.COEF] for c in cost.price(cells)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", help="run the grids and store their cell times here")
    ap.add_argument("--load", help="the stored cell times")
    ap.add_argument("--fit", action="store_true", help="refit COEF and print it")
    ap.add_argument("--cells", action="store_true", help="print every cell's ratio")
    a = ap.parse_args()
    if a.measure:
        measure(a.measure)
    with open(a.measure or a.load) as f:
        measured = {k: np.array(v) for k, v in json.load(f).items()}
    data = {g: rows(g) for g in GRIDS}
    coef = np.array(list(cost.COEF.values()))
    if a.fit:
        from scipy.optimize import nnls

        A = np.vstack([data[g][1] / measured[g][:, None] for g in GRIDS])
        scale = np.abs(A).max(axis=0)
        scale[scale == 0] = 1.0
        x, _ = nnls(A / scale, np.ones(len(A)))
        coef = x / scale
        print("COEF = {")
        for k, v in zip(cost.COEF, coef, strict=True):
            print(f'    "{k}": {v:.3g},')
        print("}")
    total_p = total_m = 0.0
    for g in GRIDS:
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
        f"both grids: predicted {total_p:.1f} s, measured {total_m:.1f} s, "
        f"ratio {total_p / total_m:.2f}"
    )


if __name__ == "__main__":
    main()
