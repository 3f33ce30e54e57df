"""REPRODUCTION.md, Liu et al. 2020 section: Table 3 (KRR accuracy) cell by cell.

Inputs: the paper's EEG and cod-RNA rows (results/reference/liu2020_table3_krr_accuracy.csv),
our aggregated results (results/baseline/liu2020_table3_baseline.csv, written by
`kernelbench baseline liu2020_table3`), the readings measurement
(results/baseline/liu2020_readings.csv, scripts/liu2020_readings.py) and the known
deviations of configs/verify/liu2020_table3.yaml. Verdicts are those of
``kernelbench verify --config liu2020_table3`` (same code, same tolerance).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernelbench.plotting import DATASET_NAMES
from kernelbench.protocols import get_protocol
from kernelbench.reference import load_reference
from kernelbench.report.common import ROOT, Section, Summary, fmt
from kernelbench.verify import DEVIATES, KNOWN, REPRODUCED, load_config, verify_table

CONFIG = "liu2020_table3"
BASELINE = ROOT / "results" / "baseline" / "liu2020_table3_baseline.csv"
READINGS = ROOT / "results" / "baseline" / "liu2020_readings.csv"
RATIOS = ROOT / "results" / "baseline" / "liu2020_feature_time_ratio.csv"
PAPER = {"rff": "RFF", "qmc": "QMC", "lev_rff": "leverage-RFF", "slw_rff": "Ours (SLW)"}
M_ORDER = ["rff", "qmc", "lev_rff", "slw_rff", "orf", "sorf", "sr33"]
DS_ORDER = ["eeg", "codrna", "magic04", "covtype"]


def _rank(v: pd.Series, order: list[str]) -> pd.Series:
    return v.map(lambda x: order.index(x) if x in order else len(order))


def _pm(mean: float, std: float) -> str:
    return f"{fmt(mean, '.2f')} ± {fmt(std, '.2f')}"


def cell_rows(t: pd.DataFrame, ref: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """One row per paper cell: ours beside it, or 'not run'."""
    rows = []
    for r in ref.itertuples():
        mine = t[(t["dataset"] == r.dataset) & (t["method_label"] == r.method) & (t["n"] == r.n)]
        o = ours[(ours["dataset"] == r.dataset) & (ours["method_label"] == r.method)]
        o = o[o["n"].astype(float) == r.n]
        if mine.empty:
            rows.append(
                {
                    "dataset": r.dataset,
                    "n": r.n,
                    "method": r.method,
                    "verdict": "not run",
                    "paper": _pm(r.mean, r.std),
                }
            )
            continue
        m = mine.iloc[0]
        rows.append(
            {
                "dataset": r.dataset,
                "n": r.n,
                "method": r.method,
                "s": int(o["s"].iloc[0]) if "s" in o and len(o) else np.nan,
                "ours": _pm(m["mean"], m["std"]),
                "paper": _pm(r.mean, r.std),
                "ratio": m["ratio"],
                "z": m["z"],
                "verdict": m["verdict"],
            }
        )
    out = pd.DataFrame(rows)
    out = out.assign(_d=_rank(out["dataset"], DS_ORDER), _m=_rank(out["method"], M_ORDER))
    return out.sort_values(["_d", "n", "_m"]).drop(columns=["_d", "_m"]).reset_index(drop=True)


def md(df: pd.DataFrame, cols: list[tuple[str, str]]) -> str:
    lines = [
        "| " + " | ".join(h for h, _ in cols) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    for r in df.to_dict("records"):
        cells = []
        for _, key in cols:
            v = r.get(key, "")
            if key == "dataset":
                v = DATASET_NAMES.get(v, v)
            elif key in ("ratio",):
                v = fmt(v, ".3f")
            elif key == "z":
                v = fmt(v, "+.1f")
            elif key in ("n", "s"):
                v = fmt(float(v), ".0f") if v not in ("", None) else ""
            elif isinstance(v, bool | np.bool_):
                v = "yes" if v else "no"
            elif isinstance(v, float):
                v = fmt(v, ".4g")
            elif key == "verdict" and v == DEVIATES:
                v = "**deviates**"
            elif key == "verdict" and str(v).startswith(KNOWN):
                v = KNOWN
            cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def time_ratios(ratios: pd.DataFrame, ref_raw: pd.DataFrame) -> pd.DataFrame:
    """Feature time / rff's at the same (dataset, s/d): ours (best of R, interleaved in
    one process, scripts/bench_liu2020.py) beside the paper's (MATLAB, its machine)."""
    ref = ref_raw.copy()
    ref["dataset"] = ref["dataset"].map(lambda v: {"EEG": "eeg", "cod-RNA": "codrna"}.get(v, v))
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
    out = pd.DataFrame(rows)
    out = out.assign(_d=_rank(out["dataset"], DS_ORDER))
    return out.sort_values(["_d", "n"]).drop(columns="_d")


def build() -> Section | None:
    if not BASELINE.is_file():
        return None
    cfg = load_config(CONFIG)
    ours = pd.read_csv(BASELINE)
    if "sem" not in ours:
        ours["sem"] = ours["std"] / np.sqrt(ours["runs"])
    ref_raw = load_reference(cfg.reference)
    ref = get_protocol("krr").reference_cells(cfg.reference, ref_raw)
    t, rate, m = verify_table(ours.assign(n=ours["n"].astype(float)), cfg, ref=ref_raw)
    cells = cell_rows(t, ref, ours)
    v = cells["verdict"].astype(str)
    s = Summary(
        cells=len(ref),
        reproduced=int((v == REPRODUCED).sum()),
        known=int(v.str.startswith(KNOWN).sum()),
        deviate=int((v == DEVIATES).sum()),
        not_run=int((v == "not run").sum()),
        note=(
            "no reading of the open setup reproduces either row (EEG: outliers in the "
            "data; cod-RNA: another test file, rff 9 points above the paper); "
            "docs/liu2020.md"
        ),
    )
    zc = t["z_crit"].dropna()
    body = [
        f"Paper cells: {len(ref)} (EEG and cod-RNA rows of Table 3, "
        f"results/reference/{cfg.reference}.csv). Ours: `results/baseline/{BASELINE.name}` "
        f"({len(ours)} cells, runs per cell {sorted(ours['runs'].unique().tolist())}, "
        "data from the mirror), from `kernelbench run -m experiment=liu2020_table3` (or the "
        "measured subset of `scripts/bench_liu2020.py`, see results/baseline/README.md).",
        "",
        f"**{s.reproduced} reproduced, {s.known} known deviations, {s.deviate} deviate, "
        f"{s.not_run} not run.** Tolerance as for Fig. 1: |z| <= z_crit "
        f"({fmt(zc.min(), '.2f')}-{fmt(zc.max(), '.2f')}), z = (ours - paper) / "
        "sqrt(std_ours^2/R + std_paper^2/10), Sidak over the "
        f"{m} comparisons that must reproduce (alpha {cfg.alpha:g}); no sample-variation "
        "term. Setup and readings: [docs/liu2020.md](docs/liu2020.md).",
        "",
        md(
            cells,
            [
                ("dataset", "dataset"),
                ("s/d", "n"),
                ("s", "s"),
                ("method", "method"),
                ("ours (%)", "ours"),
                ("paper (%)", "paper"),
                ("ratio", "ratio"),
                ("z", "z"),
                ("verdict", "verdict"),
            ],
        ),
        "### Known deviations",
        "",
    ]
    for k in cfg.known_deviations:
        body.append(f"- **{k.reason}**: {k.detail}" if k.detail else f"- **{k.reason}**")
    body.append("")
    if RATIOS.is_file():
        tr = time_ratios(pd.read_csv(RATIOS), ref_raw)
        body += [
            "### Feature time relative to rff",
            "",
            "Fit + transform of the train and test rows, best of 3, the three methods "
            "interleaved in one process (`python scripts/bench_liu2020.py --ratio-only "
            "--ratio-repeats 3`); the paper's ratios are of its MATLAB means. slw_rff "
            "scores the l = s pre-sampled features with one extra pass over the training "
            "rows, so with equal train and test parts its ratio is about 1.5 by "
            "construction; the paper reports 1.0-1.2.",
            "",
            md(
                tr,
                [
                    ("dataset", "dataset"),
                    ("s/d", "n"),
                    ("s", "s"),
                    ("lev_rff ours", "ours_lev_rff"),
                    ("lev_rff paper", "paper_lev_rff"),
                    ("slw_rff ours", "ours_slw_rff"),
                    ("slw_rff paper", "paper_slw_rff"),
                ],
            ),
        ]
    if READINGS.is_file():
        rd = pd.read_csv(READINGS)
        body += [
            "### Which reading of the setup reproduces the table (measured)",
            "",
            "`scripts/liu2020_readings.py`: every combination of the open readings "
            "(kernel width, centred labels, n in the ridge penalty), rff and slw_rff:",
            "",
            md(
                rd.rename(columns={"s_over_d": "n"}),
                [
                    ("dataset", "dataset"),
                    ("s/d", "n"),
                    ("method", "method"),
                    ("width", "width"),
                    ("centred", "center_labels"),
                    ("n lambda", "lambda_times_n"),
                    ("ours (%)", "acc_mean"),
                    ("paper (%)", "paper_acc_mean"),
                ],
            ),
        ]
    extra = ours[~ours["method_label"].isin(list(PAPER)) | ~ours["dataset"].isin(["eeg", "codrna"])]
    appendix = []
    if not extra.empty:
        extra = extra.assign(
            ours=[_pm(a, b) for a, b in zip(extra["mean"], extra["std"], strict=True)]
        )
        extra = extra.assign(
            _d=_rank(extra["dataset"], DS_ORDER), _m=_rank(extra["method_label"], M_ORDER)
        )
        extra = extra.sort_values(["_d", "n", "_m"]).drop(columns=["method"])
        extra = extra.rename(columns={"method_label": "method"})
        appendix = [
            "### Liu et al. 2020: cells with no paper number (magic04; orf, sorf, sr33)",
            "",
            md(
                extra,
                [
                    ("dataset", "dataset"),
                    ("s/d", "n"),
                    ("s", "s"),
                    ("method", "method"),
                    ("accuracy (%)", "ours"),
                    ("peak memory (MiB)", "peak_memory_mb"),
                ],
            ),
        ]
    return Section("liu2020", "Liu et al. 2020, Table 3 (KRR accuracy)", s, body, appendix)
