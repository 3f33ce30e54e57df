"""How far a stored row's numbers may move on another machine.

On one machine a cell's rows are bit-identical: on rerun, on resume and under every
launcher (tests/test_runner.py, tests/test_cli.py). On another machine the BLAS kernel
(OpenBLAS picks Haswell, SkylakeX, Sandybridge, ... from the processor) and numpy's own
SIMD loops round differently, so float columns may move in their last bits; integers,
strings, hashes, paths, column names and types do not.

A float ``new`` agrees with a stored ``ref`` of its column when

    |new - ref| <= rtol * max(|new|, |ref|) + floor * scale,

``scale`` the column's typical magnitude (the median |ref| over the rows compared), so
a value that cancels to near zero is held to the column's size, not its own.

The numbers are a small multiple of a measured spread (docs/verification.md, "Golden
rows across machines"): the golden cases of tests/test_rows_unchanged.py, run under
four arithmetic set-ups (the stored file, from another machine; this one with OpenBLAS's
Haswell kernel, its Sandybridge kernel, and Sandybridge with numpy's SIMD loops limited
to SSE4.2), differ per column by at most

=========================== ============ ===========================================
column(s)                   largest rel  cause
=========================== ============ ===========================================
every other float column    2.0e-14      rounding (variance_ratio, krr)
qmc_discrepancy discrepancy 3.7e-12      cancellation: D^2 is a difference of O(1)
                                         terms (abs 3.6e-15 at a median of 2.8e-3)
qmc_adaptive, every column  1.5e-9       the same cancellation at the start (3e-12),
                                         grown by the 6 optimiser iterations
=========================== ============ ===========================================

and the tolerances are 50x (default), 8x (the floor of the discrepancy) and 7x
(qmc_adaptive) of those: 1e-12 relative for what a paper reports, far below any effect
it shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tolerance:
    """``|new - ref| <= rtol * max(|new|, |ref|) + floor * scale`` (module docstring)."""

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
    """Indices of the rows where ``new`` differs from ``ref`` (same length) beyond the
    column's tolerance: floats within :func:`tolerance`, anything else exactly, types
    included (an int is not a float)."""
    tol = tolerance(protocol, column)
    floats = [abs(v) for v in ref if isinstance(v, float) and math.isfinite(v)]
    scale = sorted(floats)[len(floats) // 2] if floats else 0.0
    bad = []
    for i, (a, b) in enumerate(zip(new, ref, strict=True)):
        if type(a) is not type(b):
            bad.append(i)
        elif isinstance(a, float):
            if not tol.agrees(a, b, scale):
                bad.append(i)
        elif a != b:
            bad.append(i)
    return bad
