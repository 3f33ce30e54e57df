"""``kernelbench report --html DIR``: a page per report section, per experiment of a
``--results`` runs folder, a leaderboard and an index; Plotly figures (no CDN) with a PNG
fallback and a PDF. :func:`results_page` builds a page from any results DataFrame; a
results folder's experiments, of any protocol, get a page each from their rows and their
protocol's declared headline metric (:func:`runs_frame`), no output code of their own."""

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

from kernelbench.outputs.generic import headline_cells, ratio_table
from kernelbench.outputs.leaderboard import default_baseline_dir
from kernelbench.outputs.papers import PAGES, load_sections
from kernelbench.outputs.plotly_render import plotly_figure, ratio_box
from kernelbench.outputs.render import draw_files
from kernelbench.outputs.sections import Claim, Section, first_file, rel
from kernelbench.outputs.spec import FigureSpec, SpecFigure, build
from kernelbench.outputs.style import kernel_name
from kernelbench.packaged import shipped, source_tree, tree_name
from kernelbench.results import _cpu_model, _git_commit, read_results, shard_files

#: the source checkout of an editable install, whose Markdown files and tables the site
#: renders and copies when linked; None for a wheel (such links are left as text)
ROOT = source_tree()

TEMPLATES = Path(str(resources.files("kernelbench.outputs") / "templates" / "site"))
#: The committed baselines (one definition: kernelbench.outputs.leaderboard.default_baseline_dir).
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
#: The page key of the leaderboard (kernelbench.outputs.leaderboard).
LEADERBOARD = "leaderboard"


def verdict_class(verdict: str) -> str:
    return next((c for c, p in VERDICT_CLASS.items() if str(verdict).startswith(p)), "v-none")


#: Table headers as words (a column not listed: its name with spaces).
HEADERS = {
    "method_label": "method",
    "paper_label": "paper's label",
    "ours_mean": "our mean",
    "paper_mean": "paper's mean",
    "ratio_low": "ratio, 95% low",
    "ratio_high": "ratio, 95% high",
    "ci_low": "95% low",
    "ci_high": "95% high",
    "q025": "2.5% quantile",
    "q975": "97.5% quantile",
    "q25": "25% quantile",
    "q75": "75% quantile",
    "sem": "std error",
    "values": "timed calls",
    "counted": "in the count",
    "feature_seconds": "feature time (s)",
    "peak_memory_mb": "peak memory (MB)",
    "rel_spec_error": "spectral error",
    "feature_time_vs_rff": "feature time / rff's",
    "exact_score": "exact kernel's score",
    "fit_seconds": "fit (s)",
    "transform_seconds": "transform (s)",
    "train_seconds": "train (s)",
    "predict_seconds": "predict (s)",
}
#: Columns of a results table the "every cell" view leaves out (provenance, repeats).
HIDDEN = ("data_source", "experiment", "seed", "method", "grid", "paper_label")
#: Columns a long table can be narrowed by (a select each).
SELECTS = ("dataset", "kernel", "metric", "learner", "table", "ours", "method_label")
#: Tables with more rows than this are filled in the browser when opened (page weight).
LAZY_ROWS = 60


def _hidden(spec: FigureSpec, df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` its "every cell" view leaves out (:data:`HIDDEN`, and the
    quantiles the figure does not draw: the committed file, linked, has them)."""
    drawn = {spec.y, spec.lo, spec.hi}
    cols = [*HIDDEN, *(c for c in ("median", "q025", "q975") if c not in drawn)]
    return [c for c in cols if c in df]


def header(column: str) -> str:
    """A column's header in words (``method_label`` -> ``method``)."""
    return HEADERS.get(column, column.replace("_", " "))


@dataclass
class Table:
    """A table for the template: its id, header, rows of (text, sort key, class), the
    columns it can be narrowed by (index, header, values) and whether the browser fills
    it when opened (its rows then in a JSON script)."""

    key: str
    columns: list[str]
    rows: list[list[tuple[str, str, str]]]
    selects: list[tuple[int, str, list[str]]] = field(default_factory=list)
    lazy: bool = False

    def rows_json(self) -> str:
        """The rows as compact JSON: a cell is its text, or [text, sort key, class]."""
        out = [
            [t if (k in ("", t) and not c) else [t, k, c] for t, k, c in row] for row in self.rows
        ]
        return _script_json(out)


def human(v: float) -> str:
    """A number for people: integers with thousands separators, else 4 significant
    digits, scientific only below 1e-3 or from 1e6 (1.2e-05)."""
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}" if abs(v) >= 1e4 else str(int(v))
    a = abs(v)
    return f"{v:.3g}" if a < 1e-3 or a >= 1e6 else f"{v:.4g}"


def _cell(v: object, column: str = "") -> tuple[str, str]:
    """(text, sort key) of one value: numbers for people, sorting as numbers; a z-score
    at the standard-error floor is ±∞ (std 0) (:func:`kernelbench.stats.z_text`)."""
    from kernelbench.stats import z_text

    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "–", ""
    if isinstance(v, bool | np.bool_):
        return ("yes" if v else "no"), str(int(bool(v)))
    if isinstance(v, int | np.integer) and not isinstance(v, bool):
        v = float(v)
    if isinstance(v, float | np.floating):
        f = float(v)
        if column == "z":
            return z_text(f), f"{f:.6g}" if np.isfinite(f) else ("1e308" if f > 0 else "-1e308")
        if not np.isfinite(f):
            return ("∞" if f > 0 else "−∞"), ("1e308" if f > 0 else "-1e308")
        text = human(f)
        return text, "" if text == f"{f:g}" else f"{f:.6g}"
    return str(v), ""


def make_table(key: str, df: pd.DataFrame, lazy: bool | None = None) -> Table:
    """A sortable table of ``df``, headers in words (its ``verdict`` column coloured);
    long ones narrowed by :data:`SELECTS` and filled in the browser when opened."""
    rows = []
    for rec in df.itertuples(index=False):
        row = []
        for col, v in zip(df.columns, rec, strict=True):
            text, sort = _cell(v, str(col))
            row.append((text, sort, verdict_class(text) if col == "verdict" else ""))
        rows.append(row)
    long = len(rows) > LAZY_ROWS
    selects = [
        (i, header(str(c)), sorted({r[i][0] for r in rows}, key=_natural))
        for i, c in enumerate(df.columns)
        if long and c in SELECTS and 1 < df[c].nunique() <= 40
    ]
    columns = [header(str(c)) for c in df.columns]
    return Table(key, columns, rows, selects, long if lazy is None else lazy)


def _natural(text: str) -> tuple:
    try:
        return (0, float(text.replace(",", "")), "")
    except ValueError:
        return (1, 0.0, text)


def body_html(section: Section, out: Path, pages: Sequence[tuple[str, str]] = ()) -> str:
    """The section's body as HTML: its Markdown as in REPRODUCTION.md, each
    :class:`Claim` in a box coloured by its verdict; images copied under ``img/`` and
    folded (the page's figures draw the same tables); links made to point inside the
    site (:func:`site_links`)."""
    parts = []
    for claims, items in groupby(section.body, key=lambda item: isinstance(item, Claim)):
        if not claims:
            parts.append(_markdown().render("\n".join(items)))
            continue
        for c in items:
            text = _markdown().render(str(c))
            parts.append(f'<div class="claim {verdict_class(c.verdict)}">{text}</div>')
    text = "\n".join(parts)
    for src in sorted(set(re.findall(r'<img src="([^"]*)"', text))):
        path = shipped(src)
        if not src.startswith(("http:", "https:", "data:", "img/")) and path.is_file():
            (out / "img").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / "img" / path.name)
            text = text.replace(f'src="{src}"', f'src="img/{path.name}"')
    text = re.sub(
        r'<p>(<img src="[^"]*" alt="([^"]*)"[^>]*>)</p>',
        r'<details class="png"><summary>static figure: \2</summary>\1</details>',
        text,
    )
    return site_links(text, out, ROOT, own={f"{section.key}-cells": "#verdicts"}, pages=pages)


def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table")


def slug(text: str) -> str:
    """A heading's anchor as GitHub writes it (lower case, punctuation dropped, spaces
    to hyphens)."""
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def heading_ids(html: str) -> str:
    """Each heading of rendered Markdown with its GitHub anchor as its id."""
    return re.sub(
        r"<h([1-6])>(.*?)</h\1>", lambda m: f'<h{m[1]} id="{slug(m[2])}">{m[2]}</h{m[1]}>', html
    )


#: The repository's Markdown files the site renders as pages when linked: file -> page.
DOC_PAGES = {"REPRODUCTION.md": "reproduction.html"}


def doc_page(path: Path, out: Path, pages: Sequence[tuple[str, str]] = ()) -> str:
    """Render a repository Markdown file as a site page (once); its file name."""
    rel_path = path.resolve().relative_to(ROOT).as_posix()
    name = DOC_PAGES.get(rel_path) or "doc-" + rel_path.removesuffix(".md").replace("/", "-")
    name = name if name.endswith(".html") else name + ".html"
    target = out / name
    if target.exists():
        return name
    target.write_text("")  # a link back to this page resolves while it is rendered
    html = heading_ids(_markdown().render(path.read_text()))
    html = site_links(html, out, path.parent, own={}, pages=pages)
    title = next(iter(re.findall(r"<h1[^>]*>(.*?)</h1>", html)), rel_path)
    title = re.sub(r"<[^>]+>", "", title)
    target.write_text(
        _render("doc.html.j2", title=title, body=html, source=rel_path, pages=pages, current="")
    )
    return name


def site_links(
    html: str,
    out: Path,
    base: Path,
    own: dict[str, str],
    pages: Sequence[tuple[str, str]] = (),
) -> str:
    """``html``'s links made to point inside the site or to an absolute URL: ``own``
    anchors as mapped; a report section's anchor to its page; another anchor of
    REPRODUCTION.md to its rendered page; a repository Markdown file to its rendered
    page (:func:`doc_page`); any other repository file copied under ``files/``."""
    keys = {k for k, _ in pages}

    def fix(m: re.Match) -> str:
        attr, href = m[1], m[2]
        if href.startswith(("http:", "https:", "mailto:", "data:", "img/")):
            return m[0]
        path, _, frag = href.partition("#")
        if not path:
            if frag in own:
                return f'href="{own[frag]}"'
            if frag in keys:
                return f'href="{frag}.html"'
            # an anchor of REPRODUCTION.md outside this section
            if ROOT is not None and base == ROOT and own:
                return f'href="{doc_page(ROOT / "REPRODUCTION.md", out, pages)}#{frag}"'
            return m[0]
        if ROOT is None:  # a wheel: its shipped tables are copied, other names kept as text
            table = shipped(path)
            if table.is_absolute() and table.is_file():
                return f'{attr}="{site_file(table, out)}"'
            return f'title="{href} (in the source repository)"' if attr == "href" else m[0]
        file = (base / path).resolve()
        if not file.is_file() or not file.is_relative_to(ROOT):
            return m[0]
        if file.suffix == ".md" and attr == "href":
            return f'href="{doc_page(file, out, pages)}' + (f"#{frag}" if frag else "") + '"'
        return f'{attr}="{site_file(file, out)}"'

    return re.sub(r'(href|src)="([^"]*)"', fix, html)


def site_file(file: Path, out: Path) -> str:
    """A repository file copied under ``out/files/`` (its path kept); its link."""
    file = file.resolve()
    name = tree_name(file)  # a shipped table under its source-tree name, wheel or not
    if name is None:
        name = file.relative_to(ROOT) if ROOT and file.is_relative_to(ROOT) else file.name
    copy = out / "files" / name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(file, copy)
    return copy.relative_to(out).as_posix()


@dataclass
class Page:
    """What a page template needs; ``figures``: each figure and its Plotly JSON."""

    key: str
    title: str
    intro: str = ""
    figures: list[tuple[SpecFigure, str]] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    verdicts: Table | None = None
    claims: Table | None = None
    body: str = ""
    box: str | None = None
    ratios: Table | None = None
    explorer: list[tuple[str, Table]] = field(default_factory=list)
    counts: dict[str, str] = field(default_factory=dict)
    verdict_note: str = ""
    standings: list[tuple[str, Table]] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)
    board: object | None = None  # the leaderboard's content (kernelbench.outputs.site_board.Board)


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
    jobs: list[tuple[SpecFigure, Path]] | None = None,
    standings: Sequence[tuple[str, pd.DataFrame]] = (),
    files: Sequence[tuple[str, str]] = (),
    board: object | None = None,
) -> Path:
    """Write ``<out>/<key>.html``: the figures of each (spec, table), the view relative to
    rff, every cell and, with a report ``section``, its verdicts, claims and text. ``pages``
    (key, title) is the navigation; static figures are drawn now or queued on ``jobs``."""
    figs = [f for i, (spec, df) in enumerate(tables) for f in build(df, spec, f"{key}-{i}")]
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
        files=list(files),
        explorer=[
            (s.table, make_table(f"explorer-{i}", df.drop(columns=_hidden(s, df))))
            for i, (s, df) in enumerate(tables)
        ],
        standings=[
            (name, make_table(f"standings-{i}", t)) for i, (name, t) in enumerate(standings)
        ],
        board=board,
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
        m = section.summary
        if section.cells is not None:
            page.verdicts = make_table("verdict-table", section.cells)
            extra = len(section.cells) - m.cells
            page.verdict_note = f"{len(section.cells)} rows: the {m.cells} paper cells" + (
                f", and {extra} rows of a second construction compared with the same paper "
                "numbers (REPRODUCTION.md's appendix; not in the counts above)"
                if extra > 0
                else ""
            )
        if section.claims:
            counted = m.counted or tuple(section.claims)
            rows = [
                (c.text, c.verdict, c.evidence, any(c is x for x in counted))
                for c in section.claims
            ]
            claims = pd.DataFrame(rows, columns=["claim", "verdict", "measured", "counted"])
            if claims["counted"].all():
                claims = claims.drop(columns="counted")
            page.claims = make_table("claim-table", claims, lazy=False)
        page.body = body_html(section, out, pages)
        if m.cells:
            names = ["paper cells compared", "reproduced", "known deviations", "deviate", "not run"]
            values = [m.cells, m.reproduced, m.known, m.deviate, m.not_run]
            page.counts = {k: str(v) for k, v in zip(names, values, strict=True)}
        if m.claims:
            extra = len(section.claims) - m.claims
            what = f"of {m.claims} claims hold" + (
                f" (the table also lists {extra} re-checks, not counted)" if extra > 0 else ""
            )
            page.counts[what] = str(m.claims_hold)
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
    method: str | None = None,
) -> SiteReport:
    """Build the site into ``out``: a page per report section (tables looked up in the
    ``results`` folders, then results/baseline/), per experiment of each runs folder,
    the leaderboard (``method`` highlighted, else the method of the leaderboard run
    found in ``results``) and the index."""
    out.mkdir(parents=True, exist_ok=True)
    write_assets(out)
    report = SiteReport()
    from kernelbench import verify

    sections = load_sections(verify, list(only) if only else None)
    dirs = [*(Path(r) for r in results), BASELINE_DIR]
    runs = [(Path(r), df) for r in results if (df := runs_frame(Path(r), report)) is not None]
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
        files = [(rel(p), site_file(p, out)) for p in paths]
        page = {"title": s.title, "tables": tables, "section": s, "files": files}
        pages.append((s.key, SHORT.get(s.key, s.title), page))
    for i, (path, df) in enumerate(runs):
        for exp, g in df.groupby("experiment", sort=True):
            logy = bool((g["mean"] > 0).all())
            spec = FigureSpec(
                str(exp), title=str(exp), rows="kernel", ylabel=str(g["metric"].iloc[0]), logy=logy
            )
            intro = f"Aggregated from the shards under {path}."
            page = {"title": f"{exp}: {path}", "tables": [(spec, g)], "intro": intro}
            pages.append((f"runs-{i}-{exp}", f"{exp} ({path.name})", page))
    board = _leaderboard([p for p, _ in runs] or [Path("results") / "runs"], method)
    pages.append((LEADERBOARD, "Leaderboard", board))
    nav = [(key, name) for key, name, _ in pages]
    jobs: list[tuple[SpecFigure, Path]] = []
    for key, _, page in pages:
        if page is not None:
            report.pages.append(results_page(key, out=out, pages=nav, jobs=jobs, **page))
    draw_static(jobs)
    index = out / "index.html"
    context = {"sections": sections, "pages": nav, "current": "index", "notes": report.notes}
    index.write_text(_render("index.html.j2", environment=environment(), **context))
    report.pages.insert(0, index)
    return report


def _leaderboard(runs: Sequence[Path], method: str | None = None) -> dict | None:
    """The leaderboard page (:func:`kernelbench.outputs.site_board.board`): every grid's two
    tracks with their rank test, map times, ``method`` (else the method found in the
    first runs folder with shards) highlighted, the grids' errors and every cell; None
    without the committed tables."""
    from kernelbench.outputs.site_board import board

    made = board(runs, BASELINE_DIR, method)
    if made is None:
        return None
    grid_tables, content, found = made
    tables = []
    for g, t in grid_tables:
        page_df = t.drop(columns="source").rename(columns={"mean": "score"})
        page_df = page_df.assign(mean=t["error"])
        spec = FigureSpec(
            table=g.grid,
            rows="kernel",
            cols="dataset",
            pages=tuple(g.keys),
            ylabel="error (lower is better)",
            logy=bool((page_df["mean"] > 0).all()),
            title=g.title,
        )
        tables.append((spec, page_df))
    intro = (
        f"Primary statistic: the {content.primary}, per grid and track, tested by "
        "Friedman's test with Nemenyi's critical difference (docs/leaderboard.md). "
        "Published methods: the committed baselines; "
        + (f"other cells: {found}." if found else "no run of experiment=leaderboard found.")
    )
    return {"title": "Leaderboard", "tables": tables, "intro": intro, "board": content}


def draw_static(jobs: Sequence[tuple[SpecFigure, Path]], workers: int | None = None) -> None:
    """The static figures of ``jobs`` (PNG, PDF) on up to ``workers`` processes (default:
    the usable cores, at most 4)."""
    if workers is None:
        workers = min(len(os.sched_getaffinity(0)), 4)
    if workers <= 1 or len(jobs) < 4:
        for fig, where in jobs:
            draw_files(fig, where)
        return
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        list(pool.map(draw_files, *zip(*jobs, strict=True), chunksize=-(-len(jobs) // workers)))


def runs_frame(path: Path, report: SiteReport) -> pd.DataFrame | None:
    """Per cell of every experiment under a runs folder: its headline metric over runs
    (None without shards)."""
    if not shard_files(path):
        return None
    frames = []
    for exp, proto, table in headline_cells(read_results(path)):
        frames.append(table)
        report.notes.append(f"{path}: {exp} ({proto.name}, {table['metric'].iloc[0]})")
    return pd.concat(frames, ignore_index=True)


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
    report = build_site(out, results, only or None, method)
    for note in report.notes:
        click.echo(f"note: {note}")
    click.echo(f"wrote {len(report.pages)} pages to {out}: open {out / 'index.html'}")
