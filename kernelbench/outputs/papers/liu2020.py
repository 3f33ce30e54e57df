"""Liu et al. (2020), Table 3 and Fig. 1: what kernelbench reports of the paper.

The paper's Table 3 read as cells, the figure functions the protocol ``krr`` names
(``liu_table3``, ``liu_fig1``), the baseline table (``liu2020_table3[_paper]_baseline.csv``)
and the report section (:func:`build`; verdicts by the ``verify`` it is given).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError
from kernelbench.outputs import sections as common
from kernelbench.outputs.generic import FigureOptions, FigureOutput, spec_output, summarise
from kernelbench.outputs.sections import (
    BASE,
    Section,
    Summary,
    fmt,
    ordered,
    pooled_lines,
    render,
    table,
)
from kernelbench.outputs.spec import BaselineFigure, FigureSpec
from kernelbench.outputs.style import DATASET_NAMES, dataset_name
from kernelbench.outputs.tables import cell_table, int_n
from kernelbench.outputs.verdicts import DEVIATES, KNOWN, KnownDeviation, VerifyConfig
from kernelbench.protocols import get_protocol, reference_cells
from kernelbench.protocols.krr import PAPER_DATASETS
from kernelbench.reference import load_reference
from kernelbench.stats import z_text

# ---------------------------------------------------------------------- krr

#: Reference table of Liu et al. 2020, Table 3 (results/reference/).
TABLE3_REFERENCE = "liu2020_table3_krr_accuracy"


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean/std/95% CI per (dataset, method_label, n) of every metric, plus s and the
    feature time as a ratio to rff's at the same (dataset, n) of the same results."""
    keys = ["dataset", "kernel", "method_label", "n"]
    summ = summarise(get_protocol("krr"), df, keys)
    s = df.groupby(keys)["s"].first().rename("s").reset_index()
    return summ.merge(s, on=keys, how="left")


def table3(df: pd.DataFrame, reference: pd.DataFrame | None) -> pd.DataFrame:
    """Table 3: per (dataset, s/d, method) our accuracy and feature time (and its ratio
    to rff within our results) beside the paper's."""
    summ = _summary(df)
    acc = summ[summ["metric"] == "accuracy"]
    tim = summ[summ["metric"] == "time"][["dataset", "n", "method_label", "mean"]]
    tim = tim.rename(columns={"mean": "time_s"})
    t = acc.merge(tim, on=["dataset", "n", "method_label"], how="left")
    rff = tim[tim["method_label"] == "rff"][["dataset", "n", "time_s"]]
    t = t.merge(rff.rename(columns={"time_s": "rff_time_s"}), on=["dataset", "n"], how="left")
    t["time_ratio"] = t["time_s"] / t["rff_time_s"]
    cols = {"dataset": "dataset", "s_over_d": "n", "s": "s", "method": "method_label"}
    cols |= {"runs": "runs", "acc_mean": "mean", "acc_std": "std", "time_s": "time_s"}
    out = pd.DataFrame({k: t[v] for k, v in {**cols, "time_vs_rff": "time_ratio"}.items()})
    if reference is not None:
        ref = reference_cells(get_protocol("krr"), TABLE3_REFERENCE, reference).rename(
            columns={"n": "s_over_d"}
        )
        rt = ref[ref["method"] == "rff"][["dataset", "s_over_d", "feature_time_mean"]]
        rt = rt.rename(columns={"feature_time_mean": "paper_rff_time"})
        ref = ref.merge(rt, on=["dataset", "s_over_d"], how="left")
        ref["paper_time_vs_rff"] = ref["feature_time_mean"] / ref["paper_rff_time"]
        ref = ref[["dataset", "s_over_d", "method", "mean", "std", "paper_time_vs_rff"]]
        ref = ref.rename(columns={"mean": "paper_acc_mean", "std": "paper_acc_std"})
        out = out.merge(ref, on=["dataset", "s_over_d", "method"], how="left")
        out["acc_diff"] = out["acc_mean"] - out["paper_acc_mean"]
    from kernelbench.outputs.style import dataset_order, label_rank

    rank = {ds: i for i, ds in enumerate(dataset_order(df))}
    rows = zip(out["dataset"], out["s_over_d"], out["method"], strict=True)
    key = [(rank.get(ds, len(rank)), s, label_rank(m)) for ds, s, m in rows]
    return out.iloc[sorted(range(len(out)), key=key.__getitem__)].reset_index(drop=True)


def draw_table3(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``liu_table3.csv``/``.md``: our Table 3 beside the paper's."""
    from kernelbench.outputs.style import write_table
    from kernelbench.reference import load_reference

    ref = load_reference(TABLE3_REFERENCE)
    t = table3(df, ref)
    intro = (
        "Test accuracy (%) mean and std over runs, feature time (fit + transform of the "
        "train and test rows, seconds) and its ratio to rff at the same s within these "
        "results; the paper's accuracy and time ratio beside (Liu et al. 2020, Table 3)."
    )
    notes = ["feature times are compared only as ratios to rff of the same run set"]
    if "paper_acc_mean" in t and t["paper_acc_mean"].isna().any():
        cells = reference_cells(get_protocol("krr"), TABLE3_REFERENCE, ref)
        from kernelbench.outputs.style import dataset_name

        notes.append(
            "blank paper_* columns: the paper's Table 3 has rows for "
            f"{', '.join(dataset_name(d) for d in sorted(cells['dataset'].unique()))} and "
            f"methods {', '.join(sorted(cells['method'].unique()))} only; our other "
            "datasets and methods have no published number to compare with"
        )
    written = write_table(t, out, "liu_table3", "Liu et al. 2020, Table 3", intro, notes)
    return FigureOutput(written, notes)


def reweighted_labels(df: pd.DataFrame) -> list[str]:
    """Method labels of rows whose map re-weights its columns (``sampler: reweight`` on a
    map with a ``mode``): their spectral error is of that map, not of an estimate of K."""
    from kernelbench.features import FEATURE_MAPS

    labels = []
    for (label, method), g in df.groupby(["method_label", "method"]):
        cls = FEATURE_MAPS.get(method)
        if "mode" not in cls._get_param_names():
            continue
        for proto_json, method_json in zip(g["protocol_params"], g["method_params"], strict=True):
            mode = json.loads(method_json).get("mode") or json.loads(proto_json).get("sampler")
            if mode == "reweight":
                labels.append(str(label))
                break
    return sorted(labels)


#: The panels of Liu's Fig. 1 (columns): metric id -> the column's name.
FIG1_METRICS = {
    "spec": "spectral error ‖K − ZZᵀ‖₂ / ‖K‖₂",
    "accuracy": "test accuracy (%)",
    "time": "feature time (s)",
}
#: Liu et al. Fig. 1, declared once: spectral error, accuracy and feature time (columns;
#: log y but the accuracy) against s/d, one row per dataset; drawn by ``kernelbench
#: plot`` and the committed PNG (from Table 3's baseline, :func:`fig1_rows`).
LIU_FIG1 = FigureSpec(
    "liu2020_table3_baseline.csv",
    title="Liu et al. 2020, Fig. 1",
    rows="dataset",
    cols="metric",
    xlabel="s/d (features per input dimension)",
    ylabel="",
    logx=True,
    logy=(FIG1_METRICS["spec"], FIG1_METRICS["time"]),
)


def fig1_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Table 3's baseline (one row per cell: the accuracy's summary, the mean spectral
    error and feature time) as :data:`LIU_FIG1`'s rows, one per cell and metric."""
    keep = ["dataset", "d", "kernel", "method_label", "paper_label", "n", "runs"]
    parts = [table[[*keep, "mean", "sem"]].assign(metric=FIG1_METRICS["accuracy"])]
    for metric, column in (("spec", "rel_spec_error"), ("time", "feature_seconds")):
        part = table[keep].assign(metric=FIG1_METRICS[metric], mean=table[column])
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def draw_fig1(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``liu_fig1.<fmt>`` (:data:`LIU_FIG1`): spectral error, accuracy and feature
    time against s/d, a row per dataset (Liu et al. 2020, Fig. 1 is EEG), and
    ``liu_fig1_summary.csv``/``.md``."""
    summary = _summary(df)
    if summary.empty:
        raise KernelbenchError("results hold no krr cells to plot")
    notes = []
    if reweighted := reweighted_labels(df):
        notes.append(
            f"{', '.join(reweighted)}: re-weighted columns (reading=code); their spectral "
            "error is of each map's Z Z^T, not of an unbiased estimate of K"
        )
    drawn = summary.assign(metric=summary["metric"].map(FIG1_METRICS))
    intro = "Mean over runs with 95% t-interval per (dataset, method, s/d) of every metric."
    table = ("liu_fig1_summary", "Liu et al. 2020, Fig. 1", intro)
    return spec_output(summary, LIU_FIG1, out, "liu_fig1", options, table, notes, drawn)


# ---------------------------------------------------------------------- liu2020


def table3_baseline(df: pd.DataFrame) -> pd.DataFrame:
    """Accuracy statistics per cell plus s, feature time (ratio to rff) and peak memory."""
    df = df[df["protocol"] == "krr"]
    out = cell_table(df, "accuracy_pct")
    keys = ["dataset", "kernel", "method_label", "n"]
    per = df.groupby(keys).agg(
        s=("s", "first"),
        feature_seconds=("feature_seconds", "mean"),
        peak_memory_mb=("peak_memory_mb", "mean"),
        rel_spec_error=("rel_spec_error", "mean"),
    )
    per = per.reset_index().astype({"n": float})
    out = out.astype({"n": float}).merge(per, on=keys, how="left")
    out["n"] = int_n(out["n"])
    return with_rff_ratio(out)


def with_rff_ratio(table: pd.DataFrame) -> pd.DataFrame:
    """``feature_time_vs_rff``: each cell's mean feature time over rff's at the same
    (dataset, kernel, n) of the table."""
    on = ["dataset", "kernel", "n"]
    rff = table[table["method_label"] == "rff"][[*on, "feature_seconds"]]
    out = table.drop(columns=["feature_time_vs_rff"], errors="ignore")
    out = out.merge(rff, on=on, how="left", suffixes=("", "_rff"))
    out["feature_time_vs_rff"] = out["feature_seconds"] / out.pop("feature_seconds_rff")
    return out


# ---------------------------------------------------------------------- report_liu

CONFIG = "liu2020_table3"
BASELINE = BASE / "liu2020_table3_baseline.csv"
PAPER_CONFIG = "liu2020_table3_paper"
PAPER_BASELINE = BASE / "liu2020_table3_paper_baseline.csv"
READINGS = BASE / "liu2020_readings.csv"
ABLATION = BASE / "liu2020_code_ablation.csv"
RATIOS = BASE / "liu2020_feature_time_ratio.csv"
PAPER = {"rff": "RFF", "qmc": "QMC", "lev_rff": "leverage-RFF", "slw_rff": "Ours (SLW)"}
M_ORDER = ["rff", "qmc", "qmc_fixed", "lev_rff", "slw_rff", "orf", "sorf", "sr33"]
DS_ORDER = ["eeg", "codrna", "magic04", "covtype"]
ORDERS = {"dataset": DS_ORDER, "method": M_ORDER, "method_label": M_ORDER}

# What reproducing Table 3 means (kernelbench verify; docs/liu2020.md,
# docs/verification.md), under the two readings of the krr protocol.

#: Table 3 under the protocol's default reading, the authors' code
#: (``protocol.reading=code``); the paper's text is checked by :data:`PAPER_VERIFY`.
TABLE3_VERIFY = VerifyConfig(
    name=CONFIG,
    about='What "reproducing Liu et al. 2020, Table 3" means, under the code\'s reading.',
    # The EEG and cod-RNA rows of Table 3, read as cells by the krr protocol
    # (Protocol.reference_cells): dataset, kernel rbf, method, n = s/d, accuracy mean and
    # std (%) over 10 runs.
    reference=TABLE3_REFERENCE,
    protocol="krr",
    metric="accuracy",
    # qmc_fixed (the fixed Halton set of the authors' code) runs on top of the full
    # grid's sweep; it is what must reproduce the paper's QMC column.
    grids={"reduced": [("liu2020_table3_reduced", ())], "full": [("liu2020_table3", ())]},
    # Split seed: the random halves depend on (seed, dataset, run) only.
    seed=0,
    # Family-wise false-alarm rate over all compared cells (Sidak), as for Fig. 1. The
    # tolerance of a cell is z_crit * sqrt(std_ours^2 / runs + std_paper^2 / 10): both
    # sides' standard errors over their repetitions (tau = 0: no sample variation table;
    # under this reading every repetition draws its own random half, as the paper's did,
    # so both standard deviations include the split's variation).
    alpha=0.01,
    sample_variation=None,
    # Run r of every cell uses the same random half (seeded by seed, dataset and run), so
    # the run noise of a family's cells (one method across s/d) is correlated: the pooled
    # bias test bounds it as fully correlated (docs/verification.md).
    shared_runs=True,
    # Our own aggregated Table 3 (`kernelbench baseline liu2020_table3`); drift check.
    baseline=BASELINE,
    # the authors' code: one fixed Halton set in every repetition
    compare={"qmc_fixed": "qmc"},
    # Known deviations, decided from the setup (or measured and written in
    # docs/liu2020.md), never from a cell's accuracy.
    known_deviations=[
        KnownDeviation(
            "test file cod-rna.t (271617 rows) vs the paper's cod-rna.r (157413)",
            datasets=("codrna",),
            detail="The mirror's cod-RNA test part is LIBSVM's cod-rna.t with 271617 rows; "
            "the paper's Table 2 lists 157413 test rows, LIBSVM's cod-rna.r, a file we do "
            "not have. Decided before any number was seen (issue 10). Its size, measured "
            "(docs/liu2020.md): training on a random half of the training file and testing "
            "on the other half moves rff from 88.97 / 89.33 / 89.45% (test file cod-rna.t) "
            "to 87.56 / 87.77 / 87.85% at s/d = 1 / 4 / 16 (3 runs), against the paper's "
            "87.02 / 87.19 / 87.29%.",
        ),
        KnownDeviation(
            "scrambled Halton (fresh per run) vs the paper's fixed Halton set",
            methods=("qmc",),
            compare_with="qmc_fixed",
            detail="The paper's QMC has std 0.00 on cod-RNA (a fixed split): the authors' "
            "code draws one deterministic Halton set (and a random phase, which leaves the "
            "span of the features unchanged), the same in every repetition. kernelbench's "
            "qmc is a randomised (scrambled) Halton sequence, fresh per run; qmc_fixed is "
            "the code's fixed set (haltonset(d, 'Skip', 1000, 'Leap', 700), RR2-scrambled).",
        ),
    ],
)

#: Table 3 under the paper's text (``protocol.reading=paper``: Algorithm 1, every feature
#: to [0, 1]); the reading that reproduces the table is the code's, :data:`TABLE3_VERIFY`.
#: What is not said here is as there (split seed: the random halves depend on (seed,
#: dataset) only).
PAPER_VERIFY = replace(
    TABLE3_VERIFY,
    name=PAPER_CONFIG,
    about="Liu et al. 2020, Table 3 under the paper's text (protocol.reading=paper: "
    "Algorithm 1, every feature to [0, 1]), compared with the paper.",
    grids={
        "reduced": [("liu2020_table3_paper_reduced", ())],
        "full": [("liu2020_table3_paper", ())],
    },
    # Our own aggregated Table 3 under this reading (kernelbench baseline
    # liu2020_table3_paper); drift check.
    baseline=PAPER_BASELINE,
    compare={},
    known_deviations=[
        KnownDeviation(
            "test file cod-rna.t (271617 rows) vs the paper's 157413",
            datasets=("codrna",),
            detail="The mirror's cod-RNA test part is LIBSVM's cod-rna.t with 271617 rows; "
            "the paper's Table 2 lists 157413 test rows, a file we do not have. Decided "
            "before any number was seen (issue 10).",
        ),
        KnownDeviation(
            "scrambled Halton (fresh per run) vs the paper's QMC",
            methods=("qmc",),
            detail="The paper's QMC has std 0.00 on cod-RNA (a fixed split): its points were "
            "the same in every repetition. kernelbench's qmc is a randomised (scrambled) "
            "Halton sequence, so its mean is that of a random QMC rule, not of one fixed "
            "point set.",
        ),
        KnownDeviation(
            "EEG outliers compress the min-max scaled features (measured, docs/liu2020.md)",
            datasets=("eeg",),
            detail="The mirror's EEG (OpenML 1471, 14980 rows as in the paper) has a few "
            "extreme rows (column maxima up to 715897, while the central 99.8% of the values "
            "lie within about 3900-4800). Min-max to [0, 1] over all rows maps the central "
            "99.8% of the 14 columns into intervals of width 0.0002-0.059 "
            "(scripts/liu2020_readings.py), so exp(-|x - x'|^2) is about 1 for almost every "
            "pair and no random feature map, under any reading, gets far from the majority "
            "class; the paper's EEG must have been cleaned or scaled in a way the paper does "
            "not state. Measured on the data (docs/liu2020.md), not on the accuracies. "
            "Confirmed by removing the 4 rows with a value more than 20 robust SDs from its "
            "column median (scripts/liu2020_eeg_outliers.py, rff, 3 seeds): accuracy rises "
            "from 57.3 / 57.7 / 57.4% to 71.1 / 78.8 / 84.1% at s/d = 1 / 4 / 16, against "
            "the paper's 68.45 / 74.70 / 78.54%.",
        ),
    ],
)


def _pm(mean: float, std: float) -> str:
    return f"{fmt(mean, '.2f')} ± {fmt(std, '.2f')}"


def cell_rows(
    t: pd.DataFrame, ref: pd.DataFrame, ours: pd.DataFrame, compare: dict | None = None
) -> pd.DataFrame:
    """One row per paper cell: ours beside it, or 'not run'. A reference method that one
    of our labels is compared with instead (``compare``: qmc_fixed -> qmc) takes that
    label's row."""
    stand_in = {ref_m: ours_m for ours_m, ref_m in (compare or {}).items()}
    rows = []
    for r in ref.itertuples():
        label = stand_in.get(r.method, r.method)
        if not (ours["method_label"] == label).any():
            label = r.method
        mine = t[(t["dataset"] == r.dataset) & (t["method_label"] == label) & (t["n"] == r.n)]
        cell = {"dataset": r.dataset, "n": r.n, "method": r.method}
        if mine.empty:
            rows.append({**cell, "verdict": "not run", "paper": _pm(r.mean, r.std)})
            continue
        m = mine.iloc[0]
        s = int(m["s"]) if "s" in m else np.nan  # the verify table keeps our columns
        rows.append(
            {
                **cell,
                "label": label,
                "s": s,
                "ours": _pm(m["mean"], m["std"]),
                "paper": _pm(r.mean, r.std),
                "ratio": m["ratio"],
                "z": m["z"],
                "verdict": m["verdict"],
            }
        )
    return ordered(pd.DataFrame(rows), ["dataset", "n", "method"], ORDERS).reset_index(drop=True)


def md(df: pd.DataFrame, cols: list[tuple[str, str]]) -> str:
    """``df`` as a Markdown table of (header, column) ``cols``, each value formatted."""
    lines = []
    for r in df.to_dict("records"):
        cells = []
        for _, key in cols:
            v = r.get(key, "")
            if key == "dataset":
                v = dataset_name(v)
            elif key in ("ratio",):
                v = fmt(v, ".3f")
            elif key == "z":
                v = z_text(v, "+.1f")
            elif key in ("n", "s"):
                v = fmt(float(v), ".0f") if v not in ("", None) else ""
            elif isinstance(v, bool | np.bool_):
                v = "yes" if v else "no"
            elif isinstance(v, float):
                v = fmt(v, ".4g")
            elif key.startswith("verdict") and v == DEVIATES:
                v = "**deviates**"
            elif key.startswith("verdict") and str(v).startswith(KNOWN):
                v = KNOWN
            cells.append(str(v))
        lines.append(cells)
    return table([h for h, _ in cols], lines)


def time_ratios(ratios: pd.DataFrame, ref_raw: pd.DataFrame) -> pd.DataFrame:
    """Feature time / rff's at the same (dataset, s/d): ours (best of R, interleaved in
    one process, scripts/bench_liu2020.py) beside the paper's (MATLAB, its machine)."""
    ref = ref_raw.assign(dataset=ref_raw["dataset"].map(lambda v: PAPER_DATASETS.get(v, v)))
    rt = ref.pivot_table(
        index=["dataset", "s_over_d"], columns="method", values="feature_time_s_mean"
    )
    rows = []
    for r in ratios.itertuples():
        key = (r.dataset, float(r.s_over_d))
        row = {"dataset": r.dataset, "n": r.s_over_d, "s": r.s}
        for m in ("lev_rff", "slw_rff"):
            row[f"ours_{m}"] = getattr(r, f"{m}_vs_rff")
            row[f"paper_{m}"] = rt.loc[key, m] / rt.loc[key, "rff"] if key in rt.index else np.nan
        rows.append(row)
    return ordered(pd.DataFrame(rows), ["dataset", "n"], ORDERS)


def reading(verify: Any, name: str, config: str, baseline: Path) -> dict:
    """One reading's baseline against the paper: its verify table, cell rows, summary and
    pooled bias test (one row per (dataset, method) across s/d)."""
    cfg = verify.load_config(config)
    ours = common.with_sem(pd.read_csv(baseline))
    ref_raw = load_reference(cfg.reference)
    ref = reference_cells(get_protocol("krr"), cfg.reference, ref_raw)
    pv = verify.verify_table(ours.assign(n=ours["n"].astype(float)), cfg, ref=ref_raw)
    cells = cell_rows(pv.table, ref, ours, cfg.compare)
    out = {"name": name, "cfg": cfg, "ours": ours, "baseline": baseline.name, "cells": cells}
    out |= {"ref_raw": ref_raw, "table": pv.table, "m": pv.m, "pooled": None}
    out["summary"] = Summary(len(ref), *common.counts(cells["verdict"]))
    if pv.pooled is not None and not pv.pooled.empty:
        top = common.largest_z(pv.pooled)
        if top is not None:
            top = {**top.to_dict(), "dataset": dataset_name(top["dataset"])}
        out["pooled"] = {"counts": common.counts(pv.pooled["verdict"]), "top": top}
        out["pooled"]["table"] = pooled_lines(pv.pooled, DATASET_NAMES)[1]
        out["pooled"]["rows"] = len(pv.pooled)
    return out


CELL_COLS = [("dataset", "dataset"), ("s/d", "n"), ("s", "s"), ("method", "method")]
CELL_COLS += [("ours (%)", "ours"), ("paper (%)", "paper"), ("ratio", "ratio"), ("z", "z")]
CELL_COLS += [("verdict", "verdict")]
ACC_COLS = [("ours (%)", "acc_mean"), ("paper (%)", "paper_acc_mean")]


def build(verify: Any) -> Section | None:
    if not BASELINE.is_file():
        return None
    code = reading(verify, "the code's reading", CONFIG, BASELINE)
    paper = None
    cells, ours, cfg, s = code["cells"], code["ours"], code["cfg"], code["summary"]
    cell_table = md(cells, CELL_COLS)
    if PAPER_BASELINE.is_file():
        paper = reading(verify, "the paper's text", PAPER_CONFIG, PAPER_BASELINE)
        both = cells.merge(
            paper["cells"][["dataset", "n", "method", "ours", "verdict"]],
            on=["dataset", "n", "method"],
            how="left",
            suffixes=("", "_paper"),
        )
        stand_in = both["label"].notna() & (both["label"] != both["method"])
        both.loc[stand_in, "method"] = both["method"] + " (" + both["label"] + ")"
        verdicts = [("verdict (code)", "verdict"), ("ours, paper's text (%)", "ours_paper")]
        cell_table = md(
            both, [*CELL_COLS[:6], ("z", "z"), *verdicts, ("verdict (text)", "verdict_paper")]
        )
    ps = paper["summary"] if paper else None
    s.note = (
        "the authors' code's reading (per-row scaling, re-weighted columns) reproduces "
        "EEG; cod-RNA is off by its test file (measured); the paper's text reproduces "
        + (f"{ps.reproduced} of {ps.cells}" if ps else "no")
        + " cells; docs/liu2020.md"
    )
    ratios = ablation = readings_ = None
    if RATIOS.is_file():
        tr = time_ratios(pd.read_csv(RATIOS), code["ref_raw"])
        versus = [
            (f"{m} {w}", f"{w}_{m}") for m in ("lev_rff", "slw_rff") for w in ("ours", "paper")
        ]
        ratios = md(tr, [*CELL_COLS[:3], *versus])
    if ABLATION.is_file():
        ab = pd.read_csv(ABLATION)
        ab = ordered(ab, ["dataset", "s_over_d", "method"], {"dataset": DS_ORDER}, kind="stable")
        ablation = md(
            ab.rename(columns={"s_over_d": "n"}),
            [*CELL_COLS[:2], ("method", "method"), ("setting", "label"), *ACC_COLS],
        )
    if READINGS.is_file():
        settings = [
            ("width", "width"),
            ("centred", "center_labels"),
            ("n lambda", "lambda_times_n"),
        ]
        readings_ = md(
            pd.read_csv(READINGS).rename(columns={"s_over_d": "n"}),
            [*CELL_COLS[:2], ("method", "method"), *settings, *ACC_COLS],
        )
    body = render(
        "liu2020",
        code=code,
        paper=paper,
        readings=[code, paper] if paper else [code],
        zc=code["table"]["z_crit"].dropna(),
        cell_table=cell_table,
        ratios=ratios,
        ablation=ablation,
        measured=readings_,
    )
    paper_ds = ours["dataset"].isin(["eeg", "codrna"])
    in_paper = ours["method_label"].isin([*PAPER, *cfg.compare]) & paper_ds
    extra = ours[~in_paper]
    appendix = []
    if not extra.empty:
        extra = extra.assign(
            ours=[_pm(a, b) for a, b in zip(extra["mean"], extra["std"], strict=True)]
        )
        extra = ordered(extra, ["dataset", "n", "method_label"], ORDERS).drop(columns=["method"])
        extra = extra.rename(columns={"method_label": "method"})
        cols = [*CELL_COLS[:4], ("accuracy (%)", "ours"), ("peak memory (MiB)", "peak_memory_mb")]
        appendix = render("liu2020_appendix", table=md(extra, cols))
    return Section(
        "liu2020", "Liu et al. 2020, Table 3 (KRR accuracy)", s, body, appendix, cells=cells
    )


# ---------- what the report, the site and the committed PNGs take of the paper


def liu2020_paper(df: pd.DataFrame) -> pd.Series:
    """Liu et al. (2020) Table 3: the paper's mean accuracy (%) of each row's cell."""
    ref = reference_cells(get_protocol("krr"), TABLE3_REFERENCE, load_reference(TABLE3_REFERENCE))
    ref = ref[["dataset", "n", "method", "mean"]]
    ref = ref.rename(columns={"method": "method_label", "mean": "paper"})
    keys = df[["dataset", "n", "method_label"]].assign(n=df["n"].astype(float))
    out = keys.merge(ref, on=["dataset", "n", "method_label"], how="left")["paper"]
    return out.where(df["kernel"].to_numpy() == "rbf", np.nan) if "kernel" in df else out


#: Table 3 on the site: accuracy against s/d, the paper's means dashed.
TABLE3 = FigureSpec(
    "liu2020_table3_baseline.csv",
    title="Table 3",
    xlabel="s/d (features per input dimension)",
    ylabel="test accuracy (%)",
    logx=True,
    paper=liu2020_paper,
)
#: report section key -> its builder (given ``kernelbench.verify``)
SECTIONS = {"liu2020": build}
#: report section key -> the figures of its site page
PAGES: dict[str, tuple[FigureSpec, ...]] = {"liu2020": (TABLE3,)}
#: verify config name -> what reproducing it means (``kernelbench verify --config``)
VERIFY = {c.name: c for c in (TABLE3_VERIFY, PAPER_VERIFY)}
#: committed PNG stem -> its figure (``kernelbench baseline --redraw``)
BASELINE_FIGURES = {"liu2020_fig1": BaselineFigure(LIU_FIG1, fig1_rows)}
