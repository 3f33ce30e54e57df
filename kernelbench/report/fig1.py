"""REPRODUCTION.md, Fig. 1 section: every cell of Munkhoeva et al. (2018) Fig. 1 against
ours (results/baseline/fig1_baseline.csv), with the verdicts of ``kernelbench verify``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.drawing import DATASET_NAMES, KERNEL_NAMES, dataset_name, kernel_name
from kernelbench.reference import load_reference
from kernelbench.report.common import (
    BASE,
    Section,
    Summary,
    counts,
    fmt,
    ordered,
    pooled_lines,
    render,
    table,
    with_sem,
)
from kernelbench.verify import (
    DEFAULT_TAU,
    DEVIATES,
    KNOWN,
    NO_REFERENCE,
    REPRODUCED,
    default_sensitivity,
    load_config,
    load_sample_variation,
    verify_table,
)

DS_ORDER = ["powerplant", "letter", "usps", "mnist", "cifar100", "leukemia"]
K_ORDER = ["rbf", "arccos0", "arccos1"]
M_ORDER = ["rff", "orf_tallqr", "orf", "sorf", "qmc", "gq", "sr33"]
ORDERS = {"dataset": DS_ORDER, "kernel": K_ORDER, "ours": M_ORDER}
COLUMNS = ["dataset", "kernel", "paper", "ours", "n", "runs", "ours_mean", "paper_mean"]
COLUMNS += ["ratio", "z", "verdict"]


def cell_table(t: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """One row per (paper cell, our variant compared with it); paper cells we have not
    run appear once with verdict 'not run'."""
    keys = ["dataset", "kernel", "method", "n"]
    t = t[t["verdict"] != NO_REFERENCE].drop(columns="method").astype({"n": float})
    t = t.rename(columns={"paper_method": "method", "method_label": "ours", "mean": "ours_mean"})
    ref = ref.rename(columns={"paper_method": "paper", "mean": "paper_mean"}).astype({"n": float})
    ours = t[[*keys, "ours", "runs", "ours_mean", "ratio", "z", "verdict"]]
    out = ref[[*keys, "paper", "paper_mean"]].merge(ours, on=keys, how="left")
    out = out.fillna({"ours": "", "verdict": "not run"})[COLUMNS]
    return ordered(out, ["dataset", "kernel", "ours", "n"], ORDERS).reset_index(drop=True)


def cells_markdown(df: pd.DataFrame) -> str:
    """The appendix table of every paper cell."""
    rows = [
        [
            dataset_name(r.dataset),
            kernel_name(r.kernel),
            r.paper,
            f"`{r.ours}`" if r.ours else "",
            str(int(r.n)),
            fmt(r.runs, ".0f"),
            fmt(r.ours_mean),
            fmt(r.paper_mean),
            fmt(r.ratio, ".3f"),
            fmt(r.z, "+.2f"),
            "**deviates**" if r.verdict == DEVIATES else r.verdict,
        ]
        for r in df.itertuples()
    ]
    return table([c.replace("_", " ") for c in COLUMNS], rows)


def ratio_summary(t: pd.DataFrame, num: str, den: str) -> pd.DataFrame:
    """mean over n of mean(num) / mean(den), per dataset and kernel (same data seed)."""
    a = t[t["method_label"] == num].set_index(["dataset", "kernel", "n"])["mean"]
    b = t[t["method_label"] == den].set_index(["dataset", "kernel", "n"])["mean"]
    r = (a / b).dropna().rename("ratio").reset_index()
    if r.empty:
        return r
    g = r.groupby(["dataset", "kernel"])["ratio"].agg(["min", "max", "mean"]).reset_index()
    return ordered(g, ["dataset", "kernel"], ORDERS)


def _range(x: pd.Series) -> str:
    return f"{x.min():.2f}–{x.max():.2f}"


def findings(t: pd.DataFrame, pooled: pd.DataFrame) -> dict:
    """The numbers of the findings the paper does not state (None: not measured)."""
    out: dict = {"orf": None, "qmc": None, "usps": None, "usps_sr33": None, "usps_rest": None}
    orf = ratio_summary(t, "orf", "orf_tallqr")
    if not orf.empty:
        rows = [
            [dataset_name(r.dataset), kernel_name(r.kernel), f"{r.min:.2f}–{r.max:.2f}"]
            for r in orf.itertuples()
        ]
        out["orf"] = {
            "table": table(["dataset", "kernel", "true ORF / tall-QR (min–max over n)"], rows),
            "rbf": _span(orf[orf["kernel"] == "rbf"]),
            "arc": _span(orf[orf["kernel"] != "rbf"]),
        }
    qmc = t[t["method_label"] == "qmc"].dropna(subset=["ratio"])
    if not qmc.empty:
        q = qmc[qmc["dataset"] != "usps"] if (qmc["dataset"] != "usps").any() else qmc
        out["qmc"] = "; ".join(
            f"{dataset_name(ds)} {kernel_name(k)} {_range(g)}"
            for (ds, k), g in ordered(q, ["dataset", "kernel"], ORDERS).groupby(
                ["dataset", "kernel"], sort=False
            )["ratio"]
        )
    usps = t[(t["dataset"] == "usps")].dropna(subset=["ratio"])
    if not usps.empty:
        u = usps.groupby("kernel")["ratio"]
        out["usps"] = "; ".join(
            f"{kernel_name(k)} {_range(u.get_group(k))}" for k in K_ORDER if k in u.groups
        )
        arc1 = usps[usps["kernel"] == "arccos1"]
        sr, rest = arc1[arc1["method_label"] == "sr33"], arc1[arc1["method_label"] != "sr33"]
        if len(sr) and len(rest):
            out["usps_sr33"], out["usps_rest"] = _range(sr["ratio"]), _range(rest["ratio"])
    lk = t[(t["dataset"] == "leukemia") & t["ratio"].notna()]
    b, rest = lk[lk["method_label"] == "sr33"], lk[lk["method_label"] != "sr33"]
    out["lk_b"] = b if len(b) and len(rest) else None
    out["lk_rest"], out["lk_cv"] = rest, b["tau"].div(b["paper_mean"])
    lk = pooled[(pooled["dataset"] == "leukemia") & (pooled["method_label"] == "sr33")]
    out["lk_pooled"] = None if lk.empty else lk
    out["lk_flagged"] = (lk["verdict"] == DEVIATES).any()
    out["lk_pooled_parts"] = "; ".join(
        f"{kernel_name(r.kernel)} mean ratio {r.ratio:.2f}, z {r.z:+.2f} (z_crit {r.z_crit:.2f})"
        for r in lk.itertuples()
    )
    out["rot"] = sr33_rotation_finding(ROTATION_STUDY)
    known = t["verdict"].str.startswith(KNOWN)
    out["within"] = len(t[known & (t["within_tolerance"] == True)])  # noqa: E712
    out["n_known_all"] = int(known.sum())
    out["n_known_cells"] = int((known & (t["method_label"] != "orf")).sum())
    return out


#: scripts/measure_sr33_rotation.py --out (per data seed and rotation variant)
ROTATION_STUDY = BASE / "sr33_rotation.csv"


def sr33_rotation_finding(path: Path) -> dict | None:
    """The sr33 rotation study: per (dataset, kernel) each variant's error relative to
    the paper's and, paired by data seed, to our butterfly."""
    if not path.is_file():
        return None
    df = pd.read_csv(path)
    ref = load_reference("munkhoeva2018_fig1_kernel_error")
    parts = []
    to_paper: dict[tuple[str, str], float] = {}
    to_ours: list[float] = []
    for (ds, kern, n), g in df.groupby(["dataset", "kernel", "n"], sort=False):
        paper = ref[
            (ref.dataset == ds) & (ref.kernel == kern) & (ref.method == "sr33") & (ref.n == n)
        ]["mean"]
        ours = g[g.variant == "butterfly"].set_index("seed")["mean"]
        bits = []
        for name, v in g.groupby("variant", sort=False):
            m = v.set_index("seed")["mean"]
            ratio = m.mean() / float(paper.iloc[0])
            text = f"{name} {ratio:.2f}x the paper"
            if name == "butterfly":
                to_paper[(ds, kern)] = ratio
            else:
                paired = m / ours.loc[m.index]
                se = paired.std(ddof=1) / np.sqrt(len(paired))
                text += f" ({paired.mean():.3f} ± {se:.3f} of ours)"
                if name == "published":
                    to_ours.append(float(paired.mean()))
            bits.append(text)
        d = int(ref[ref.dataset == ds]["d"].iloc[0])
        parts.append(
            f"{dataset_name(ds)} (d = {d}) {kernel_name(kern)}, n = {n}: " + ", ".join(bits)
        )

    def span(cells: list[tuple[str, str]]) -> str:
        vals = [to_paper[c] for c in cells if c in to_paper]
        return f"{min(vals):.2f}-{max(vals):.2f}x" if vals else "not measured"

    return {
        "seeds": df.groupby(["dataset", "kernel", "n", "variant"])["seed"].nunique().min(),
        "runs": int(df["runs"].min()),
        "path": path,
        "parts": "; ".join(parts),
        "to_ours": f"{min(to_ours):.2f}-{max(to_ours):.2f}",
        "same_data": span([c for c in to_paper if c[0] in ("mnist", "cifar100")]),
        "gap": span([c for c in to_paper if c[0] == "leukemia" or c == ("usps", "arccos1")]),
    }


def _span(df: pd.DataFrame) -> str:
    return _range(df["mean"]) + "x" if len(df) else "not measured"


def build() -> Section:
    """The Fig. 1 section: every paper cell against ours, verdicts as ``kernelbench verify``."""
    cfg = load_config("munkhoeva2018_fig1")
    ours_path = cfg.baseline
    ours = with_sem(pd.read_csv(ours_path))
    ref = load_reference(cfg.reference)
    ver = verify_table(ours, cfg, ref=ref)
    t, pooled = ver.table, ver.pooled
    flips = default_sensitivity(ours, cfg, ver, ref=ref)
    cells = cell_table(t, ref)
    tau = load_sample_variation(cfg.sample_variation)
    per_cell = paper_cell_verdicts(cells)
    n_rep, n_known, n_dev, n_not = counts(per_cell["verdict"])
    dev = pooled[pooled["verdict"].astype(str) == DEVIATES]
    per_dataset, families = pooled_lines(pooled, DATASET_NAMES, KERNEL_NAMES)
    tau_rows = (
        [dataset_name(r.dataset), kernel_name(r.kernel), f"{r.cv:.3f}", r.cells, r.seeds, r.runs]
        for r in (() if tau is None else tau.itertuples())
    )
    body = render(
        "fig1",
        cfg=cfg,
        n_ref=len(ref),
        ours_path=ours_path,
        n_ours=len(ours),
        runs=sorted(int(r) for r in ours["runs"].unique()),
        seeds=sorted(ours["seed"].unique().tolist()) if "seed" in ours else "?",
        n_rep=n_rep,
        n_known=n_known,
        n_dev=n_dev,
        n_not=n_not,
        per_dataset=per_dataset_table(per_cell),
        zcs=t["z_crit"].dropna(),
        rate=ver.rate,
        m=ver.m,
        deviating=[
            f"{dataset_name(r.dataset)} {kernel_name(r.kernel)}"
            f" `{r.method_label}` (ratio {r.ratio:.3f}, z {r.z:+.2f})"
            for r in dev.itertuples()
        ],
        pooled_table=per_dataset,
        n_default=int((t["tau_source"] == DEFAULT_TAU).sum()),
        flips=[
            f"{dataset_name(r.dataset)} {kernel_name(r.kernel)} `{r.method_label}` n = "
            f"{r.n:g}: {r.verdict} (would be {r.verdict_widest})"
            for r in flips.itertuples()
        ],
        tau=None
        if tau is None
        else table(["dataset", "kernel", "tau / mean", "cells", "seeds", "runs"], tau_rows),
        **findings(t, pooled),
    )
    appendix = render("fig1_appendix", cells=cells_markdown(cells), families=families)
    title = "Munkhoeva et al. (2018), Figure 1: kernel approximation error"
    rep, known_, dev_, _ = counts(pooled["verdict"])
    note = (
        f"pooled bias test across n: {len(pooled)} (dataset, kernel, method) families, "
        f"{rep} reproduced, {known_} known deviations, {dev_} deviate"
    )
    summary = Summary(len(ref), n_rep, n_known, n_dev, n_not, note=note)
    return Section("fig1", title, summary, body, appendix, cells)


def paper_cell_verdicts(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per paper cell: the verdict of the variant that must reproduce it
    (Gort: ``orf_tallqr``, not ``orf``), else a known deviation, else not run."""
    rank = {REPRODUCED: 0, DEVIATES: 0}

    def pick(v: pd.Series) -> str:
        return min(v, key=lambda x: rank.get(x, 1 if x.startswith(KNOWN) else 2))

    keys = ["dataset", "kernel", "paper", "n"]
    return cells.groupby(keys, sort=False)["verdict"].agg(pick).reset_index()


def per_dataset_table(per_cell: pd.DataFrame) -> str:
    """Verdict counts per dataset, one per paper cell (see :func:`paper_cell_verdicts`)."""
    v = per_cell.groupby("dataset")["verdict"]
    rows = [
        [dataset_name(ds), len(v.get_group(ds)), *counts(v.get_group(ds))]
        for ds in DS_ORDER
        if ds in v.groups
    ]
    total = np.sum([r[1:] for r in rows], axis=0)
    rows.append(["**all**", *(f"**{x}**" for x in total)])
    cols = ["dataset", "paper cells", "reproduced", "known deviations", "deviate", "not run"]
    return table(cols, rows)
