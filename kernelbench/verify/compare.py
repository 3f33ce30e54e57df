"""The statistics of ``verify`` (docs/verification.md): the z-test per cell against the
paper, :func:`pooled_bias` per family and :func:`compare_baseline` (drift from ours)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.cell import cell_keys
from kernelbench.outputs.style import dataset_order, kernel_rank, label_rank
from kernelbench.outputs.tables import read_checked
from kernelbench.outputs.verdicts import (
    AGREES,
    DEFAULT_TAU,
    DEVIATES,
    DRIFTS,
    KNOWN,
    NO_BASELINE,
    NO_REFERENCE,
    REPRODUCED,
    tally,
)
from kernelbench.protocols import get_protocol, reference_cells
from kernelbench.reference import load_reference
from kernelbench.results import format_n
from kernelbench.stats import (
    pooled_z,
    same_draws_tolerance,
    se_floor,
    sidak_rate,
    sidak_z,
    welch_df,
    z_score,
)
from kernelbench.verify.config import UNMEASURED, SampleVariationDefault, VerifyConfig

#: The cell keys of the kernel_approx protocol (the default of the functions below).
CELL = ["dataset", "kernel", "method_label", "n"]


def _key(row, keys: Sequence[str], method_col: str = "method_label") -> tuple:
    """A cell's key tuple (n as float), reading ``method_col`` for method_label."""
    cols = [method_col if k == "method_label" else k for k in keys]
    return tuple(float(row[c]) if c == "n" else row[c] for c in cols)


def load_sample_variation(path: Path | None) -> pd.DataFrame | None:
    """The pooled tau/mean table (dataset, kernel, cv), or None (tau = 0)."""
    if path is None:
        return None
    hint = "scripts/measure_sample_variation.py writes it"
    return read_checked(path, "sample-variation table", hint, ["dataset", "kernel", "cv"])


def tau_cv(
    tab: pd.DataFrame | None,
    dataset: str,
    kernel: str,
    default: SampleVariationDefault = UNMEASURED,
) -> tuple[float, str]:
    """tau / mean for (dataset, kernel) and its source: "measured"; the config's declared
    ``default`` for a pair the table does not measure (:data:`DEFAULT_TAU`); "none"
    without a table (tau = 0)."""
    if tab is None or tab.empty:
        return 0.0, "none"
    hit = tab[(tab["dataset"] == dataset) & (tab["kernel"] == kernel)]
    if len(hit):
        return float(hit["cv"].iloc[0]), "measured"
    return default.cv, DEFAULT_TAU


def tau_df(tab: pd.DataFrame | None, dataset: str, kernel: str) -> float:
    """Degrees of freedom of the tau^2 estimate (column ``df``; inf when absent, and for
    a declared default, which is not an estimate)."""
    if tab is None or tab.empty or "df" not in tab.columns:
        return math.inf
    hit = tab[(tab["dataset"] == dataset) & (tab["kernel"] == kernel)]
    return float(hit["df"].iloc[0]) if len(hit) else math.inf


def compare_reference(
    ours: pd.DataFrame,
    ref: pd.DataFrame,
    cfg: VerifyConfig,
    tau_table: pd.DataFrame | None,
    keys: Sequence[str] = CELL,
) -> pd.DataFrame:
    """Per our cell: the matched paper cell (paper_*), ratio, tau, se_diff, z, df
    (Welch-Satterthwaite) and known (the matching rules' reasons, '' if none)."""
    ref_idx = {_key(r, keys, "method"): r for r in ref.to_dict("records")}
    rows = []
    for cell in ours.to_dict("records"):
        rmethod = cfg.reference_method(cell["method_label"])
        r = ref_idx.get(_key({**cell, "method_label": rmethod}, keys))
        out = dict(cell)
        out["paper_method"] = rmethod if r is not None else None
        rules = cfg.known(cell)
        out["known"] = "; ".join(k.reason for k in rules)
        if r is None:
            cols = ["paper_mean", "paper_std", "paper_sem", "paper_runs", "ratio", "tau"]
            cols += ["tau_source", "se_diff", "z", "df"]
            out.update(dict.fromkeys(cols, np.nan), tau_source="")
            rows.append(out)
            continue
        cv, source = tau_cv(
            tau_table, cell["dataset"], cell.get("kernel", ""), cfg.sample_variation_default
        )
        r_mean, r_std, r_runs = float(r["mean"]), float(r["std"]), float(r["runs"])
        tau = cv * r_mean
        paper_sem = r_std / math.sqrt(r_runs)
        ours_sem = cell["sem"] if np.isfinite(cell["sem"]) else 0.0
        parts = [
            (ours_sem**2, cell["runs"] - 1.0),
            (paper_sem**2, r_runs - 1.0),
            (2.0 * tau**2, tau_df(tau_table, cell["dataset"], cell.get("kernel", ""))),
        ]
        se = math.sqrt(sum(v for v, _ in parts))
        diff = cell["mean"] - r_mean
        out.update(
            paper_mean=r_mean,
            paper_std=r_std,
            paper_sem=paper_sem,
            paper_runs=int(r_runs),
            ratio=cell["mean"] / r_mean if r_mean else np.nan,
            tau=tau,
            tau_source=source,
            se_diff=se,
            z=z_score(diff, se, r_mean),
            df=welch_df(parts),
        )
        rows.append(out)
    return pd.DataFrame(rows)


def compare_baseline(
    ours: pd.DataFrame, base: pd.DataFrame, keys: Sequence[str] = CELL
) -> pd.DataFrame:
    """Per our cell: the baseline mean, ratio and drift test (base_test): ``rtol`` for the
    same draws (same seed and runs), else ``z`` with the shared runs of one seed
    (docs/verification.md, the baseline check)."""
    idx = {_key(b, keys): b for b in base.to_dict("records")}
    rows = []
    for cell in ours.to_dict("records"):
        b = idx.get(_key(cell, keys))
        out = {k: cell[k] for k in keys}
        if b is None:
            cols = ["base_mean", "base_runs", "base_ratio", "base_se", "base_z", "base_df"]
            out.update(dict.fromkeys(cols, np.nan), base_test="")
            rows.append(out)
            continue
        R, B = int(cell["runs"]), int(b["runs"])
        b_mean = float(b["mean"])
        s_o = cell["std"] if np.isfinite(cell["std"]) else 0.0
        s_b = float(b["std"]) if np.isfinite(b["std"]) else 0.0
        same_seed = int(b.get("seed", cell["seed"])) == int(cell["seed"])
        if same_seed and R == B:  # the tolerance is the unit of base_z
            test, var, df = "rtol", same_draws_tolerance(b_mean) ** 2, math.inf
        elif same_seed:
            shared = min(R, B)
            factor = max(1.0 / R + 1.0 / B - 2.0 * shared / (R * B), 0.0)
            var = 0.5 * (s_o**2 + s_b**2) * factor
            df = welch_df([(0.5 * s_o**2, R - 1.0), (0.5 * s_b**2, B - 1.0)])
            test = "z"
        else:
            var = s_o**2 / R + s_b**2 / B
            df = welch_df([(s_o**2 / R, R - 1.0), (s_b**2 / B, B - 1.0)])
            test = "z"
        se = se_floor(math.sqrt(var), b_mean)
        out.update(
            base_mean=b_mean,
            base_runs=B,
            base_ratio=cell["mean"] / b_mean if b_mean else np.nan,
            base_se=se,
            base_z=z_score(cell["mean"] - b_mean, se, b_mean),
            base_df=df,
            base_test=test,
        )
        rows.append(out)
    return pd.DataFrame(rows)


def pooled_bias(
    t: pd.DataFrame,
    tau_table: pd.DataFrame | None,
    keys: Sequence[str] = CELL,
    shared_runs: bool = False,
) -> pd.DataFrame:
    """Per family (the cell keys but n): z of the mean of (ours - paper) / paper over the
    cells that must reproduce (:func:`kernelbench.stats.pooled_z`, docs/verification.md);
    all-known families marked known, one-cell families left out."""
    fam = [k for k in keys if k != "n"]
    have = t[t["paper_mean"].notna()]
    rows = []
    for key, g in have.groupby(fam, sort=False):
        gated = g[g["known"] == ""]
        if len(gated) >= 2:
            cells, known = gated, ""
        elif gated.empty and len(g) >= 2:
            cells, known = g, "; ".join(dict.fromkeys(g["known"]))
        else:
            continue
        p = cells["paper_mean"].to_numpy(dtype=float)
        mean = cells["mean"].to_numpy(dtype=float)
        ours_se = cells["sem"].fillna(0.0).to_numpy(dtype=float) / np.abs(p)
        paper_se = cells["paper_sem"].fillna(0.0).to_numpy(dtype=float) / np.abs(p)
        runs = cells["runs"].to_numpy(dtype=float)
        paper_runs = cells["paper_runs"].to_numpy(dtype=float)
        correlated = [(paper_se, float(paper_runs.min()) - 1.0)]
        if shared_runs:
            independent = []
            correlated.append((ours_se, float(runs.min()) - 1.0))
        else:
            independent = list(zip(ours_se**2, runs - 1.0, strict=True))
        cv = float((cells["tau"] / cells["paper_mean"]).fillna(0.0).max())
        kernel = str(cells["kernel"].iloc[0]) if "kernel" in cells else ""
        dataset = str(cells["dataset"].iloc[0])
        bias, se, df = pooled_z(
            list((mean - p) / p),
            independent,
            correlated,
            2.0 * cv**2,
            tau_df(tau_table, dataset, kernel),
        )
        se = se_floor(se, 1.0)
        ratio = mean / p
        rows.append(
            {
                **dict(zip(fam, key if isinstance(key, tuple) else (key,), strict=True)),
                "cells": len(cells),
                "ns": ",".join(format_n(n) for n in cells["n"]),
                "bias": bias,
                "ratio": 1.0 + bias,
                "ratio_min": float(ratio.min()),
                "ratio_max": float(ratio.max()),
                "cv": cv,
                "se": se,
                "df": df,
                "z": z_score(bias, se, 1.0),
                "known": known,
            }
        )
    cols = [*fam, "cells", "ns", "bias", "ratio", "ratio_min", "ratio_max", "cv", "se", "df"]
    return pd.DataFrame(rows, columns=[*cols, "z", "known"])


@dataclass
class Verification:
    """A whole comparison: per cell, per family, the Sidak per-test rate and the
    family size ``m``."""

    table: pd.DataFrame
    pooled: pd.DataFrame
    rate: float
    m: int


def _verdict(t: pd.DataFrame) -> tuple[pd.Series, np.ndarray]:
    """Within tolerance (|z| <= z_crit) and the verdict, the known reasons first."""
    within = t["z"].abs() <= t["z_crit"]
    verdict = np.where(within, REPRODUCED, DEVIATES).astype(object)
    return within, np.where(t["known"] != "", KNOWN + ": " + t["known"], verdict)


def judge(
    table: pd.DataFrame, alpha: float, baseline: bool, pooled: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, float, int]:
    """Add verdict (and base_verdict) columns; return (table, per-test rate, family size).
    The Sidak family: the gated paper comparisons and pooled families, the baseline z-tests."""
    t = table.copy()
    has_ref = t["paper_mean"].notna()
    m = int((has_ref & (t["known"] == "")).sum())  # the gated paper comparisons
    if pooled is not None:
        m += int((pooled["known"] == "").sum())
    if baseline:
        m += int(((t["base_test"] == "z") & t["base_mean"].notna()).sum())
    rate = sidak_rate(m, alpha)
    t["z_crit"] = [
        sidak_z(m, alpha, df) if ok else np.nan
        for ok, df in zip(has_ref, t["df"].fillna(math.inf), strict=True)
    ]
    within, verdict = _verdict(t)
    t["within_tolerance"] = np.where(has_ref, within, np.nan)
    t["verdict"] = np.where(has_ref, verdict, NO_REFERENCE)
    if pooled is not None:
        pooled["z_crit"] = [sidak_z(m, alpha, df) for df in pooled["df"].fillna(math.inf)]
        pooled["within_tolerance"], pooled["verdict"] = _verdict(pooled)
    if baseline:
        t["base_z_crit"] = [
            1.0 if test == "rtol" else sidak_z(m, alpha, df)
            for test, df in zip(t["base_test"], t["base_df"].fillna(math.inf), strict=True)
        ]
        bv = np.where(t["base_z"].abs() <= t["base_z_crit"], AGREES, DRIFTS).astype(object)
        t["base_verdict"] = np.where(t["base_mean"].notna(), bv, NO_BASELINE)
    return t, rate, m


def verify_table(
    ours: pd.DataFrame,
    cfg: VerifyConfig,
    ref: pd.DataFrame | None = None,
    baseline: pd.DataFrame | None = None,
) -> Verification:
    """The whole comparison of aggregated results against the reference in the
    protocol's reading (:func:`kernelbench.protocols.reference_cells`), pooled per family,
    and optionally against our baseline."""
    proto = get_protocol(cfg.protocol)
    keys = list(cell_keys(proto))
    if ref is None:
        ref = load_reference(cfg.reference)
    ref = reference_cells(proto, cfg.reference, ref)
    tau = load_sample_variation(cfg.sample_variation)
    t = compare_reference(ours, ref, cfg, tau, keys)
    t = sort_cells(t, keys)
    pooled = pooled_bias(t, tau, keys, cfg.shared_runs)
    if baseline is not None:
        t = t.merge(compare_baseline(ours, baseline, keys), on=keys, how="left")
    t, rate, m = judge(t, cfg.alpha, baseline is not None, pooled)
    return Verification(sort_cells(t, keys), pooled, rate, m)


def default_sensitivity(
    ours: pd.DataFrame,
    cfg: VerifyConfig,
    ver: Verification,
    ref: pd.DataFrame | None = None,
    baseline: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The cells judged with the declared default tau (:data:`DEFAULT_TAU`) whose verdict
    changes when the largest measured cv is used instead (the widest tolerance, the rule
    before the default): the keys, ``verdict`` and ``verdict_widest``. Empty when no
    cell uses the default."""
    t = ver.table
    keys = [k for k in cell_keys(get_protocol(cfg.protocol)) if k in t]
    used = t[t["tau_source"] == DEFAULT_TAU] if "tau_source" in t else t.iloc[:0]
    tau = load_sample_variation(cfg.sample_variation)
    if used.empty or tau is None or tau.empty:
        return pd.DataFrame(columns=[*keys, "verdict", "verdict_widest"])
    widest = SampleVariationDefault(float(tau["cv"].max()), "the largest measured")
    cfg_w = dataclasses.replace(cfg, sample_variation_default=widest)
    other = verify_table(ours, cfg_w, ref=ref, baseline=baseline).table
    merged = used[[*keys, "verdict"]].merge(
        other[[*keys, "verdict"]].rename(columns={"verdict": "verdict_widest"}), on=keys
    )
    return merged[merged["verdict"] != merged["verdict_widest"]].reset_index(drop=True)


def sort_cells(t: pd.DataFrame, keys: Sequence[str] = CELL) -> pd.DataFrame:
    """Rows in the figures' order: datasets by d, kernels, methods, the other keys."""
    if t.empty:
        return t
    order = {ds: i for i, ds in enumerate(dataset_order(t))} if "d" in t else {}
    rank = {
        "dataset": lambda d: (order.get(d, 99), d),
        "kernel": kernel_rank,
        "method_label": label_rank,
    }
    first = [k for k in ("dataset", "kernel", "method_label") if k in keys]
    cols = [t[k].map(rank[k]) for k in first] + [t[k] for k in keys if k not in first]
    rows = list(zip(*cols, strict=True))
    idx = sorted(range(len(t)), key=rows.__getitem__)
    return t.iloc[idx].reset_index(drop=True)


def counts(t: pd.DataFrame, pooled: pd.DataFrame | None = None) -> dict[str, int]:
    """Verdict counts of the cells (and of the pooled families, keys ``pooled_*``)."""
    v = t["verdict"]
    out = {"cells": len(t), **tally(v), "no_reference": int((v == NO_REFERENCE).sum())}
    if pooled is not None:
        out.update(pooled=len(pooled), **tally(pooled["verdict"], "pooled_"))
    if "base_verdict" in t:
        b = t["base_verdict"]
        out.update(
            agree=int((b == AGREES).sum()),
            drift=int((b == DRIFTS).sum()),
            no_baseline=int((b == NO_BASELINE).sum()),
            same_draws=int(((t["base_test"] == "rtol") & t["base_mean"].notna()).sum()),
        )
    return out


def failed(t: pd.DataFrame, pooled: pd.DataFrame | None = None) -> bool:
    """Whether a cell or family that must reproduce deviates, or a cell drifts."""
    c = counts(t, pooled)
    return bool(c["deviate"] or c.get("pooled_deviate") or c.get("drift"))
