"""The site's figures as data: one per facet value of a results table, a series per
method and kernel; drawn with Plotly (:func:`plotly_figure`, the page's interactive
figure) and with matplotlib (:func:`draw`: the PNG fallback and the PDF download)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

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
#: How :func:`draw` draws a series (its colour and line style: the method's and kernel's).
ERRORBAR = {"marker": "o", "ms": 3, "lw": 1.4, "capsize": 2}


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

    def select(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``df`` that ``where`` keeps."""
        for col, val in self.where:
            if col in df:
                df = df[df[col] == val]
        return df


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
    """One figure: its id, title, the settings written on it, its spec (axes) and series."""

    key: str
    title: str
    settings: str
    spec: FigureSpec
    series: list[Series] = field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(s.method for s in self.series))

    @property
    def kernels(self) -> list[str]:
        return list(dict.fromkeys(s.kernel for s in self.series if s.kernel))


def _runs_text(runs: pd.Series) -> str:
    vals = sorted({int(r) for r in runs.dropna()})
    if not vals:
        return "runs ?"
    return f"runs {vals[0]}" if len(vals) == 1 else f"runs {vals[0]}-{vals[-1]}"


def build_figures(df: pd.DataFrame, spec: FigureSpec, prefix: str) -> list[FigureData]:
    """The figures of ``df`` (a results table: one row per cell) under ``spec``."""
    df = spec.select(df)
    if df.empty or spec.x not in df or spec.y not in df:
        return []
    if spec.paper is not None:
        df = df.assign(paper=spec.paper(df).to_numpy())
    nan = pd.Series(np.nan, index=df.index)
    y = df[spec.y].astype(float)
    if spec.lo and spec.hi and spec.lo in df and spec.hi in df:
        lo, hi = df[spec.lo].astype(float), df[spec.hi].astype(float)
    elif "sem" in df:
        lo, hi = y - Z95 * df["sem"], y + Z95 * df["sem"]
    else:
        lo = hi = nan
    df = df.assign(
        _y=y,
        _lo=lo,
        _hi=hi,
        _runs=df[spec.runs] if spec.runs in df else nan,
        _paper=df["paper"] if "paper" in df else nan,
        _kernel=df["kernel"].fillna("").astype(str) if "kernel" in df else "",
    )
    columns = [spec.x, "_y", "_lo", "_hi", "_runs", "_paper"]
    facets = [f for f in spec.facets if f in df]
    groups = list(df.groupby(facets, sort=True)) if facets else [((), df)]
    if "dataset" in facets and "d" in df:
        rank = {ds: i for i, ds in enumerate(dataset_order(df))}
        at = facets.index("dataset")
        groups.sort(key=lambda kg: (*kg[0][:at], rank.get(kg[0][at], len(rank)), *kg[0][at + 1 :]))
    out = []
    for i, (key, g) in enumerate(groups):
        parts = [label(c, v) for c, v in zip(facets, key, strict=True)]
        kernels = sorted(g["kernel"].dropna().unique(), key=kernel_rank) if "kernel" in g else []
        kernel = ["kernel " + ", ".join(kernel_name(k) for k in kernels)] if kernels else []
        fig = FigureData(
            key=f"{prefix}-{i}",
            title=(spec.title + ": " if spec.title else "") + " · ".join(parts),
            settings=" · ".join([*parts, *kernel, _runs_text(g["_runs"])]),
            spec=spec,
        )
        lines = g.groupby(["method_label", "_kernel"])
        for (method, kern), s in sorted(
            lines, key=lambda mk: (label_rank(mk[0][0]), kernel_rank(mk[0][1]))
        ):
            s = s.sort_values(spec.x)
            values = [s[c].astype(float).tolist() for c in columns]
            fig.series.append(Series(str(method), kern, *values))
        out.append(fig)
    return out


def _json_num(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else v


def plotly_figure(fig: FigureData) -> dict:
    """The Plotly JSON of a figure: hover gives the value, its interval, the paper's value
    and the runs; every trace carries ``meta`` {method, kernel} for the page's toggles."""
    data: list[dict] = []
    kernels = fig.kernels
    for s in fig.series:
        color = method_color(s.method)
        name = f"{s.method} · {kernel_name(s.kernel)}" if len(kernels) > 1 else s.method
        x, paper = [_json_num(v) for v in s.x], [_json_num(v) for v in s.paper]
        custom = [
            [_json_num(lo), _json_num(hi), _json_num(r), "–" if p is None else f"{p:.4g}"]
            for lo, hi, r, p in zip(s.lo, s.hi, s.runs, paper, strict=True)
        ]
        err_plus = [_json_num(h - y) for y, h in zip(s.y, s.hi, strict=True)]
        # one legend entry per method (its kernels: line styles, named on the figure)
        trace = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": s.method,
            "legendgroup": s.method,
            "showlegend": all(t["legendgroup"] != s.method for t in data),
            "x": x,
            "y": [_json_num(v) for v in s.y],
            "customdata": custom,
            "meta": {"method": s.method, "kernel": s.kernel},
            "line": {"color": color, "dash": kernel_dash(s.kernel)[0], "width": 2},
            "marker": {"color": color, "size": 6},
            "hovertemplate": (
                f"<b>{name}</b><br>{fig.spec.xlabel.split(' (')[0]} = %{{x}}<br>"
                "ours = %{y:.4g} [%{customdata[0]:.4g}, %{customdata[1]:.4g}]<br>"
                "paper = %{customdata[3]}<br>runs = %{customdata[2]}<extra></extra>"
            ),
        }
        if any(v is not None for v in err_plus):
            trace["error_y"] = {
                "type": "data",
                "symmetric": False,
                "array": err_plus,
                "arrayminus": [_json_num(y - lo) for y, lo in zip(s.y, s.lo, strict=True)],
                "color": color,
                "thickness": 1,
                "width": 3,
            }
        data.append(trace)
        if any(p is not None for p in paper):
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": f"paper · {name}",
                    "legendgroup": s.method,
                    "showlegend": False,
                    "x": x,
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
        words = {"solid": "solid", "dash": "dashed", "dot": "dotted", "dashdot": "dash-dot"}
        styles = ", ".join(f"{words[kernel_dash(k)[0]]} {kernel_name(k)}" for k in kernels)
        note = f"{styles}; {note}"
    xs = sorted({v for s in fig.series for v in s.x if math.isfinite(v)})
    xaxis: dict = {"title": {"text": fig.spec.xlabel}, "type": "log" if fig.spec.logx else "linear"}
    if not fig.spec.logx and xs and len(xs) <= 12 and all(float(v).is_integer() for v in xs):
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
        "yaxis": {"title": {"text": fig.spec.ylabel}, "type": "log" if fig.spec.logy else "linear"},
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
    df = spec.select(df)
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
    keys = list(ratios.columns.drop(["method_label", "ratio", "ratio_low", "ratio_high"]))
    for method, r in sorted(ratios.groupby("method_label"), key=lambda mr: label_rank(mr[0])):
        cells = r[[*keys, "ratio", "ratio_low", "ratio_high"]].itertuples(index=False)
        text = [
            " · ".join(
                label(c, v) if c in ("dataset", "kernel") else f"{c} {v}"
                for c, v in zip(keys, row, strict=True)
            )
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


def draw(fig: FigureData, out_dir: Path) -> None:
    """Write ``<out_dir>/<fig.key>.png`` and ``.pdf``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    f, ax = plt.subplots(figsize=(9.0, 4.4))
    # fixed margins, the legend right of the axes (a layout engine costs more than the drawing)
    f.subplots_adjust(left=0.09, right=0.70, top=0.84, bottom=0.12)
    seen: set[str] = set()
    for s in fig.series:
        color, style = method_color(s.method), kernel_dash(s.kernel)[1]
        lo = [y - v if math.isfinite(v) else 0.0 for y, v in zip(s.y, s.lo, strict=True)]
        hi = [v - y if math.isfinite(v) else 0.0 for y, v in zip(s.y, s.hi, strict=True)]
        name = s.method if s.method not in seen else "_nolegend_"
        seen.add(s.method)
        ax.errorbar(s.x, s.y, yerr=[lo, hi], color=color, ls=style, **ERRORBAR, label=name)
        if any(math.isfinite(p) for p in s.paper):
            ax.plot(s.x, s.paper, ls="none", marker="x", ms=6, color=color)
    # the kernels' line styles and the paper's marker, in grey, after the methods
    if len(fig.kernels) > 1:
        for k in fig.kernels:
            ax.plot([], [], color="0.4", ls=kernel_dash(k)[1], label=kernel_name(k))
    if any(math.isfinite(p) for s in fig.series for p in s.paper):
        ax.plot([], [], color="0.4", ls="none", marker="x", label="the paper's value")
    if fig.spec.logx:
        ax.set_xscale("log")
    if fig.spec.logy:
        ax.set_yscale("log")
    ax.set_xlabel(fig.spec.xlabel)
    ax.set_ylabel(fig.spec.ylabel)
    ax.set_title(f"{fig.title}\n{fig.settings}", fontsize=9, loc="left")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    title = {"Title": fig.title}
    f.savefig(out_dir / f"{fig.key}.png", dpi=90, metadata={**title, "Software": "kernelbench"})
    pdf = {**title, "Subject": fig.settings, "Creator": "kernelbench", "CreationDate": None}
    f.savefig(out_dir / f"{fig.key}.pdf", metadata=pdf)
    plt.close(f)
