"""One figure spec, two renderers that cannot disagree: for each declared spec (the site's
pages and the committed PNGs), the points the matplotlib renderer draws, read back from
its Axes, equal the Plotly renderer's traces and the rows of the table they come from."""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from kernelbench.outputs.papers import (  # noqa: E402
    BASELINE_FIGURES,
    PAGES,
    BaselineFigure,
)
from kernelbench.outputs.plotly_render import plotly_figure  # noqa: E402
from kernelbench.outputs.render import draw  # noqa: E402
from kernelbench.outputs.spec import SpecFigure  # noqa: E402

BASELINE = Path(__file__).resolve().parents[1] / "results" / "baseline"

#: every declared spec once: the committed PNGs' and the site pages' (by identity)
FIGURES: dict[str, BaselineFigure] = dict(BASELINE_FIGURES)
for key, specs in PAGES.items():
    for i, spec in enumerate(specs):
        if all(f.spec is not spec for f in FIGURES.values()):
            FIGURES[f"{key}-{i}"] = BaselineFigure(spec)

Points = dict[tuple[str, ...], list[tuple[float, float]]]


def matplotlib_points(figure) -> tuple[Points, list[float]]:
    """The points of each (kind, series, row, column) line the Axes hold, and the dotted
    lines' values."""
    out: Points = defaultdict(list)
    hlines = []
    for ax in figure.axes:
        for ln in ax.get_lines():
            gid = ln.get_gid() or ""
            if gid == "hline":
                hlines.append(float(ln.get_ydata()[0]))
            elif gid:
                xy = zip(ln.get_xdata(), ln.get_ydata(), strict=True)
                out[tuple(gid.split("\t"))] += [(float(x), float(y)) for x, y in xy if y == y]
    return dict(out), sorted(hlines)


def plotly_points(fig: SpecFigure) -> tuple[Points, list[float]]:
    """The same of the Plotly figure's traces (their meta: kind, series, panel)."""
    out: Points = defaultdict(list)
    hlines = []
    for t in plotly_figure(fig)["data"]:
        m = t["meta"]
        if m["kind"] == "hline":
            hlines.append(t["y"][0])
            continue
        xy = zip(t["x"], t["y"], strict=True)
        out[(m["kind"], m["method"], *m["panel"])] += [(x, y) for x, y in xy if y is not None]
    return dict(out), sorted(hlines)


def table_points(fig: SpecFigure, rows: pd.DataFrame) -> tuple[Points, list[float]]:
    """The same from the table's rows that each point names (its series' ``source``):
    the row's series, x and value (on the panel's bottom edge where below it), the
    paper's value of the row, and each panel's dotted line."""
    spec = fig.spec
    selected = spec.select(rows.reset_index(drop=True))
    paper = pd.Series(spec.paper(selected).to_numpy(), selected.index) if spec.paper else None
    out: Points = defaultdict(list)
    hlines = []
    for panel in fig.panels.values():
        where = (str(panel.row), str(panel.col))
        if isinstance(spec.hline, str):  # the column's value in the panel's rows
            cell = selected.loc[[i for s in panel.series for i in s.source]]
            hlines.append(float(cell[spec.hline].dropna().iloc[0]))
        elif spec.hline is not None:
            hlines.append(float(spec.hline))
        for s in panel.series:
            for src in s.source:
                r = selected.loc[src]
                label = str(r[spec.series])
                x, y = float(r[spec.x]), float(r[spec.y])
                if panel.bottom is not None and y < panel.bottom:
                    out[("below", label, *where)].append((x, panel.bottom))
                else:
                    out[("ours", label, *where)].append((x, y))
                if paper is not None and math.isfinite(paper[src]):
                    out[("paper", label, *where)].append((x, float(paper[src])))
    return dict(out), sorted(hlines)


def differences(a: tuple[Points, list[float]], b: tuple[Points, list[float]]) -> list[str]:
    """Each line whose points differ between ``a`` and ``b``, and differing dotted lines."""
    keys = sorted({*a[0], *b[0]})
    out = [
        f"{k}: {a[0].get(k)} != {b[0].get(k)}" for k in keys if a[0].get(k, []) != b[0].get(k, [])
    ]
    if a[1] != b[1]:
        out.append(f"dotted lines {a[1]} != {b[1]}")
    return out


def figures(name: str) -> tuple[list[SpecFigure], pd.DataFrame]:
    figure = FIGURES[name]
    table = pd.read_csv(BASELINE / figure.spec.table)
    rows = figure.rows(table) if figure.rows else table
    return figure.figures(table, name), rows


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_both_renderers_draw_the_tables_points(name: str) -> None:
    figs, rows = figures(name)
    assert figs, name
    for fig in figs:
        drawn = draw(fig)
        try:
            ours = matplotlib_points(drawn)
        finally:
            plt.close(drawn)
        assert ours[0], f"{name}: nothing drawn"
        assert differences(ours, plotly_points(fig)) == [], name
        assert differences(ours, table_points(fig, rows)) == [], name


def test_one_changed_value_is_found() -> None:
    """One value changed in one renderer's input, or in the table, is a difference."""
    (fig,), rows = figures("fig1_kernel_error_fro")
    changed = copy.deepcopy(fig)
    series = next(s for p in changed.panels.values() for s in p.series if s.label == "sr33")
    series.y[2] *= 1.001
    drawn = draw(changed)
    try:
        ours = matplotlib_points(drawn)
    finally:
        plt.close(drawn)
    (bad,) = differences(ours, plotly_points(fig))
    assert bad.startswith("('ours', 'sr33'")
    rows = rows.copy()
    rows.loc[fig.series[0].source[0], "mean"] *= 1.001
    assert len(differences(plotly_points(fig), table_points(fig, rows))) == 1
