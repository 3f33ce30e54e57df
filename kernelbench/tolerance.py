"""How far a stored row's numbers may move on another machine (docs/verification.md,
"Golden rows across machines"): a float ``new`` agrees with a stored ``ref`` when

    |new - ref| <= rtol * max(|new|, |ref|) + floor * scale,

``scale`` the column's median |ref|, so a value cancelling to near zero is held to its
column's size. Integers, strings, hashes and types must match exactly. The tolerances are
a small multiple of the spread measured across four BLAS/SIMD set-ups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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


#: Any float column not listed in :data:`TOLERANCES`: 50x the largest spread measured
#: (2.0e-14 relative, krr's rel_spec_error and variance_ratio's ratio).
DEFAULT = Tolerance(rtol=1e-12, floor=1e-12)
#: protocol -> column -> tolerance ("*": every float column of the protocol).
TOLERANCES: dict[str, dict[str, Tolerance]] = {
    # D(S)^2 = (2 pairs + s) / s^2 + const - 2/s sum prod g: O(1) terms cancelling to
    # ~1e-3; measured abs 3.6e-15 at a median of 2.8e-3 (1.3e-12 of it): floor 8x.
    "qmc_discrepancy": {"discrepancy": Tolerance(rtol=1e-12, floor=1e-11)},
    # the same objective, minimised for 6 CG iterations: a start 3e-12 apart ends 1.5e-9
    # apart in every column (discrepancy, errors): 7x.
    "qmc_adaptive": {"*": Tolerance(rtol=1e-8, floor=1e-8)},
}


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
