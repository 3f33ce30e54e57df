"""Munkhoeva et al. 2018 Fig. 2 baseline (protocol ``downstream``): ``fig2_baseline.csv``
(per cell: the score's summary, exact_score, mean timings) and ``fig2_<learner>.png``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from kernelbench.baseline.format import int_n, write_table
from kernelbench.cell import shard_schema
from kernelbench.errors import KernelbenchError
from kernelbench.protocols import get_protocol
from kernelbench.reporting import FigureOptions, get_reporting
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


def write(
    df: pd.DataFrame,
    out: Path,
    update: str | None = None,
    figure: bool = True,
    echo: Callable[[str], None] = print,
) -> None:
    """Write ``fig2_baseline.csv`` (and ``fig2_<learner>.png``) from the results ``df``."""
    table = baseline_table(df)
    csv = write_table(table, out / "fig2_baseline.csv")
    runs = sorted(int(r) for r in table["runs"].unique())
    echo(f"wrote {csv} ({len(table)} cells, runs {runs})")
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        proto = get_protocol("downstream")
        own = [c for c in shard_schema(proto).names if c in df.columns]
        fig2 = get_reporting("downstream").figure("fig2")
        result = fig2.draw(df[own], out / ".fig2", FigureOptions(formats=["png"]))
        for path in result.written:
            if path.suffix == ".png":
                target = out / path.name
                path.replace(target)
                echo(f"wrote {target}")
            else:
                path.unlink()
        (out / ".fig2").rmdir()
        for note in result.notes:
            echo(f"note: {note}")
