"""``kernelbench plot``: every experiment of a results directory drawn with its protocol's
figures (:attr:`kernelbench.protocols.Protocol.figures`) into ``<out>/<experiment>/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click

from kernelbench.cell import shard_schema
from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.outputs.generic import (
    FigureOptions,
    FigureOutput,
    experiment_protocol,
    split_variants,
)
from kernelbench.outputs.style import FORMATS, parse_formats
from kernelbench.protocols import PROTOCOLS, figure_of
from kernelbench.results import read_results
from kernelbench.validation import check_output_dir

DEFAULT_RESULTS = Path("results") / "runs"


@dataclass
class PlotReport:
    """What ``make_plots`` wrote, per experiment, and its notes."""

    written: dict[str, list[Path]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def make_plots(
    results_dir: str | Path = DEFAULT_RESULTS,
    out: str | Path | None = None,
    *,
    figure: str | None = None,
    metric: str | None = None,
    reference: bool = False,
    formats: Sequence[str] = ("png", "pdf"),
    log: bool | None = None,
    experiment: str | None = None,
) -> PlotReport:
    """Draw the figures of every experiment under ``results_dir`` (or of ``experiment``)
    into ``<out>/<experiment>/`` (``out``: ``RESULTS_DIR/figures``, or
    ``RESULTS_DIR/runs/figures`` for a results home with ``runs/``: computed files stay
    under results/runs/, never in the committed tables)."""
    import matplotlib

    matplotlib.use("Agg")

    figures: dict[str, list[str]] = {}  # figure name -> the protocols that draw it
    for name, proto in PROTOCOLS.items():
        for fig in proto.figures:
            figures.setdefault(fig.name, []).append(name)
    if figure is not None and figure not in figures:
        raise choices_error("figure", figure, figures)
    if out is not None:
        check_output_dir(out, "--out")  # before anything is read or drawn
    df = read_results(results_dir, experiment)
    if out is None:
        runs = Path(results_dir) / DEFAULT_RESULTS.name
        out = check_output_dir((runs if runs.is_dir() else Path(results_dir)) / "figures", "--out")
    report = PlotReport()
    drawn = 0
    for exp in sorted(df["experiment"].dropna().astype(str).unique()):
        rows = df[df["experiment"] == exp]
        proto = experiment_protocol(rows, exp)
        own = set(shard_schema(proto).names)
        rows = rows[[c for c in rows.columns if c in own]]  # not other protocols' columns
        rows, varied = split_variants(rows, proto)
        if varied:
            report.notes.append(
                f"{exp}: cells differ in {', '.join(varied)}; each is its own line "
                "(its method label followed by what differs)"
            )
        names = [figure] if figure is not None else [f.name for f in proto.figures]
        if figure is not None and figure not in {f.name for f in proto.figures}:
            report.notes.append(
                f"experiment {exp!r} ({proto.name}) has no figure {figure!r}; skipped"
            )
            continue
        for name in names:
            fig = figure_of(proto, name)
            if metric is not None and fig.metrics and metric not in fig.metrics:
                raise choices_error(f"metric of figure {name!r}", metric, fig.metrics)
            opts = FigureOptions(metric=metric, reference=reference, log=log, formats=formats)
            result = fig.load()(rows, Path(out) / exp, opts)
            if isinstance(result, FigureOutput) and result.pending:
                from kernelbench.outputs.render import finish

                result = finish(result)
            report.written.setdefault(exp, []).extend(result.written)
            report.notes += [f"{exp}: {note}" for note in result.notes]
            drawn += 1
    if drawn == 0 and figure is None:
        raise KernelbenchError(
            f"the protocols of the results under {str(results_dir)!r} draw no figure"
        )
    if drawn == 0:
        found = sorted(df["experiment"].dropna().astype(str).unique())
        raise KernelbenchError(
            f"no experiment under {str(results_dir)!r} has the figure {figure!r} "
            f"(found: {', '.join(found)}; {figure!r} is drawn by {', '.join(figures[figure])})"
        )
    return report


class _PlotCommand(click.Command):
    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The figures of every protocol (--figure), one a line."""
        figures = [
            f"  {fig.name:<17}{fig.help} [{protocol}]"
            for protocol, proto in PROTOCOLS.items()
            for fig in proto.figures
        ]
        formatter.write_paragraph()
        formatter.write_text("\b\nFigures (--figure):\n" + "\n".join(figures))


@click.command("plot", cls=_PlotCommand)
@click.argument(
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_RESULTS,
    required=False,
)
@click.option(
    "--figure", default=None, help="Draw only this figure [default: each protocol's own]."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output directory; each experiment gets a subdirectory "
    "[default: RESULTS_DIR/figures; RESULTS_DIR/runs/figures if RESULTS_DIR has runs/].",
)
@click.option("--reference", is_flag=True, help="Overlay or list the paper's reported numbers.")
@click.option(
    "--metric",
    default=None,
    help="The figure's metric, e.g. fro or spec for fig1 [default: the figure's first].",
)
@click.option(
    "--format",
    "formats",
    default="png,pdf",
    show_default=True,
    help=f"Comma-separated figure formats ({', '.join(FORMATS)}).",
)
@click.option("--log/--linear", default=None, help="Y-axis scale [default: the figure's].")
@click.option("--experiment", default=None, help="Draw only this experiment's results.")
def plot(
    results_dir: Path,
    figure: str | None,
    out: Path | None,
    reference: bool,
    metric: str | None,
    formats: str,
    log: bool | None,
    experiment: str | None,
) -> None:
    """Draw the figures of every experiment in RESULTS_DIR [default: results/runs].

    Each experiment is drawn with its protocol's figures (Fig. 1 for kernel_approx,
    ...) into OUT/<experiment>/, with a summary table next to each figure.
    """
    report = make_plots(
        results_dir,
        out,
        figure=figure,
        metric=metric,
        reference=reference,
        formats=parse_formats(formats),
        log=log,
        experiment=experiment,
    )
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for exp, paths in report.written.items():
        click.echo(f"{exp}:")
        for path in paths:
            click.echo(f"  wrote {path}")
