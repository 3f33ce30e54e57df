"""Reporting of ``pair_mse`` (Yu et al. 2016, Figs. 4 and 5(c)): kernel MSE over pairs;
figure ``yu_mse``: MSE against D/d, one panel per dataset.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.protocols import get_protocol, metric_of
from kernelbench.reporting import FigureOptions, FigureOutput, kernel_panels, saved, summarise


def draw_yu_mse(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write ``yu_mse_<metric>.<fmt>`` and ``yu_mse_summary.csv``/``.md`` into ``out``."""
    from kernelbench.drawing import dataset_name, dataset_order

    metric_id = options.metric or "mse"
    metric = metric_of(get_protocol("pair_mse"), metric_id)
    summary = summarise(get_protocol("pair_mse"), df)
    shown = summary[summary["metric"] == metric_id]
    dims = df.groupby("dataset")[["d_data", "d", "sigma"]].first()

    def title(ds: str, _cell: pd.DataFrame) -> str:
        r = dims.loc[ds]
        return f"{dataset_name(ds)} (d = {int(r.d_data)} → {int(r.d)}, σ = {r.sigma:.3g})"

    panels = kernel_panels(
        shown,
        [ds for ds in dataset_order(df) if ds in set(shown["dataset"])],
        title,
        ylabel=metric.label,
        xlabel="D / d",
        log=True if options.log is None else options.log,
    )
    intro = (
        "Mean over runs, sample std, standard error and 95% t-interval; "
        "MSE over all pairs (x_i, y_j) of the two subsets; d zero-padded to a power of two."
    )
    title_md = "Yu et al. 2016, Fig. 4: kernel approximation MSE against D/d"
    stem = f"yu_mse_{metric_id}"
    return saved(panels, out, stem, options, summary, "yu_mse_summary", title_md, intro)
