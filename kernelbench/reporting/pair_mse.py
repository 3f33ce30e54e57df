"""Reporting of ``pair_mse`` (Yu et al. 2016, Figs. 4 and 5(c)): kernel MSE over pairs;
figure ``yu_mse``: MSE against D/d, one panel per dataset.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from kernelbench.figspec import FigureSpec
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, spec_output, summarise

#: Yu et al. Figs. 4 and 5(c), declared once: the kernel MSE over pairs against D/d, one
#: panel per dataset; drawn by the site and the PNGs.
YU_FIG4 = FigureSpec(
    "yu2016_fig4.csv",
    title="Fig. 4",
    rows="kernel",
    where=(("metric", "mse"),),
    xlabel="D/d",
    ylabel="kernel MSE over pairs",
    logy=True,
)


def draw_yu_mse(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yu_mse_<metric>.<fmt>`` (:data:`YU_FIG4`) and ``yu_mse_summary.csv``/``.md``
    into ``out``."""
    metric_id = options.metric or "mse"
    metric = metric_of(get_protocol("pair_mse"), metric_id)
    summary = summarise(get_protocol("pair_mse"), df)
    ylabel = YU_FIG4.ylabel if metric_id == "mse" else metric.label
    spec = replace(YU_FIG4, where=(("metric", metric_id),), ylabel=ylabel)
    intro = (
        "Mean over runs, sample std, standard error and 95% t-interval; "
        "MSE over all pairs (x_i, y_j) of the two subsets; d zero-padded to a power of two."
    )
    title = "Yu et al. 2016, Fig. 4: kernel approximation MSE against D/d"
    table = ("yu_mse_summary", title, intro)
    return spec_output(summary, spec, out, f"yu_mse_{metric_id}", options, table)
