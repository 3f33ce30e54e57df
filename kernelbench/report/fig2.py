"""REPRODUCTION.md, Fig. 2 section: Munkhoeva et al. (2018) Fig. 2 has no table, only two
claims (Sec. 4.3), tested on results/baseline/fig2_baseline.csv and the Fig. 1 errors of
the same cells (fig1_baseline.csv). Tests, fixed before the grid was computed:

* Scores: the methods' run variances pooled within a cell (dataset, kernel, n, learner);
  a difference is significant when |diff| / (s_pooled sqrt(1/r1 + 1/r2)) exceeds the
  two-sided Student t threshold at family-wise alpha = 0.05 (Sidak) over the claim's
  comparisons. Errors: Welch z with the cells' standard errors, the same threshold.
* Claim 1 (the best approximation is not always the most accurate) holds if some cell
  has a *reversal*: a method significantly worse in error and better in score than the
  best approximant.
* Claim 2 (B is comparable or better) holds if in no cell another method's mean score
  exceeds B's by more than MARGIN (0.005) and significantly.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kernelbench.drawing import dataset_name, kernel_name
from kernelbench.report.common import BASE, Claim, Section, Summary, fmt, ordered, render, table
from kernelbench.report.fig1 import K_ORDER, M_ORDER
from kernelbench.stats import sidak_z, welch_df

BASELINE = BASE / "fig2_baseline.csv"
FIG1_BASELINE = BASE / "fig1_baseline.csv"
ALPHA = 0.05
MARGIN = 0.005
B = "sr33"
PAPER_LEARNER = "svm_precomputed"
CELL = ["learner", "dataset", "kernel", "n"]
DS_ORDER = ["powerplant", "letter", "usps", "mnist"]
#: How a claim is written in the Markdown: a bold verdict line, then its evidence.
PARAGRAPH = "**{text}: {verdict}.** {evidence}"


def pooled(cell: pd.DataFrame) -> tuple[float, float]:
    """Pooled run-to-run std of the methods' scores in one cell, and its df."""
    dof = (cell["runs"] - 1).clip(lower=0)
    df = float(dof.sum())
    if df <= 0:
        return math.nan, 0.0
    return float(np.sqrt((dof * cell["std"] ** 2).sum() / df)), df


def score_z(cell: pd.DataFrame, m1: str, m2: str) -> tuple[float, float]:
    """(mean score of m1 - of m2) / its pooled standard error, and the df."""
    s, df = pooled(cell)
    r = cell.set_index("method_label")
    diff = float(r.at[m1, "mean"] - r.at[m2, "mean"])
    return _z(diff, s * math.sqrt(1 / r.at[m1, "runs"] + 1 / r.at[m2, "runs"])), df


def error_z(err: pd.DataFrame, m1: str, m2: str) -> tuple[float, float]:
    """(mean Fig. 1 error of m1 - of m2) / its Welch standard error, and the df."""
    a, b = err.loc[m1], err.loc[m2]
    va, vb = a["sem"] ** 2, b["sem"] ** 2
    diff = float(a["mean"] - b["mean"])
    return _z(diff, math.sqrt(va + vb)), welch_df([(va, a["runs"] - 1), (vb, b["runs"] - 1)])


def _z(diff: float, se: float) -> float:
    """``diff / se``; ±inf (or 0) where ``se`` is 0."""
    return diff / se if se > 0 else math.copysign(math.inf, diff) if diff else 0.0


def claim_reversals(ours: pd.DataFrame, fig1: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Claim 1: per cell the best approximant a, and the methods that reverse it."""
    rows, family = [], []
    for key, cell in ours.groupby(CELL, sort=False):
        _, ds, kernel, n = key
        err = fig1[(fig1["dataset"] == ds) & (fig1["kernel"] == kernel) & (fig1["n"] == n)]
        err = err.set_index("method_label")
        methods = [m for m in cell["method_label"] if m in err.index]
        if len(methods) < 2:
            continue
        best_err = min(methods, key=lambda m: err.at[m, "mean"])
        best_score = cell.loc[cell["method_label"].isin(methods)].nlargest(1, "mean")
        family += [
            (key, m, *score_z(cell, m, best_err), *error_z(err, m, best_err))
            for m in methods
            if m != best_err
        ]
        rows.append((*key, best_err, best_score["method_label"].iloc[0]))
    m = len(family)
    reversals: dict[tuple, list[str]] = {}
    for key, meth, zs, dfs, ze, dfe in family:
        if zs > sidak_z(m, ALPHA, dfs) and ze > sidak_z(m, ALPHA, dfe):
            reversals.setdefault(key, []).append(meth)
    rows = [(*r, ", ".join(reversals.get(r[:4], []))) for r in rows]
    return pd.DataFrame(rows, columns=[*CELL, "best_error", "best_score", "reversed_by"]), m


def claim_b(ours: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Claim 2: per cell B's mean, the best other method, their gap and the verdict."""
    rows, family = [], []
    for key, cell in ours.groupby(CELL, sort=False):
        labels = list(cell["method_label"])
        if B not in labels or len(labels) < 2:
            continue
        r = cell.set_index("method_label")
        others = [m for m in labels if m != B]
        best = max(others, key=lambda m: r.at[m, "mean"])
        b, top = r.at[B, "mean"], r.at[best, "mean"]
        family += [(key, r.at[m, "mean"] - b, *score_z(cell, m, B)) for m in others]
        rank = 1 + int((r.loc[others, "mean"] > b).sum())
        verdict = "best" if rank == 1 else "comparable"
        rows.append(
            (*key, b, best, top, top - b, rank, len(labels), r["exact_score"].iloc[0], verdict)
        )
    m = len(family)
    worse = {key for key, gap, z, df in family if gap > MARGIN and z > sidak_z(m, ALPHA, df)}
    rows = [(*r[:-1], "worse") if r[:4] in worse else r for r in rows]
    cols = ["B", "best_other", "best_other_mean", "gap", "rank", "methods", "exact", "verdict"]
    return pd.DataFrame(rows, columns=[*CELL, *cols]), m


def _claims(ours: pd.DataFrame, fig1: pd.DataFrame) -> dict:
    """Both claims on one learner's cells: counts, verdicts and the per-cell table."""
    rev, m1 = claim_reversals(ours, fig1) if not fig1.empty else (pd.DataFrame(), 0)
    bt, m2 = claim_b(ours)
    n_rev = int((rev["reversed_by"] != "").sum()) if not rev.empty else 0
    n_worse = int((bt["verdict"] == "worse").sum())
    mismatch = int((rev["best_error"] != rev["best_score"]).sum()) if len(rev) else 0
    best = int((bt["verdict"] == "best").sum())
    return {
        "hold1": n_rev > 0,
        "hold2": n_worse == 0,
        "worse": n_worse,
        "cells2": len(bt),
        "table": bt.merge(rev, on=CELL, how="left") if len(rev) else bt,
        "text1": f"In {mismatch} of {len(rev)} cells the method with the highest mean score is "
        f"not the one with the lowest Fig. 1 error; in {n_rev} cells some method has both a "
        "significantly higher error and a significantly higher score than the best "
        f"approximant ({m1} comparisons).",
        "text2": f"B (sr33) has the highest mean score in {best} of {len(bt)} cells and is "
        f"worse (another method's mean higher by more than {MARGIN} and significantly, {m2} "
        f"comparisons) in {n_worse}.",
    }


def build() -> Section | None:
    """The Fig. 2 section (None when the baseline is not committed)."""
    if not BASELINE.is_file():
        return None
    ours = pd.read_csv(BASELINE)
    fig1 = pd.read_csv(FIG1_BASELINE) if FIG1_BASELINE.is_file() else pd.DataFrame()
    learners = sorted(ours["learner"].unique())
    runs = sorted(int(r) for r in ours["runs"].unique())
    datasets = [d for d in DS_ORDER if d in set(ours["dataset"])]
    methods = [m for m in M_ORDER if m in set(ours["method_label"])]
    n_list = "{" + ", ".join(str(int(n)) for n in sorted(ours["n"].unique().tolist())) + "}"

    verdicts = {learner: _claims(ours[ours["learner"] == learner], fig1) for learner in learners}
    paper = PAPER_LEARNER if PAPER_LEARNER in verdicts else learners[0]
    v = verdicts[paper]
    claims = [
        Claim(
            "Claim 1, the best kernel approximation does not always give the best accuracy",
            v["hold1"],
            v["text1"],
            template=PARAGRAPH,
            words=("holds", "not shown", "not measured"),
        ),
        Claim(
            "Claim 2, B is comparable to or better than the others",
            v["hold2"],
            v["text2"],
            template=PARAGRAPH,
        ),
    ]
    worse = v["table"][v["table"]["verdict"] == "worse"]
    by_kernel = ", ".join(
        f"{kernel_name(k)} {int((worse['kernel'] == k).sum())} of "
        f"{int((v['table']['kernel'] == k).sum())}"
        for k in K_ORDER
        if k in set(v["table"]["kernel"])
    )
    worse_kernels = ", ".join(f"all {kernel_name(k)}" for k in K_ORDER if k in set(worse["kernel"]))
    merged = pd.concat([w["table"] for w in verdicts.values()], ignore_index=True)
    merged["paper_learner"] = merged["learner"] != PAPER_LEARNER
    orders = {"dataset": DS_ORDER, "kernel": K_ORDER}
    rows = [
        [
            r.learner,
            dataset_name(r.dataset),
            kernel_name(r.kernel),
            int(r.n),
            fmt(r.B),
            r.best_other,
            fmt(r.best_other_mean),
            fmt(r.gap, ".2g"),
            f"{r.rank} of {r.methods}",
            fmt(r.exact),
            r.verdict,
            getattr(r, "best_error", "") or "",
            getattr(r, "reversed_by", "") or "",
        ]
        for r in ordered(merged, ["paper_learner", "dataset", "kernel", "n"], orders).itertuples()
    ]
    cols = ["learner", "dataset", "kernel", "n", "B", "best other", "its mean", "gap", "B's rank"]
    cols += ["exact", "verdict", "best approximant (Fig. 1)", "reversed by"]
    doc = render(
        "fig2",
        ours_path=BASELINE,
        fig1_path=FIG1_BASELINE,
        cells=len(ours),
        learners=learners,
        datasets=", ".join(dataset_name(d) for d in datasets),
        kernels=", ".join(kernel_name(k) for k in K_ORDER if k in set(ours["kernel"])),
        methods=methods,
        n_list=n_list,
        runs="/".join(map(str, runs)),
        alpha=ALPHA,
        paper=paper,
        claims=claims,
        others={learner: w for learner, w in verdicts.items() if learner != paper},
        by_kernel=by_kernel,
        table=table(cols, rows),
    )
    note = (
        f"Fig. 2: {len(ours)} cells computed (n in {n_list}, {'/'.join(map(str, runs))} "
        f"runs); no paper numbers, two claims tested with {paper}: B is worse in "
        f"{v['worse']} of {v['cells2']} cells" + (f" ({worse_kernels})" if v["worse"] else "")
    )
    summary = Summary(claims=2, claims_hold=sum(c.holds for c in claims), note=note)
    return Section(
        "fig2", "Munkhoeva et al. (2018), Figure 2: downstream accuracy and R²", summary, doc
    )
