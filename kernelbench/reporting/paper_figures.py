"""The papers' figures, each declared once (:class:`kernelbench.figspec.FigureSpec`): the
committed table it draws, its panels, series, metric, axes, the paper's overlay and
labels. The site (``kernelbench report --html``) renders them with Plotly; every PNG of
results/baseline/ (:data:`BASELINE_FIGURES`, ``kernelbench baseline --redraw``), the
site's PNG/PDF fallbacks and ``kernelbench plot`` with matplotlib
(:func:`kernelbench.figspec.draw`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kernelbench.figspec import FigureSpec, SpecFigure, build
from kernelbench.reference import load_reference
from kernelbench.reporting.downstream import FIG2
from kernelbench.reporting.kernel_approx import FIG1, YLABELS
from kernelbench.reporting.krr import LIU_FIG1, fig1_rows
from kernelbench.reporting.pair_mse import YU_FIG4
from kernelbench.reporting.qmc_adaptive import YANG_FIG4
from kernelbench.reporting.qmc_discrepancy import YANG_FIG3
from kernelbench.reporting.variance_ratio import YU_FIG2
from kernelbench.reporting.walltime import FIG3


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


#: Yang et al. Fig. 2: the relative spectral Gram error against n, a panel per dataset.
YANG_FIG2 = FigureSpec(
    "yang2014_fig2_pca_reduced.csv",
    title="Fig. 2 (PCA 250)",
    where=(("metric", "spec"),),
    xlabel="n (s = n d points)",
    ylabel=YLABELS["spec"],
    logy=True,
)

#: section key (:data:`kernelbench.report.common.SECTIONS`) -> the figures of its page
PAGES: dict[str, tuple[FigureSpec, ...]] = {
    "fig1": (FIG1,),
    "fig2": (FIG2,),
    "fig3": (FIG3,),
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
    "yu2016": (YU_FIG4, YU_FIG2),
    "yang2014": (YANG_FIG2, YANG_FIG3, YANG_FIG4),
}


@dataclass(frozen=True)
class BaselineFigure:
    """A committed PNG of results/baseline/: the spec that draws it (its ``table`` the
    committed CSV) and, where the table is not the drawn rows, what makes them."""

    spec: FigureSpec
    rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None

    def figures(self, table: pd.DataFrame, stem: str) -> list[SpecFigure]:
        """The figures of ``table`` (one per value of the spec's ``pages``)."""
        return build(self.rows(table) if self.rows else table, self.spec, stem)


#: PNG stem (``<stem>.png``, ``<stem>_<page>.png`` for a spec with pages) -> its figure
BASELINE_FIGURES: dict[str, BaselineFigure] = {
    "fig1_kernel_error_fro": BaselineFigure(FIG1),
    "fig2": BaselineFigure(FIG2),
    "liu2020_fig1": BaselineFigure(LIU_FIG1, fig1_rows),
    "yang2014_fig2": BaselineFigure(replace(YANG_FIG2, table="yang2014_fig2.csv", title="Fig. 2")),
    "yang2014_fig2_pca_reduced": BaselineFigure(YANG_FIG2),
    "yang2014_fig3": BaselineFigure(YANG_FIG3),
    "yang2014_fig3_half": BaselineFigure(
        replace(YANG_FIG3, table="yang2014_fig3_half.csv", title="Fig. 3, box []b/2")
    ),
    "yang2014_fig4": BaselineFigure(YANG_FIG4),
    "yang2014_fig4_nn50": BaselineFigure(
        replace(YANG_FIG4, table="yang2014_fig4_nn50.csv", title="Fig. 4, σ by nn50")
    ),
    "yu2016_fig2": BaselineFigure(YU_FIG2),
    "yu2016_fig4": BaselineFigure(YU_FIG4),
    "yu2016_fig4_qmc_reduced": BaselineFigure(
        replace(YU_FIG4, table="yu2016_fig4_qmc_reduced.csv", title="Fig. 4, QMC sequences")
    ),
}
