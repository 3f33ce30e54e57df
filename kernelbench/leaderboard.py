"""The leaderboard: where a method stands against every published method, grid by grid,
by its geometric mean error ratio to rff and its average rank (docs/leaderboard.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.stats import t_interval

#: The experiment file that declares the leaderboard's grids.
EXPERIMENT = "leaderboard"
#: The reference method every ratio is taken against.
REFERENCE = "rff"


@dataclass(frozen=True)
class Grid:
    """One grid of the leaderboard (an entry of the experiment file's ``parts``)."""

    grid: str  # the experiment file run for the new method
    title: str
    baseline: str  # the committed table (results/baseline/<baseline>)
    metric: str  # the results column aggregated per cell
    top: float | None = None  # None: the metric is an error; else error = top - metric
    keys: tuple[str, ...] = field(default=())  # cell keys beside dataset, kernel, n

    @property
    def cell_keys(self) -> list[str]:
        return ["dataset", "kernel", *self.keys, "n"]

    def error(self, mean: pd.Series) -> pd.Series:
        """The metric as an error, lower is better."""
        return mean if self.top is None else self.top - mean


def grids(name: str = EXPERIMENT) -> list[Grid]:
    """The grids of a leaderboard experiment file (its ``parts``)."""
    from kernelbench.config import experiment_sweep

    top, _ = experiment_sweep(name)
    parts = top.get("parts")
    if not parts:
        raise KernelbenchError(f"experiment {name!r} has no parts: not a leaderboard")
    return [Grid(**{**p, "keys": tuple(p.get("keys") or ())}) for p in parts]


def _grid_cells(grid: Grid) -> pd.DataFrame:
    """The cells (dataset, kernel, [keys], n) the grid's experiment file sweeps."""
    from kernelbench.config import expand, experiment_sweep

    _, sweep = experiment_sweep(grid.grid)
    rename = {f"protocol.{k}": k for k in grid.keys}
    points = [{rename.get(k, k): v for k, v in p.items()} for p in expand(sweep)]
    cells = pd.DataFrame(points)[grid.cell_keys].drop_duplicates()
    cells["n"] = cells["n"].astype(float)
    return cells.reset_index(drop=True)


def grid_table(grid: Grid, baseline_dir: Path, results: Path | None = None) -> pd.DataFrame:
    """Per (cell, method_label): mean, runs and error of the grid's metric, from the
    baseline, or from ``results`` for the methods found there."""
    from kernelbench.baseline.format import cell_table, read_table

    keys = [*grid.cell_keys, "method_label"]
    base = read_table(Path(baseline_dir) / grid.baseline, keys)
    base["n"] = base["n"].astype(float)
    cells = _grid_cells(grid)
    table = base.merge(cells, on=grid.cell_keys, how="inner")
    if results is not None:
        from kernelbench.config import experiment_sweep
        from kernelbench.results import read_results

        experiment = str(experiment_sweep(grid.grid)[0].get("experiment", grid.grid))
        try:
            df = read_results(results, experiment)
        except KernelbenchError:
            df = pd.DataFrame()
        if not df.empty:
            ours = cell_table(df, grid.metric, keys)
            ours["n"] = ours["n"].astype(float)
            ours = ours.merge(cells, on=grid.cell_keys, how="inner")
            # a method found in the results replaces its baseline cells on this grid
            table = table[~table["method_label"].isin(set(ours["method_label"]))]
            table = pd.concat([table, ours], ignore_index=True)
    table = table[[*keys, "runs", "mean", "sem"]].copy()
    table["error"] = grid.error(table["mean"]).astype(float)
    table["grid"] = grid.grid
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def rank_grid(table: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """One grid's standings: per method, cells, the geometric mean error ratio to rff
    with its 95% interval, average rank and rank."""
    wide = table.pivot_table(
        index=grid.cell_keys, columns="method_label", values="error", aggfunc="first"
    )
    if REFERENCE not in wide.columns:
        raise KernelbenchError(f"grid {grid.grid}: no {REFERENCE} cells to compare with")
    tiny = np.finfo(float).tiny
    logs = np.log(np.maximum(wide, tiny)).sub(np.log(np.maximum(wide[REFERENCE], tiny)), axis=0)
    complete = wide.dropna(axis=1, thresh=len(wide)).dropna(axis=0)
    ranks = complete.rank(axis=1).mean(axis=0) if len(complete) else pd.Series(dtype=float)
    rows = []
    for method in wide.columns:
        r = logs[method].dropna().to_numpy()
        mean, _, _, half = t_interval(r)
        rows.append(
            {
                "grid": grid.grid,
                "title": grid.title,
                "method_label": method,
                "cells": r.size,
                "ratio": math.exp(mean),
                "ratio_low": math.exp(mean - half),
                "ratio_high": math.exp(mean + half),
                "mean_rank": float(ranks.get(method, math.nan)),
            }
        )
    out = pd.DataFrame(rows).sort_values(["ratio", "method_label"], kind="stable")
    out["rank"] = np.arange(1, len(out) + 1)
    return out.reset_index(drop=True)


def standings(baseline_dir: Path, results: Path | None = None) -> pd.DataFrame:
    """Every grid's standings, one block per grid (:func:`rank_grid`)."""
    frames = [rank_grid(grid_table(g, baseline_dir, results), g) for g in grids()]
    return pd.concat(frames, ignore_index=True)


def format_standings(table: pd.DataFrame, highlight: str | None = None) -> str:
    """The standings as plain text, one block per grid (``*`` marks ``highlight``)."""
    lines: list[str] = []
    head = f"  {'rank':>4}  {'method':<14} {'cells':>5}  {'error / rff (95% CI)':<26} avg rank"
    for grid, g in table.groupby("grid", sort=False):
        lines += [f"{g['title'].iloc[0]} [{grid}]", head]
        for r in g.itertuples():
            mark = "*" if r.method_label == highlight else " "
            ci = f"[{r.ratio_low:.3g}, {r.ratio_high:.3g}]" if not math.isnan(r.ratio_low) else ""
            avg = f"{r.mean_rank:.2f}" if not math.isnan(r.mean_rank) else "-"
            lines.append(
                f"{mark} {r.rank:>4}  {r.method_label:<14} {r.cells:>5}  "
                f"{r.ratio:<8.3g} {ci:<17} {avg}"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def part_args(args: list[str]) -> list[list[str]] | None:
    """One ``kernelbench run`` argument list per grid of the leaderboard experiment
    named in ``args``, or None when it names none."""
    from kernelbench.config import experiment_sweep

    name, rest = None, []
    for a in args:
        value = a.split("=", 1)[1] if a.startswith("experiment=") else None
        try:
            if value is not None and experiment_sweep(value)[0].get("parts"):
                name = value
                continue
        except Exception:  # not a readable experiment: the run's own checks say so
            pass
        rest.append(a)
    if name is None:
        return None
    methods = [a.split("=", 1)[1] for a in rest if a.startswith("method=")]
    if len(methods) != 1 or "," in methods[0]:
        raise KernelbenchError(
            f"experiment={name} ranks one method: add method=NAME (kernelbench list)"
        )
    return [[f"experiment={grid.grid}", *rest] for grid in grids(name)]


@click.command("leaderboard")
@click.option(
    "--results",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results/runs"),
    show_default=True,
    help="Results of `kernelbench run experiment=leaderboard method=NAME`.",
)
@click.option(
    "--baseline",
    "baseline_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The published methods' tables [default: the committed results/baseline].",
)
@click.option("--method", default=None, help="Mark this method in the table.")
@click.option(
    "--csv",
    "csv_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the standings as CSV.",
)
def leaderboard(
    results: Path, baseline_dir: Path | None, method: str | None, csv_out: Path | None
) -> None:
    """Rank every method of the leaderboard's grids: geometric mean error ratio to rff
    with its 95% interval over cells, and the average rank (docs/leaderboard.md)."""
    from kernelbench.validation import check_output_file

    if csv_out is not None:
        check_output_file(csv_out, "--csv")
    table = standings(baseline_dir or default_baseline_dir(), results if results.is_dir() else None)
    if method is not None and method not in set(table["method_label"]):
        raise choices_error("method", method, set(table["method_label"]))
    click.echo(format_standings(table, method), nl=False)
    if csv_out is not None:
        csv_out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(csv_out, index=False)
        click.echo(f"wrote {csv_out}")


def default_baseline_dir() -> Path:
    """The committed baselines (``results/baseline``, shipped as package data)."""
    from kernelbench.packaged import baseline_dir

    return baseline_dir()
