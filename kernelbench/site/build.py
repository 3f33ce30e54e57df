"""``kernelbench report --html DIR``: a page per report section, per experiment of a
``--results`` runs folder, a leaderboard and an index; Plotly figures (no CDN) with a PNG
fallback and a PDF. :func:`results_page` builds a page from any results DataFrame."""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import re
import shutil
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from itertools import groupby
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info

from kernelbench.drawing import kernel_name
from kernelbench.errors import KernelbenchError
from kernelbench.leaderboard import default_baseline_dir, grid_table, grids, rank_grid
from kernelbench.packaged import shipped
from kernelbench.plot_command import experiment_protocol, split_variants
from kernelbench.report.common import Claim, Section, first_file, load_sections, rel
from kernelbench.reporting import get_reporting
from kernelbench.results import _cpu_model, _git_commit, read_results, shard_files
from kernelbench.site.figures import (
    FigureData,
    FigureSpec,
    build_figures,
    draw,
    plotly_figure,
    ratio_box,
    ratio_table,
)
from kernelbench.site.pages import PAGES
from kernelbench.stats import aggregate

TEMPLATES = Path(str(resources.files("kernelbench.site") / "templates"))
#: The committed baselines (one definition: kernelbench.leaderboard.default_baseline_dir).
BASELINE_DIR = default_baseline_dir()
#: The navigation's short name of each report section.
SHORT = {
    "fig1": "Fig. 1",
    "fig2": "Fig. 2",
    "fig3": "Fig. 3",
    "liu2020": "Liu 2020",
    "yu2016": "Yu 2016",
    "yang2014": "Yang 2014",
}
#: CSS class of a table cell -> the verdicts (their beginnings) it colours.
VERDICT_CLASS = {
    "v-ok": ("reproduced", "holds"),
    "v-known": ("known deviation",),
    "v-dev": ("deviates", "does not hold", "not shown"),
}
#: The packages whose versions the index lists.
PACKAGES = (
    "kernelbench numpy scipy scikit-learn pandas matplotlib plotly jinja2 threadpoolctl qmcpy numba"
).split()
#: The page key of the leaderboard (kernelbench.leaderboard).
LEADERBOARD = "leaderboard"


def verdict_class(verdict: str) -> str:
    return next((c for c, p in VERDICT_CLASS.items() if str(verdict).startswith(p)), "v-none")


@dataclass
class Table:
    """A table for the template: its id, header and rows of (text, sort key, class)."""

    key: str
    columns: list[str]
    rows: list[list[tuple[str, str, str]]]


def _cell(v: object) -> tuple[str, str]:
    """(text, sort key) of one value: numbers sort as numbers."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–", ""
    if isinstance(v, bool | np.bool_):
        return str(bool(v)), str(int(bool(v)))
    if isinstance(v, float | np.floating):
        f = float(v)
        return (str(int(f)) if f.is_integer() and abs(f) < 1e12 else f"{f:.4g}"), repr(f)
    return str(v), str(v)


def make_table(key: str, df: pd.DataFrame) -> Table:
    """A sortable table of ``df`` (its ``verdict`` column coloured)."""
    rows = []
    for rec in df.itertuples(index=False):
        row = []
        for col, v in zip(df.columns, rec, strict=True):
            text, sort = _cell(v)
            row.append((text, sort, verdict_class(text) if col == "verdict" else ""))
        rows.append(row)
    return Table(key, [str(c) for c in df.columns], rows)


def body_html(section: Section, out: Path) -> str:
    """The section's body as HTML: its Markdown as in REPRODUCTION.md, each
    :class:`Claim` in a box coloured by its verdict; images copied under ``img/``."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    parts = []
    for claims, items in groupby(section.body, key=lambda item: isinstance(item, Claim)):
        if not claims:
            parts.append(md.render("\n".join(items)))
            continue
        for c in items:
            parts.append(f'<div class="claim {verdict_class(c.verdict)}">{md.render(str(c))}</div>')
    text = "\n".join(parts)
    for src in sorted(set(re.findall(r'<img src="([^"]*)"', text))):
        path = shipped(src)
        if not src.startswith(("http:", "https:", "data:", "img/")) and path.is_file():
            (out / "img").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / "img" / path.name)
            text = text.replace(f'src="{src}"', f'src="img/{path.name}"')
    return text


@dataclass
class Page:
    """What a page template needs; ``figures``: each figure and its Plotly JSON."""

    key: str
    title: str
    intro: str = ""
    figures: list[tuple[FigureData, str]] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    verdicts: Table | None = None
    claims: Table | None = None
    body: str = ""
    box: str | None = None
    ratios: Table | None = None
    explorer: list[tuple[str, Table]] = field(default_factory=list)
    counts: dict[str, str] = field(default_factory=dict)
    standings: list[tuple[str, Table]] = field(default_factory=list)


def _script_json(obj: object) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(obj, allow_nan=False).replace("</", "<\\/")


def results_page(
    key: str,
    title: str,
    tables: Sequence[tuple[FigureSpec, pd.DataFrame]],
    out: Path,
    *,
    section: Section | None = None,
    intro: str = "",
    pages: Sequence[tuple[str, str]] = (),
    jobs: list[tuple[FigureData, Path]] | None = None,
    standings: Sequence[tuple[str, pd.DataFrame]] = (),
) -> Path:
    """Write ``<out>/<key>.html``: the figures of each (spec, table), the view relative to
    rff, every cell and, with a report ``section``, its verdicts, claims and text. ``pages``
    (key, title) is the navigation; static figures are drawn now or queued on ``jobs``."""
    figs = [f for i, (spec, df) in enumerate(tables) for f in build_figures(df, spec, f"{key}-{i}")]
    todo = [(f, out / "figures" / key) for f in figs]
    if jobs is None:
        draw_static(todo, workers=1)
    else:
        jobs += todo
    page = Page(
        key,
        title,
        intro,
        figures=[(f, _script_json(plotly_figure(f))) for f in figs],
        methods=list(dict.fromkeys(m for f in figs for m in f.methods)),
        kernels=list(dict.fromkeys(k for f in figs for k in f.kernels)),
        explorer=[(s.table, make_table(f"explorer-{i}", df)) for i, (s, df) in enumerate(tables)],
        standings=[
            (name, make_table(f"standings-{i}", t)) for i, (name, t) in enumerate(standings)
        ],
    )
    ratios = [
        r.assign(table=spec.table) for spec, df in tables if not (r := ratio_table(df, spec)).empty
    ]
    if ratios:
        r = pd.concat(ratios, ignore_index=True)
        what = "mean" if len(tables) != 1 else tables[0][0].ylabel
        page.box = _script_json(ratio_box(r.drop(columns="table"), f"{key}-box", what))
        page.ratios = make_table("ratio-table", r[["table", *r.columns.drop("table")]])
    if section is not None:
        if section.cells is not None:
            page.verdicts = make_table("verdict-table", section.cells)
        if section.claims:
            rows = [(c.text, c.verdict, c.evidence) for c in section.claims]
            claims = pd.DataFrame(rows, columns=["claim", "verdict", "measured"])
            page.claims = make_table("claim-table", claims)
        page.body = body_html(section, out)
        m = section.summary
        if m.cells:
            names = ["paper cells", "reproduced", "known deviations", "deviate", "not run"]
            values = [m.cells, m.reproduced, m.known, m.deviate, m.not_run]
            page.counts = {k: str(v) for k, v in zip(names, values, strict=True)}
        if m.claims:
            page.counts["claims that hold"] = f"{m.claims_hold} of {m.claims}"
    path = out / f"{key}.html"
    path.write_text(_render("page.html.j2", page=page, pages=pages, current=key))
    return path


def _render(template: str, **context: object) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["kernel_name"] = kernel_name
    return env.get_template(template).render(**context)


def write_assets(out: Path) -> None:
    """plotly.min.js (from the installed plotly package), site.js and site.css."""
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    plotly_js = resources.files("plotly") / "package_data" / "plotly.min.js"
    (assets / "plotly.min.js").write_bytes(plotly_js.read_bytes())
    for name in ("site.js", "site.css"):
        shutil.copyfile(TEMPLATES / name, assets / name)


def environment() -> list[tuple[str, str]]:
    """Package versions, the BLAS kernel numpy runs (threadpoolctl) and the machine."""
    rows = [("python", platform.python_version())]
    for pkg in PACKAGES:
        try:
            rows.append((pkg, version(pkg)))
        except PackageNotFoundError:
            rows.append((pkg, "not installed"))
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    rows += [
        (
            "BLAS",
            f"{i.get('internal_api', '?')} {i.get('version') or ''}, kernel "
            f"{i.get('architecture') or '?'}, {i.get('num_threads')} threads "
            f"({Path(str(i.get('filepath', ''))).name})",
        )
        for i in blas
    ]
    rows += [
        ("machine", f"{platform.machine()}, {_cpu_model()}"),
        ("system", platform.platform()),
        ("git commit", _git_commit() or "unknown"),
    ]
    return rows


@dataclass
class SiteReport:
    pages: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def build_site(
    out: Path,
    results: Sequence[Path] = (),
    only: Sequence[str] | None = None,
) -> SiteReport:
    """Build the site into ``out``: a page per report section (tables looked up in the
    ``results`` folders, then results/baseline/), per experiment of each runs folder,
    the leaderboard and the index."""
    out.mkdir(parents=True, exist_ok=True)
    write_assets(out)
    report = SiteReport()
    sections = load_sections(list(only) if only else None)
    dirs = [*(Path(r) for r in results), BASELINE_DIR]
    runs = [(Path(r), df) for r in results if (df := _runs_frame(Path(r), report)) is not None]
    pages: list[tuple[str, str, dict | None]] = []  # key, navigation name, page
    for s in sections:
        tables, paths = [], []
        for spec in PAGES.get(s.key, ()):
            path = first_file(*(d / spec.table for d in dirs))
            if path is None:
                report.notes.append(f"{s.key}: no {spec.table}; its figures are left out")
                continue
            tables.append((spec, pd.read_csv(path)))
            paths.append(path)
        intro = "Tables: " + ", ".join(rel(p) for p in paths)
        page = {"title": s.title, "tables": tables, "section": s, "intro": intro}
        pages.append((s.key, SHORT.get(s.key, s.title), page))
    for i, (path, df) in enumerate(runs):
        for exp, g in df.groupby("experiment", sort=True):
            logy = bool((g["mean"] > 0).all())
            spec = FigureSpec(str(exp), ylabel=str(g["metric"].iloc[0]), logy=logy, title=str(exp))
            intro = f"Aggregated from the shards under {path}."
            page = {"title": f"{exp}: {path}", "tables": [(spec, g)], "intro": intro}
            pages.append((f"runs-{i}-{exp}", f"{exp} ({path.name})", page))
    board = _leaderboard([p for p, _ in runs] or [Path("results") / "runs"])
    pages.append((LEADERBOARD, "Leaderboard", board))
    nav = [(key, name) for key, name, _ in pages]
    jobs: list[tuple[FigureData, Path]] = []
    for key, _, page in pages:
        if page is not None:
            report.pages.append(results_page(key, out=out, pages=nav, jobs=jobs, **page))
    draw_static(jobs)
    index = out / "index.html"
    context = {"sections": sections, "pages": nav, "current": "index", "notes": report.notes}
    index.write_text(_render("index.html.j2", environment=environment(), **context))
    report.pages.insert(0, index)
    return report


def _leaderboard(runs: Sequence[Path]) -> dict | None:
    """The leaderboard page: every grid's standings (the baselines plus the
    ``experiment=leaderboard`` cells of the first runs folder with shards), its errors and
    every cell; None without the committed tables."""
    found = next((p for p in runs if p.is_dir() and any(p.rglob("*.parquet"))), None)
    tables, standings = [], []
    for g in grids():
        try:
            t = grid_table(g, BASELINE_DIR, found)
        except KernelbenchError:
            return None
        ranked = rank_grid(t, g)
        cols = ["rank", "method_label", "cells", "ratio", "ratio_low", "ratio_high", "mean_rank"]
        standings.append((f"{g.title} [{g.grid}]", ranked[cols]))
        page_df = t.rename(columns={"mean": "score"}).assign(mean=t["error"])
        spec = FigureSpec(
            table=g.grid,
            facets=("dataset", *g.keys),
            ylabel="error (lower is better)",
            logy=bool((page_df["mean"] > 0).all()),
            title=g.title,
        )
        tables.append((spec, page_df))
    intro = (
        "Every method of each grid ranked by its geometric mean error ratio to rff over "
        "the grid's cells, with its 95% t-interval, and its average rank "
        "(docs/leaderboard.md). Published methods: the committed baselines; "
        + (f"other cells: {found}." if found else "no run of experiment=leaderboard found.")
    )
    return {"title": "Leaderboard", "tables": tables, "intro": intro, "standings": standings}


def draw_static(jobs: Sequence[tuple[FigureData, Path]], workers: int | None = None) -> None:
    """The static figures of ``jobs`` (PNG, PDF) on up to ``workers`` processes (default:
    the usable cores, at most 4)."""
    if workers is None:
        workers = min(len(os.sched_getaffinity(0)), 4)
    if workers <= 1 or len(jobs) < 4:
        for fig, where in jobs:
            draw(fig, where)
        return
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        list(pool.map(draw, *zip(*jobs, strict=True), chunksize=-(-len(jobs) // workers)))


def _runs_frame(path: Path, report: SiteReport) -> pd.DataFrame | None:
    """Per cell of every experiment under a runs folder: its headline metric over runs
    (None without shards)."""
    if not shard_files(path):
        return None
    df = read_results(path)
    frames = []
    for exp, rows in df.groupby("experiment", sort=True):
        proto = experiment_protocol(rows, str(exp))
        rows, _ = split_variants(rows, proto)
        metric = get_reporting(proto.name).metric(None)
        keys = [k for k in ("experiment", "dataset", "kernel", "method_label", "n") if k in rows]
        frames.append(aggregate(rows, keys, metric.column).assign(metric=metric.column))
        report.notes.append(f"{path}: {exp} ({proto.name}, {metric.column})")
    return pd.concat(frames, ignore_index=True)
