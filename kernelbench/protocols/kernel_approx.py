"""``kernel_approx``: Gram-matrix approximation error (Munkhoeva et al. 2018, Fig. 1).

Two independent random subsets X, Y of the dataset's scaled train part (the
dataset's ``protocols.<data>`` settings: train rows, scaling, ``samples``, runs;
drawn once per (seed, dataset)), the exact cross-kernel K = k(X, Y), and per run a
fresh feature map fitted on X:

    rel_fro_error  = ||K - K_hat||_F / ||K||_F
    rel_spec_error = ||K - K_hat||_2 / ||K||_2,     K_hat = z(X) z(Y)^T + constant_.

Setting ``product`` (configs/protocol/kernel_approx.yaml): ``float64`` (the default) or
``float32``: the GEMM z(X) z(Y)^T alone in float32 (1.6-2.2x faster); the features, the
constant (folded into K_hat in float64: sr33's f(0) term alone shifts spectral errors by
1e-4 in float32) and the errors stay float64. tests/test_kernel_approx_product.py bounds
the shift of the errors on the reduced grid's datasets.

Figure ``fig1``: kernels x datasets, error against n, with the paper's means.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from kernelbench.errors import KernelbenchError
from kernelbench.metrics import spectral_norm
from kernelbench.protocols import PROTOCOLS
from kernelbench.protocols.base import (
    REL_FRO,
    REL_SPEC,
    Figure,
    FigureOptions,
    FigureOutput,
    Pair,
    Protocol,
)
from kernelbench.protocols.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.plotting import Panels

#: Precision of the K_hat product (the ``product`` setting); the first is the default.
PRODUCTS = ("float64", "float32")
#: At most this many runs per batch, and their K_hat stack at most this many bytes.
BATCH_RUNS = 16
BATCH_BYTES = 64 * 2**20
#: Features of one run (z(X) and z(Y)) above this size are multiplied run by run: the
#: stacking copies cost more than the per-call overhead they save (docs/performance.md).
BATCH_Z_BYTES = 2**20


@dataclass
class KernelApproxSettings(ProtocolSettings):
    """Settings of ``kernel_approx`` (Munkhoeva et al. 2018, Fig. 1).

    ``data``: the entry of the dataset's data recipes (train part, scaling, ``samples``
    per subset X and Y, default runs). ``product``: the precision of the
    K_hat = z(X) z(Y)^T product, float64, or float32 for the GEMM alone (features, the
    f(0) constant and the errors stay float64; the shift is bounded by
    tests/test_kernel_approx_product.py; docs/performance.md).
    """

    name: str = "kernel_approx"
    data: str | None = "kernel_approx"
    product: str = "float64"


class KernelApprox(Protocol):
    """Relative Frobenius and spectral errors of K_hat on two random subsets (Fig. 1)."""

    name = "kernel_approx"
    Settings = KernelApproxSettings
    title = "Munkhoeva et al. 2018, Fig. 1: kernel approximation error"
    columns = (
        ("samples", pa.int64()),
        ("rel_fro_error", pa.float64()),
        ("rel_spec_error", pa.float64()),
    )
    metrics = {
        "fro": REL_FRO,
        "spec": REL_SPEC,
    }
    headline = "fro"
    budget_label = "n"

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        from kernelbench.validation import check_choice

        out = super().check_settings(settings)
        if "product" in out:
            check_choice("product", out["product"], PRODUCTS)
            if out["product"] == PRODUCTS[0]:  # the default: settings and hash without it
                del out["product"]
        return out

    def prepare(self, cell: Mapping[str, Any]) -> Pair:
        return self.exact_pair(cell)

    def cell_columns(self, cell: Mapping[str, Any], ctx: Pair) -> dict[str, Any]:
        return ctx.columns()

    def batch_size(self, cell: Mapping[str, Any]) -> int:
        """Runs measured together: their K_hat in one stacked product (``BATCH_BYTES``)."""
        samples = self.data_settings(cell).get("samples") or 1
        return int(max(1, min(BATCH_RUNS, BATCH_BYTES // (8 * int(samples) ** 2))))

    def measure(self, cell: Mapping[str, Any], ctx: Pair, runs: Sequence[int]) -> list[dict]:
        """The runs' maps one by one, their estimates K_hat = z(X) z(Y)^T in one stacked
        product when the features are small (``np.matmul`` over the batch: the same
        GEMM per run, so the rows are those of :meth:`measure_run`), then the errors
        run by run. Memory: at most ``BATCH_BYTES`` of K_hat per batch."""
        mapped = [self._map_run(cell, ctx, r) for r in runs]
        shapes = {m[1].shape for m in mapped}
        small = all(m[1].nbytes + m[2].nbytes <= BATCH_Z_BYTES for m in mapped)
        f32 = self._float32(cell)
        if len(mapped) == 1 or len(shapes) != 1 or not small:
            return [self._errors(ctx, m, _product(m[1], m[2], f32)) for m in mapped]
        K_hats = _product(np.stack([m[1] for m in mapped]), np.stack([m[2] for m in mapped]), f32)
        return [self._errors(ctx, m, K_hat) for m, K_hat in zip(mapped, K_hats, strict=True)]

    def measure_run(self, cell: Mapping[str, Any], ctx: Pair, run: int) -> dict:
        m = self._map_run(cell, ctx, run)
        return self._errors(ctx, m, _product(m[1], m[2], self._float32(cell)))

    @staticmethod
    def _float32(cell: Mapping[str, Any]) -> bool:
        return cell["protocol"].get("product") == "float32"

    def _map_run(self, cell: Mapping[str, Any], ctx: Pair, run: int) -> tuple:
        """(the map's row values, z(X), z(Y)) of run ``run``. The fitted map itself is
        dropped here, so a batch holds only features (a map's weights can take GBs:
        orf_tallqr on LEUKEMIA at n = 5 stores 71300 x 7129 reflector entries)."""
        fm = self.feature_map(cell, self.run_rng(cell, run), d=ctx.X.shape[1], ctx=ctx)
        t0 = time.perf_counter()
        fm.fit(ctx.X)
        t1 = time.perf_counter()
        Zx = fm.transform(ctx.X)
        Zy = fm.transform(ctx.Y)
        t2 = time.perf_counter()
        info = {
            "D": int(fm.n_projections_),
            "n_features": int(fm.n_features_out_),
            "constant": float(fm.constant_),
            "fit_seconds": t1 - t0,
            "transform_seconds": t2 - t1,
        }
        return info, Zx, Zy

    @staticmethod
    def _errors(ctx: Pair, mapped: tuple, K_hat: np.ndarray) -> dict:
        """The row of a run from its map and its z(X) z(Y)^T (modified in place)."""
        info = mapped[0]
        if info["constant"] != 0.0:
            K_hat += K_hat.dtype.type(info["constant"])
        E = ctx.K - K_hat
        return {
            "D": info["D"],
            "n_features": info["n_features"],
            "rel_fro_error": float(np.linalg.norm(E)) / ctx.fro_K,
            "rel_spec_error": spectral_norm(E) / ctx.spec_K,
            "fit_seconds": info["fit_seconds"],
            "transform_seconds": info["transform_seconds"],
        }


def _product(Zx: np.ndarray, Zy: np.ndarray, float32: bool) -> np.ndarray:
    """z(X) z(Y)^T (stacked: one per run), in float64, or as a float32 GEMM returned in
    float64 (the constant is added afterwards, in float64)."""
    if float32:
        Zx, Zy = Zx.astype(np.float32), Zy.astype(np.float32)
    K = np.matmul(Zx, np.swapaxes(Zy, -1, -2))
    return K.astype(np.float64) if float32 else K


# --------------------------------------------------------------------------- figure

FIG1_REFERENCE = "munkhoeva2018_fig1_kernel_error"


#: The method label that implements the paper's construction of a reference method,
#: where it is not the method itself: the paper's Gort is the published tall-QR code.
PAPER_CONSTRUCTION: dict[str, str] = {"orf": "orf_tallqr"}


def _reference_lines(summary: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """The reference means to overlay, labelled like our line that they are compared with:
    the label implementing the paper's construction (:data:`PAPER_CONSTRUCTION`: the
    paper's Gort against orf_tallqr), else the label itself, else a label of the same
    method; one overlay per reference method. An overlay compared with another
    construction than the paper's (Gort against our true ORF) says so in its legend."""
    ref_methods = set(ref["method"])
    present = summary[["method_label", "method"]].drop_duplicates()
    pairs: dict[str, str] = {}
    for target in sorted(ref_methods):
        labels = set(present["method_label"])
        same_method = sorted(present.loc[present["method"] == target, "method_label"])
        preferred = [PAPER_CONSTRUCTION.get(target), target, *same_method]
        lab = next((p for p in preferred if p is not None and p in labels), None)
        if lab is not None:
            pairs[target] = lab
    rows = []
    for target, lab in pairs.items():
        r = ref[ref["method"] == target].copy()
        r["method_label"] = lab
        paper = str(r["paper_method"].iloc[0]) if "paper_method" in r else target
        wanted = PAPER_CONSTRUCTION.get(target, target)
        if lab != wanted:  # e.g. only our true ORF is present: not what the paper drew
            paper += f" (published {wanted}, drawn beside our {lab})"
        r["paper_label"] = paper
        rows.append(r)
    if not rows:
        return pd.DataFrame(columns=["kernel", "dataset", "method_label", "n", "mean"])
    out = pd.concat(rows, ignore_index=True)
    out["dataset"] = out["dataset"].astype(str).str.lower()
    return out


def fig1_panels(
    df: pd.DataFrame,
    metric_id: str = "fro",
    reference: pd.DataFrame | None = None,
    log: bool = True,
) -> tuple[Panels, pd.DataFrame, list[str]]:
    """Fig. 1 drawn from results: (panels, the summary of both metrics, notes).

    One row per kernel, one column per dataset (by d), error against n with 95%
    t-interval bands; ``reference`` (the paper's table) is overlaid dashed, for the
    Frobenius error only.
    """
    from kernelbench.plotting import summarise

    proto = PROTOCOLS.get("kernel_approx")
    metric = proto.metric(metric_id)
    if metric.column not in df or df[metric.column].isna().all():
        raise KernelbenchError(f"results hold no {metric.column} values to plot")
    keys = ["experiment", "dataset", "kernel", "method_label", "n"]
    summary = summarise(df, keys, {m: proto.metrics[m].column for m in proto.metrics})
    panels, notes = fig1_summary_panels(summary, metric_id, reference, log)
    return panels, summary, notes


def fig1_summary_panels(
    summary: pd.DataFrame,
    metric_id: str = "fro",
    reference: pd.DataFrame | None = None,
    log: bool = True,
) -> tuple[Panels, list[str]]:
    """Fig. 1 from a summary (:func:`kernelbench.plotting.summarise` columns: dataset,
    d, kernel, method_label, method, paper_label, n, metric, mean, ci_low, ci_high), e.g.
    one rebuilt from an aggregated table: (panels, notes)."""
    from kernelbench.plotting import (
        dataset_name,
        dataset_order,
        draw_panels,
        kernel_name,
        kernel_rank,
        runs_caption,
    )

    metric = PROTOCOLS.get("kernel_approx").metric(metric_id)
    shown = summary[summary["metric"] == metric_id]
    notes: list[str] = []
    if reference is not None and metric_id != "fro":
        notes.append(
            f"reference numbers are Frobenius errors; not overlaid on the {metric_id} metric"
        )
        reference = None
    lines = _reference_lines(shown, reference) if reference is not None else None
    datasets = [ds for ds in dataset_order(shown) if ds in set(shown["dataset"])]
    dims = shown.groupby("dataset")["d"].first()

    def title(ds: str, _cell: pd.DataFrame) -> str:
        d = dims.get(ds)
        return f"{dataset_name(ds)} (d = {int(d)})" if pd.notna(d) else dataset_name(ds)

    panels = draw_panels(
        shown,
        row="kernel",
        col="dataset",
        x="n",
        ylabel=metric.label,
        xlabel="n",
        rows=sorted(shown["kernel"].unique(), key=kernel_rank),
        cols=datasets,
        row_name=kernel_name,
        col_name=dataset_name,
        col_title=title,
        log=log,
        reference=lines,
        caption=runs_caption(shown),
    )
    return panels, notes + panels.notes


def sparse_datasets(summary: pd.DataFrame) -> list[str] | None:
    """The datasets of a sparse grid (at least half of its kernel x dataset panels empty,
    as after a few ad-hoc ``kernelbench run`` cells on different datasets), else None."""
    datasets = sorted(summary["dataset"].unique())
    kernels = summary["kernel"].unique()
    filled = len(summary[["kernel", "dataset"]].drop_duplicates())
    total = len(datasets) * len(kernels)
    if len(datasets) < 2 or 2 * (total - filled) < total:
        return None
    return datasets


def draw_fig1(df: pd.DataFrame, out: Path, options: FigureOptions) -> FigureOutput:
    """Write Fig. 1 (``fig1_kernel_error_<metric>.<fmt>``) and its summary table
    (``fig1_summary.csv``/``.md``, both metrics) into ``out``."""
    from kernelbench.plotting import save_figure, write_table

    metric_id = options.metric or "fro"
    reference = None
    if options.reference:
        from kernelbench.reference import load_reference

        reference = load_reference(FIG1_REFERENCE)
    log = True if options.log is None else options.log
    stem = f"fig1_kernel_error_{metric_id}"
    panels, summary, notes = fig1_panels(df, metric_id, reference, log)
    sparse = sparse_datasets(summary[summary["metric"] == metric_id])
    if sparse is None:
        written = save_figure(panels.figure, out, stem, options.formats)
    else:  # only the cells present: one figure per dataset
        import matplotlib.pyplot as plt

        plt.close(panels.figure)
        notes = [f"sparse grid: one figure per dataset ({stem}_<dataset>)"]
        written = []
        for ds in sparse:
            one, ds_notes = fig1_summary_panels(
                summary[summary["dataset"] == ds], metric_id, reference, log
            )
            written += save_figure(one.figure, out, f"{stem}_{ds}", options.formats)
            notes += ds_notes
        notes = list(dict.fromkeys(notes))
    intro = (
        "Mean over runs, sample std, standard error and 95% t-interval "
        "(ci_low, ci_high = mean -/+ t_{0.975, runs-1} · std / √runs)."
    )
    title = "Figure 1 summary: relative kernel approximation error"
    written += write_table(summary, out, "fig1_summary", title, intro, notes)
    return FigureOutput(written, notes)


KernelApprox.figures = {
    "fig1": Figure(
        "fig1",
        "Munkhoeva Fig. 1: kernel approximation error vs n (kernels x datasets)",
        draw_fig1,
        metrics=("fro", "spec"),
    )
}
KernelApprox.default_figures = ("fig1",)
PROTOCOLS.add("kernel_approx", KernelApprox())
