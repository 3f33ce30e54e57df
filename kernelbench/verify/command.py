"""``kernelbench verify``: run a paper's grid and check it cell by cell against the paper
(its ``VerifyConfig``: :mod:`kernelbench.verify.config`; :mod:`kernelbench.verify.compare`,
docs/verification.md).
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import click
import pandas as pd

from kernelbench.cell import build_cell, cell_keys, row_keys
from kernelbench.cost import announce_cells
from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.outputs.tables import read_table
from kernelbench.protocols import Protocol, get_protocol, metric_of
from kernelbench.results import dumps
from kernelbench.stats import SAME_DRAWS_ATOL, SAME_DRAWS_RTOL, aggregate
from kernelbench.validation import check_output_dir, check_output_file
from kernelbench.verify.compare import counts, default_sensitivity, failed, verify_table
from kernelbench.verify.config import DEFAULT_CONFIG, load_config
from kernelbench.verify.grid import grid_cells, grid_experiments, run_cells
from kernelbench.verify.report import (
    display_frame,
    format_notes,
    format_text,
    known_notes,
    pooled_frame,
    unmeasured_line,
    verdict_line,
    wrap,
    write_table,
)


def grid_keys(proto: Protocol, cells: list[dict[str, Any]]) -> dict[tuple, tuple]:
    """Each (composed) cell's key, the values of the protocol's cell keys before it runs,
    to its seed, kernel and method parameters as its rows store them."""
    grid = {}
    for cell in cells:
        built = build_cell(cell)
        values = {
            "dataset": built.dataset["name"],
            "kernel": built.kernel["name"],
            "method_label": built.method_label,
            "n": float(built.n),
            **row_keys(built),
        }
        key = tuple(values[k] for k in cell_keys(proto))
        grid[key] = (int(built.seed), dumps(built.kernel["params"]), dumps(built.method["params"]))
    return grid


def grid_rows(df: pd.DataFrame, proto: Protocol, cells: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows of the grid's cells; rows of another variant under the same cell key
    (seed, kernel or method parameters) are left out and named on stderr."""
    keys = list(cell_keys(proto))
    grid = grid_keys(proto, cells)
    have = df[keys].assign(n=df["n"].astype(float)) if "n" in keys else df[keys]
    key = pd.Series(list(have.itertuples(index=False, name=None)), index=df.index)
    types = {"seed": int, "kernel_params": str, "method_params": str}
    rows = df[list(types)].astype(types).itertuples(index=False, name=None)
    variant = pd.Series(list(rows), index=df.index)
    keep = key.isin(set(grid))
    several = variant[keep].groupby(key[keep]).nunique()
    mixed = set(several[several > 1].index)
    other = keep & key.isin(mixed) & (variant != key.map(grid))
    if other.any():
        click.echo(
            f"note: left out {int(other.sum())} rows of {key[other].nunique()} cells with "
            "another seed or other kernel or method parameters than the grid's",
            err=True,
        )
    return df[keep & ~other]


@click.command("verify")
@click.option(
    "--grid",
    default="reduced",
    show_default=True,
    help="A grid of the verify config: reduced (CI) or full (the paper's).",
)
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the grid's shards are run and stored (resumed) "
    "[default: results/runs/verify-CONFIG-GRID].",
)
@click.option("--runs", type=click.IntRange(min=2), default=None, help="Override runs per cell.")
@click.option("--no-run", is_flag=True, help="Compare the results already there; run nothing.")
@click.option(
    "--baseline/--no-baseline",
    "use_baseline",
    default=None,
    help="Also check against our committed baseline [default: when the table exists].",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Cells run in parallel (results are identical for any value).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where the comparison goes: .csv (all columns, pooled families in "
    "<stem>_pooled.csv) or .md (the tables) [default: RESULTS/verify.csv].",
)
@click.option("--wide", is_flag=True, help="Print every column (the table is 120 wide without).")
@click.option(
    "--config",
    "config_name",
    default=DEFAULT_CONFIG,
    show_default=True,
    help="Verify config: a name (kernelbench list) or a YAML path.",
)
@click.option("--alpha", type=float, default=None, help="Family-wise false-alarm rate.")
@click.option("--quiet", "-q", is_flag=True, help="Do not echo cells as they run.")
def verify(
    grid: str,
    results_dir: Path | None,
    runs: int | None,
    no_run: bool,
    use_baseline: bool | None,
    jobs: int,
    out: Path | None,
    config_name: str,
    alpha: float | None,
    quiet: bool,
    wide: bool,
) -> None:
    """Run a paper's grid and check, cell by cell, that it reproduces the paper.

    --config names what is checked: munkhoeva2018_fig1 (Fig. 1, the default),
    liu2020_table3 (Table 3), ... (kernelbench list), or a YAML file of the same keys.

    Every cell is tested, and every (dataset, kernel, method) family pooled across n
    for a systematic bias. The last line is PASS or FAIL with the counts and where the
    comparison was written. Exit status 0 on PASS (every cell and family that should
    reproduce does, and no cell drifts from the baseline), 1 on FAIL, 2 on usage errors.
    """
    from kernelbench.results import read_results

    cfg = load_config(config_name)
    if alpha is not None:
        if not 0.0 < alpha < 1.0:
            raise KernelbenchError(f"--alpha must be in (0, 1), got {alpha}")
        cfg.alpha = alpha
    proto = get_protocol(cfg.protocol)
    keys = list(cell_keys(proto))
    if grid not in cfg.grids:
        raise choices_error(f"grid of verify config {cfg.name!r}", grid, cfg.grids)
    default_dir = f"verify-{grid}" if cfg.name == DEFAULT_CONFIG else f"verify-{cfg.name}-{grid}"
    results_dir = results_dir or Path("results") / "runs" / default_dir
    if not no_run:  # where the cells go, then the comparison: both before any cell
        check_output_dir(results_dir, "--results")
    out = check_output_file(out or results_dir / "verify.csv", "--out")
    cells = grid_cells(cfg, grid, runs=runs)
    t0 = time.perf_counter()
    say = partial(click.echo, err=True)
    if not no_run:
        announce_cells(cells, say, results_dir)  # the plan
        run_cells(cells, results_dir, jobs=jobs, echo=None if quiet else say)
    df = read_results(results_dir)
    df = df[df["experiment"].isin(grid_experiments(cfg, grid))]
    df = df[df["protocol"] == proto.name] if "protocol" in df else df
    df = grid_rows(df, proto, cells)
    if df.empty:
        raise KernelbenchError(f"no results of the {grid} grid under {str(results_dir)!r}")
    if runs is not None and not (df["runs"] == runs).any():
        have = ", ".join(str(r) for r in sorted(df["runs"].unique()))
        raise KernelbenchError(
            f"no results of the {grid} grid with {runs} runs under {str(results_dir)!r}; "
            f"it has runs: {have}"
        )
    if runs is not None:
        df = df[df["runs"] == runs]
    ours = aggregate(df, keys, metric_of(proto, cfg.metric).column, cfg.scale)
    dims = df.groupby("dataset")["d"].first()
    ours["d"] = ours["dataset"].map(dims)  # orders the table's datasets by d
    missing_cells = len(grid_keys(proto, cells)) - len(ours)

    if use_baseline is None:
        use_baseline = cfg.baseline is not None and cfg.baseline.is_file()
    if use_baseline and cfg.baseline is None:
        raise KernelbenchError(f"verify config {cfg.name!r} names no baseline table")
    base = read_table(cfg.baseline, keys) if use_baseline else None
    v = verify_table(ours, cfg, baseline=base)
    t, pooled = v.table, v.pooled

    notes = known_notes([*t["verdict"], *pooled["verdict"]])
    click.echo(format_text(display_frame(t, keys, wide=wide, notes=notes)))
    if len(pooled):
        click.echo("\nPooled across n (mean of (ours - paper) / paper over a family's cells):")
        click.echo(format_text(pooled_frame(pooled, keys, wide=wide, notes=notes)))
    if notes and not wide:
        click.echo("\n" + format_notes(notes))
    click.echo("")
    c = counts(t, pooled)
    zc = t["z_crit"].dropna()
    span = f"{zc.min():.2f}-{zc.max():.2f}" if len(zc) else "-"
    legend = [
        "z = (ours - paper) / sqrt(se_ours^2 + se_paper^2 + 2 tau^2); reproduced when "
        f"|z| <= z_crit = {span} (Sidak: family-wise alpha {cfg.alpha:g} over {v.m} "
        f"comparisons, per-test {v.rate:.2g}; Student t at Welch-Satterthwaite df).",
    ]
    if len(pooled):
        legend.append(
            f"Pooled: {len(pooled)} families of 2 or more cells; z = the mean of (ours - paper) "
            "/ paper over n, over its standard error (both sides' run noise and the sample "
            "effect 2 cv^2 the family shares, each bounded for any correlation; "
            "docs/verification.md), in the same Sidak family."
        )
    if unmeasured := unmeasured_line(t, cfg.sample_variation_default):
        legend.append(unmeasured)
        flips = default_sensitivity(ours, cfg, v, baseline=base)
        changed = [f"{' '.join(map(str, r[:-2]))}: {r[-2]}" for r in flips.itertuples(False)]
        legend.append(
            f"With the largest measured tau / mean instead, {len(flips)} of them would be "
            "judged otherwise" + (f" ({'; '.join(changed)})." if changed else ".")
        )
    if c["no_reference"]:
        legend.append(f"{c['no_reference']} cells have no paper number (shown, not judged).")
    if missing_cells > 0:
        legend.append(f"{missing_cells} cells of the {grid} grid have no results in {results_dir}.")
    if base is not None:
        same = c["same_draws"]
        legend.append(
            f"Baseline {cfg.baseline}: {c['agree']} agree, {c['drift']} drift"
            + (f", {c['no_baseline']} not in the baseline" if c["no_baseline"] else "")
            + f". {same} cells are the baseline's own draws (same seed and runs): they agree "
            f"within {SAME_DRAWS_RTOL:g} relative + {SAME_DRAWS_ATOL:g} (z_base in units of "
            "it); the others by a z-test."
        )
    for text in legend:
        click.echo(wrap(text))
    say(f"[{time.perf_counter() - t0:.0f} s]")
    written = write_table(t, out, keys, pooled)
    say(f"wrote {', '.join(str(w) for w in written)}")
    bad = failed(t, pooled)
    click.echo(verdict_line(c, bad, written[0]))
    if bad:
        raise SystemExit(1)
