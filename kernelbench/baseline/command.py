"""``kernelbench baseline EXPERIMENT RUN_DIR...``: our committed baseline of an experiment.

Aggregates the shards of ``EXPERIMENT`` (the results' ``experiment`` name) under the
results directories into ``results/baseline/`` (``--out``): the tables whose format is
:mod:`kernelbench.baseline.format` (read by ``kernelbench verify``), and the figures
REPRODUCTION.md embeds. One module per experiment:

=================== =====================================================================
experiment          writes
=================== =====================================================================
munkhoeva2018_fig1  fig1_baseline.csv, fig1_kernel_error_fro.png (:mod:`.fig1`)
munkhoeva2018_fig2  fig2_baseline.csv, fig2_<learner>.png (:mod:`.fig2`)
liu2020_table3      liu2020_table3_baseline.csv (:mod:`.liu2020`; the code's reading)
liu2020_table3_paper liu2020_table3_paper_baseline.csv (the paper's text)
yu2016_*, yang2014_* <experiment>.csv, <experiment>.png: the figure and its summary
                    (:mod:`.figures`)
=================== =====================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import click
import pandas as pd

from kernelbench.baseline import fig1, fig2, figures, liu2020
from kernelbench.errors import KernelbenchError, choices_error

#: experiment -> writer of its table(s) from a results frame
TABLES: dict[str, Callable[..., None]] = {
    "munkhoeva2018_fig1": fig1.write,
    "munkhoeva2018_fig2": fig2.write,
    "liu2020_table3": liu2020.write,
    "liu2020_table3_paper": partial(liu2020.write, experiment="liu2020_table3_paper"),
}
#: every experiment with a baseline, in the order of ``--help``
EXPERIMENTS = (*TABLES, *figures.EXPERIMENTS)


def write_baseline(
    experiment: str,
    results: list[Path],
    out: Path,
    update: str | None = None,
    figure: bool = True,
    echo: Callable[[str], None] = print,
    rows_of: str | None = None,
    methods: list[str] | None = None,
) -> None:
    """Write the baseline of ``experiment`` from the shards under ``results`` into ``out``
    (the rows of experiment ``rows_of`` if given, e.g. a reduced grid; only the rows of
    ``methods`` for the Yu/Yang figures)."""
    from kernelbench.results import read_results

    if experiment not in EXPERIMENTS:
        raise choices_error("experiment with a baseline", experiment, EXPERIMENTS)
    if update and experiment != "munkhoeva2018_fig1":
        raise KernelbenchError("--update and --update-cells apply to munkhoeva2018_fig1 only")
    if experiment in figures.EXPERIMENTS:
        if len(results) != 1:
            raise KernelbenchError(f"{experiment}: give one results directory")
        figures.write(results[0], experiment, out, echo=echo, rows_of=rows_of, methods=methods)
        return
    if methods:
        raise KernelbenchError("--methods applies to the yu2016_* and yang2014_* experiments")
    source = rows_of or experiment
    df = pd.concat([read_results(p, source) for p in results], ignore_index=True)
    if df.empty:
        raise KernelbenchError(f"no results of experiment {experiment!r} under {results}")
    out.mkdir(parents=True, exist_ok=True)
    TABLES[experiment](df, out, update=update, figure=figure, echo=echo)


@click.command("baseline")
@click.argument("experiment")
@click.argument(
    "results", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results/baseline"),
    show_default=True,
    help="Where the tables and figures go.",
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
def baseline(
    experiment: str,
    results: tuple[Path, ...],
    out: Path,
    update: str | None,
    no_figure: bool,
    rows_of: str | None,
    methods: tuple[str, ...],
) -> None:
    """Aggregate EXPERIMENT's shards under RESULTS (one or more directories) into our
    committed baseline: munkhoeva2018_fig1, munkhoeva2018_fig2, liu2020_table3[_paper],
    yu2016_fig2, yu2016_fig4, yang2014_fig2, yang2014_fig4, yang2014_fig4_nn50."""
    write_baseline(
        experiment,
        list(results),
        out,
        update,
        not no_figure,
        click.echo,
        rows_of,
        list(methods) or None,
    )
