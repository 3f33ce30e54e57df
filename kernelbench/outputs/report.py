"""``kernelbench report``: REPRODUCTION.md from the committed reference numbers and our
baselines (nothing is rerun): a summary table, one section per paper experiment (built by
its paper's module, :mod:`kernelbench.outputs.papers`, as a
:class:`~kernelbench.outputs.sections.Section`, its verdicts by ``kernelbench verify``),
the long tables in an appendix.
"""

from __future__ import annotations

from pathlib import Path

import click

from kernelbench.outputs.sections import SECTIONS, Section, render
from kernelbench.validation import check_output_dir, check_output_file


def load_sections(only: list[str] | None = None) -> list[Section]:
    """The report's sections (or ``only`` these) that build, judged by ``kernelbench verify``."""
    from kernelbench import verify
    from kernelbench.outputs.papers import load_sections as build

    return build(verify, only)


@click.command("report")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("REPRODUCTION.md"),
    show_default=True,
    help="Where the report goes.",
)
@click.option(
    "--html",
    "html_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Build the results site into this directory instead (static, opens offline; "
    "needs the [site] extra: pip install 'kernelbench[site]').",
)
@click.option(
    "--results",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="With --html: a results folder (repeatable): its tables (CSV, as in "
    "results/baseline/) replace the committed ones; its runs (parquet shards) get a page "
    "per experiment.",
)
@click.option(
    "--only",
    multiple=True,
    type=click.Choice(SECTIONS),
    help="Build only this section (repeatable).",
)
@click.option(
    "--method",
    default=None,
    help="With --html: highlight this method on the leaderboard page [default: the "
    "method of the experiment=leaderboard run found in --results].",
)
def report(
    out: Path,
    html_dir: Path | None,
    results: tuple[Path, ...],
    only: tuple[str, ...],
    method: str | None,
) -> None:
    """Write REPRODUCTION.md: every number of the seed papers kernelbench can compute,
    against ours, from results/reference/ and results/baseline/ (nothing is rerun).
    With --html DIR, the same as a static site (docs/site.md)."""
    if html_dir is not None:
        from kernelbench.outputs.site import build_html

        check_output_dir(html_dir, "--html")  # before any page is built
        build_html(html_dir, results, only, method)
        return
    if results:
        raise click.UsageError("--results needs --html")
    if method:
        raise click.UsageError("--method needs --html")
    check_output_file(out, "--out")
    sections = load_sections(list(only) or None)
    out.write_text("\n".join(render("report", sections=sections)).rstrip() + "\n")
    click.echo(f"wrote {out}: " + "; ".join(f"{s.key}" for s in sections))
