"""The site's Plotly renderer of :mod:`kernelbench.outputs.spec` figures (:func:`plotly_figure`:
the page's interactive small multiples; :func:`draw`: the PNG fallback and the PDF
download, by the matplotlib renderer :func:`kernelbench.outputs.render.draw`), and the view
relative to rff (:func:`ratio_table`, :func:`ratio_box`)."""

from __future__ import annotations

import math

import pandas as pd

from kernelbench.outputs.generic import BASE_METHOD
from kernelbench.outputs.sections import fmt as _fmt
from kernelbench.outputs.spec import FigureSpec, Panel, SpecFigure, facet_label, row_title
from kernelbench.outputs.style import label_rank, method_style

__all__ = ["FigureSpec", "SpecFigure", "plotly_figure", "ratio_box"]

#: The layout both Plotly figures end with.
STYLE = {"template": "plotly_white", "font": {"family": "Helvetica, Arial, sans-serif"}}
MARGIN = {"l": 70, "r": 20, "t": 70, "b": 55}
#: matplotlib marker -> Plotly symbol (a method's marker is the same on the PNG).
PLOTLY_SYMBOLS = {
    "o": "circle", "s": "square", "D": "diamond", "^": "triangle-up", "v": "triangle-down",
    "P": "cross", "X": "x", "*": "star", "<": "triangle-left", ">": "triangle-right",
    "h": "hexagon", "p": "pentagon", "8": "octagon", "d": "diamond-tall", "H": "hexagon2",
    "+": "cross-thin-open", "1": "y-down", "2": "y-up", "3": "y-left", "4": "y-right",
}  # fmt: skip


def method_symbol(method: str) -> str:
    """A method's marker as Plotly names it (matplotlib's, where Plotly has it)."""
    return PLOTLY_SYMBOLS.get(method_style(method.split()[0])[1], "circle")


def method_color(method: str) -> str:
    """A method's colour as ``kernelbench plot`` draws it, in hex."""
    from matplotlib.colors import to_hex

    return to_hex(method_style(method.split()[0])[0])


def _json_num(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else v


def _short(v: float | None) -> float | None:
    """A drawn length (an error bar) to 4 significant digits: a lighter page."""
    return None if v is None or not math.isfinite(v) else float(f"{v:.4g}")


#: Gaps between panels, as fractions of the figure's width and height.
HGAP, VGAP = 0.035, 0.07
#: Height of one row of panels and of the figure's frame (title, legend, notes), px.
ROW_PX, FRAME_PX = 200, 200


def plotly_figure(fig: SpecFigure) -> dict:
    """The Plotly JSON of a figure: its panels as small multiples (one shared legend,
    ours beside the paper's label), the paper's values dashed, values below a log
    panel's informative range as triangles on its bottom edge (noted), log axes with
    ticks at powers of ten. Hover gives the value, its interval, the paper's value and
    the runs; each trace's ``meta`` holds {method, panel, kind, rows} for the page's
    toggles and the browser test (``rows``: the source table's row of each point)."""
    spec = fig.spec
    nr, nc = len(fig.rows), len(fig.cols)
    legend = fig.legend()
    xname = spec.xlabel.split(" (")[0]
    data: list[dict] = []
    layout: dict = {}
    annotations: list[dict] = []
    shown: set[str] = set()
    width = (1 - HGAP * (nc - 1)) / nc
    height = (1 - VGAP * (nr - 1)) / nr
    for i, r in enumerate(fig.rows):
        for j, c in enumerate(fig.cols):
            k = i * nc + j + 1
            ax = "" if k == 1 else str(k)
            x0 = j * (width + HGAP)
            y1 = 1 - i * (height + VGAP)
            panel = fig.panels.get((r, c))
            xaxis: dict = {
                "domain": [x0, x0 + width],
                "anchor": f"y{ax}",
                "type": "log" if spec.logx else "linear",
            }
            yaxis: dict = {
                "domain": [y1 - height, y1],
                "anchor": f"x{ax}",
                "type": "log" if spec.log_panel(r, c) else "linear",
                "exponentformat": "power",
            }
            if i == nr - 1:
                xaxis["title"] = {"text": spec.xlabel, "font": {"size": 11}}
            if j == 0:
                row = row_title(spec, r)
                text = f"{row}<br>{spec.ylabel}" if row else spec.ylabel
                yaxis["title"] = {"text": text, "font": {"size": 11}}
            if spec.logx:
                xaxis |= {"dtick": 1, "exponentformat": "power"}
            if panel is not None:
                xs = sorted({v for s in panel.series for v in s.x if math.isfinite(v)})
                ints = bool(xs) and all(float(v).is_integer() for v in xs)
                if not spec.logx and ints and len(xs) <= 12:
                    xaxis |= {"tickmode": "array", "tickvals": xs}
                if panel.logy and panel.bottom is not None and panel.top is not None:
                    lo, hi = math.log10(panel.bottom), math.log10(panel.top)
                    yaxis["range"] = [lo, hi]
                    yaxis["dtick"] = 1 if hi - lo >= 1.5 else "D2"  # 10^k, or 1, 2, 5 x 10^k
                data += _panel_traces(panel, ax, legend, xname, shown)
                if panel.hline is not None and xs:
                    data.append(_hline_trace(panel.hline, xs, ax, spec.hline_label, shown))
            layout[f"xaxis{ax}"] = xaxis
            layout[f"yaxis{ax}"] = yaxis
            if i == 0 and fig.col_titles.get(c):
                annotations.append(
                    {
                        "text": f"<b>{fig.col_titles[c]}</b>",
                        "xref": "paper",
                        "yref": "paper",
                        "x": x0 + width / 2,
                        "y": 1.0,
                        "xanchor": "center",
                        "yanchor": "bottom",
                        "showarrow": False,
                        "font": {"size": 12},
                    }
                )
    notes = [f"bars: {spec.interval}"]
    if any(math.isfinite(p) for s in fig.series for p in s.paper):
        notes.insert(0, "dashed: the paper's values")
    clipped = fig.clip_notes()
    if clipped:
        notes.append(f"▼ on a panel's bottom edge: a mean far below its axis ({len(clipped)})")
    plot_px = nr * ROW_PX
    annotations.append(
        {
            "text": "; ".join(notes),
            "xref": "paper",
            "yref": "paper",
            "x": 1,
            "y": 1 + 28 / plot_px,
            "xanchor": "right",
            "yanchor": "bottom",
            "showarrow": False,
            "font": {"size": 11, "color": "#444"},
        }
    )
    layout |= {
        "title": {"text": f"{fig.title}<br><sup>{fig.settings}</sup>", "x": 0.01},
        "annotations": annotations,
        "legend": {
            "orientation": "h",
            "y": -60 / plot_px,
            "yanchor": "top",
            "x": 0,
            "font": {"size": 11},
        },
        "margin": {"l": 80, "r": 20, "t": 100, "b": 30},
        "height": plot_px + FRAME_PX,
        "hovermode": "closest",
        **STYLE,
    }
    return {"data": data, "layout": layout}


def _panel_traces(
    panel: Panel, ax: str, legend: dict[str, str], xname: str, shown: set[str]
) -> list[dict]:
    """One panel's traces: per series ours (with error bars), the paper's (dashed) and
    the points below the axis (triangles on the bottom edge)."""
    out = []
    where = {"xaxis": f"x{ax}", "yaxis": f"y{ax}"}
    bottom = panel.bottom
    for s in panel.series:
        color = method_color(s.label)
        name = legend[s.label]
        low = [bottom is not None and math.isfinite(y) and y < bottom for y in s.y]
        x = [_json_num(v) for v in s.x]
        custom = [
            [_fmt(lo), _fmt(hi), _fmt(r), _fmt(p)]
            for lo, hi, r, p in zip(s.lo, s.hi, s.runs, s.paper, strict=True)
        ]
        meta = {"method": s.label, "panel": [str(panel.row), str(panel.col)]}
        trace = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": name,
            "legendgroup": s.label,
            "showlegend": s.label not in shown,
            "x": x,
            "y": [None if b else _json_num(v) for v, b in zip(s.y, low, strict=True)],
            "customdata": custom,
            "meta": meta | {"kind": "ours", "rows": s.source},
            "line": {"color": color, "width": 1.8},
            "marker": {"color": color, "size": 6, "symbol": method_symbol(s.label)},
            "hovertemplate": f"<b>{name}</b><br>{xname} = %{{x}}<br>ours = %{{y:.4g}}"
            " [%{customdata[0]}, %{customdata[1]}]<br>paper = %{customdata[3]}<br>"
            "runs = %{customdata[2]}<extra></extra>",
            **where,
        }
        shown.add(s.label)
        plus = [_short(h - v) for v, h in zip(s.y, s.hi, strict=True)]
        if any(v is not None for v in plus):
            trace["error_y"] = {
                "type": "data",
                "symmetric": False,
                "array": plus,
                "arrayminus": [_short(v - lo) for v, lo in zip(s.y, s.lo, strict=True)],
                "color": color,
                "thickness": 1,
                "width": 2,
            }
        out.append(trace)
        if any(low):
            keep = [i for i, b in enumerate(low) if b]
            out.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": f"{name}, below the axis",
                    "legendgroup": s.label,
                    "showlegend": False,
                    "x": [x[i] for i in keep],
                    "y": [bottom] * len(keep),
                    "customdata": [_fmt(s.y[i]) for i in keep],
                    "meta": meta | {"kind": "below", "rows": [s.source[i] for i in keep]},
                    "cliponaxis": False,
                    "marker": {"color": color, "size": 10, "symbol": "triangle-down"},
                    "hovertemplate": f"<b>{name}</b><br>{xname} = %{{x}}<br>ours = "
                    "%{customdata} (below the axis)<extra></extra>",
                    **where,
                }
            )
        paper = [_json_num(v) for v in s.paper]
        if any(v is not None for v in paper):
            out.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"paper · {name}",
                    "legendgroup": s.label,
                    "showlegend": False,
                    "x": x,
                    "y": paper,
                    "meta": meta | {"kind": "paper", "rows": s.source},
                    "line": {"color": color, "width": 1.4, "dash": "dash"},
                    "hovertemplate": f"<b>paper · {name}</b><br>{xname} = %{{x}}"
                    "<br>paper = %{y:.4g}<extra></extra>",
                    **where,
                }
            )
    return out


def _hline_trace(value: float, xs: list[float], ax: str, label: str, shown: set[str]) -> dict:
    """A panel's dotted line (e.g. the exact kernel's score) across its x range."""
    trace = {
        "type": "scatter",
        "mode": "lines",
        "name": label,
        "legendgroup": "hline",
        "showlegend": "hline" not in shown,
        "x": [xs[0], xs[-1]],
        "y": [value, value],
        "meta": {"method": "", "panel": [], "kind": "hline", "rows": []},
        "line": {"color": "#4d4d4d", "width": 1.2, "dash": "dot"},
        "hovertemplate": f"{label} = %{{y:.4g}}<extra></extra>",
        "xaxis": f"x{ax}",
        "yaxis": f"y{ax}",
    }
    shown.add("hline")
    return trace


def ratio_box(ratios: pd.DataFrame, key: str, what: str, base: str = BASE_METHOD) -> dict:
    """Per method, a box plot of its ratios to ``base`` over the page's cells."""
    data = []
    keys = list(ratios.columns.drop(["method_label", "ratio", "ratio_low", "ratio_high"]))
    for method, r in sorted(ratios.groupby("method_label"), key=lambda mr: label_rank(mr[0])):
        cells = r[[*keys, "ratio", "ratio_low", "ratio_high"]].itertuples(index=False)
        text = [
            " · ".join(facet_label(c, v) for c, v in zip(keys, row, strict=True))
            + f"<br>ratio {q:.3g} [{lo:.3g}, {hi:.3g}]"
            for *row, q, lo, hi in cells
        ]
        data.append(
            {
                "type": "box",
                "name": method,
                "y": [_json_num(v) for v in r["ratio"]],
                "text": text,
                "boxpoints": "all",
                "jitter": 0.4,
                "pointpos": 0,
                "marker": {"color": method_color(method), "size": 4},
                "line": {"color": method_color(method)},
                "meta": {"method": method, "kernel": ""},
                "hovertemplate": "<b>" + method + "</b><br>%{text}<extra></extra>",
            }
        )
    layout = {
        "title": {
            "text": f"{what} relative to {base}, across datasets<br><sup>each point a cell: "
            f"mean / {base}'s mean; 1 = as {base}</sup>",
            "x": 0.02,
        },
        "yaxis": {
            "title": {"text": f"mean / mean of {base}"},
            "type": "log",
            "exponentformat": "power",
        },
        "shapes": [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": 1,
                "y1": 1,
                "line": {"color": "#444", "dash": "dash", "width": 1},
            }
        ],
        "showlegend": False,
        "margin": MARGIN,
        "height": 400,
        **STYLE,
    }
    return {"data": data, "layout": layout, "key": key}
