"""Munkhoeva et al. 2018 Fig. 2 baseline (protocol ``downstream``): ``fig2_baseline.csv``
(per cell: the score's summary, exact_score, mean timings) and ``fig2_<learner>.png``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from kernelbench.baseline.format import int_n
from kernelbench.cell import shard_schema
from kernelbench.errors import KernelbenchError
from kernelbench.protocols import figure_of, get_protocol
from kernelbench.reporting import FigureOptions
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
    """``fig2_<learner>.png`` from the results ``df``."""
    import matplotlib

    matplotlib.use("Agg")
    own = [c for c in shard_schema(get_protocol("downstream")).names if c in df.columns]
    fig2 = figure_of(get_protocol("downstream"), "fig2").load()
    with tempfile.TemporaryDirectory() as tmp:
        result = fig2(df[own], Path(tmp), FigureOptions(formats=["png"]))
        for path in (p for p in result.written if p.suffix == ".png"):
            echo(f"wrote {shutil.copyfile(path, out / path.name)}")
    for note in result.notes:
        echo(f"note: {note}")
