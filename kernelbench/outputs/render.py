"""The matplotlib renderer: :func:`draw` renders a :class:`~kernelbench.outputs.spec.SpecFigure`
(every PNG, PDF and SVG: the committed baselines, ``kernelbench plot``, the site's
fallbacks), :func:`save_figure` writes it, :func:`finish` draws what a figure function
left pending (:class:`~kernelbench.outputs.generic.FigureOutput`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kernelbench.outputs.generic import FigureOutput
from kernelbench.outputs.spec import Panel, SpecFigure, row_title
from kernelbench.outputs.style import method_style

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def save_figure(fig: Figure, out: Path, stem: str, formats: Sequence[str]) -> list[Path]:
    """Save ``fig`` as ``<out>/<stem>.<fmt>`` for each format and close it."""
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = [out / f"{stem}.{fmt}" for fmt in formats]
    try:
        for path in written:
            fig.savefig(path, dpi=150, bbox_inches="tight")
    finally:
        plt.close(fig)
    return written


def finish(result: FigureOutput) -> FigureOutput:
    """``result`` with its pending figures drawn and saved (their files listed first)."""
    written = []
    for fig, out, stem, formats in result.pending:
        written += save_figure(draw(fig), Path(out), stem, formats)
    return FigureOutput([*written, *result.written], result.notes)


#: How the paper's values, a mean below the axis and the dotted line are drawn.
PAPER_LINE = {"ls": "--", "lw": 1.1, "mfc": "none", "ms": 6, "alpha": 0.9}
BELOW_MARKER = {"ls": "none", "marker": "v", "ms": 8, "clip_on": False}
HLINE = {"color": "0.3", "ls": ":", "lw": 1.2}


def draw(fig: SpecFigure) -> Figure:
    """The matplotlib rendering of ``fig``, as
    :func:`kernelbench.outputs.plotly_render.plotly_figure` draws it: the panel grid, each
    series with its band, the paper's values dashed, the panel's dotted line, log axes with
    ticks at powers of ten, values below a log panel's range as triangles on its bottom edge
    (counted in the caption). Each line's ``gid`` is ``kind<TAB>series<TAB>row<TAB>column``
    (kind: ours, below, paper), as the Plotly traces' meta."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    spec = fig.spec
    nr, nc = len(fig.rows), len(fig.cols)
    size = (3.6 * nc + 0.6, 2.8 * nr + 1.4)
    f, axes = plt.subplots(nr, nc, figsize=size, squeeze=False, layout="constrained")
    handles: dict[str, Line2D] = {}
    for i, r in enumerate(fig.rows):
        for j, c in enumerate(fig.cols):
            ax, panel = axes[i, j], fig.panels.get((r, c))
            if i == 0 and fig.col_titles.get(c):
                ax.set_title(fig.col_titles[c], fontsize=10)
            if j == 0:
                row = row_title(spec, r)
                ax.set_ylabel(f"{row}\n{spec.ylabel}" if row else spec.ylabel)
            if i == nr - 1:
                ax.set_xlabel(spec.xlabel)
            if panel is None:
                ax.text(0.5, 0.5, "no results", ha="center", va="center", transform=ax.transAxes)
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            handles |= {k: v for k, v in _draw_panel(ax, panel).items() if k not in handles}
            if spec.logx:
                ax.set_xscale("log")
            _x_ticks(ax, [x for s in panel.series for x in s.x], spec.logx)
            ax.grid(True, which="major", alpha=0.3)
    legend = fig.legend()
    items = [(handles[m], legend[m]) for m in fig.methods if m in handles]
    notes = [
        *dict.fromkeys(f"{fig.title} · {fig.settings}".split(" · ")),
        f"bands: {spec.interval}",
    ]
    if any(math.isfinite(p) for s in fig.series for p in s.paper):
        items.append((Line2D([], [], color="0.3", **PAPER_LINE), "the paper's values"))
        notes.append("dashed: the paper's values")
    if spec.hline_label and any(p.hline is not None for p in fig.panels.values()):
        items.append((Line2D([], [], **HLINE), spec.hline_label))
    if clipped := fig.clip_notes():
        items.append((Line2D([], [], color="0.3", **BELOW_MARKER), "a mean far below the axis"))
        notes.append(f"▼ on a panel's bottom edge: a mean far below its axis ({len(clipped)})")
    hs, names = zip(*items, strict=True) if items else ((), ())
    ncol = max(1, min(len(hs), 2 * nc + 1))
    f.legend(hs, names, loc="outside lower center", ncol=ncol, fontsize=9)
    f.suptitle(" · ".join(n for n in notes if n), fontsize=9, color="0.3")
    return f


def _draw_panel(ax: object, panel: Panel) -> dict[str, object]:
    """Draw ``panel``'s series, paper values, edge markers and dotted line on ``ax``; the
    line of each series."""
    handles = {}
    bottom = panel.bottom
    for s in panel.series:
        colour, marker = method_style(s.label)
        gid = f"\t{s.label}\t{panel.row}\t{panel.col}"
        x, y, lo, hi, paper = (np.asarray(v, dtype=float) for v in (s.x, s.y, s.lo, s.hi, s.paper))
        low = np.isfinite(y) & (y < bottom) if bottom is not None else np.zeros(len(y), bool)
        shown = np.where(low, np.nan, y)
        (ln,) = ax.plot(x, shown, color=colour, marker=marker, ms=5, lw=1.5, gid="ours" + gid)
        handles[s.label] = ln
        band = np.isfinite(lo) & np.isfinite(hi) & ~low
        if band.any():
            lo = np.where(lo > 0, lo, y) if panel.logy else lo
            if len(x) == 1:  # one x: the interval as a bar, not a band
                ax.vlines(x, lo, hi, color=colour, lw=2, alpha=0.4)
            else:
                ax.fill_between(x, lo, hi, where=band, color=colour, alpha=0.2, lw=0)
        if low.any():
            ax.plot(
                x[low], np.full(low.sum(), bottom), color=colour, gid="below" + gid, **BELOW_MARKER
            )
        if (has := np.isfinite(paper)).any():
            ax.plot(
                x[has], paper[has], color=colour, marker=marker, gid="paper" + gid, **PAPER_LINE
            )
    if panel.hline is not None:
        ax.axhline(panel.hline, gid="hline", **HLINE)
    if panel.logy:
        ax.set_yscale("log")
        if bottom is not None:
            ax.set_ylim(bottom, panel.top)
    return handles


def _x_ticks(ax: object, xs: list[float], log: bool) -> None:
    """Ticks at the x values when there are few (integers on a linear axis), else
    matplotlib's (integers where every x is one)."""
    from matplotlib.ticker import MaxNLocator

    values = sorted({float(v) for v in xs if math.isfinite(v)})
    ints = all(v.is_integer() for v in values)
    if values and len(values) <= 8 and (log or ints):
        ax.set_xticks(values, [f"{v:g}" for v in values])
        ax.set_xticks([], minor=True)
        if log and len(values) > 4:
            ax.tick_params(axis="x", labelrotation=45)
        if len(values) == 1 and not log:
            ax.set_xlim(values[0] - 1, values[0] + 1)
    elif ints and not log:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def draw_files(fig: SpecFigure, out_dir: Path) -> None:
    """Write ``<out_dir>/<fig.key>.png`` and ``.pdf`` (:func:`draw`): the site's static
    figures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    f = draw(fig)
    title = {"Title": fig.title}
    f.savefig(out_dir / f"{fig.key}.png", dpi=80, metadata={**title, "Software": "kernelbench"})
    pdf = {**title, "Subject": fig.settings, "Creator": "kernelbench", "CreationDate": None}
    f.savefig(out_dir / f"{fig.key}.pdf", metadata=pdf)
    plt.close(f)
