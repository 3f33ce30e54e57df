"""The papers' figures, each declared once (:class:`kernelbench.figspec.FigureSpec`): the
committed table it draws, its panels, series, metric, axes, the paper's overlay and
labels. The site (``kernelbench report --html``) renders them with Plotly, the baseline
PNGs and the site's PNG/PDF fallbacks with matplotlib (:func:`kernelbench.figspec.draw`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.reference import load_reference
from kernelbench.reporting.kernel_approx import FIG1


def liu2020_paper(df: pd.DataFrame) -> pd.Series:
    """Liu et al. (2020) Table 3: the paper's mean accuracy (%) of each row's cell."""
    from kernelbench.protocols import get_protocol, reference_cells
    from kernelbench.reporting.krr import TABLE3_REFERENCE

    ref = reference_cells(get_protocol("krr"), TABLE3_REFERENCE, load_reference(TABLE3_REFERENCE))
    ref = ref[["dataset", "n", "method", "mean"]]
    ref = ref.rename(columns={"method": "method_label", "mean": "paper"})
    keys = df[["dataset", "n", "method_label"]].assign(n=df["n"].astype(float))
    out = keys.merge(ref, on=["dataset", "n", "method_label"], how="left")["paper"]
    return out.where(df["kernel"].to_numpy() == "rbf", np.nan) if "kernel" in df else out


SPEC_ERROR = "spectral error ‖K − K̂‖₂ / ‖K‖₂"

FIG2 = FigureSpec(
    "fig2_baseline.csv",
    title="Fig. 2",
    rows="kernel",
    cols="dataset",
    pages=("learner",),
    ylabel="test score (R² or accuracy)",
)

#: section key (:data:`kernelbench.report.common.SECTIONS`) -> the figures of its page
PAGES: dict[str, tuple[FigureSpec, ...]] = {
    "fig1": (FIG1,),
    "fig2": (FIG2,),
    "fig3": (
        FigureSpec(
            "fig3_walltime.csv",
            title="Fig. 3, map time",
            x="d",
            y="median",
            cols="points",
            where=(("metric", "map"),),
            xlabel="d (input dimension)",
            ylabel="median map time (s)",
            logx=True,
            logy=True,
            lo="q25",
            hi="q75",
            runs="values",
        ),
    ),
    "liu2020": (
        FigureSpec(
            "liu2020_table3_baseline.csv",
            title="Table 3",
            xlabel="s/d (features per input dimension)",
            ylabel="test accuracy (%)",
            logx=True,
            paper=liu2020_paper,
        ),
    ),
    "yu2016": (
        FigureSpec(
            "yu2016_fig4.csv",
            title="Fig. 4",
            where=(("metric", "mse"),),
            xlabel="D/d",
            ylabel="kernel MSE over pairs",
            logy=True,
        ),
        FigureSpec(
            "yu2016_fig2.csv",
            title="Fig. 2",
            x="z",
            cols="d",
            where=(("metric", "ratio"),),
            xlabel="z = ‖x − y‖/σ",
            ylabel="variance ratio to RFF",
        ),
    ),
    "yang2014": (
        FigureSpec(
            "yang2014_fig2_pca_reduced.csv",
            title="Fig. 2 (PCA 250)",
            where=(("metric", "spec"),),
            xlabel="n (s = n d points)",
            ylabel=SPEC_ERROR,
            logy=True,
        ),
        FigureSpec(
            "yang2014_fig3.csv",
            title="Fig. 3",
            rows="metric",
            xlabel="n (s = n d points)",
            ylabel="value",
            logy=True,
        ),
        FigureSpec(
            "yang2014_fig4.csv",
            title="Fig. 4",
            x="iteration",
            rows="metric",
            xlabel="iteration",
            ylabel="value",
            logy=True,
        ),
    ),
}
