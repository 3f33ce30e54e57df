"""The site's figures as data: one per facet value of a results table, a series per
method and kernel; drawn with Plotly (:func:`plotly_figure`) and :mod:`.static`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kernelbench.drawing import (
    dataset_name,
    dataset_order,
    kernel_name,
    kernel_rank,
    label_rank,
    method_style,
)

#: Line style of each kernel (Plotly dash name, matplotlib linestyle).
DASHES = {"rbf": ("solid", "-"), "arccos0": ("dash", "--"), "arccos1": ("dot", ":")}
#: The method every ratio is taken against.
BASE_METHOD = "rff"
#: Two-sided normal quantile of the drawn intervals (95%).
Z95 = 1.959963984540054
#: The layout both Plotly figures end with.
STYLE = {"template": "plotly_white", "font": {"family": "Helvetica, Arial, sans-serif"}}
MARGIN = {"l": 70, "r": 20, "t": 70, "b": 55}


def method_color(method: str) -> str:
    """A method's colour as ``kernelbench plot`` draws it, in hex."""
    from matplotlib.colors import to_hex

    return to_hex(method_style(method.split()[0])[0])


def kernel_dash(kernel: str) -> tuple[str, str]:
    return DASHES.get(kernel, ("dashdot", "-."))


def label(column: str, value: object) -> str:
    """A facet value as a reader knows it (LETTER, Gaussian, ...)."""
    if column == "dataset":
        return dataset_name(value)
    if column == "kernel":
        return kernel_name(str(value))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{column} {value}"


@dataclass(frozen=True)
class FigureSpec:
    """How a results table is drawn: x against y, one figure per facet value, one series
    per method (and kernel). ``lo``/``hi`` name interval columns (else mean ± 1.96 sem);
    ``paper`` adds the paper's value of each point (a ``paper`` column)."""

    table: str
    x: str = "n"
    y: str = "mean"
    facets: tuple[str, ...] = ("dataset",)
    where: tuple[tuple[str, object], ...] = ()
    xlabel: str = "n (D = n (d + 1) or as the paper)"
    ylabel: str = "mean"
    logx: bool = False
    logy: bool = False
    lo: str | None = None
    hi: str | None = None
    runs: str = "runs"
    paper: Callable[[pd.DataFrame], pd.Series] | None = None
    title: str = ""


@dataclass
class Series:
    """One line: a method (and kernel), its points, interval, runs and the paper's values."""

    method: str
    kernel: str
    x: list[float]
    y: list[float]
    lo: list[float]
    hi: list[float]
    runs: list[float]
    paper: list[float]


@dataclass
class FigureData:
    """One figure: its id, title, the settings written on it, axes and series."""

    key: str
    title: str
    settings: str
    xlabel: str
    ylabel: str
    logx: bool
    logy: bool
    series: list[Series] = field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(s.method for s in self.series))

    @property
    def kernels(self) -> list[str]:
        return list(dict.fromkeys(s.kernel for s in self.series if s.kernel))


def _num(values: Sequence[float] | pd.Series) -> list[float]:
    return [float(v) for v in values]


def _runs_text(runs: pd.Series) -> str:
    vals = sorted({int(r) for r in runs.dropna()})
    if not vals:
        return "runs ?"
    return f"runs {vals[0]}" if len(vals) == 1 else f"runs {vals[0]}-{vals[-1]}"


def build_figures(df: pd.DataFrame, spec: FigureSpec, prefix: str) -> list[FigureData]:
    """The figures of ``df`` (a results table: one row per cell) under ``spec``."""
    for col, val in spec.where:
        if col in df:
            df = df[df[col] == val]
    if df.empty or spec.x not in df or spec.y not in df:
        return []
    if spec.paper is not None:
        df = df.assign(paper=spec.paper(df).to_numpy())
    facets = [f for f in spec.facets if f in df]
    groups = list(df.groupby(facets, sort=True)) if facets else [((), df)]
    if "dataset" in facets and "d" in df:
        rank = {ds: i for i, ds in enumerate(dataset_order(df))}
        at = facets.index("dataset")

        def order(item: tuple) -> tuple:
            key = item[0] if isinstance(item[0], tuple) else (item[0],)
            return (*key[:at], rank.get(key[at], len(rank)), *key[at + 1 :])

        groups.sort(key=order)
    out = []
    for i, (key, g) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        parts = [label(c, v) for c, v in zip(facets, key, strict=True)]
        kernels = sorted(g["kernel"].dropna().unique(), key=kernel_rank) if "kernel" in g else []
        kernel = ["kernel " + ", ".join(kernel_name(k) for k in kernels)] if kernels else []
        settings = " · ".join(
            [*parts, *kernel, _runs_text(g[spec.runs]) if spec.runs in g else "runs ?"]
        )
        fig = FigureData(
            key=f"{prefix}-{i}",
            title=(spec.title + ": " if spec.title else "") + " · ".join(parts),
            settings=settings,
            xlabel=spec.xlabel,
            ylabel=spec.ylabel,
            logx=spec.logx,
            logy=spec.logy,
        )
        kern = g["kernel"] if "kernel" in g else pd.Series("", index=g.index)
        g = g.assign(_kernel=kern.fillna("").astype(str))
        for method in sorted(g["method_label"].unique(), key=label_rank):
            for kernel in sorted(
                g.loc[g["method_label"] == method, "_kernel"].unique(), key=kernel_rank
            ):
                s = g[(g["method_label"] == method) & (g["_kernel"] == kernel)]
                s = s.sort_values(spec.x)
                y = s[spec.y].astype(float)
                if spec.lo and spec.hi and spec.lo in s and spec.hi in s:
                    lo, hi = s[spec.lo].astype(float), s[spec.hi].astype(float)
                elif "sem" in s:
                    lo, hi = y - Z95 * s["sem"], y + Z95 * s["sem"]
                else:
                    lo = hi = pd.Series(np.nan, index=s.index)
                runs = s[spec.runs] if spec.runs in s else pd.Series(np.nan, index=s.index)
                paper = s["paper"] if "paper" in s else pd.Series(np.nan, index=s.index)
                values = (s[spec.x], y, lo, hi, runs, paper)
                fig.series.append(Series(str(method), kernel, *map(_num, values)))
        out.append(fig)
    return out


def _json_num(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else v


def plotly_figure(fig: FigureData) -> dict:
    """The Plotly JSON of a figure: hover gives the value, its interval, the paper's value
    and the runs; every trace carries ``meta`` {method, kernel} for the page's toggles."""
    data = []
    kernels = fig.kernels
    in_legend: set[str] = set()
    for s in fig.series:
        color = method_color(s.method)
        dash = kernel_dash(s.kernel)[0]
        name = f"{s.method} · {kernel_name(s.kernel)}" if len(kernels) > 1 else s.method
        paper = [_json_num(v) for v in s.paper]
        custom = [
            [_json_num(lo), _json_num(hi), _json_num(r), "–" if p is None else f"{p:.4g}"]
            for lo, hi, r, p in zip(s.lo, s.hi, s.runs, paper, strict=True)
        ]
        err_plus = [_json_num(h - y) for y, h in zip(s.y, s.hi, strict=True)]
        err_minus = [_json_num(y - lo) for y, lo in zip(s.y, s.lo, strict=True)]
        has_err = any(v is not None for v in err_plus)
        # one legend entry per method (its kernels: line styles, named on the figure)
        trace = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": s.method,
            "legendgroup": s.method,
            "showlegend": s.method not in in_legend,
            "x": [_json_num(v) for v in s.x],
            "y": [_json_num(v) for v in s.y],
            "customdata": custom,
            "meta": {"method": s.method, "kernel": s.kernel},
            "line": {"color": color, "dash": dash, "width": 2},
            "marker": {"color": color, "size": 6},
            "hovertemplate": (
                f"<b>{name}</b><br>{fig.xlabel.split(' (')[0]} = %{{x}}<br>"
                "ours = %{y:.4g} [%{customdata[0]:.4g}, %{customdata[1]:.4g}]<br>"
                "paper = %{customdata[3]}<br>runs = %{customdata[2]}<extra></extra>"
            ),
        }
        if has_err:
            trace["error_y"] = {
                "type": "data",
                "symmetric": False,
                "array": err_plus,
                "arrayminus": err_minus,
                "color": color,
                "thickness": 1,
                "width": 3,
            }
        in_legend.add(s.method)
        data.append(trace)
        if any(p is not None for p in paper):
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": f"paper · {name}",
                    "legendgroup": s.method,
                    "showlegend": False,
                    "x": [_json_num(v) for v in s.x],
                    "y": paper,
                    "meta": {"method": s.method, "kernel": s.kernel, "paper": True},
                    "marker": {
                        "color": color,
                        "symbol": "x-thin-open",
                        "size": 10,
                        "line": {"color": color, "width": 2},
                    },
                    "hovertemplate": f"<b>paper · {name}</b><br>x = %{{x}}<br>paper = %{{y:.4g}}"
                    "<extra></extra>",
                }
            )
    has_paper = any(math.isfinite(p) for s in fig.series for p in s.paper)
    note = "× the paper's value; bars: 95% intervals" if has_paper else "bars: 95% intervals"
    if len(kernels) > 1:
        styles = {"solid": "solid", "dash": "dashed", "dot": "dotted", "dashdot": "dash-dot"}
        note = (
            ", ".join(f"{styles[kernel_dash(k)[0]]} {kernel_name(k)}" for k in kernels)
            + "; "
            + note
        )
    xs = sorted({v for s in fig.series for v in s.x if math.isfinite(v)})
    xaxis: dict = {"title": {"text": fig.xlabel}, "type": "log" if fig.logx else "linear"}
    if not fig.logx and xs and len(xs) <= 12 and all(float(v).is_integer() for v in xs):
        xaxis |= {"tickmode": "array", "tickvals": xs}
    layout = {
        "title": {"text": f"{fig.title}<br><sup>{fig.settings}</sup>", "x": 0.02},
        "annotations": [
            {
                "text": note,
                "xref": "paper",
                "yref": "paper",
                "x": 1,
                "y": 1.02,
                "xanchor": "right",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 11, "color": "#555"},
            }
        ],
        "xaxis": xaxis,
        "yaxis": {"title": {"text": fig.ylabel}, "type": "log" if fig.logy else "linear"},
        "legend": {"font": {"size": 11}},
        "margin": MARGIN,
        "height": 430,
        **STYLE,
    }
    return {"data": data, "layout": layout}


def ratio_table(df: pd.DataFrame, spec: FigureSpec, base: str = BASE_METHOD) -> pd.DataFrame:
    """Every cell's mean over ``base``'s mean in the same cell (same facets, kernel and x),
    with a 95% interval from the delta method on the log ratio:
    exp(±1.96 sqrt((sem_m / mean_m)^2 + (sem_b / mean_b)^2)). Empty without ``base``."""
    for col, val in spec.where:
        if col in df:
            df = df[df[col] == val]
    if df.empty or base not in set(df["method_label"]) or spec.y not in df:
        return pd.DataFrame()
    keys = [c for c in (*spec.facets, "kernel", spec.x) if c in df]
    sem = df["sem"] if "sem" in df else pd.Series(np.nan, index=df.index)
    t = df.assign(_sem=sem)[[*keys, "method_label", spec.y, "_sem"]]
    b = t[t["method_label"] == base].drop(columns="method_label")
    b = b.rename(columns={spec.y: "_base", "_sem": "_base_sem"})
    m = t[t["method_label"] != base].merge(b, on=keys, how="inner")
    ratio = m[spec.y] / m["_base"]
    half = Z95 * np.sqrt((m["_sem"] / m[spec.y]) ** 2 + (m["_base_sem"] / m["_base"]) ** 2)
    out = m[[*keys, "method_label"]].copy()
    out["ratio"] = ratio
    out["ratio_low"] = ratio * np.exp(-half)
    out["ratio_high"] = ratio * np.exp(half)
    return out[np.isfinite(out["ratio"])].reset_index(drop=True)


def ratio_box(ratios: pd.DataFrame, key: str, what: str, base: str = BASE_METHOD) -> dict:
    """Per method, a box plot of its ratios to ``base`` over the page's cells."""
    data = []
    keys = [
        c for c in ratios.columns if c not in ("method_label", "ratio", "ratio_low", "ratio_high")
    ]
    for method in sorted(ratios["method_label"].unique(), key=label_rank):
        r = ratios[ratios["method_label"] == method]
        cells = zip(
            r[keys].itertuples(index=False),
            r["ratio"],
            r["ratio_low"],
            r["ratio_high"],
            strict=True,
        )
        text = [
            " · ".join(
                label(c, v) if c in ("dataset", "kernel") else f"{c} {v}"
                for c, v in zip(keys, row, strict=True)
            )
            + f"<br>ratio {q:.3g} [{lo:.3g}, {hi:.3g}]"
            for row, q, lo, hi in cells
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
        "yaxis": {"title": {"text": f"mean / mean of {base}"}, "type": "log"},
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
