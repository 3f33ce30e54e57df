"""tau, how much a cell's mean moves between independent X, Y samples, pooled per
(dataset, kernel) as cv = tau / mean (docs/verification.md; the table is written by
``scripts/measure_sample_variation.py``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.outputs.tables import update_table
from kernelbench.stats import aggregate
from kernelbench.verify.compare import CELL


def per_cell(frames: dict[int, pd.DataFrame], metric: str) -> pd.DataFrame:
    """One row per cell: the seeds' means and the unbiased tau^2 estimate."""
    aggs = [aggregate(df, CELL, metric).assign(seed=seed) for seed, df in frames.items()]
    allm = pd.concat(aggs, ignore_index=True)
    rows = []
    for key, g in allm.groupby(CELL, sort=True):
        k = len(g)
        if k < 2:
            continue
        means = g["mean"].to_numpy()
        within = float(np.mean(g["std"].to_numpy() ** 2 / g["runs"].to_numpy()))
        between = float(means.var(ddof=1))
        grand = float(means.mean())
        tau2 = between - within
        rows.append(
            {
                **dict(zip(CELL, key, strict=True)),
                "seeds": k,
                "runs": int(g["runs"].min()),
                "grand_mean": grand,
                "between_var": between,
                "within_var": within,
                "tau2": tau2,
                "tau2_rel": tau2 / grand**2,
                "cv_cell": math.sqrt(max(tau2, 0.0)) / grand,
                "means": " ".join(f"{m:.6g}" for m in means),
            }
        )
    return pd.DataFrame(rows)


def pool(cells: pd.DataFrame) -> pd.DataFrame:
    """Pooled cv per (dataset, kernel): sqrt(max(mean + se of tau2_rel, 0)), and the rest."""
    rows = []
    for (ds, kern), g in cells.groupby(["dataset", "kernel"], sort=True):
        rel = g["tau2_rel"].to_numpy()
        m = float(rel.mean())
        se = float(rel.std(ddof=1) / math.sqrt(len(rel)))
        rows.append(
            {
                "dataset": ds,
                "kernel": kern,
                "cv": math.sqrt(max(m + se, 0.0)),
                "cv_point": math.sqrt(max(m, 0.0)),
                "df": int(len(g) * (g["seeds"].min() - 1)),
                "tau2_rel_mean": m,
                "tau2_rel_se": se,
                "cv_cell_median": float(g["cv_cell"].median()),
                "cv_cell_max": float(g["cv_cell"].max()),
                "cells": len(g),
                "seeds": int(g["seeds"].min()),
                "runs": int(g["runs"].min()),
            }
        )
    return pd.DataFrame(rows)


def merge_rows(path: Path, new: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``path`` whose (dataset, kernel) ``new`` does not measure, then ``new``."""
    if not path.is_file():
        return new
    return update_table(pd.read_csv(path), new, by="cell", keys=["dataset", "kernel"])
