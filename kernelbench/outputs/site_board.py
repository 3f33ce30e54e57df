"""The site's leaderboard page (docs/leaderboard.md): each grid's two tracks ranked by the
average rank over independent blocks with its Friedman/Nemenyi test, a critical-difference
diagram (Demšar 2006, Fig. 1), each method's map time beside its error, the method of a
leaderboard run highlighted, and how to add your own."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import pandas as pd

from kernelbench.outputs.leaderboard import (
    ALPHA,
    REFERENCE,
    TRACKS,
    grid_table,
    grids,
    map_time_part,
    map_times,
    rank_grid,
    test_line,
)
from kernelbench.outputs.style import method_style

#: The statistic the ranks come from, as the page names it.
PRIMARY = "average rank over independent blocks (lower is better)"
#: A text glyph per matplotlib marker, for the legend swatch beside a method's name.
GLYPHS = {"o": "●", "s": "■", "D": "◆", "d": "◆", "^": "▲", "v": "▼", "<": "◀", ">": "▶",
          "P": "✚", "X": "✖", "*": "★", "h": "⬢", "H": "⬣", "p": "⬟", "8": "◉"}  # fmt: skip
#: The anchor of the plug-in guide (docs/plugins.md) on the page.
GUIDE = "#plugin-guide"


@dataclass
class Track:
    """One track of one grid: its test in words, its rows and its CD diagram (SVG)."""

    name: str
    test: str
    rows: list[dict]
    diagram: str = ""


@dataclass
class Board:
    """What the leaderboard part of the page template shows."""

    primary: str
    highlight: list[str]
    grids: list[tuple[str, list[Track]]] = field(default_factory=list)
    map_note: str = ""
    commands: list[str] = field(default_factory=list)
    guide: str = GUIDE
    guide_html: str = ""
    alpha: float = ALPHA


def swatch(label: str) -> tuple[str, str]:
    """(colour, glyph) of a method label: :func:`kernelbench.outputs.style.method_style`."""
    colour, marker = method_style(label)
    return colour, GLYPHS.get(marker, "●")


def _num(v: float, fmt: str) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def track_rows(g: pd.DataFrame, highlight: Sequence[str]) -> list[dict]:
    """The rows of one track as the template shows them."""
    rows = []
    for r in g.itertuples():
        colour, glyph = swatch(r.method_label)
        if r.status == "exact":
            rank = "exact"
            note = (
                f"in its exact regime in {r.exact_cells} of {r.cells} cells (errors at "
                "rounding level, e.g. Nyström with m ≥ N): marked, not ranked"
            )
        elif r.status == "incomplete":
            rank, note = "–", f"{r.cells} of the grid's cells so far: not ranked"
        else:
            rank = "–" if pd.isna(r.rank) else str(int(r.rank))
            note = "the reference" if r.method_label == REFERENCE else ""
        t = getattr(r, "map_seconds", math.nan)
        if t == t and r.method_label != REFERENCE and not str(r.source).endswith(".csv"):
            timed = f"map time from {r.source}, where rff took {1e3 * r.rff_seconds:.3g} ms"
            note = f"{note}; {timed}" if note else timed
        rows.append(
            {
                "rank": rank,
                "method": r.method_label,
                "colour": colour,
                "glyph": glyph,
                "mine": r.method_label in highlight,
                "mean_rank": _num(r.mean_rank, ".2f"),
                "ratio": _num(r.ratio, ".3g"),
                "interval": f"{r.ratio_low:.3g} – {r.ratio_high:.3g}"
                if not math.isnan(r.ratio_low)
                else "–",
                "cells": int(r.cells),
                "map_ms": _num(1e3 * t if t == t else math.nan, ".3g"),
                "vs_rff": _num(getattr(r, "vs_rff", math.nan), ".2f"),
                "note": note,
            }
        )
    return rows


def cd_diagram(g: pd.DataFrame, highlight: Sequence[str]) -> str:
    """A critical-difference diagram (Demšar 2006, Fig. 1) as inline SVG: the methods at
    their average ranks on an axis 1..k, the CD as a bar, and a thick line under each
    maximal group of methods the Nemenyi test cannot separate (none when Friedman's test
    does not reject: one line under all)."""
    ranked = g[g["status"] == "ranked"].sort_values("mean_rank")
    k = len(ranked)
    if k < 2 or ranked["test"].iloc[0] != "Friedman":
        return ""
    cd, p = float(ranked["cd"].iloc[0]), float(ranked["p_value"].iloc[0])
    width, left, right = 640, 40, 40
    scale = (width - left - right) / max(k - 1, 1)

    def x(rank: float) -> float:
        return left + (rank - 1) * scale

    parts = [f'<line x1="{x(1)}" y1="40" x2="{x(k)}" y2="40" stroke="#333"/>']
    for i in range(1, k + 1):
        parts.append(f'<line x1="{x(i)}" y1="36" x2="{x(i)}" y2="40" stroke="#333"/>')
        parts.append(f'<text x="{x(i)}" y="32" text-anchor="middle">{i}</text>')
    if cd <= k - 1:
        parts.append(
            f'<line x1="{x(1)}" y1="12" x2="{x(1 + cd)}" y2="12" stroke="#333" '
            f'stroke-width="2"/><text x="{x(1 + cd) + 6}" y="16">CD = {cd:.2f}</text>'
        )
    means = ranked["mean_rank"].to_numpy(dtype=float)
    labels = ranked["method_label"].tolist()
    groups: list[tuple[int, int]] = []
    for i in range(k):
        j = i
        while j + 1 < k and (not p < ALPHA or means[j + 1] - means[i] <= cd):
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in groups):
            groups.append((i, j))
    for n, (i, j) in enumerate(groups):
        y = 48 + 6 * n
        parts.append(
            f'<line x1="{x(means[i]) - 3}" y1="{y}" x2="{x(means[j]) + 3}" y2="{y}" '
            f'stroke="#555" stroke-width="3"/>'
        )
    top = 56 + 6 * len(groups)
    for n, (m, label) in enumerate(zip(means, labels, strict=True)):
        colour, _ = method_style(label)
        y = top + 16 * n
        weight = ' font-weight="bold"' if label in highlight else ""
        anchor = "start" if m <= (k + 1) / 2 else "end"
        tx = x(m) + (8 if anchor == "start" else -8)
        parts.append(
            f'<line x1="{x(m)}" y1="40" x2="{x(m)}" y2="{y}" stroke="{colour}"/>'
            f'<circle cx="{x(m)}" cy="40" r="4" fill="{colour}"/>'
            f'<text x="{tx}" y="{y + 4}" text-anchor="{anchor}" fill="{colour}"{weight}>'
            f"{escape(label)} ({m:.2f})</text>"
        )
    height = top + 16 * k + 4
    title = "critical-difference diagram: average ranks; a bar joins methods not separated"
    return (
        f'<svg class="kb-cd" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" font-size="12" font-family="sans-serif"><title>{title}</title>'
        + "".join(parts)
        + "</svg>"
    )


def board(runs: Sequence[Path], baseline_dir: Path, method: str | None = None):
    """The leaderboard page: (figure tables, :class:`Board`, the runs folder used), or
    None without the committed tables. The highlighted method is ``method``, else every
    method whose cells came from the runs folder (the method of a leaderboard run)."""
    from kernelbench.errors import KernelbenchError

    found = next((p for p in runs if p.is_dir() and any(p.rglob("*.parquet"))), None)
    tables, ranked = [], []
    for g in grids():
        try:
            t = grid_table(g, baseline_dir, found)
        except KernelbenchError:
            return None
        tables.append((g, t))
        ranked.append(rank_grid(t, g))
    if method is not None:
        highlight = [method]
    else:
        ours = pd.concat([t[t["source"] == "results"] for _, t in tables])
        highlight = sorted(set(ours["method_label"]))
    times = map_times(baseline_dir, found)
    times = times[["method_label", "map_seconds", "vs_rff", "rff_seconds", "source"]]
    out = Board(PRIMARY, highlight, guide_html=guide_html())
    for (g, _), r in zip(tables, ranked, strict=True):
        r = r.merge(times, on="method_label", how="left")
        tracks = []
        for track in TRACKS:
            part = r[r["track"] == track]
            if len(part):
                rows, diagram = track_rows(part, highlight), cd_diagram(part, highlight)
                tracks.append(Track(track, test_line(part), rows, diagram))
        out.grids.append((f"{g.title} [{g.grid}]", tracks))
    part = map_time_part()
    if part is not None:
        out.map_note = (
            f"Map time: the median of timed map calls on one fixed shape "
            f"(configs/experiment/{part.grid}.yaml: MNIST, d = 784, 1000 points, "
            "D = 2n(d + 1) = 1570, one BLAS thread); the published methods from "
            f"results/baseline/{part.baseline} (its machine and load: results/baseline/"
            "README.md), a new method from its leaderboard run, each ratio against rff "
            "timed in the same run. The machine is shared: compare ratios, not times."
        )
    name = highlight[0] if len(highlight) == 1 else "NAME"
    out.commands = [
        "pip install ./your_package            # registers your map: the guide below",
        f"kernelbench estimate experiment=leaderboard method={name}",
        f"kernelbench run experiment=leaderboard method={name}",
        f"kernelbench leaderboard --method {name}",
        "kernelbench report --html site/ --results results/runs",
    ]
    return tables, out, found


def guide_html() -> str:
    """docs/plugins.md as HTML for the page's "Add your method" box (links to files
    outside the site, and its in-page anchors, kept as text)."""
    import re

    from markdown_it import MarkdownIt

    from kernelbench.packaged import source_tree

    root = source_tree()  # the docs are in the source tree, not in a wheel
    if root is None or not (root / "docs" / "plugins.md").is_file():
        return "<p>docs/plugins.md of the kernelbench source repository.</p>"
    text = (root / "docs" / "plugins.md").read_text()
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return re.sub(r'<a href="(?!https?:)[^"]*">(.*?)</a>', r"\1", html)
