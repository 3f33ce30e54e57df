"""The verdict words of a reproduction check and their tally, read alike by
``kernelbench verify`` (:mod:`kernelbench.verify.compare` decides them) and by the papers'
report sections (:mod:`kernelbench.outputs.papers`), which count them; and the verdict
rules, :class:`VerifyConfig`: what reproducing a paper means, the one record that a
paper's module declares (its ``VERIFY``) and that a user's YAML file loads into
(:func:`kernelbench.verify.config.load_config`)."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from kernelbench.results import format_n

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


#: known-deviation rule keys -> the cell column they match
RULE_COLUMNS = {
    "datasets": "dataset",
    "kernels": "kernel",
    "methods": "method_label",
    "ns": "n",
    "data_sources": "data_source",
}


@dataclass(frozen=True)
class KnownDeviation:
    """A rule: the cells it matches are a known deviation, for ``reason``.

    ``datasets``, ``kernels``, ``methods``, ``ns``, ``data_sources`` and ``where`` (any
    other column) hold fnmatch patterns; a key left out matches everything.
    ``compare_with`` names our variant that reproduces the paper instead, if any.
    """

    reason: str
    datasets: tuple[str, ...] | None = None
    kernels: tuple[str, ...] | None = None
    methods: tuple[str, ...] | None = None
    ns: tuple[str, ...] | None = None
    data_sources: tuple[str, ...] | None = None
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    compare_with: str | None = None
    detail: str = ""

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether a cell (a mapping of its columns) matches every pattern of the rule."""
        checks = [(getattr(self, key), row.get(col)) for key, col in RULE_COLUMNS.items()]
        checks += [(patterns, row.get(col)) for col, patterns in self.where]
        for patterns, value in checks:
            if patterns is None:
                continue
            if value is None or (isinstance(value, float) and math.isnan(value)):
                return False
            text = format_n(value) if isinstance(value, float) else str(value)
            if not any(fnmatch.fnmatchcase(text, p) for p in patterns):
                return False
        return True


@dataclass(frozen=True)
class SampleVariationDefault:
    """The tau / mean of a (dataset, kernel) pair the sample-variation table does not
    measure, and why that value (``sample_variation_default: {cv, reason}``)."""

    cv: float
    reason: str


#: Without a declared default: no sample-to-sample allowance. An unmeasured pair is held
#: to both sides' run noise alone, the strictest test, never a borrowed wider one.
UNMEASURED = SampleVariationDefault(
    0.0,
    "not measured, so no sample-to-sample allowance: held to both sides' run noise "
    "alone (scripts/measure_sample_variation.py measures it)",
)

#: a grid: (experiment file of configs/experiment/, method configs run on top of its sweep)
GridEntry = tuple[str, tuple[str, ...]]


@dataclass
class VerifyConfig:
    """What reproducing a paper means (docs/verification.md): a paper's declaration, or
    a YAML file of the same keys; :func:`kernelbench.verify.config.load_config` checks
    either and resolves its paths."""

    name: str
    #: the paper's table, ``results/reference/<reference>.csv`` (or a CSV path)
    reference: str
    #: the protocol whose results are compared (its cell keys and metrics)
    protocol: str = "kernel_approx"
    #: metric id of the protocol (``fro``, ``accuracy``, ...); None: its headline
    metric: str | None = None
    #: our values times ``scale`` are in the reference's units (e.g. 100 for percent)
    scale: float = 1.0
    #: grid name (``verify --grid``) -> its experiments
    grids: dict[str, list[GridEntry]] = field(default_factory=dict)
    seed: int = 0
    #: family-wise false-alarm rate of the whole check (Sidak)
    alpha: float = 0.01
    #: the table of tau / mean per (dataset, kernel); None: tau = 0
    sample_variation: Path | None = None
    #: tau / mean of a pair the table does not measure (flagged in the report)
    sample_variation_default: SampleVariationDefault = UNMEASURED
    #: our own aggregated table, for the drift check; None: no baseline check
    baseline: Path | None = None
    #: our method label -> the reference's method it is compared with (default: its own)
    compare: dict[str, str] = field(default_factory=dict)
    #: run r of every cell shares random draws (a split) with run r of the other cells of
    #: a family: the pooled bias test then bounds our run noise as fully correlated
    shared_runs: bool = False
    known_deviations: list[KnownDeviation] = field(default_factory=list)
    #: one line on what is checked (``kernelbench list``)
    about: str = ""

    def reference_method(self, label: str) -> str:
        return self.compare.get(label, label)

    def known(self, row: Mapping[str, Any]) -> list[KnownDeviation]:
        return [k for k in self.known_deviations if k.matches(row)]
