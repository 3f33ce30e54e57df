"""The committed PNGs, each drawn from its table by its figure spec
(:data:`kernelbench.reporting.paper_figures.BASELINE_FIGURES`, :func:`redraw`), and the
Yu et al. 2016 and Yang et al. 2014 baselines: ``<experiment>.csv`` (the figure's summary
table, by ``kernelbench plot``'s code) and its PNG. ``--methods`` replaces only those
methods' rows of the committed table.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kernelbench.plot_command import make_plots

#: experiment -> (figure, metric); the figure writes ``<figure>_summary.csv`` and a PNG
EXPERIMENTS: dict[str, tuple[str, str | None]] = {
    "yu2016_fig2": ("yu_variance", "ratio"),
    "yu2016_fig4": ("yu_mse", "mse"),
    "yu2016_fig4_qmc": ("yu_mse", "mse"),
    "yu2016_fig4_qmc_reduced": ("yu_mse", "mse"),
    "yang2014_fig2": ("fig1", "spec"),
    "yang2014_fig2_pca": ("fig1", "spec"),
    "yang2014_fig2_pca_reduced": ("fig1", "spec"),
    "yang2014_fig3": ("yang_discrepancy", None),
    "yang2014_fig3_half": ("yang_discrepancy", None),
    "yang2014_fig4": ("yang_adaptive", None),
    "yang2014_fig4_nn50": ("yang_adaptive", None),
}


def redraw(out: Path, stems: list[str] | None = None, echo: Callable[[str], None] = print) -> None:
    """Draw each committed PNG (``stems``, default all) of ``out`` from its table there."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from kernelbench.drawing import save_figure
    from kernelbench.errors import KernelbenchError, choices_error
    from kernelbench.figspec import draw
    from kernelbench.reporting.paper_figures import BASELINE_FIGURES

    for stem in stems or list(BASELINE_FIGURES):
        if stem not in BASELINE_FIGURES:
            raise choices_error("baseline figure", stem, BASELINE_FIGURES)
        figure = BASELINE_FIGURES[stem]
        table = out / figure.spec.table
        if not table.is_file():
            raise KernelbenchError(f"{stem}: no table {str(table)!r} to draw it from")
        for fig in figure.figures(pd.read_csv(table), stem):
            for note in fig.clip_notes():
                echo(f"note: {note}")
            name = "_".join([stem, *map(str, fig.page)])
            for path in save_figure(draw(fig), out, name, ["png"]):
                echo(f"wrote {path}")


@contextmanager
def drawn(results: Path, experiment: str, **options: Any) -> Iterator[Path]:
    """A temporary directory holding ``kernelbench plot``'s PNG figures of ``experiment``."""
    with tempfile.TemporaryDirectory() as tmp:
        make_plots(results, tmp, formats=["png"], experiment=experiment, **options)
        yield Path(tmp)


def write(
    results: Path,
    experiment: str,
    out: Path,
    echo: Callable[[str], None] = print,
    rows_of: str | None = None,
    methods: list[str] | None = None,
) -> None:
    """Write ``<experiment>.csv`` and ``.png`` from the shards under ``results`` (of
    experiment ``rows_of`` if given); with ``methods``, replace only their rows."""
    figure, metric = EXPERIMENTS[experiment]
    table = f"{figure}_summary.csv"
    source = rows_of or experiment
    out.mkdir(parents=True, exist_ok=True)
    with drawn(results, source, figure=figure, metric=metric) as tmp:
        if methods:
            _replace_rows(tmp / source / table, out / f"{experiment}.csv", methods)
            echo(f"{experiment}: replaced the rows of {', '.join(methods)} in {experiment}.csv")
        else:
            shutil.copyfile(tmp / source / table, out / f"{experiment}.csv")
            echo(f"{experiment}: wrote {out / experiment}.csv")
    from kernelbench.reporting.paper_figures import BASELINE_FIGURES

    if experiment in BASELINE_FIGURES:
        redraw(out, [experiment], echo)


def _replace_rows(new: Path, committed: Path, methods: list[str]) -> None:
    """``committed`` with the rows of ``methods`` taken from ``new``, in place."""
    import pandas as pd

    from kernelbench.errors import KernelbenchError

    keys = ["experiment", "dataset", "kernel", "method_label", "n", "metric"]
    fresh = pd.read_csv(new).set_index(keys)
    old = pd.read_csv(committed)
    mine = old["method_label"].isin(methods)
    index = pd.MultiIndex.from_frame(old.loc[mine, keys])
    missing = index.difference(fresh.index)
    if len(missing):
        raise KernelbenchError(f"no fresh rows for {len(missing)} cells, e.g. {missing[0]}")
    values = fresh.loc[index, [c for c in old.columns if c not in keys]]
    old.loc[mine, values.columns] = values.to_numpy()
    old.to_csv(committed, index=False)
