"""The leaderboard: where a method stands against every published method, grid by grid
and track by track (data-independent, data-dependent maps), by its average rank over
independent blocks with Friedman's test and Nemenyi's critical difference (Demšar 2006),
beside its geometric mean error ratio to rff and its map time (docs/leaderboard.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.packaged import baseline_dir as default_baseline_dir
from kernelbench.stats import rank_test, t_interval

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
    blocks: tuple[str, ...] = ("dataset", "kernel")  # the rank test's independent blocks
    exact_below: float | None = None  # an error below it: the map is exact (rounding level)

    @property
    def cell_keys(self) -> list[str]:
        return ["dataset", "kernel", *self.keys, "n"]

    def error(self, mean: pd.Series) -> pd.Series:
        """The metric as an error, lower is better."""
        return mean if self.top is None else self.top - mean


@dataclass(frozen=True)
class MapTime:
    """The map-time part: a ``walltime`` experiment on one fixed shape, run for the new
    method beside rff; the published methods' times are its committed table."""

    grid: str
    baseline: str


def _leaderboard_file(name: str) -> dict:
    from kernelbench.config import experiment_sweep

    top, _ = experiment_sweep(name)
    if not top.get("parts"):
        raise KernelbenchError(f"experiment {name!r} has no parts: not a leaderboard")
    return top


def grids(name: str = EXPERIMENT) -> list[Grid]:
    """The grids of a leaderboard experiment file (its ``parts``)."""
    tuples = ("keys", "blocks")
    return [
        Grid(**{**p, **{k: tuple(p[k]) for k in tuples if p.get(k)}})
        for p in _leaderboard_file(name)["parts"]
    ]


def map_time_part(name: str = EXPERIMENT) -> MapTime | None:
    """The leaderboard's map-time part (its ``map_time``), if it declares one."""
    part = _leaderboard_file(name).get("map_time")
    return MapTime(**part) if part else None


def data_dependent(label: str) -> bool:
    """Whether a method label's map is drawn from the data (the map class's
    ``data_dependent``: Nystrom, lev_rff, slw_rff); labels of no known map: False."""
    from kernelbench.config import group_options, load_group
    from kernelbench.features import FEATURE_MAPS
    from kernelbench.plugins import load

    load()
    name = label
    if label not in FEATURE_MAPS and label in group_options("method"):
        name = str(load_group("method", label).get("name", label))
    if name not in FEATURE_MAPS:
        return False
    return bool(getattr(FEATURE_MAPS.get(name), "data_dependent", False))


def _grid_rows(results: Path, grid: str) -> pd.DataFrame:
    """The rows of ``results`` of the experiment that the leaderboard grid ``grid`` runs
    (empty where there are none)."""
    from kernelbench.config import experiment_sweep
    from kernelbench.results import read_results

    experiment = str(experiment_sweep(grid)[0].get("experiment", grid))
    try:
        return read_results(results, experiment)
    except KernelbenchError:
        return pd.DataFrame()


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
    baseline, or from ``results`` for the methods found there (``source``)."""
    from kernelbench.outputs.tables import cell_table, read_table

    keys = [*grid.cell_keys, "method_label"]
    base = read_table(Path(baseline_dir) / grid.baseline, keys)
    base["n"] = base["n"].astype(float)
    cells = _grid_cells(grid)
    table = base.merge(cells, on=grid.cell_keys, how="inner").assign(source="baseline")
    if results is not None:
        df = _grid_rows(results, grid.grid)
        if not df.empty:
            ours = cell_table(df, grid.metric, keys)
            ours["n"] = ours["n"].astype(float)
            ours = ours.merge(cells, on=grid.cell_keys, how="inner").assign(source="results")
            # a method found in the results replaces its baseline cells on this grid
            table = table[~table["method_label"].isin(set(ours["method_label"]))]
            table = pd.concat([table, ours], ignore_index=True)
    table = table[[*keys, "runs", "mean", "sem", "source"]].copy()
    table["error"] = grid.error(table["mean"]).astype(float)
    table["grid"] = grid.grid
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


#: The two tracks, ranked apart: maps drawn independently of the data, and maps
#: drawn from it (rff, the reference, stands in both).
TRACKS = ("data-independent", "data-dependent")
#: Significance level of the rank tests.
ALPHA = 0.05
#: Fewest independent blocks a track's test is run on: below 6 pairs Wilcoxon's
#: signed-rank test cannot reach p < 0.05 (two-sided), and Friedman's chi-square
#: approximation is poor (Demšar 2006, Sec. 3.2.2).
MIN_BLOCKS = 6


def _log_ratios(table: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """Per cell (rows) and method (columns): log(error / rff's error)."""
    wide = table.pivot_table(
        index=grid.cell_keys, columns="method_label", values="error", aggfunc="first"
    )
    if REFERENCE not in wide.columns:
        raise KernelbenchError(f"grid {grid.grid}: no {REFERENCE} cells to compare with")
    tiny = np.finfo(float).tiny
    return np.log(np.maximum(wide, tiny)).sub(np.log(np.maximum(wide[REFERENCE], tiny)), axis=0)


def block_values(logs: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """Per block (rows) and method: the mean log error ratio to rff over the block's
    cells (a block's cells share its data sample and kernel; their n differ)."""
    return logs.groupby(level=list(grid.blocks), sort=True).mean()


def rank_grid(table: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """One grid's standings, one block of rows per track: per method, cells, the
    geometric mean error ratio to rff with its 95% interval over cells, the average
    rank over independent blocks (the primary statistic) and the rank that the rank
    test supports (methods it cannot separate share a rank); methods in their exact
    regime (an error below ``grid.exact_below``) are marked, not ranked, and so are
    methods missing some of the grid's cells."""
    logs = _log_ratios(table, grid)
    wide = table.pivot_table(
        index=grid.cell_keys, columns="method_label", values="error", aggfunc="first"
    )
    blocks = block_values(logs, grid)
    frames = []
    for track in TRACKS:
        dep = track == TRACKS[1]
        members = [m for m in logs.columns if m == REFERENCE or data_dependent(m) == dep]
        if members == [REFERENCE] and dep:
            continue
        rows = []
        for m in members:
            r = logs[m].dropna().to_numpy()
            mean, _, _, half = t_interval(r)
            exact = 0
            if grid.exact_below is not None:
                exact = int((wide[m].dropna() < grid.exact_below).sum())
            rows.append(
                {
                    "grid": grid.grid,
                    "title": grid.title,
                    "track": track,
                    "method_label": m,
                    "cells": r.size,
                    "exact_cells": exact,
                    "ratio": math.exp(mean),
                    "ratio_low": math.exp(mean - half),
                    "ratio_high": math.exp(mean + half),
                }
            )
        out = pd.DataFrame(rows)
        full = out["cells"] == len(logs)  # a method missing cells is not ranked
        ranked = list(out.loc[full & (out["exact_cells"] == 0), "method_label"])
        values = blocks[ranked].dropna(axis=0) if len(ranked) >= 2 else pd.DataFrame()
        test = None
        if len(ranked) >= 2 and len(values) >= 2:
            test = rank_test(values.to_numpy(), ALPHA)
        mean_rank = dict(zip(ranked, test.mean_ranks, strict=True)) if test else {}
        shared = dict(zip(ranked, test.shared_ranks(), strict=True)) if test else {}
        out["status"] = [
            "exact" if e else ("incomplete" if not f else "ranked" if test else "unranked")
            for e, f in zip(out["exact_cells"], full, strict=True)
        ]
        out["mean_rank"] = out["method_label"].map(mean_rank).astype(float)
        out["rank"] = out["method_label"].map(shared).astype("Int64")
        out["blocks"] = len(values) if test else 0
        out["block_keys"] = " x ".join(grid.blocks)
        out["test"] = test.test if test else ""
        out["statistic"] = test.statistic if test else math.nan
        out["p_value"] = test.p_value if test else math.nan
        out["cd"] = test.cd if test else math.nan
        out = out.sort_values(["mean_rank", "ratio", "method_label"], kind="stable")
        frames.append(out)
    return pd.concat(frames, ignore_index=True)


def map_times(
    baseline_dir: Path, results: Path | None = None, name: str = EXPERIMENT
) -> pd.DataFrame:
    """Per method label: median map time (s) on the map-time part's fixed shape and
    its ratio to rff's (``rff_seconds``) from the same table or run (``source``: the
    committed table, or ``results`` for the methods measured there, each against that
    run's rff)."""
    from kernelbench.outputs.papers.munkhoeva2018 import median_summary

    part = map_time_part(name)
    cols = ["method_label", "points", "d", "map_seconds", "vs_rff", "rff_seconds", "source"]
    if part is None:
        return pd.DataFrame(columns=cols)

    def with_ratio(summary: pd.DataFrame, source: str) -> pd.DataFrame:
        s = summary[summary["metric"] == "map"].rename(columns={"median": "map_seconds"})
        ref = s.loc[s["method_label"] == REFERENCE, "map_seconds"]
        rff = float(ref.iloc[0]) if len(ref) else math.nan
        s = s.assign(vs_rff=s["map_seconds"] / rff, rff_seconds=rff)
        return s.assign(source=source)[cols]

    path = Path(baseline_dir) / part.baseline
    table = with_ratio(pd.read_csv(path), str(path)) if path.is_file() else pd.DataFrame()
    if results is not None:
        df = _grid_rows(results, part.grid)
        if not df.empty and "map_seconds" in df:
            ours = with_ratio(median_summary(df, ["map"]), str(results))
            ours = ours[ours["method_label"] != REFERENCE]
            if len(table):
                table = table[~table["method_label"].isin(set(ours["method_label"]))]
            table = pd.concat([table, ours], ignore_index=True)
    return table.reset_index(drop=True) if len(table) else pd.DataFrame(columns=cols)


def standings(
    baseline_dir: Path, results: Path | None = None, name: str = EXPERIMENT
) -> pd.DataFrame:
    """Every grid's standings, one block per grid (:func:`rank_grid`), with each
    method's map time beside it (:func:`map_times`)."""
    frames = [rank_grid(grid_table(g, baseline_dir, results), g) for g in grids(name)]
    table = pd.concat(frames, ignore_index=True)
    times = map_times(baseline_dir, results, name)[["method_label", "map_seconds", "vs_rff"]]
    return table.merge(times, on="method_label", how="left")


def test_line(g: pd.DataFrame) -> str:
    """The test behind one track's ranks, in words."""
    first = g.iloc[0]
    if not first["test"]:
        return "not ranked: fewer than two methods or blocks to compare"
    if first["test"] == "Friedman":
        stat = f"Friedman chi2 = {first['statistic']:.3g}"
        cd = f", Nemenyi CD = {first['cd']:.2f}"
    else:
        stat, cd = f"Wilcoxon W = {first['statistic']:.3g}", ""
    few = f" (fewer than {MIN_BLOCKS}: weak)" if first["blocks"] < MIN_BLOCKS else ""
    return (
        f"{stat}, p = {first['p_value']:.2g} over {first['blocks']} blocks "
        f"({first['block_keys']}){few}{cd}"
    )


def format_standings(table: pd.DataFrame, highlight: str | None = None) -> str:
    """The standings as plain text, one block per grid and track (``*`` marks
    ``highlight``); ranks are shared where the rank test cannot separate methods."""
    lines: list[str] = []
    head = (
        f"  {'rank':>4}  {'method':<14} {'avg rank':>8}  {'cells':>5}  "
        f"{'error / rff (95% CI)':<26} map time"
    )
    for (grid, track), g in table.groupby(["grid", "track"], sort=False):
        lines += [f"{g['title'].iloc[0]} [{grid}], {track} maps", f"  {test_line(g)}", head]
        for r in g.itertuples():
            mark = "*" if r.method_label == highlight else " "
            ci = f"[{r.ratio_low:.3g}, {r.ratio_high:.3g}]" if not math.isnan(r.ratio_low) else ""
            avg = f"{r.mean_rank:.2f}" if not math.isnan(r.mean_rank) else "-"
            rank = str(r.rank) if not pd.isna(r.rank) else "-"
            why = {"exact": "  exact regime: not ranked", "incomplete": "  missing cells"}
            t = getattr(r, "map_seconds", math.nan)
            t = f"{1e3 * t:.3g} ms ({r.vs_rff:.2g}x rff)" if t == t and t is not None else "-"
            lines.append(
                f"{mark} {rank:>4}  {r.method_label:<14} {avg:>8}  {r.cells:>5}  "
                f"{r.ratio:<8.3g} {ci:<17} {t}{why.get(r.status, '')}"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def part_args(args: list[str]) -> list[list[str]] | None:
    """One ``kernelbench run`` argument list per grid of the leaderboard experiment
    named in ``args``, or None when it names none."""
    from kernelbench.config import experiment_sweep, group_options

    name, rest = None, []
    experiments = set(group_options("experiment"))
    for a in args:
        value = a.split("=", 1)[1] if a.startswith("experiment=") else None
        # an unknown name (or a sweep of names) is left to the run's own one-line check
        if value in experiments and experiment_sweep(value)[0].get("parts"):
            name = value
            continue
        rest.append(a)
    if name is None:
        return None
    methods = [a.split("=", 1)[1] for a in rest if a.startswith("method=")]
    if len(methods) != 1 or "," in methods[0]:
        raise KernelbenchError(
            f"experiment={name} ranks one method: add method=NAME (kernelbench list)"
        )
    parts = [[f"experiment={grid.grid}", *rest] for grid in grids(name)]
    timed = map_time_part(name)
    if timed is not None:  # the new method's map time, beside rff's in the same run
        others = [a for a in rest if not a.startswith("method=")]
        pair = dict.fromkeys([REFERENCE, methods[0]])
        parts.append([f"experiment={timed.grid}", f"method={','.join(pair)}", *others])
    return parts


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
    """Rank every method of the leaderboard's grids, data-independent and data-dependent
    maps apart: the average rank over independent blocks with its Friedman/Nemenyi test
    (ranks shared where it cannot separate methods), the geometric mean error ratio to
    rff with its 95% interval over cells, and the map time (docs/leaderboard.md)."""
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
