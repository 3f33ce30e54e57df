"""The verdict words of a reproduction check and their tally, read alike by
``kernelbench verify`` (:mod:`kernelbench.verify.compare` decides them) and by the papers'
report sections (:mod:`kernelbench.outputs.papers`), which count them."""

from __future__ import annotations

import pandas as pd

#: Verdicts against the paper.
REPRODUCED = "reproduced"
DEVIATES = "deviates"
KNOWN = "known deviation"
NO_REFERENCE = "no reference"
#: Verdicts against the baseline.
AGREES = "agrees"
DRIFTS = "drifts"
NO_BASELINE = "no baseline"
#: tau_source of a cell whose pair the sample-variation table does not measure.
DEFAULT_TAU = "default"


def tally(verdicts: pd.Series, prefix: str = "") -> dict[str, int]:
    """How many ``verdicts`` reproduce, are known deviations, deviate."""
    v = verdicts.astype(str)
    n = [(v == REPRODUCED).sum(), v.str.startswith(KNOWN).sum(), (v == DEVIATES).sum()]
    return {prefix + k: int(c) for k, c in zip(("reproduced", "known", "deviate"), n, strict=True)}
