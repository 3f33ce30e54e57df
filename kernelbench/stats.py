"""Statistics shared by the protocols, ``verify`` and the figures: per-cell summaries
(:func:`cell_stats`, the one helper behind :func:`t_interval` and :func:`aggregate`),
Sidak thresholds at Welch-Satterthwaite df, floored z-scores and the pooled bias of a
family (docs/verification.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError

#: The largest relative difference of a cell mean between two BLAS kernels on one machine
#: (OpenBLAS Haswell vs Sandybridge; docs/verification.md): 9.6e-13 over 168 cells of the
#: reduced Fig. 1 grid drawn as weights, and 1e-12 in LEUKEMIA's 10-run sample-space
#: means since they factor distinct points only (before: up to 5.1e-3). The floor of
#: every standard error (:func:`se_floor`).
BLAS_SPREAD = 1e-12
#: Relative difference within which two means of the same draws (same seed, same runs)
#: agree: 15 x the largest relative difference of a single run measured between two BLAS
#: kernels, 6.5e-12 (LEUKEMIA orf rbf, whose error is K - K_hat cancelling to 1e-5 of K;
#: docs/verification.md), far below any paper effect (percents).
SAME_DRAWS_RTOL = 1e-10
#: Absolute difference below which they agree too: a mean at rounding level (Nystroem's
#: cells interpolating X, 1e-15 to 4e-14; docs/nystrom.md) differs between BLAS kernels
#: by about its own size, which no relative tolerance holds. 25 x the largest such mean.
SAME_DRAWS_ATOL = 1e-12


def same_draws_tolerance(base: float) -> float:
    """How far a mean of the same draws may lie from ``base``: rtol |base| + atol."""
    return SAME_DRAWS_RTOL * abs(base) + SAME_DRAWS_ATOL


def cell_stats(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, std (ddof=1) and sem = std / sqrt(r) of a cell's r runs (NaN below two)."""
    values = np.asarray(values, dtype=float)
    r = values.size
    mean = float(values.mean()) if r else math.nan
    if r < 2:
        return mean, math.nan, math.nan
    std = float(values.std(ddof=1))
    return mean, std, std / math.sqrt(r)


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, std (ddof=1), sem and half-width of the t-interval (NaN below two values)."""
    mean, std, sem = cell_stats(values)
    if np.size(values) < 2:
        return mean, math.nan, math.nan, math.nan
    from scipy import stats  # here: the commands' start-up does not import scipy

    return mean, std, sem, float(stats.t.ppf(0.5 + level / 2, np.size(values) - 1)) * sem


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
        seed = int(g["seed"].iloc[0]) if "seed" in g else 0
        src = g["data_source"].dropna() if "data_source" in g else pd.Series(dtype=object)
        source = str(src.iloc[0]) if len(src) else None
        rows.append((*key, seed, int(v.size), *cell_stats(v), source))
    out = pd.DataFrame(rows, columns=[*keys, "seed", "runs", "mean", "std", "sem", "data_source"])
    if "n" in out:
        out["n"] = out["n"].astype(float)
    return out


def sidak_rate(m: int, alpha: float) -> float:
    """Per-test two-sided rate giving family-wise rate ``alpha`` over ``m`` tests (Sidak)."""
    m = max(int(m), 1)
    return -math.expm1(math.log1p(-alpha) / m)


def sidak_z(m: int, alpha: float, df: float = math.inf) -> float:
    """Two-sided threshold at family-wise rate ``alpha`` over ``m`` tests (Sidak:
    per-test 1 - (1 - alpha)^(1/m), valid for any correlation of jointly normal
    statistics); Student's t at ``df`` (inf: normal)."""
    from scipy import stats

    per_test = sidak_rate(m, alpha)
    if not np.isfinite(df):
        return float(stats.norm.isf(per_test / 2.0))
    return float(stats.t.isf(per_test / 2.0, max(float(df), 1.0)))


def welch_df(parts: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite df of a sum of (variance, df) terms; infinite-df terms add no
    uncertainty; all terms zero gives inf."""
    total = sum(v for v, _ in parts)
    denom = sum(v * v / df for v, df in parts if v > 0 and np.isfinite(df) and df > 0)
    if total <= 0 or denom <= 0:
        return math.inf
    return total * total / denom


def se_floor(se: float, scale: float) -> float:
    """A standard error no smaller than :data:`BLAS_SPREAD` x ``|scale|``."""
    floor = BLAS_SPREAD * abs(scale)
    return max(se, floor) if np.isfinite(se) else floor


def z_score(diff: float, se: float, scale: float) -> float:
    """``diff`` over ``se`` floored by :func:`se_floor` (0 for 0 / 0)."""
    se = se_floor(se, scale)
    if se <= 0.0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / se


#: |z| from which a z-score is read as "the standard errors are 0": :func:`z_score`
#: floors the error at BLAS_SPREAD x the mean, so two constant samples give
#: |z| = |ratio - 1| / BLAS_SPREAD, beyond this for any ratio off by 1e-6 or more.
STD0_Z = 1e6


def z_text(z: float | None, spec: str = "+.2f") -> str:
    """A z-score for people: ``spec``, or ±∞ where the standard errors are 0 (an infinite
    z, or one at the floor of :func:`z_score`: ``+∞ (std 0)``)."""
    if z is None or z != z:
        return "–"
    if math.isinf(z) or abs(z) >= STD0_Z:
        return ("+∞" if z > 0 else "−∞") + " (std 0)"
    return format(z, spec)


def pooled_z(
    rel_diff: Sequence[float],
    independent: Sequence[tuple[float, float]],
    correlated: Sequence[tuple[Sequence[float], float]],
    shared_var: float,
    shared_df: float = math.inf,
) -> tuple[float, float, float]:
    """A family's mean relative difference b = mean r_i, its standard error and df.

    Var(b) is bounded term by term (docs/verification.md, pooled bias test):
    ``independent`` (v_i, df_i): sum v_i / k^2; ``correlated`` ([sd_i], df), of unknown
    correlation: (sum sd_i / k)^2 (Cauchy-Schwarz); ``shared_var`` (2 cv^2): one offset.
    """
    k = len(rel_diff)
    if k == 0:
        return math.nan, math.nan, math.nan
    bias = float(np.mean(rel_diff))
    parts = [(v / k**2, df) for v, df in independent]
    parts += [((float(np.sum(sd)) / k) ** 2, df) for sd, df in correlated]
    parts.append((shared_var, shared_df))
    se = math.sqrt(sum(v for v, _ in parts))
    return bias, se, welch_df(parts)


def nemenyi_cd(k: int, blocks: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks, k methods over ``blocks`` blocks
    (Demšar 2006, Sec. 3.2.2): CD = q_alpha sqrt(k (k + 1) / (6 N)), where q_alpha is the
    studentized range's upper alpha quantile for k means and infinite df over sqrt 2."""
    from scipy import stats

    q = float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf)) / math.sqrt(2.0)
    return q * math.sqrt(k * (k + 1) / (6.0 * blocks))


@dataclass(frozen=True)
class RankTest:
    """Average ranks of k methods over N independent blocks and the test of their
    equality: Friedman's chi-square with Nemenyi's critical difference (k >= 3), or
    Wilcoxon's signed-rank test (k = 2), as Demšar (2006) recommends."""

    test: str  # "Friedman" or "Wilcoxon"
    blocks: int
    mean_ranks: np.ndarray  # per method, rank 1 = lowest value in a block
    statistic: float
    p_value: float
    cd: float  # Nemenyi's critical difference (NaN for Wilcoxon)
    alpha: float

    def separated(self, i: int, j: int) -> bool:
        """Whether methods i and j differ significantly (after the omnibus test)."""
        if not self.p_value < self.alpha:
            return False
        if self.test == "Wilcoxon":
            return True
        return abs(self.mean_ranks[i] - self.mean_ranks[j]) > self.cd

    def shared_ranks(self) -> np.ndarray:
        """Rank of each method: 1 + the number of methods significantly better than it,
        so methods the data cannot separate share ranks."""
        k = self.mean_ranks.size
        better = [
            sum(self.mean_ranks[j] < self.mean_ranks[i] and self.separated(i, j) for j in range(k))
            for i in range(k)
        ]
        return 1 + np.asarray(better, dtype=int)


def rank_test(values: np.ndarray, alpha: float = 0.05) -> RankTest:
    """:class:`RankTest` of a blocks x methods array (lower is better), ties given
    average ranks; Friedman's statistic is scipy's (tie-corrected)."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    n, k = values.shape
    if k < 2 or n < 2:
        raise ValueError(f"a rank test needs two methods and two blocks, got {k} and {n}")
    ranks = stats.rankdata(values, axis=1).mean(axis=0)
    if k == 2:
        diff = values[:, 0] - values[:, 1]
        if not np.any(diff):
            return RankTest("Wilcoxon", n, ranks, 0.0, 1.0, math.nan, alpha)
        res = stats.wilcoxon(values[:, 0], values[:, 1])
        stat, p = float(res.statistic), float(res.pvalue)
        return RankTest("Wilcoxon", n, ranks, stat, p, math.nan, alpha)
    if np.all(values == values[:, :1]):
        stat, p = 0.0, 1.0  # every block ties every method: nothing to rank
    else:
        res = stats.friedmanchisquare(*values.T)
        stat, p = float(res.statistic), float(res.pvalue)
    return RankTest("Friedman", n, ranks, stat, p, nemenyi_cd(k, n, alpha), alpha)
