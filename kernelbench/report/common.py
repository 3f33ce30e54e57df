"""What a section of REPRODUCTION.md is, and small formatting helpers shared by sections.

A section is data, rendered twice: the Markdown of REPRODUCTION.md
(:func:`kernelbench.report.command.render`) and the HTML site (``kernelbench report
--html``, :mod:`kernelbench.site`). Its body is Markdown lines and :class:`Claim` items
(a checked paper claim: its text, verdict and evidence), its cell-by-cell verdicts a
table (:attr:`Section.cells`), so both outputs show the same claims and verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

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


@dataclass(frozen=True)
class Claim:
    """A paper claim checked on our numbers: ``holds`` is None when it was not measured.

    ``template`` is how the Markdown writes it (``{verdict}``, ``{text}``, ``{evidence}``);
    ``words`` the verdict for True, False and None.
    """

    text: str
    holds: bool | None
    evidence: str = ""
    template: str = "- **{verdict}**: {text} {evidence}"
    words: tuple[str, str, str] = ("holds", "does not hold", "not measured")

    @property
    def verdict(self) -> str:
        return self.words[0 if self.holds else 2 if self.holds is None else 1]

    def __str__(self) -> str:
        return self.template.format(verdict=self.verdict, text=self.text, evidence=self.evidence)


def claim(lines: list, holds: bool, text: str, evidence: str) -> bool:
    """Append the :class:`Claim` to a section body; its verdict."""
    lines.append(Claim(text, holds, evidence))
    return holds


@dataclass
class Section:
    """A section: its anchor, title, summary row, body and appendix (Markdown lines; the
    body may hold :class:`Claim` items) and, where the paper gives numbers, its cell-by-cell
    verdict table (columns include ``verdict``)."""

    key: str
    title: str
    summary: Summary
    body: list[str | Claim]
    appendix: list[str] = field(default_factory=list)
    cells: pd.DataFrame | None = None

    @property
    def claims(self) -> list[Claim]:
        return [x for x in self.body if isinstance(x, Claim)]

    def markdown(self) -> list[str]:
        """The body as Markdown lines."""
        return [str(x) for x in self.body]


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


#: Section modules, in report order.
SECTIONS = ("fig1", "fig2", "fig3", "liu2020", "yu2016", "yang2014")


def load_sections(only: list[str] | None = None) -> list[Section]:
    """The sections of :data:`SECTIONS` (or of ``only``) that build, in report order."""
    import importlib

    sections = []
    for name in SECTIONS:
        if only and name not in only:
            continue
        try:
            module = importlib.import_module(f"kernelbench.report.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"kernelbench.report.{name}":
                raise
            continue
        section = module.build()
        if section is not None:
            sections.append(section)
    return sections


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
