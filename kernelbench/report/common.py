"""What a section of REPRODUCTION.md is, and small formatting helpers shared by sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: The repository root (sections read committed tables relative to it).
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Summary:
    """One row of the report's summary table.

    Cell-by-cell comparisons fill the counts; claim checks fill ``claims`` and
    ``claims_hold`` (a paper claim checked on our numbers).
    """

    cells: int = 0
    reproduced: int = 0
    known: int = 0
    deviate: int = 0
    not_run: int = 0
    claims: int = 0
    claims_hold: int = 0
    note: str = ""


@dataclass
class Section:
    """A section: its anchor, title, summary row, body and appendix (Markdown lines)."""

    key: str
    title: str
    summary: Summary
    body: list[str]
    appendix: list[str] = field(default_factory=list)


def fmt(x: float | None, spec: str = ".4g") -> str:
    """A number for a table ('–' for missing or non-finite)."""
    return "–" if x is None or not np.isfinite(x) else format(x, spec)


def rel(p: Path | str | None) -> str:
    """A path relative to the repository root, for the report."""
    if p is None:
        return ""
    try:
        return str(Path(p).resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def pooled_lines(
    pooled, names: dict[str, str] | None = None, kernels: dict[str, str] | None = None
):
    """The pooled bias test of ``kernelbench verify`` (one row per family: dataset,
    kernel, method across n) as (per-dataset counts, every family) Markdown tables."""
    from kernelbench.verify import DEVIATES, KNOWN, REPRODUCED

    names, kernels = names or {}, kernels or {}
    v = pooled["verdict"].astype(str)
    head = [
        "| dataset | families | reproduced | known deviations | deviate | largest \\|z\\| "
        "(family) |",
        "|---|---|---|---|---|---|",
    ]
    for ds in dict.fromkeys(pooled["dataset"]):
        sel = pooled["dataset"] == ds
        g, gv = pooled[sel], v[sel]
        gated = g[~gv.str.startswith(KNOWN)]
        top = gated.loc[gated["z"].abs().idxmax()] if len(gated) else None
        where = (
            f"{fmt(abs(top['z']), '.2f')} ({kernels.get(top['kernel'], top['kernel'])} "
            f"`{top['method_label']}`, ratio {fmt(top['ratio'], '.2f')})"
            if top is not None
            else "–"
        )
        head.append(
            f"| {names.get(ds, ds)} | {len(g)} | {int((gv == REPRODUCED).sum())} | "
            f"{int(gv.str.startswith(KNOWN).sum())} | {int((gv == DEVIATES).sum())} | {where} |"
        )
    full = [
        "| dataset | kernel | method | cells | mean ratio | ratio range | z | z_crit | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in pooled.to_dict("records"):
        verdict = str(r["verdict"])
        verdict = "**deviates**" if verdict == DEVIATES else verdict
        full.append(
            f"| {names.get(r['dataset'], r['dataset'])} | "
            f"{kernels.get(r['kernel'], r['kernel'])} | `{r['method_label']}` | {r['cells']} | "
            f"{fmt(r['ratio'], '.3f')} | {fmt(r['ratio_min'], '.2f')}–{fmt(r['ratio_max'], '.2f')}"
            f" | {fmt(r['z'], '+.2f')} | {fmt(r['z_crit'], '.2f')} | {verdict} |"
        )
    return "\n".join(head) + "\n", "\n".join(full) + "\n"
