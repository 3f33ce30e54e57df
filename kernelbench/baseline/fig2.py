"""Munkhoeva et al. 2018 Fig. 2 baseline (protocol ``downstream``): ``fig2_baseline.csv``
(per cell: the score's summary, exact_score, mean timings) and ``fig2_<learner>.png``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from kernelbench.baseline.format import int_n
from kernelbench.errors import KernelbenchError
from kernelbench.reporting.downstream import fig2_summary

TIMES = ("fit_seconds", "transform_seconds", "train_seconds", "predict_seconds")
KEYS = ["dataset", "kernel", "method_label", "learner", "n"]


def baseline_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the score's summary, the exact kernel's score, mean timings."""
    for key, g in df.groupby(KEYS):
        if g["config_hash"].nunique() != 1:
            raise KernelbenchError(f"cell {key}: results from more than one config")
    summary = fig2_summary(df).drop(columns=["experiment"])
    times = df.groupby(KEYS)[list(TIMES)].mean()
    seed = df.groupby(KEYS)["seed"].first()
    out = summary.join(times, on=KEYS).join(seed, on=KEYS)
    cols = ["dataset", "d", "kernel", "method_label", "method", "paper_label", "learner"]
    cols += ["metric", "n", "seed", "runs", "mean", "std", "sem", "ci_low", "ci_high"]
    cols += ["exact_score", *TIMES]
    out = out[cols].copy()
    out["n"] = int_n(out["n"])
    return out


def draw_figure(df: pd.DataFrame, table: pd.DataFrame, out: Path, echo: Callable) -> None:
    """``fig2_<learner>.png``: the table drawn by its figure spec
    (:data:`kernelbench.reporting.downstream.FIG2`, as the site draws it)."""
    from kernelbench.baseline.figures import redraw

    redraw(out, ["fig2"], echo)
