"""The results site (``kernelbench report --html DIR``, docs/site.md): static,
self-contained pages built by :func:`kernelbench.site.build.build_site`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: What ``--html`` needs beyond the core dependencies (the ``[site]`` extra).
SITE_MODULES = ("plotly", "markdown_it")


def build_html(
    out: Path, results: Sequence[Path] = (), only: Sequence[str] = (), method: str | None = None
) -> None:
    """``kernelbench report --html OUT``: check the extra is installed (else a one-line
    error naming it), build the site, say where it is."""
    import importlib.util

    import click

    from kernelbench.errors import KernelbenchError

    missing = [m for m in SITE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise KernelbenchError(
            f"the site needs {', '.join(missing)}: pip install 'kernelbench[site]'"
        )
    from kernelbench.site.build import build_site

    report = build_site(out, results, only or None, method)
    for note in report.notes:
        click.echo(f"note: {note}")
    click.echo(f"wrote {len(report.pages)} pages to {out}: open {out / 'index.html'}")
