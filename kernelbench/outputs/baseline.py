"""``kernelbench baseline EXPERIMENT RUN_DIR...``: our baseline of an experiment.

Any experiment whose protocol declares its metrics gets the generic baseline
(:func:`generic_write`): ``<experiment>_baseline.csv`` (the headline metric per cell) and
the protocol's default figures as PNG. The papers' baselines keep the formats that
REPRODUCTION.md and their verify configs read, built by their papers' modules
(:mod:`kernelbench.outputs.papers`): munkhoeva2018_fig1, munkhoeva2018_fig2,
liu2020_table3[_paper], and yu2016_*, yang2014_* (:data:`EXPERIMENTS`: the figure's
summary table, by ``kernelbench plot``'s code, and its PNG; ``--methods`` replaces only
those methods' rows of the committed table). Every committed PNG is drawn from its table
by its figure spec (:data:`kernelbench.outputs.papers.BASELINE_FIGURES`, :func:`redraw_pngs`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import click
import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.outputs.papers import liu2020, munkhoeva2018
from kernelbench.outputs.plot import make_plots
from kernelbench.outputs.tables import CELL, cell_table, update_table, write_table


@dataclass(frozen=True)
class PaperTable:
    """A paper's baseline table: ``build`` from a results frame, written to ``name``."""

    build: Callable[[pd.DataFrame], pd.DataFrame]
    name: str
    #: the derived columns redone after ``--update``/``--update-cells`` (None: no update)
    merged: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    #: the committed PNGs drawn from the table (:data:`BASELINE_FIGURES` stems)
    figure: tuple[str, ...] = ()
    float_format: str | None = None
    #: whether the line naming the table names its runs
    runs: bool = True
    #: the columns naming a cell (``--update-cells``)
    keys: tuple[str, ...] = CELL

    def write(self, df: pd.DataFrame, out: Path, update: str | None, figure: bool) -> None:
        """Write the table (``update``: replace only the datasets or cells of ``df``)."""
        table = self.build(df)
        csv = out / self.name
        if update and csv.is_file() and self.merged:
            old = pd.read_csv(csv)
            table = self.merged(update_table(old, table, by=update, keys=self.keys))
        write_table(table, csv, self.float_format)
        runs = f", runs {sorted(int(r) for r in table['runs'].unique())}" if self.runs else ""
        click.echo(f"wrote {csv} ({len(table)} cells{runs})")
        if figure and self.figure:
            redraw_pngs(out, list(self.figure), click.echo)


def _liu(name: str) -> PaperTable:
    """A Liu et al. Table 3 baseline: no figure, the ratios to rff redone after an update."""
    merged = liu2020.with_rff_ratio
    return PaperTable(liu2020.table3_baseline, name, merged, float_format="%.6g", runs=False)


#: experiment -> its paper-specific table
TABLES = {
    "munkhoeva2018_fig1": PaperTable(
        partial(cell_table, metric=munkhoeva2018.FIG1_METRIC),
        "fig1_baseline.csv",
        lambda t: t,
        ("fig1_kernel_error_fro",),
    ),
    "munkhoeva2018_fig2": PaperTable(
        munkhoeva2018.baseline_table,
        "fig2_baseline.csv",
        lambda t: t,
        ("fig2",),
        keys=tuple(munkhoeva2018.FIG2_KEYS),
    ),
    "liu2020_table3": _liu("liu2020_table3_baseline.csv"),
    "liu2020_table3_paper": _liu("liu2020_table3_paper_baseline.csv"),
}
#: the experiments whose table can be updated in place (``--update``, ``--update-cells``)
UPDATABLE = tuple(name for name, table in TABLES.items() if table.merged)


#: experiment -> (figure, metric); the figure writes ``<figure>_summary.csv`` and a PNG
EXPERIMENTS: dict[str, tuple[str, str | None]] = {
    "yu2016_fig2": ("yu_variance", "ratio"),
    "yu2016_fig4": ("yu_mse", "mse"),
    "yu2016_fig4_qmc": ("yu_mse", "mse"),
    "yu2016_fig4_qmc_reduced": ("yu_mse", "mse"),
    "yang2014_fig2": ("fig1", "spec"),
    "yang2014_fig2_pca": ("fig1", "spec"),
    "yang2014_fig2_pca_reduced": ("fig1", "spec"),
    "yang2014_fig3": ("yang_discrepancy", None),
    "yang2014_fig3_half": ("yang_discrepancy", None),
    "yang2014_fig4": ("yang_adaptive", None),
    "yang2014_fig4_nn50": ("yang_adaptive", None),
}


def redraw_pngs(
    out: Path, stems: list[str] | None = None, echo: Callable[[str], None] = print
) -> None:
    """Draw each committed PNG (``stems``, default all) of ``out`` from its table there."""
    import matplotlib

    matplotlib.use("Agg")
    from kernelbench.outputs.papers import BASELINE_FIGURES
    from kernelbench.outputs.render import draw, save_figure

    for stem in stems or list(BASELINE_FIGURES):
        if stem not in BASELINE_FIGURES:
            raise choices_error("baseline figure", stem, BASELINE_FIGURES)
        figure = BASELINE_FIGURES[stem]
        table = out / figure.spec.table
        if not table.is_file():
            raise KernelbenchError(f"{stem}: no table {str(table)!r} to draw it from")
        for fig in figure.figures(pd.read_csv(table), stem):
            for note in fig.clip_notes():
                echo(f"note: {note}")
            name = "_".join([stem, *map(str, fig.page)])
            for path in save_figure(draw(fig), out, name, ["png"]):
                echo(f"wrote {path}")


@contextmanager
def drawn(results: Path, experiment: str, **options: Any) -> Iterator[Path]:
    """A temporary directory holding ``kernelbench plot``'s PNG figures of ``experiment``."""
    with tempfile.TemporaryDirectory() as tmp:
        make_plots(results, tmp, formats=["png"], experiment=experiment, **options)
        yield Path(tmp)


def write_experiment(
    results: Path,
    experiment: str,
    out: Path,
    echo: Callable[[str], None] = print,
    rows_of: str | None = None,
    methods: list[str] | None = None,
) -> None:
    """Write ``<experiment>.csv`` and ``.png`` from the shards under ``results`` (of
    experiment ``rows_of`` if given); with ``methods``, replace only their rows."""
    figure, metric = EXPERIMENTS[experiment]
    table = f"{figure}_summary.csv"
    source = rows_of or experiment
    out.mkdir(parents=True, exist_ok=True)
    with drawn(results, source, figure=figure, metric=metric) as tmp:
        if methods:
            _replace_rows(tmp / source / table, out / f"{experiment}.csv", methods)
            echo(f"{experiment}: replaced the rows of {', '.join(methods)} in {experiment}.csv")
        else:
            shutil.copyfile(tmp / source / table, out / f"{experiment}.csv")
            echo(f"{experiment}: wrote {out / experiment}.csv")
    from kernelbench.outputs.papers import BASELINE_FIGURES

    if experiment in BASELINE_FIGURES:
        redraw_pngs(out, [experiment], echo)


def _replace_rows(new: Path, committed: Path, methods: list[str]) -> None:
    """``committed`` with the rows of ``methods`` taken from ``new``, in place."""
    keys = ["experiment", "dataset", "kernel", "method_label", "n", "metric"]
    fresh = pd.read_csv(new).set_index(keys)
    old = pd.read_csv(committed)
    mine = old["method_label"].isin(methods)
    index = pd.MultiIndex.from_frame(old.loc[mine, keys])
    missing = index.difference(fresh.index)
    if len(missing):
        raise KernelbenchError(f"no fresh rows for {len(missing)} cells, e.g. {missing[0]}")
    values = fresh.loc[index, [c for c in old.columns if c not in keys]]
    old.loc[mine, values.columns] = values.to_numpy()
    old.to_csv(committed, index=False)


def generic_write(
    df: pd.DataFrame, experiment: str, out: Path, results: list[Path], source: str, figure: bool
) -> None:
    """``<experiment>_baseline.csv`` (the protocol's headline metric per cell) and the
    protocol's figures as ``<experiment>_<file>.png``."""
    from kernelbench.cell import cell_keys
    from kernelbench.protocols import get_protocol, metric_of

    protocols = sorted(df["protocol"].dropna().astype(str).unique())
    if len(protocols) != 1:
        raise KernelbenchError(
            f"experiment {experiment!r}: results of {len(protocols)} protocols "
            f"({', '.join(protocols)}); a baseline is of one protocol"
        )
    proto = get_protocol(protocols[0])
    if not proto.metrics:
        raise KernelbenchError(
            f"experiment {experiment!r}: protocol {protocols[0]!r} declares no metrics, "
            "so no baseline"
        )
    keys = cell_keys(proto)
    # the same run found twice (e.g. verify's shards under the results directory): once
    same = [*keys, "run", "config_hash"]
    twice = df.duplicated(same)
    if twice.any():
        click.echo(
            f"note: {int(twice.sum())} rows found twice (same cell, run and config) counted once"
        )
        df = df[~twice]
    table = cell_table(df, metric_of(proto, None).column, keys=keys)
    csv = write_table(table, out / f"{experiment}_baseline.csv")
    click.echo(f"wrote {csv} ({len(table)} cells, metric {proto.headline})")
    if figure and len(results) == 1:  # the default figures, as kernelbench plot draws them
        with drawn(results[0], source) as tmp:
            for path in sorted(tmp.rglob("*.png")):
                click.echo(f"wrote {shutil.copyfile(path, out / f'{source}_{path.name}')}")
    elif figure:
        click.echo("note: figures are drawn from one results directory (kernelbench plot)")


@click.command("baseline")
@click.argument("experiment", required=False)
@click.argument("results", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the tables and figures go [default: baseline/ beside the first RESULTS "
    "directory, e.g. results/baseline for results/runs].",
)
@click.option(
    "--update",
    "update",
    flag_value="dataset",
    default=None,
    help="Replace only the datasets found in RESULTS; keep the table's other rows.",
)
@click.option(
    "--update-cells",
    "update",
    flag_value="cell",
    help="Replace only the cells found in RESULTS (e.g. a method added on the same data).",
)
@click.option("--no-figure", is_flag=True, help="Write the table only.")
@click.option(
    "--rows-of",
    default=None,
    metavar="NAME",
    help="Aggregate the rows of experiment NAME (e.g. a reduced grid) [default: EXPERIMENT].",
)
@click.option(
    "--methods",
    multiple=True,
    metavar="LABEL",
    help="yu2016_*/yang2014_*: replace only these method labels' rows of the committed table.",
)
@click.option(
    "--redraw",
    is_flag=True,
    help="Redraw the committed PNGs (or EXPERIMENT's, e.g. fig2 or yu2016_fig2) from their "
    "tables in --out [default: results/baseline], by their figure specs; no RESULTS.",
)
def baseline(
    experiment: str | None,
    results: tuple[Path, ...],
    out: Path | None,
    update: str | None,
    no_figure: bool,
    rows_of: str | None,
    methods: tuple[str, ...],
    redraw: bool,
) -> None:
    """Aggregate EXPERIMENT's shards under RESULTS (one or more directories) into a
    baseline table and figures: any experiment whose protocol declares its metrics
    (EXPERIMENT_baseline.csv), built-in or plug-in; the papers' own formats for
    munkhoeva2018_fig1, munkhoeva2018_fig2, liu2020_table3[_paper], yu2016_*,
    yang2014_*. With --redraw: the committed PNGs drawn again from their tables."""
    from kernelbench.config import experiment_names
    from kernelbench.results import read_results
    from kernelbench.validation import check_output_dir

    if redraw:
        if results:
            raise click.UsageError("--redraw draws from the tables in --out; give no RESULTS")
        out = Path("results") / "baseline" if out is None else out
        redraw_pngs(out, [experiment] if experiment else None, click.echo)
        return
    if experiment is None or not results:
        raise click.UsageError("give EXPERIMENT and one or more RESULTS directories")
    results = list(results)
    out = results[0].parent / "baseline" if out is None else out  # results/runs -> results/baseline
    known = experiment_names()
    if experiment not in {*known, *TABLES, *EXPERIMENTS}:
        raise choices_error("experiment", experiment, {*known, *TABLES, *EXPERIMENTS})
    if rows_of is not None and rows_of not in known:
        raise choices_error("experiment (--rows-of)", rows_of, known)
    check_output_dir(out, "--out")  # before anything is read or written
    if update and experiment not in UPDATABLE:
        raise KernelbenchError(f"--update and --update-cells apply to {', '.join(UPDATABLE)}")
    if experiment in EXPERIMENTS:
        if len(results) != 1:
            raise KernelbenchError(f"{experiment}: give one results directory")
        methods = list(methods) or None
        write_experiment(results[0], experiment, out, click.echo, rows_of, methods)
        return
    if methods:
        raise KernelbenchError("--methods applies to the yu2016_* and yang2014_* experiments")
    source = rows_of or experiment
    missing = [p for p in results if not p.is_dir()]
    if missing:
        raise KernelbenchError(f"results directory {str(missing[0])!r} does not exist")
    df = pd.concat([read_results(p, source) for p in results], ignore_index=True)
    if df.empty:
        raise KernelbenchError(
            f"no results of experiment {source!r} under {', '.join(map(str, results))} "
            f"(run it first: kernelbench run experiment=<its file>)"
        )
    out.mkdir(parents=True, exist_ok=True)
    if experiment in TABLES:
        TABLES[experiment].write(df, out, update, not no_figure)
    else:
        generic_write(df, experiment, out, results, source, not no_figure)
