"""REPRODUCTION.md, Fig. 1 section: every cell of Munkhoeva et al. (2018) Fig. 1 against
ours (results/baseline/fig1_baseline.csv), with the verdicts of ``kernelbench verify``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.drawing import (
    DATASET_NAMES,
    KERNEL_NAMES,
    dataset_name,
    kernel_name,
    markdown_lines,
)
from kernelbench.reference import load_reference
from kernelbench.report.common import (
    BASE,
    Section,
    Summary,
    counts,
    fmt,
    ordered,
    pooled_lines,
    rel,
    with_sem,
)
from kernelbench.verify import (
    DEVIATES,
    KNOWN,
    NO_REFERENCE,
    REPRODUCED,
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


def cell_table(t: pd.DataFrame, ref: pd.DataFrame, cfg) -> pd.DataFrame:
    """One row per (paper cell, our variant compared with it); paper cells we have not
    run appear once with verdict 'not run'."""
    t = t[t["verdict"] != NO_REFERENCE]
    rows = []
    for r in ref.assign(n=ref["n"].astype(float)).itertuples():
        mine = t[
            (t["dataset"] == r.dataset)
            & (t["kernel"] == r.kernel)
            & (t["paper_method"] == r.method)
            & (t["n"] == float(r.n))
        ]
        paper = (r.dataset, r.kernel, r.paper_method)
        if mine.empty:
            rows.append((*paper, "", r.n, np.nan, np.nan, r.mean, np.nan, np.nan, "not run"))
        rows += [
            (*paper, m.method_label, r.n, m.runs, m.mean, r.mean, m.ratio, m.z, m.verdict)
            for m in mine.itertuples()
        ]
    out = pd.DataFrame(rows, columns=COLUMNS)
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
    cols = [c.replace("_", " ") for c in COLUMNS]
    return "\n".join(markdown_lines(cols, rows)) + "\n"


def ratio_summary(t: pd.DataFrame, num: str, den: str) -> pd.DataFrame:
    """mean over n of mean(num) / mean(den), per dataset and kernel (same data seed)."""
    a = t[t["method_label"] == num].set_index(["dataset", "kernel", "n"])["mean"]
    b = t[t["method_label"] == den].set_index(["dataset", "kernel", "n"])["mean"]
    r = (a / b).dropna().rename("ratio").reset_index()
    if r.empty:
        return r
    g = r.groupby(["dataset", "kernel"])["ratio"].agg(["min", "max", "mean"]).reset_index()
    return ordered(g, ["dataset", "kernel"], ORDERS)


def findings(t: pd.DataFrame, cfg, pooled: pd.DataFrame | None = None) -> list[str]:
    out = []
    orf = ratio_summary(t, "orf", "orf_tallqr")
    if not orf.empty:
        lines = markdown_lines(
            ["dataset", "kernel", "true ORF / tall-QR (min–max over n)"],
            (
                [
                    dataset_name(r.dataset),
                    kernel_name(r.kernel),
                    f"{r.min:.2f}–{r.max:.2f}",
                ]
                for r in orf.itertuples()
            ),
        )
        rbf = orf[orf["kernel"] == "rbf"]
        arc = orf[orf["kernel"] != "rbf"]
        out.append(
            "**The ORF construction matters, and the paper's Gort is not Yu et al.'s ORF.** "
            "The paper's code built Gort for D > d from one QR factorisation of a tall "
            "D x d Gaussian matrix with chi(D) row norms; Yu et al.'s ORF stacks "
            "independent d x d orthogonal blocks with chi(d) norms. On the same X, Y, the "
            "error of true ORF relative to the published construction is (mean over n): "
            f"Gaussian kernel {_span(rbf)}, arc-cosine kernels {_span(arc)}. So the "
            "published construction is not a bug that hurt Gort: on the Gaussian kernel it "
            "is clearly *better* than correct ORF. A likely reason: a row of the tall Q "
            "has squared norm Beta(d/2, (D-d)/2), so with the chi(D) scale each row is "
            "still (up to the QR sign convention, which the code does not correct) "
            "marginally N(0, I), while the D rows are coupled as a whole (the columns of Q "
            "are orthonormal: the D directions are exactly isotropic), not only within "
            "blocks of d. The paper's Gort curves therefore describe this estimator, not "
            "ORF; `orf_tallqr` reproduces them, `orf` is shown alongside.\n\n" + "\n".join(lines)
        )
        out.append(
            "**The published construction is biased for odd kernels.** The paper's code "
            "does not correct the signs of its QR factor. LAPACK's Householder QR returns "
            "Q with sign(Q_11) < 0 (and the other columns similarly tied to the input), so "
            "the rows are not symmetric in distribution. That is harmless for the even "
            "Gaussian integrand, but for the arc-cosine kernels the mean of many draws "
            "misses the exact kernel: `tests/test_features.py::"
            "test_published_tall_qr_orf_is_biased_for_odd_kernels` measures a bias "
            "statistic above 20, where unbiased maps give about 1. At the paper's budgets "
            "the bias is small next to the variance, which is why Gort still looks fine."
        )
    qmc = t[t["method_label"] == "qmc"].dropna(subset=["ratio"])
    if not qmc.empty:
        q = qmc.groupby(["dataset", "kernel"])["ratio"].agg(["min", "max"]).reset_index()
        q = q[q["dataset"] != "usps"] if (q["dataset"] != "usps").any() else q
        q = ordered(q, ["dataset", "kernel"], ORDERS)
        parts = [
            f"{dataset_name(r.dataset)} {kernel_name(r.kernel)} {r.min:.2f}–{r.max:.2f}"
            for r in q.itertuples()
        ]
        out.append(
            "**QMC depends on the generator.** With scipy's scrambled Halton (a fresh "
            "scramble per run) our QMC errors relative to the paper's are: "
            + "; ".join(parts)
            + ". The paper's generator is not the one kernelbench uses, so QMC is listed "
            "as a known deviation; the size of the gap shows that 'QMC' in a figure is not "
            "one method but a family whose accuracy depends on the point set."
        )
    usps = t[(t["dataset"] == "usps")].dropna(subset=["ratio"])
    if not usps.empty:
        u = usps.groupby("kernel")["ratio"].agg(["min", "max"])
        parts = [
            f"{kernel_name(k)} {r['min']:.2f}–{r['max']:.2f}"
            for k, r in u.reindex([k for k in K_ORDER if k in u.index]).iterrows()
        ]
        out.append(
            "**USPS: the data version changes the Gaussian-kernel errors, not the arc-cosine "
            "ones much.** The mirror has the ESL USPS (pixels in [0, 1]); the paper used "
            "LIBSVM's (values in [-1, 1]). With gamma = 1/d, doubling the pixel range "
            "quadruples the squared distances, so the Gaussian kernel matrix and its "
            "relative errors differ; the arc-cosine kernels depend on angles (order 0) and "
            "are homogeneous (order 1), so only the shift of the range matters. Ratio ours / "
            "paper by kernel: " + "; ".join(parts) + "."
        )
        sr = usps[(usps["method_label"] == "sr33") & (usps["kernel"] == "arccos1")]
        rest = usps[(usps["method_label"] != "sr33") & (usps["kernel"] == "arccos1")]
        if len(sr) and len(rest):
            out.append(
                "**The most accurate method is the most sensitive to the data version.** "
                "On USPS with the arc-cosine-1 kernel, sr33's ratio ours / paper is "
                f"{sr['ratio'].min():.2f}–{sr['ratio'].max():.2f} while the other methods "
                f"stay at {rest['ratio'].min():.2f}–{rest['ratio'].max():.2f}. sr33's "
                "error is an order of magnitude smaller than theirs, so the difference of "
                "the pixel distributions (ESL vs LIBSVM's smoothed values) is no longer "
                "hidden by Monte Carlo noise. Dense Haar rotations give the same number as "
                "butterflies here, and so does mapping the pixels to [-1, 1] (an affine "
                "stand-in for LIBSVM's range), so neither the rotation nor the range alone "
                "explains it; only the LIBSVM file itself could settle it."
            )
    lk = t[(t["dataset"] == "leukemia") & t["ratio"].notna()]
    b = lk[lk["method_label"] == "sr33"]
    rest = lk[lk["method_label"] != "sr33"]
    if len(b) and len(rest):
        out.append(
            "**LEUKEMIA's B cells pass the check but sit above the paper.** On the rebuilt "
            f"LIBSVM leu, sr33's mean error is {b['ratio'].min():.2f}-{b['ratio'].max():.2f}x "
            f"the paper's in every cell, while G and ROM land at {rest['ratio'].min():.2f}-"
            f"{rest['ratio'].max():.2f}x. The B cells are within tolerance (|z| <= "
            f"{b['z'].abs().max():.1f}) only because two samples of 10 of the 38 rows vary "
            f"a lot (tau / mean {b['tau'].div(b['paper_mean']).min():.2f}-"
            f"{b['tau'].div(b['paper_mean']).max():.2f} on LEUKEMIA). Averaged over six data "
            "samples the gap persists at n = 1 (the rotation study below), so it is not the "
            "paper's sample alone; the study does not find it in the construction either."
            + _leukemia_pooled(pooled)
        )
    rot = sr33_rotation_finding(ROTATION_STUDY)
    if rot:
        out.append(rot)
    within = t[t["verdict"].str.startswith(KNOWN) & (t["within_tolerance"] == True)]  # noqa: E712
    if len(within):
        out.append(
            f"**{len(within)} of the {int(t['verdict'].str.startswith(KNOWN).sum())} known "
            "deviations are within tolerance anyway** (see the z column): they are listed "
            "as known because their setup differs from the paper's, decided before looking "
            "at the numbers, not because they failed."
        )
    return out


#: scripts/measure_sr33_rotation.py --out (per data seed and rotation variant)
ROTATION_STUDY = BASE / "sr33_rotation.csv"


def sr33_rotation_finding(path: Path) -> str | None:
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
    seeds = df.groupby(["dataset", "kernel", "n", "variant"])["seed"].nunique().min()
    runs = int(df["runs"].min())

    def span(cells: list[tuple[str, str]]) -> str:
        vals = [to_paper[c] for c in cells if c in to_paper]
        return f"{min(vals):.2f}-{max(vals):.2f}x" if vals else "not measured"

    same_data = [c for c in to_paper if c[0] in ("mnist", "cifar100")]
    gap = [c for c in to_paper if c[0] == "leukemia" or c == ("usps", "arccos1")]

    return (
        "**sr33's gap on LEUKEMIA and USPS follows the data, not the rotation.** The "
        "published code builds its butterflies differently from ours: Genz's generating-"
        "vector angles for the next power of two, the angles past d - 1 set to zero and "
        "the pairs that reach past d left alone, and one butterfly B and permutation P "
        "applied three times, (BP)^3 (ours: three independent butterflies with uniform "
        "angles on an unbalanced tree). `scripts/measure_sr33_rotation.py` runs both, and "
        f"on USPS dense Haar rotations, on the same X, Y samples ({seeds} data seeds x "
        f"{runs} runs each; `{rel(ROTATION_STUDY)}`): "
        + "; ".join(parts)
        + ". The published construction gives "
        f"{min(to_ours):.2f}-{max(to_ours):.2f} of our error; with our construction sr33 "
        f"lands at {span(same_data)} the paper on MNIST and CIFAR-100 (d not a power of "
        "two, the paper's data or a sample of it) and at "
        f"{span(gap)} on LEUKEMIA and on USPS with the arc-cosine-1 kernel, the two "
        "datasets whose files differ from the paper's (LEUKEMIA rebuilt from the raw "
        "values, USPS the ESL version, whose Gaussian-kernel errors are off for every "
        "method, see above). So neither the butterflies nor d not being a power of two "
        "explain the gap; what in those two files moves sr33 (and hardly rff) is not "
        "determined."
    )


def _leukemia_pooled(pooled: pd.DataFrame | None) -> str:
    """What the pooled bias test says about LEUKEMIA's sr33 families."""
    if pooled is None or pooled.empty:
        return ""
    lk = pooled[(pooled["dataset"] == "leukemia") & (pooled["method_label"] == "sr33")]
    if lk.empty:
        return ""
    parts = "; ".join(
        f"{kernel_name(r.kernel)} mean ratio {r.ratio:.2f}, z {r.z:+.2f} (z_crit {r.z_crit:.2f})"
        for r in lk.itertuples()
    )
    if (lk["verdict"] == DEVIATES).any():
        return f" The pooled bias test (below) flags them: {parts}."
    return (
        f" The pooled bias test (below) does not flag them either: {parts}. Pooling the "
        "five n removes most of the run noise but not the sample effect, which the paper's "
        "one X, Y and ours share across n: a common gap of "
        f"{lk['ratio'].min():.2f}-{lk['ratio'].max():.2f}x is within z_crit x sqrt(2) cv of "
        f"one pair of 10-row samples (cv {lk['cv'].min():.2f}-{lk['cv'].max():.2f}). So it is "
        "not a detected deviation, nor a known one (its cause is not measured): it is "
        "reported here as a finding, not as a verdict."
    )


def _span(df: pd.DataFrame) -> str:
    if df.empty:
        return "not measured"
    return f"{df['mean'].min():.2f}–{df['mean'].max():.2f}x"


def build(config: str = "munkhoeva2018_fig1", ours_path: Path | None = None) -> Section:
    """The Fig. 1 section: every paper cell against ours, verdicts as ``kernelbench verify``."""
    cfg = load_config(config)
    ours_path = ours_path or cfg.baseline
    ours = with_sem(pd.read_csv(ours_path))
    ref = load_reference(cfg.reference)
    ver = verify_table(ours, cfg, ref=ref)
    t, rate, m, pooled = ver.table, ver.rate, ver.m, ver.pooled
    zcs = t["z_crit"].dropna()
    cells = cell_table(t, ref, cfg)
    tau = load_sample_variation(cfg.sample_variation)

    n_ref = len(ref)
    n_rep, n_known, n_dev, n_not = counts(paper_cell_verdicts(cells)["verdict"])
    runs = sorted(int(r) for r in ours["runs"].unique())

    doc = [
        f"Paper cells: {n_ref} (results/reference/{cfg.reference}.csv). Ours: "
        f"`{rel(ours_path)}` ({len(ours)} cells, runs per cell {runs}, data seed "
        f"{sorted(ours['seed'].unique().tolist()) if 'seed' in ours else '?'}, datasets "
        "from the mirror). Regenerate with `kernelbench verify --grid full` (see "
        "results/baseline/README.md); the CI checks the reduced grid.",
        "",
        f"**{n_rep} reproduced, {n_known} known deviations, {n_dev} deviate"
        + (
            f", {n_not} paper cells not in our table (see results/baseline/README.md for "
            "what it holds)"
            if n_not
            else ""
        )
        + "** of the paper's cells, by dataset below. A Gort cell counts as the verdict of "
        "`orf_tallqr` (the published construction, which must reproduce); `orf`, the "
        "correct ORF, is compared with the same numbers as a known deviation and listed "
        "in the appendix, one row per paper cell and variant.",
        "",
        per_dataset_table(cells),
        f"Tolerance: |z| <= z_crit, z = (ours - paper) / sqrt(se_ours^2 + se_paper^2 + "
        f"2 tau^2); z_crit ({fmt(zcs.min(), '.2f')}-{fmt(zcs.max(), '.2f')}) is the two-sided "
        f"Student t quantile at the Welch-Satterthwaite df of each cell for the Sidak "
        f"per-test rate {rate:.2g} (family-wise alpha = {cfg.alpha:g} over the {m} "
        "comparisons that must reproduce); tau = cv(dataset, kernel) x paper mean, cv "
        "measured (table below). See [docs/verification.md](docs/verification.md).",
        "",
        *pooled_body(pooled),
        "### Known deviations",
        "",
    ]
    for k in cfg.known_deviations:
        scope = ", ".join(
            f"{name} {', '.join(vals)}"
            for name, vals in (
                ("datasets", k.datasets),
                ("kernels", k.kernels),
                ("methods", k.methods),
                ("n", k.ns),
                ("data from", k.data_sources),
            )
            if vals
        )
        text = f"- **{k.reason}** ({scope})."
        if k.detail:
            text += f" {k.detail}"
        if k.compare_with:
            text += f" Reproduced instead by `{k.compare_with}`."
        doc.append(text)
    doc += [
        "",
        "Not known deviations, decided from the datasets' provenance (MANIFEST.json, "
        "PROTOCOL.md) before their numbers were compared, so their cells must reproduce: "
        "**LEUKEMIA** is LIBSVM's leu rebuilt from the raw Golub et al. values with "
        "LIBSVM's documented preprocessing (its unknown row order only changes which 10 "
        "of the 38 rows are drawn, which tau measures; rounding moves the data, not the "
        "error); **MNIST** draws from the official 60000 train images where the original "
        "loader kept 55000 of them; **CIFAR-100** draws its 50 images from the mirror's "
        "first 100 train images of every class instead of all 50000 (the same class-"
        "balanced image distribution).",
    ]
    doc += ["", "### What kernelbench finds that the paper does not say", ""]
    for para in findings(t, cfg, pooled):
        doc += [para, ""]
    if tau is not None:
        doc += [
            "### Sample-to-sample variation (tau / mean)",
            "",
            "Measured with scripts/measure_sample_variation.py "
            f"(`{rel(cfg.sample_variation)}`): how much a cell's mean error moves between "
            "independent X, Y samples, pooled per dataset and kernel.",
            "",
            *markdown_lines(
                ["dataset", "kernel", "tau / mean", "cells", "seeds", "runs"],
                (
                    [
                        dataset_name(r.dataset),
                        kernel_name(r.kernel),
                        f"{r.cv:.3f}",
                        r.cells,
                        r.seeds,
                        r.runs,
                    ]
                    for r in tau.itertuples()
                ),
            ),
            "",
        ]
    doc += ["Every paper cell is listed in the appendix ([Fig. 1, every cell](#fig1-cells)).", ""]
    appendix = [
        '<a id="fig1-cells"></a>',
        "",
        "## Fig. 1, every cell",
        "",
        cells_markdown(cells),
        '<a id="fig1-pooled"></a>',
        "",
        "## Fig. 1, every pooled family",
        "",
        pooled_lines(pooled, DATASET_NAMES, KERNEL_NAMES)[1],
    ]
    title = "Munkhoeva et al. (2018), Figure 1: kernel approximation error"
    summary = Summary(n_ref, n_rep, n_known, n_dev, n_not, note=_pooled_note(pooled))
    return Section("fig1", title, summary, doc, appendix, cells)


def _pooled_note(pooled: pd.DataFrame) -> str:
    rep, known, dev, _ = counts(pooled["verdict"])
    return (
        f"pooled bias test across n: {len(pooled)} (dataset, kernel, method) families, "
        f"{rep} reproduced, {known} known deviations, {dev} deviate"
    )


def pooled_body(pooled: pd.DataFrame) -> list[str]:
    """The pooled bias test on every dataset: counts per dataset, the largest |z|."""
    per_dataset, _ = pooled_lines(pooled, DATASET_NAMES, KERNEL_NAMES)
    v = pooled["verdict"].astype(str)
    dev = pooled[v == DEVIATES]
    return [
        "### Pooled across n: a systematic ratio to the paper",
        "",
        "Each (dataset, kernel, method) family is also tested as a whole, as `kernelbench "
        "verify` does: the mean over n of (ours - paper) / paper against the run noise of "
        "both sides and the sample effect (2 cv^2), which the family's cells share and the "
        "test bounds as fully shared; same Sidak family as the cells "
        "([docs/verification.md](docs/verification.md#the-pooled-bias-test-a-systematic-"
        "ratio-across-n)). "
        + (
            f"**{len(dev)} families deviate:** "
            + "; ".join(
                f"{dataset_name(r.dataset)} {kernel_name(r.kernel)}"
                f" `{r.method_label}` (ratio {r.ratio:.3f}, z {r.z:+.2f})"
                for r in dev.itertuples()
            )
            + "."
            if len(dev)
            else "**No family that must reproduce deviates**: no systematic ratio hides "
            "inside the cells' tolerances beyond what the shared sample effect allows."
        ),
        "",
        per_dataset,
        "Every family: [appendix](#fig1-pooled).",
        "",
    ]


def paper_cell_verdicts(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per paper cell: the verdict of the variant that must reproduce it
    (Gort: ``orf_tallqr``, not ``orf``), else a known deviation, else not run."""
    rank = {REPRODUCED: 0, DEVIATES: 0}

    def pick(v: pd.Series) -> str:
        order = sorted(v, key=lambda x: rank.get(x, 1 if x.startswith(KNOWN) else 2))
        return order[0]

    keys = ["dataset", "kernel", "paper", "n"]
    return cells.groupby(keys, sort=False)["verdict"].agg(pick).reset_index()


def per_dataset_table(cells: pd.DataFrame) -> str:
    """Verdict counts per dataset, one per paper cell (see :func:`paper_cell_verdicts`)."""
    per_cell = paper_cell_verdicts(cells)
    rows, total = [], np.zeros(5, dtype=int)
    for ds in [d for d in DS_ORDER if d in set(per_cell["dataset"])]:
        v = per_cell.loc[per_cell["dataset"] == ds, "verdict"]
        row = np.array([len(v), *counts(v)])
        total += row
        rows.append([dataset_name(ds), *row])
    rows.append(["**all**", *(f"**{x}**" for x in total)])
    cols = ["dataset", "paper cells", "reproduced", "known deviations", "deviate", "not run"]
    return "\n".join(markdown_lines(cols, rows)) + "\n"
