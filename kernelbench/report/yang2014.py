"""REPRODUCTION.md, Yang et al. 2014 section: Figs. 2-4 (QMC sequences against MC, box
discrepancy beside the Gram error, adaptive QMC), each claim checked on our committed
numbers (results/baseline/yang2014_*.csv) with criteria fixed before the numbers;
Tables 1-2 (cpu, census) are runnable online, not run here (no network).
"""

from __future__ import annotations

import pandas as pd

from kernelbench.drawing import markdown_lines
from kernelbench.report import common
from kernelbench.report.common import BASE, Section, Summary, claim, fmt, paras

#: Their four sequences (Sec. 6.1): MATLAB's RR2 Halton and scrambled Sobol', Nuyens'
#: lattice and digital net (qmcpy's CBC lattice and Sobol' net here).
QMC = {
    "qmc_halton_rr2": "Halton (RR2)",
    "qmc_sobol": "Sobol'",
    "qmc_lattice": "lattice",
    "qmc_digital_net": "digital net",
}
#: Shown beside them, not claims: our scrambled Halton and the legacy Korobov lattice.
EXTRA = {
    "qmc": "scrambled Halton",
    "qmc_lattice_korobov": "Korobov lattice (legacy)",
    "qmc_digital_net_order2": "order-2 net",
}
#: The verdicts of the previous report (Fig. 1 subsets; Halton = scrambled Halton, lattice =
#: Korobov rule, digital net = digitally shifted Sobol' net), claim by claim.
PREVIOUS_FIG2 = [
    ("Halton beats MC", False, "4 of 8"),
    ("Sobol' beats MC", False, "7 of 8"),
    ("lattice beats MC", False, "2 of 8"),
    ("digital net beats MC", True, "8 of 8"),
    ("Halton below Sobol'", False, "1 of 8"),
    ("lattice below Sobol'", False, "1 of 8"),
    ("digital net below Sobol'", True, "8 of 8"),
]
PREVIOUS_FIG4 = [True, True, True, False]  # (a) letter, (a) powerplant, (c) letter, (c) powerplant
#: Fig. 3: "strong correlation" = mean over s of the Spearman correlation across the
#: sequences (MC included) between discrepancy and spectral error >= STRONG; "the lattice
#: starts low and does not decrease" = lattice below MC and below the median sequence at
#: the smallest s, and its discrepancy at the largest s above FLAT x that at the smallest
#: (MC falls like 1/s: x 1/8 over n = 1..8). Fixed before the numbers.
STRONG = 0.5
FLAT = 0.5
FIG4_METRICS = {
    "discrepancy": "discrepancy",
    "max": "max squared error",
    "mean": "mean squared error",
    "norm": "relative spectral error",
}


def fig2_claims(t: pd.DataFrame, lines: list[str]) -> list[bool]:
    """The seven Fig. 2 claims: each sequence below MC, and Halton, lattice and digital net
    below Sobol', in every (dataset, n) cell of the relative spectral error."""
    m = t[t["metric"] == "spec"].set_index(["dataset", "n", "method_label"])["mean"]
    cells = sorted({(ds, n) for ds, n, _ in m.index})
    sobol = 'is below Sobol\' ("Digital Net, Lattice and Halton yield much lower error"):'
    checks = [
        (a, "rff", f"{name} beats MC (Fig. 2):", "(dataset, n) cells below MC")
        for a, name in QMC.items()
    ]
    checks += [
        (a, "qmc_sobol", f"{QMC[a]} {sobol}", "cells")
        for a in ["qmc_halton_rr2", "qmc_lattice", "qmc_digital_net"]
    ]
    out = []
    for a, b, text, what in checks:
        hold, total, fails = common.ratio_check(m, cells, a, b, lambda r: r < 1, "n")
        ev = f"{hold} of {total} {what} (error ratio {a}/{b}){fails}."
        out.append(claim(lines, total > 0 and hold == total, text, ev))
    return out


def ratio_table(t: pd.DataFrame) -> list[str]:
    """Mean spectral error per (dataset, n) of MC and ratio of each sequence to it."""
    m = t[t["metric"] == "spec"].pivot_table(
        index=["dataset", "n"], columns="method_label", values="mean"
    )
    cols = [c for c in [*QMC, *EXTRA] if c in m.columns]
    rows = (
        [ds, f"{n:g}", fmt(row["rff"], ".3g"), *(fmt(row[c] / row["rff"], ".3g") for c in cols)]
        for (ds, n), row in m.iterrows()
    )
    return markdown_lines(["dataset", "n", "rff", *(f"{c}/rff" for c in cols)], rows)


def fig3_claims(t: pd.DataFrame, box: str, lines: list[str], lattice: bool) -> list[bool]:
    """Fig. 3: discrepancy and Gram error correlate across sequences (per dataset); on the
    full box also the lattice's flat discrepancy. Criteria: ``STRONG``, ``FLAT``."""
    from scipy.stats import spearmanr

    out = []
    for ds in sorted(t["dataset"].unique()):
        g = t[t["dataset"] == ds].pivot_table(
            index=["n", "method_label"], columns="metric", values="mean"
        )
        rhos = []
        for _, cell in g.groupby(level="n"):
            rhos.append(float(spearmanr(cell["discrepancy"], cell["spec"]).statistic))
        overall = float(spearmanr(g["discrepancy"], g["spec"]).statistic)
        mean_rho = sum(rhos) / len(rhos)
        out.append(
            claim(
                lines,
                mean_rho >= STRONG,
                f"on {ds}, box {box}, lower discrepancy goes with lower Gram error (Fig. 3, "
                '"strong correlation"):',
                f"Spearman correlation across the {len(g.loc[g.index[0][0]])} point sets at "
                f"each n: {', '.join(fmt(r, '.2f') for r in rhos)} (mean {fmt(mean_rho, '.2f')},"
                f" criterion >= {STRONG}); over all (set, n) cells {fmt(overall, '.2f')}.",
            )
        )
        if not lattice:
            continue
        disc = g["discrepancy"].unstack("method_label")
        lo, hi = disc.index.min(), disc.index.max()
        first = disc.loc[lo]
        starts_low = first["qmc_lattice"] < first["rff"] and first["qmc_lattice"] < first.median()
        flat = disc.loc[hi, "qmc_lattice"] / first["qmc_lattice"]
        mc = disc.loc[hi, "rff"] / first["rff"]
        out.append(
            claim(
                lines,
                bool(starts_low and flat > FLAT),
                f"on {ds}, the lattice starts with low discrepancy which does not decrease "
                "with s (Fig. 3):",
                f"at n = {lo:g} lattice {fmt(first['qmc_lattice'], '.3g')}, MC "
                f"{fmt(first['rff'], '.3g')}, median of the sets {fmt(first.median(), '.3g')};"
                f" from n = {lo:g} to {hi:g} the lattice's falls by x{fmt(flat, '.3g')} "
                f"(criterion > {FLAT}), MC's by x{fmt(mc, '.3g')}.",
            )
        )
    return out


def _trace(t: pd.DataFrame, ds: str, label: str, metric: str) -> pd.DataFrame:
    g = t[(t["dataset"] == ds) & (t["method_label"] == label) & (t["metric"] == metric)]
    return g.sort_values("iteration")


def fig4_claims(
    t: pd.DataFrame, lines: list[str], full: str = "qmc_adaptive", half: str = "qmc_adaptive_half"
) -> list[bool]:
    """Fig. 4 (a) every metric goes down on []b; (b) where the errors rise again (notes);
    (c) []b/2 ends with lower mean and norm errors; ``full``/``half`` name the runs."""
    out = []
    datasets = sorted(t["dataset"].unique())
    # (a): on the bounding box every metric goes down (last iteration below the start)
    for ds in datasets:
        parts, ok = [], True
        for metric, name in FIG4_METRICS.items():
            g = _trace(t, ds, full, metric)
            first, last = float(g["mean"].iloc[0]), float(g["mean"].iloc[-1])
            ok &= last < first
            parts.append(f"{name} {fmt(first, '.3g')} → {fmt(last, '.3g')}")
        out.append(
            claim(
                lines,
                ok,
                f"on {ds}, box []b, every metric goes down over the iterations (Fig. 4(a)):",
                "; ".join(parts) + f" (iteration 0 → {int(g['iteration'].iloc[-1])}).",
            )
        )
    # (b): the mean and norm errors can rise again (why they stop early): observed where?
    for ds in datasets:
        for label in [full, half]:
            notes = []
            for metric in ["mean", "norm"]:
                g = _trace(t, ds, label, metric)
                i = int(g["mean"].to_numpy().argmin())
                lo, last = float(g["mean"].iloc[i]), float(g["mean"].iloc[-1])
                notes.append(
                    f"{FIG4_METRICS[metric]} lowest at iteration {int(g['iteration'].iloc[i])}"
                    f" ({fmt(lo, '.3g')}), {fmt(last / lo, '.3g')}x that at the end"
                )
            lines.append(f"  - {ds}, {label}: " + "; ".join(notes) + ".")
    # (c): on []b/2 the mean and norm errors end lower than on []b
    for ds in datasets:
        parts, ok = [], True
        for metric in ["mean", "norm"]:
            on_b = float(_trace(t, ds, full, metric)["mean"].iloc[-1])
            on_half = float(_trace(t, ds, half, metric)["mean"].iloc[-1])
            ok &= on_half < on_b
            parts.append(
                f"{FIG4_METRICS[metric]} {fmt(on_b, '.3g')} ([]b) vs {fmt(on_half, '.3g')}"
            )
        out.append(
            claim(
                lines,
                ok,
                f"on {ds}, optimising on []b/2 ends with lower mean and norm errors (Fig. 4(c)):",
                "; ".join(parts) + ".",
            )
        )
    return out


def build() -> Section | None:
    f2, f4 = BASE / "yang2014_fig2.csv", BASE / "yang2014_fig4.csv"
    pca = common.first_file(BASE / "yang2014_fig2_pca.csv", BASE / "yang2014_fig2_pca_reduced.csv")
    if not f2.exists() or not f4.exists() or pca is None:
        return None
    body = [
        *paras(
            "Yang et al. give Figs. 2-4 as figures only: their claims are checked on our numbers, "
            "with criteria fixed before the numbers (listed with each claim). Commands: "
            "`kernelbench run experiment=yang2014_fig2_pca_reduced` (or `yang2014_fig2_pca`, "
            "the full grid, about an hour), `experiment=yang2014_fig2`, `experiment=yang2014_fig3`,"
            " `experiment=yang2014_fig3_half`, `experiment=yang2014_fig4`, "
            "`experiment=yang2014_fig4_nn50`, then `kernelbench baseline EXPERIMENT "
            "results/runs` for each.",
            "Their sequences (Sec. 6.1): MATLAB's Halton with the deterministic RR2 scrambling "
            "(`qmc_halton_rr2`, written here: no Python library has RR2; it reproduces MATLAB's "
            "documented points), MATLAB's scrambled Sobol' (`qmc_sobol`: scipy, linear matrix "
            "scramble + digital shift), Nuyens' lattice and digital net, from qmcpy: the CBC "
            "lattice of Cools, Kuo & Nuyens, randomly shifted (`qmc_lattice`), and the Joe-Kuo "
            "Sobol' net with linear matrix scramble + digital shift (`qmc_digital_net`). "
            "Alongside, not claims: our scrambled Halton (`qmc`, Fig. 1's), the legacy Korobov "
            "lattice (`qmc_lattice_korobov`) and qmcpy's order-2 interlaced Sobol' net "
            "(`qmc_digital_net_order2`). docs/qmc.md has the generators and their sources.",
            "### Fig. 2: relative spectral Gram error against s",
            f"Their setup (`{pca.stem}`): the Gram matrix K(X, X) of one random subset after PCA "
            "to 250 dimensions (principal axes of the scaled part), γ = 1/d, s = D = 2n(d + 1). "
            "Deviations, decided before the numbers: USPST (1506 rows) is not in the mirror; the "
            "stand-in is a random 1506 of the 2007 USPS test images (d = 256 before PCA); σ is "
            "1/√(2γ) = √(d/2), not their cross-validated σ; "
            + (
                "10 trials, 5000 MNIST rows."
                if pca.stem == "yang2014_fig2_pca"
                else "the reduced grid: 1500-row subsets of both (not 1506 and 5000) and 5 trials."
            ),
            f"![Yang Fig. 2, PCA 250](results/baseline/{pca.stem}.png)",
        ),
    ]
    tp = pd.read_csv(pca)
    claims = fig2_claims(tp, body)
    body += ["", "Spectral error of MC and each set's ratio to it:", "", *ratio_table(tp)]
    t2 = pd.read_csv(f2)
    body += [
        "",
        "The same seven claims in the earlier setting (`yang2014_fig2`: Munkhoeva et al.'s "
        "Fig. 1 subsets, two random 550-row subsets, cross Gram matrix, full dimension 256 "
        "and 784, 10 trials), not counted again:",
        "",
    ]
    again: list[str] = []
    verdicts = fig2_claims(t2, again)
    body += [*again, "", "Ratios to MC there:", "", *ratio_table(t2), ""]
    body += [
        "Verdicts of the earlier report (same setting, the old generators: scrambled "
        'Halton as "Halton", the Korobov lattice, a digitally shifted Sobol\' net) '
        "against the new generators in that setting:",
        "",
        *common.verdict_changes("claim", verdicts, PREVIOUS_FIG2),
        "",
        "Measured, not decided in advance. (1) With their generators the Fig. 2 claims "
        "still fail, most of them in their own setup too: Sobol' and the digital net beat "
        "MC there in every cell, the lattice in all but the smallest s, the RR2 Halton only "
        "from n = 1 or 2 on; none of Halton, lattice and digital net is below Sobol'. "
        "(2) The digital net cannot be below Sobol' here: qmcpy 2.4 ships only the Joe-Kuo "
        "matrices (Niederreiter-Xing and the other LDData files are downloaded on first use "
        "and stop at 32 dimensions), so `qmc_digital_net` is the Sobol' net with the same "
        "randomisation law as scipy's scrambled Sobol' (linear matrix scramble + digital "
        'shift): their ratio is 0.97-1.18, a tie. The earlier "net below Sobol\'" verdict '
        "came from a digital shift *without* the matrix scramble, a different estimator "
        "(`randomize=ds` is the nearest option). (3) PCA is what makes their lattice and their "
        "Halton work: CBC lattices and the Halton sequence are built for coordinates of "
        "decreasing importance, which principal coordinates are and raw pixels are not. On "
        "the raw 256/784 pixels the CBC lattice is level with MC (0.94-1.23) and the RR2 "
        "Halton 1.7-11x worse than MC; after PCA the lattice is at 0.6-1.02 of MC and the "
        "RR2 Halton at 0.58-1.26. The deterministic RR2 permutation is the same for every "
        "digit and leaves the correlations between high prime bases that a random scramble "
        "removes: our scrambled Halton (`qmc`) is below RR2 in every cell. (4) The legacy "
        "Korobov lattice is within 0.6-0.7x of MC after PCA but up to 3.5x worse than MC on "
        "the raw pixels, and not monotone in s.",
    ]
    f3, f3h = BASE / "yang2014_fig3.csv", BASE / "yang2014_fig3_half.csv"
    if f3.exists():
        body += [
            "",
            *paras(
                "### Fig. 3: box discrepancy beside the Gram error",
                "Their datasets (cpu, d = 21, box []b; census, d = 119, box []b/2) are not in the "
                "mirror: LETTER (d = 16) and Powerplant (d = 4), Fig. 1 subsets (550 + 550 rows), "
                "γ = 1/d, n = 1, 2, 4, 8, 10 runs; the box is the training subset's bounding box "
                "in frequency units (`yang2014_fig3`) and its central half (`yang2014_fig3_half`)."
                " The discrepancy is Theorem 9's π^d D(S)²/∏b_j of the map's frequencies "
                "(protocol `qmc_discrepancy`).",
                "![Yang Fig. 3](results/baseline/yang2014_fig3.png)",
            ),
        ]
        claims += fig3_claims(pd.read_csv(f3), "[]b", body, lattice=True)
        if f3h.exists():
            claims += fig3_claims(pd.read_csv(f3h), "[]b/2", body, lattice=False)
            body += ["", "![Yang Fig. 3, []b/2](results/baseline/yang2014_fig3_half.png)"]
        body += [
            "",
            "Measured, not decided in advance: the correlation across point sets at a fixed s "
            "is real but weaker than over all cells (where both fall with s); the sets whose "
            "discrepancy is lowest (Sobol', the digital net) have the lowest Gram error on "
            "LETTER. qmcpy's CBC lattice is an embedded (extensible) rule, and its "
            'discrepancy falls with s like the others; the "flat lattice" of their Fig. 3 '
            "is what our legacy Korobov rule shows (its discrepancy rises again at n = 8 on "
            "both datasets, and so does its Gram error), so their observation fits a "
            "non-embedded lattice, not a CBC sequence.",
        ]
    t4 = pd.read_csv(f4)
    body += [
        "",
        *paras(
            "### Fig. 4: adaptive QMC over the CG iterations",
            "Their datasets (cpu, d = 21; housing, d = 13) are not in the mirror: LETTER "
            "(d = 16) and Powerplant (d = 4), Fig. 1 subsets, γ = 1/d, s = 2n(d + 1) with "
            "n = 3 (102 and 30 points), 30 nonlinear-CG iterations on the box discrepancy of the "
            "training subset's bounding box []b and of []b/2. The claims are checked from their "
            "start, the RR2 Halton sequence (`qmc_adaptive_rr2`, `qmc_adaptive_half_rr2`: "
            "deterministic, so the 10 runs coincide); the scrambled-Halton start "
            "(`qmc_adaptive`, `qmc_adaptive_half`, 10 runs) follows. The discrepancy is "
            "Theorem 9's mean squared integration error over the box, π^d D(S)²/∏b_j.",
            "![Yang Fig. 4](results/baseline/yang2014_fig4.png)",
        ),
    ]
    claims += fig4_claims(t4, body, "qmc_adaptive_rr2", "qmc_adaptive_half_rr2")
    body += ["", "From the scrambled Halton start (the earlier report's runs), not counted:", ""]
    old4: list[str] = []
    scrambled = fig4_claims(t4, old4)
    body += old4
    changed = [i for i, (a, b) in enumerate(zip(scrambled, PREVIOUS_FIG4, strict=True)) if a != b]
    body += [
        "",
        f"Scrambled-start verdicts against the earlier report: {len(changed)} changed "
        "(the runs are bit-identical). Measured, not decided in advance: from the RR2 start "
        "the []b/2 run on Powerplant also ends below the []b run, which it did not from the "
        "scrambled start; the RR2 start is worse than the scrambled one at iteration 0 "
        "(a deterministic permutation), and the optimisation removes most of the gap.",
    ]
    f4b = BASE / "yang2014_fig4_nn50.csv"
    if f4b.exists():
        t4b = pd.read_csv(f4b)
        body += [
            "",
            "With σ from Yu et al.'s nn50 rule instead (a narrower kernel: a box many "
            "times wider in frequency units; scrambled Halton start), not a claim of the paper:",
            "",
        ]
        for ds in sorted(t4b["dataset"].unique()):
            for label in ["qmc_adaptive", "qmc_adaptive_half"]:
                parts = []
                for metric in ["discrepancy", "norm"]:
                    g = _trace(t4b, ds, label, metric)
                    parts.append(
                        f"{FIG4_METRICS[metric]} {fmt(float(g['mean'].iloc[0]), '.3g')} → "
                        f"{fmt(float(g['mean'].iloc[-1]), '.3g')}"
                    )
                body.append(f"- {ds}, {label}: " + "; ".join(parts) + ".")
        body += ["", "![Yang Fig. 4, nn50](results/baseline/yang2014_fig4_nn50.png)"]
    body += [
        "",
        "### Tables 1-2: kernel ridge regression on cpu and census",
        "",
        "Runnable online, not run here (no network): cpu (OpenML 197, cpu_act) and census "
        "(OpenML 574, house_16H as a stand-in) are not in the mirror; they are downloaded by "
        "`kernelbench run -m experiment=yang2014_table1_cpu data.download=true` (also "
        "`yang2014_table1_census`, `yang2014_table2_cpu`, `yang2014_table2_census`): "
        "protocol `downstream` with ridge regression on the features (alpha by "
        "leave-one-out per run), sigma by the nn50 rule, error ||y_hat - y||_2 / ||y||_2, "
        "s = D points; Table 1 includes the RR2 Halton. Tested up to the network boundary.",
        "",
    ]
    summary = Summary(
        claims=len(claims),
        claims_hold=sum(claims),
        note="Figs. 2-4 as claims checked on our numbers (Fig. 2 in their setup: PCA to "
        "250, one subset; their generators: RR2 Halton, qmcpy's lattice and net); Tables "
        "1-2 (cpu, census) are runnable online (experiment=yang2014_table1_cpu etc., "
        "data.download=true), not run here (no network).",
    )
    return Section("yang2014", "Yang et al. 2014 (QMC, adaptive QMC)", summary, body)
