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
