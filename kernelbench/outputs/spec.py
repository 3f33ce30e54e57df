"""One figure spec, two renderers: a :class:`FigureSpec` declares a figure once (its
table, the rows it keeps, its panels, series, axes and scales, the paper's overlay, the
out-of-range policy and the labels); :func:`build` turns a results table into
:class:`SpecFigure` data (checked: a series never has two values at one x), which the
renderers draw: :func:`kernelbench.outputs.render.draw` with matplotlib (every PNG and
PDF: the committed baselines, ``kernelbench plot``, the site's fallbacks) and
:func:`kernelbench.outputs.plotly_render.plotly_figure` with Plotly (the site). This
module imports neither."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.outputs.style import (
    PAPER_VARIANTS,
    _log_bottom,
    dataset_name,
    dataset_order,
    kernel_name,
    kernel_rank,
    label_rank,
)

#: The x label of a figure against the budget n: every map fits D = 2n(d + 1) features.
XLABEL_N = "n (D = 2n(d + 1))"


@dataclass(frozen=True)
class FigureSpec:
    """How a results table (one row per cell) is drawn: ``y`` against ``x``, one figure
    per value of ``pages``, a grid of panels ``rows`` x ``cols``, one series per
    ``series`` value in each panel. ``where`` keeps rows (e.g. one metric); ``lo``/``hi``
    name interval columns (else ci_low/ci_high, else the 95% t-interval from sem and
    runs); ``paper`` gives the paper's value of each row (drawn dashed); ``clip``: on a
    log y axis, values more than :data:`kernelbench.outputs.style.LOG_GAP` decades below the
    others sit on the bottom edge as markers (noted). ``logy`` may name the row or
    column values whose panels have a log y axis (e.g. Liu's error and time beside its
    accuracy); ``hline``: a column (its value per panel) or a number drawn as a dotted
    line named ``hline_label``; ``interval``: what the bands are."""

    table: str
    title: str = ""
    x: str = "n"
    y: str = "mean"
    rows: str | None = None
    cols: str | None = "dataset"
    pages: tuple[str, ...] = ()
    series: str = "method_label"
    where: tuple[tuple[str, object], ...] = ()
    xlabel: str = XLABEL_N
    ylabel: str = "mean"
    logx: bool = False
    logy: bool | tuple[object, ...] = False
    lo: str | None = None
    hi: str | None = None
    runs: str = "runs"
    paper: Callable[[pd.DataFrame], pd.Series] | None = None
    clip: bool = True
    hline: str | float | None = None
    hline_label: str = ""
    interval: str = "95% t-intervals"

    def log_panel(self, row: object, col: object) -> bool:
        """Whether the panel (``row``, ``col``) has a log y axis."""
        if isinstance(self.logy, bool):
            return self.logy
        return row in self.logy or col in self.logy

    def select(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``df`` that ``where`` keeps."""
        for col, val in self.where:
            if col in df:
                df = df[df[col] == val]
        return df


@dataclass
class Series:
    """One line of a panel: its label, the paper's label, its points (sorted by x), their
    intervals and runs, the paper's values, and the row of the table each came from."""

    label: str
    paper_label: str
    x: list[float]
    y: list[float]
    lo: list[float]
    hi: list[float]
    runs: list[float]
    paper: list[float]
    source: list[int] = field(default_factory=list)


@dataclass
class Panel:
    """One panel: its row and column value, its series, its y scale, its dotted line
    (``hline``) and, on a log axis, its y range (``bottom``: values below it are drawn on
    the edge, ``clipped``)."""

    row: object
    col: object
    series: list[Series] = field(default_factory=list)
    logy: bool = False
    hline: float | None = None
    bottom: float | None = None
    top: float | None = None
    clipped: list[tuple[str, float, float]] = field(default_factory=list)


@dataclass
class SpecFigure:
    """One figure of a spec: its id, title, settings line, its rows and columns, the
    panels by (row, column) and the values of the spec's ``pages`` it shows."""

    key: str
    title: str
    settings: str
    spec: FigureSpec
    rows: list[object]
    cols: list[object]
    panels: dict[tuple[object, object], Panel]
    col_titles: dict[object, str] = field(default_factory=dict)
    page: tuple[object, ...] = ()

    @property
    def series(self) -> list[Series]:
        return [s for p in self.panels.values() for s in p.series]

    @property
    def methods(self) -> list[str]:
        return sorted({s.label for s in self.series}, key=label_rank)

    def legend(self) -> dict[str, str]:
        """Each series label beside the paper's (``sr33 (B)``, ``orf_tallqr (Gort)``);
        where two labels share a paper label, the variants' names
        (:data:`kernelbench.outputs.style.PAPER_VARIANTS`)."""
        paper = {s.label: s.paper_label for s in self.series}
        shared = {p for p in paper.values() if p and list(paper.values()).count(p) > 1}
        out = {}
        for lab in self.methods:
            p = paper.get(lab, "")
            if p in shared and lab in PAPER_VARIANTS:
                p = PAPER_VARIANTS[lab]
            if p.endswith("(no paper)"):
                p = "not in the paper"
            out[lab] = f"{lab} ({p})" if p and p != lab else lab
        return out

    def clip_notes(self) -> list[str]:
        out = []
        for (r, c), p in self.panels.items():
            for lab, x, y in p.clipped:
                where = " × ".join(facet_label(f, v) for f, v in self._facets(r, c))
                out.append(f"{where}: {lab} at x = {x:g} is {y:.1e}, below {p.bottom:.1e}")
        return out

    def notes(self) -> list[str]:
        """What the figure leaves out (panels, a panel's methods) and draws on an edge."""
        out = []
        for r in self.rows:
            for c in self.cols:
                where = " × ".join(facet_label(f, v) for f, v in self._facets(r, c))
                if (p := self.panels.get((r, c))) is None:
                    out.append(f"no results for {where or 'the figure'}; skipped")
                elif absent := [m for m in self.methods if m not in {s.label for s in p.series}]:
                    out.append(f"{where}: no results for {', '.join(absent)}; skipped")
        return out + self.clip_notes()

    def _facets(self, r: object, c: object) -> list[tuple[str, object]]:
        out = []
        if self.spec.rows:
            out.append((self.spec.rows, r))
        if self.spec.cols:
            out.append((self.spec.cols, c))
        return out


def facet_label(column: str, value: object) -> str:
    """A facet value as a reader knows it (LETTER, Gaussian, d 16, ...)."""
    if column == "dataset":
        return dataset_name(str(value))
    if column == "kernel":
        return kernel_name(str(value))
    if column == "metric":
        return str(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{column} {value}"


def _order(df: pd.DataFrame, column: str, key: str) -> list[object]:
    """The values of ``df[key]`` (facet ``column``) in the papers' order: datasets by d,
    kernels as :data:`kernelbench.outputs.style.KERNEL_ORDER`, else sorted."""
    values = list(df[key].dropna().unique())
    if column == "dataset" and "d" in df:
        return [ds for ds in dataset_order(df) if ds in set(values)]
    if column == "kernel":
        return sorted(values, key=kernel_rank)
    return sorted(values, key=lambda v: (isinstance(v, str), v))


def _interval(df: pd.DataFrame, spec: FigureSpec) -> tuple[pd.Series, pd.Series]:
    y = df[spec.y].astype(float)
    if spec.lo and spec.hi and spec.lo in df and spec.hi in df:
        return df[spec.lo].astype(float), df[spec.hi].astype(float)
    if "ci_low" in df and "ci_high" in df:
        return df["ci_low"].astype(float), df["ci_high"].astype(float)
    if "sem" in df and spec.runs in df:
        from scipy import stats

        runs = df[spec.runs].astype(float)
        half = stats.t.ppf(0.975, (runs - 1).clip(lower=1)) * df["sem"].astype(float)
        half = half.where(runs > 1)
        return y - half, y + half
    nan = pd.Series(np.nan, index=df.index)
    return nan, nan


def _runs_text(runs: pd.Series) -> str:
    vals = sorted({int(r) for r in runs.dropna()})
    if not vals:
        return ""
    return f"{vals[0]} runs per cell" if len(vals) == 1 else f"{vals[0]}-{vals[-1]} runs per cell"


def check_series(spec: FigureSpec, where: str, s: Series) -> None:
    """Refuse a series with two values at one x (a table mixing metrics or settings the
    spec does not select), naming the series."""
    seen: set[float] = set()
    for x in s.x:
        if x in seen:
            raise KernelbenchError(
                f"figure {spec.title or spec.table} ({spec.table}): series {s.label!r} of "
                f"panel {where} has two values at {spec.x} = {x:g}; select one "
                "(FigureSpec.where, e.g. one metric)"
            )
        seen.add(x)


def build(df: pd.DataFrame, spec: FigureSpec, prefix: str) -> list[SpecFigure]:
    """The figures of ``df`` under ``spec`` (each series checked by :func:`check_series`)."""
    df = spec.select(df.reset_index(drop=True))  # a point's source: its row of the table
    if df.empty or spec.x not in df or spec.y not in df:
        return []
    lo, hi = _interval(df, spec)
    nan = pd.Series(np.nan, index=df.index)
    paper = pd.Series(spec.paper(df).to_numpy(), index=df.index) if spec.paper else nan
    df = df.assign(
        _x=df[spec.x].astype(float),
        _y=df[spec.y].astype(float),
        _lo=lo,
        _hi=hi,
        _runs=df[spec.runs].astype(float) if spec.runs in df else nan,
        _paper=paper.astype(float),
        _row=df[spec.rows] if spec.rows and spec.rows in df else "",
        _col=df[spec.cols] if spec.cols and spec.cols in df else "",
        _src=df.index,
    )
    pages = [p for p in spec.pages if p in df]
    groups = list(df.groupby(pages, sort=True)) if pages else [((), df)]
    out = []
    for i, (key, g) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        parts = [facet_label(c, v) for c, v in zip(pages, key, strict=True)]
        rows = _order(g, spec.rows, "_row") if spec.rows and spec.rows in df else [""]
        cols = _order(g, spec.cols, "_col") if spec.cols and spec.cols in df else [""]
        panels: dict[tuple[object, object], Panel] = {}
        for r in rows:
            for c in cols:
                cell = g[(g["_row"] == r) & (g["_col"] == c)]
                if cell.empty:
                    continue
                panel = Panel(r, c, logy=spec.log_panel(r, c), hline=_hline(spec, cell))
                where = (
                    " × ".join(
                        facet_label(f, v)
                        for f, v in ((spec.rows, r), (spec.cols, c))
                        if f and f in df
                    )
                    or "the figure"
                )
                for lab, s in sorted(cell.groupby(spec.series), key=lambda ls: label_rank(ls[0])):
                    s = s.sort_values("_x")
                    pl = s["paper_label"].dropna().astype(str) if "paper_label" in s else []
                    series = Series(
                        str(lab),
                        next((p for p in pl if p), ""),
                        *(s[c].tolist() for c in ("_x", "_y", "_lo", "_hi", "_runs", "_paper")),
                        source=[int(v) for v in s["_src"]],
                    )
                    check_series(spec, where, series)
                    panel.series.append(series)
                _y_range(spec, panel)
                panels[(r, c)] = panel
        col_titles = {c: _col_title(g, spec, c) for c in cols}
        settings = [*parts, _runs_text(g["_runs"])]
        out.append(
            SpecFigure(
                key=f"{prefix}-{i}",
                title=" · ".join([spec.title, *parts]) if spec.title else " · ".join(parts),
                settings=" · ".join(p for p in settings if p),
                spec=spec,
                rows=rows,
                cols=cols,
                panels=panels,
                col_titles=col_titles,
                page=key,
            )
        )
    return out


def _hline(spec: FigureSpec, cell: pd.DataFrame) -> float | None:
    """The value of a panel's dotted line: ``spec.hline``, or its column's first value."""
    if spec.hline is None or isinstance(spec.hline, int | float):
        return spec.hline
    values = cell[spec.hline].dropna() if spec.hline in cell else []
    return float(values.iloc[0]) if len(values) else None


def _col_title(g: pd.DataFrame, spec: FigureSpec, c: object) -> str:
    if not spec.cols or spec.cols not in g:
        return ""
    name = facet_label(spec.cols, c)
    if spec.cols == "dataset" and "d" in g:
        d = pd.to_numeric(g.loc[g["_col"] == c, "d"], errors="coerce").min()
        if d == d:
            name += f" (d = {int(d)})"
    return name


def _y_range(spec: FigureSpec, panel: Panel) -> None:
    """A log panel's y range from its informative values; the values of ours below it."""
    if not panel.logy:
        return
    values = [
        v
        for s in panel.series
        for v in (*s.y, *s.lo, *s.paper)
        if isinstance(v, float) and math.isfinite(v) and v > 0
    ] + ([panel.hline] if panel.hline is not None and panel.hline > 0 else [])
    if not values:
        return
    panel.bottom = _log_bottom(values) if spec.clip else min(values) / 1.3
    panel.top = max([*values, *(v for s in panel.series for v in s.hi if v > 0)]) * 1.3
    for s in panel.series:
        for x, y in zip(s.x, s.y, strict=True):
            if math.isfinite(y) and y < panel.bottom:
                panel.clipped.append((s.label, x, y))


def row_title(spec: FigureSpec, r: object) -> str:
    if not spec.rows:
        return ""
    return facet_label(spec.rows, r)


@dataclass(frozen=True)
class BaselineFigure:
    """A committed PNG of results/baseline/: the spec that draws it (its ``table`` the
    committed CSV) and, where the table is not the drawn rows, what makes them."""

    spec: FigureSpec
    rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None

    def figures(self, table: pd.DataFrame, stem: str) -> list[SpecFigure]:
        """The figures of ``table`` (one per value of the spec's ``pages``)."""
        return build(self.rows(table) if self.rows else table, self.spec, stem)
