"""How the golden rows are compared (``tests/data/rows_tolerance.toml``, beside them):
which columns, and how far a float may move on another machine
(docs/verification.md, "Golden rows across machines")."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TABLE = tomllib.loads((Path(__file__).parent / "data" / "rows_tolerance.toml").read_text())


@dataclass(frozen=True)
class Tolerance:
    """``|new - ref| <= rtol * max(|new|, |ref|) + floor * scale``."""

    rtol: float
    floor: float

    def agrees(self, new: float, ref: float, scale: float) -> bool:
        if new == ref or (math.isnan(new) and math.isnan(ref)):
            return True
        bound = self.rtol * max(abs(new), abs(ref)) + self.floor * scale
        return abs(new - ref) <= bound


#: Any float column without its own tolerance.
DEFAULT = Tolerance(**TABLE["default"])
#: protocol -> column -> tolerance ("*": every float column of the protocol).
TOLERANCES: dict[str, dict[str, Tolerance]] = {
    protocol: {column: Tolerance(**tol) for column, tol in columns.items()}
    for protocol, columns in TABLE["protocols"].items()
}


def compared(column: str) -> bool:
    """Whether a golden column is compared (not provenance, the config hash, a timing or
    a memory peak)."""
    skip = TABLE["not_compared"]
    return column not in skip["columns"] and not any(s in column for s in skip["containing"])


def tolerance(protocol: str, column: str) -> Tolerance:
    """The tolerance of a float column of ``protocol``'s rows."""
    table = TOLERANCES.get(protocol, {})
    return table.get(column, table.get("*", DEFAULT))


def disagreements(protocol: str, column: str, new: Sequence[Any], ref: Sequence[Any]) -> list[int]:
    """Indices of the rows where ``new`` differs from ``ref`` beyond the column's
    tolerance (floats within :func:`tolerance`, anything else exactly, types included)."""
    tol = tolerance(protocol, column)
    floats = [abs(v) for v in ref if isinstance(v, float) and math.isfinite(v)]
    scale = sorted(floats)[len(floats) // 2] if floats else 0.0

    def same(a: Any, b: Any) -> bool:
        if type(a) is not type(b):
            return False
        return tol.agrees(a, b, scale) if isinstance(a, float) else a == b

    return [i for i, (a, b) in enumerate(zip(new, ref, strict=True)) if not same(a, b)]
