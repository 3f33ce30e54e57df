"""Which cells a verify grid runs, and running them (resumable, any number of workers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kernelbench.config import compose, experiment_grid, experiment_sweep
from kernelbench.errors import choices_error
from kernelbench.verify.config import VerifyConfig


def grid_cells(
    cfg: VerifyConfig, grid: str, runs: int | None = None, seed: int | None = None
) -> list[dict[str, Any]]:
    """The cells of a verify grid, composed as ``kernelbench run`` composes them
    (:func:`kernelbench.config.experiment_grid` per entry, plus its ``add_methods``);
    ``runs`` and ``seed`` override the files'."""
    if grid not in cfg.grids:
        raise choices_error("grid", grid, cfg.grids)
    fixed = [f"seed={cfg.seed if seed is None else seed}"]
    if runs is not None:
        fixed.append(f"runs={runs}")
    cells = []
    for exp, extra in cfg.grids[grid]:
        add = {"method": list(extra)} if extra else None
        cells += [compose(o) for o in experiment_grid(exp, fixed, add)]
    return cells


def grid_experiments(cfg: VerifyConfig, grid: str) -> list[str]:
    """The experiment names (results' ``experiment`` column) of a grid's files."""
    if grid not in cfg.grids:
        raise choices_error("grid", grid, cfg.grids)
    return sorted({str(experiment_sweep(e)[0].get("experiment", e)) for e, _ in cfg.grids[grid]})


def _run_one(cell: dict[str, Any], output_dir: str) -> str:
    from kernelbench.experiment import run_and_store

    lines: list[str] = []
    run_and_store(cell, output_dir, blas_threads=1, echo=lines.append)
    return "\n".join(lines).strip()


def run_cells(
    cells: Sequence[dict[str, Any]],
    output_dir: str | Path,
    jobs: int = 1,
    echo: Callable[[str], None] | None = None,
) -> None:
    """Run (or resume) cells into ``output_dir``; shards are bit-identical for any
    ``jobs`` (per-run seeds, one BLAS thread)."""
    if jobs <= 1:
        lines = (_run_one(c, str(output_dir)) for c in cells)
    else:
        from joblib import Parallel, delayed

        par = Parallel(n_jobs=jobs, return_as="generator", batch_size=1)
        lines = par(delayed(_run_one)(c, str(output_dir)) for c in cells)
    for i, line in enumerate(lines):
        if echo:
            echo(f"[{i + 1}/{len(cells)}] {line}")
