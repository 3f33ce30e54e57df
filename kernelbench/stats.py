"""Statistics shared by the protocols, ``verify`` and the figures.

* per-cell summaries of runs: :func:`cell_stats` (mean, std, sem: the one helper
  behind :func:`t_interval`, :func:`aggregate`, ``drawing.summarise`` and the baseline
  tables of ``kernelbench.baseline.format``);
* the family-wise thresholds of ``verify`` (:func:`sidak_rate`, :func:`sidak_z`) at
  Welch-Satterthwaite degrees of freedom (:func:`welch_df`);
* :func:`z_score`, a difference over its standard error that treats a noiseless
  comparison as an exact one.

The reasoning behind the tolerances is in ``docs/verification.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError

#: Relative difference below which two means computed from the same runs are equal
#: (floating-point noise of another BLAS build), when the comparison has no noise.
EXACT_RTOL = 1e-9


def cell_stats(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, std (ddof=1) and sem = std / sqrt(r) of the r runs of a cell.

    With fewer than two values std and sem are NaN (no values: all NaN).
    """
    values = np.asarray(values, dtype=float)
    r = values.size
    mean = float(values.mean()) if r else math.nan
    if r < 2:
        return mean, math.nan, math.nan
    std = float(values.std(ddof=1))
    return mean, std, std / math.sqrt(r)


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, std (ddof=1), sem and half-width of the t-interval of ``values``.

    With fewer than two values std, sem and the half-width are NaN.
    """
    mean, std, sem = cell_stats(values)
    r = np.size(values)
    if r < 2:
        return mean, math.nan, math.nan, math.nan
    from scipy import stats  # here: the commands' start-up does not import scipy

    half = float(stats.t.ppf(0.5 + level / 2, r - 1)) * sem
    return mean, std, sem, half


def aggregate(
    df: pd.DataFrame, keys: Sequence[str], column: str, scale: float = 1.0
) -> pd.DataFrame:
    """Per cell (``keys``): runs, mean, std (ddof 1), sem, seed and data source of a
    results frame's ``column`` (times ``scale``, e.g. 100 for percent)."""
    if column not in df.columns:
        raise KernelbenchError(f"results have no column {column!r}")
    missing = [k for k in keys if k not in df.columns]
    if missing:
        raise KernelbenchError(f"results have no column(s) {', '.join(missing)}")
    rows = []
    for key, g in df.groupby(list(keys), sort=True, dropna=False):
        v = g[column].dropna().to_numpy(dtype=float) * scale
        if v.size == 0:
            continue
        mean, std, sem = cell_stats(v)
        src = g["data_source"].dropna() if "data_source" in g else pd.Series(dtype=object)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "seed": int(g["seed"].iloc[0]) if "seed" in g else 0,
                "runs": int(v.size),
                "mean": mean,
                "std": std,
                "sem": sem,
                "data_source": str(src.iloc[0]) if len(src) else None,
            }
        )
    out = pd.DataFrame(rows, columns=[*keys, "seed", "runs", "mean", "std", "sem", "data_source"])
    if "n" in out:
        out["n"] = out["n"].astype(float)
    return out


def sidak_rate(m: int, alpha: float) -> float:
    """Per-test two-sided rate giving family-wise rate ``alpha`` over ``m`` tests (Sidak)."""
    m = max(int(m), 1)
    return -math.expm1(math.log1p(-alpha) / m)


def sidak_z(m: int, alpha: float, df: float = math.inf) -> float:
    """Two-sided threshold with family-wise false-alarm rate ``alpha`` over ``m`` tests.

    Sidak: per-test rate 1 - (1 - alpha)^(1/m); valid for any correlation of the
    (jointly normal) statistics, and exact when they are independent. ``df``: the
    quantile of Student's t with that many degrees of freedom (inf: normal).
    """
    from scipy import stats

    per_test = sidak_rate(m, alpha)
    if not np.isfinite(df):
        return float(stats.norm.isf(per_test / 2.0))
    return float(stats.t.isf(per_test / 2.0, max(float(df), 1.0)))


def welch_df(parts: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variance estimates.

    ``parts``: (variance term, its degrees of freedom); a term with infinite df
    (a known quantity) adds no uncertainty; all terms zero gives inf.
    """
    total = sum(v for v, _ in parts)
    denom = sum(v * v / df for v, df in parts if v > 0 and np.isfinite(df) and df > 0)
    if total <= 0 or denom <= 0:
        return math.inf
    return total * total / denom


def z_score(diff: float, se: float, scale: float) -> float:
    """diff / se; with no noise (se ~ 0) the means must agree to floating point."""
    floor = EXACT_RTOL * abs(scale)
    if se <= floor:
        return 0.0 if abs(diff) <= floor else math.copysign(math.inf, diff)
    return diff / se
