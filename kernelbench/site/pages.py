"""Which committed results tables each paper page of the site draws (by its report
section's key, :data:`kernelbench.report.common.SECTIONS`), and where the paper's value
of a point comes from."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernelbench.reference import load_reference
from kernelbench.site.figures import FigureSpec


def fig1_paper(df: pd.DataFrame) -> pd.Series:
    """Munkhoeva et al. (2018) Fig. 1: the paper's mean error of the cell (by paper label:
    Gort is compared with both ORF constructions)."""
    ref = load_reference("munkhoeva2018_fig1_kernel_error")
    ref = ref.assign(n=ref["n"].astype(float))[["dataset", "kernel", "paper_method", "n", "mean"]]
    ref = ref.rename(columns={"paper_method": "paper_label", "mean": "paper"})
    keys = df[["dataset", "kernel", "paper_label", "n"]].assign(n=df["n"].astype(float))
    return keys.merge(ref, on=["dataset", "kernel", "paper_label", "n"], how="left")["paper"]


def liu2020_paper(df: pd.DataFrame) -> pd.Series:
    """Liu et al. (2020) Table 3: the paper's mean accuracy (%) of the cell."""
    from kernelbench.reporting.krr import TABLE3_REFERENCE, KRRReporting

    ref = KRRReporting().reference_cells(TABLE3_REFERENCE, load_reference(TABLE3_REFERENCE))
    ref = ref[["dataset", "n", "method", "mean"]]
    ref = ref.rename(columns={"method": "method_label", "mean": "paper"})
    keys = df[["dataset", "n", "method_label"]].assign(n=df["n"].astype(float))
    out = keys.merge(ref, on=["dataset", "n", "method_label"], how="left")["paper"]
    return out.where(df["kernel"].to_numpy() == "rbf", np.nan) if "kernel" in df else out


ERROR = "‖K − K̂‖_F / ‖K‖_F"

#: section key -> the figures of its page
PAGES: dict[str, tuple[FigureSpec, ...]] = {
    "fig1": (
        FigureSpec("fig1_baseline.csv", ylabel=ERROR, logy=True, paper=fig1_paper, title="Fig. 1"),
    ),
    "fig2": (
        FigureSpec(
            "fig2_baseline.csv",
            facets=("learner", "dataset"),
            ylabel="test score (accuracy or R²)",
            title="Fig. 2",
        ),
    ),
    "fig3": (
        FigureSpec(
            "fig3_walltime.csv",
            x="d",
            y="median",
            facets=("points",),
            where=(("metric", "map"),),
            xlabel="d (input dimension)",
            ylabel="median map time (s)",
            logx=True,
            logy=True,
            lo="q25",
            hi="q75",
            runs="values",
            title="Fig. 3, map time",
        ),
    ),
    "liu2020": (
        FigureSpec(
            "liu2020_table3_baseline.csv",
            xlabel="s/d (features per input dimension)",
            ylabel="test accuracy (%)",
            paper=liu2020_paper,
            title="Table 3",
        ),
    ),
    "yu2016": (
        FigureSpec(
            "yu2016_fig4.csv",
            xlabel="D/d",
            ylabel="kernel MSE over pairs",
            logy=True,
            title="Fig. 4",
        ),
        FigureSpec(
            "yu2016_fig2.csv",
            x="z",
            facets=("d",),
            where=(("metric", "ratio"),),
            xlabel="z = ‖x − y‖/σ",
            ylabel="variance ratio to RFF",
            title="Fig. 2",
        ),
    ),
    "yang2014": (
        FigureSpec(
            "yang2014_fig2_pca_reduced.csv",
            xlabel="n (s = n d points)",
            ylabel="relative spectral error",
            logy=True,
            title="Fig. 2 (PCA 250)",
        ),
        FigureSpec(
            "yang2014_fig3.csv",
            facets=("dataset", "metric"),
            xlabel="n (s = n d points)",
            ylabel="value",
            logy=True,
            title="Fig. 3",
        ),
        FigureSpec(
            "yang2014_fig4.csv",
            x="iteration",
            facets=("dataset", "metric"),
            xlabel="iteration",
            ylabel="value",
            logy=True,
            title="Fig. 4",
        ),
    ),
}
