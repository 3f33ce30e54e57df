"""A site figure drawn with matplotlib: the PNG (the page's fallback without JavaScript)
and the PDF (the download), with its legend and settings written on it."""

from __future__ import annotations

import math
from pathlib import Path

from kernelbench.drawing import kernel_name
from kernelbench.site.figures import FigureData, kernel_dash, method_color


def draw(fig: FigureData, out_dir: Path, formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """Write ``<out_dir>/<fig.key>.<fmt>`` for each format; the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    f, ax = plt.subplots(figsize=(9.0, 4.4))
    # fixed margins, the legend right of the axes (a layout engine costs more than the drawing)
    f.subplots_adjust(left=0.09, right=0.70, top=0.84, bottom=0.12)
    kernels = fig.kernels
    seen: set[str] = set()
    has_paper = False
    for s in fig.series:
        color = method_color(s.method)
        style = kernel_dash(s.kernel)[1]
        lo = [y - v if math.isfinite(v) else 0.0 for y, v in zip(s.y, s.lo, strict=True)]
        hi = [v - y if math.isfinite(v) else 0.0 for y, v in zip(s.y, s.hi, strict=True)]
        name = s.method if s.method not in seen else "_nolegend_"
        seen.add(s.method)
        ax.errorbar(
            s.x,
            s.y,
            yerr=[lo, hi],
            color=color,
            ls=style,
            marker="o",
            ms=3,
            lw=1.4,
            capsize=2,
            label=name,
        )
        if any(math.isfinite(p) for p in s.paper):
            has_paper = True
            ax.plot(s.x, s.paper, ls="none", marker="x", ms=6, color=color)
    # the kernels' line styles and the paper's marker, in grey, after the methods
    if len(kernels) > 1:
        for k in kernels:
            ax.plot([], [], color="0.4", ls=kernel_dash(k)[1], label=kernel_name(k))
    if has_paper:
        ax.plot([], [], color="0.4", ls="none", marker="x", label="the paper's value")
    if fig.logx:
        ax.set_xscale("log")
    if fig.logy:
        ax.set_yscale("log")
    ax.set_xlabel(fig.xlabel)
    ax.set_ylabel(fig.ylabel)
    ax.set_title(f"{fig.title}\n{fig.settings}", fontsize=9, loc="left")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    paths = []
    for fmt in formats:
        path = out_dir / f"{fig.key}.{fmt}"
        f.savefig(path, dpi=90 if fmt == "png" else None, metadata=_metadata(fmt, fig))
        paths.append(path)
    plt.close(f)
    return paths


def draw_all(jobs: list[tuple[FigureData, Path]]) -> None:
    """:func:`draw` each (figure, directory): one worker's share of a site's figures."""
    for fig, out_dir in jobs:
        draw(fig, out_dir)


def _metadata(fmt: str, fig: FigureData) -> dict | None:
    if fmt == "pdf":
        return {
            "Title": fig.title,
            "Subject": fig.settings,
            "Creator": "kernelbench",
            "CreationDate": None,
        }
    if fmt == "png":
        return {"Title": fig.title, "Software": "kernelbench"}
    return None
