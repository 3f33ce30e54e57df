"""``kernelbench plot``: Munkhoeva et al. (2018) Figure 1 from results, with a summary table.

The figure has one row per kernel (Gaussian, Arc-cos 0, Arc-cos 1) and one column
per dataset (ordered by input dimension d). Each panel shows, for every method
(grouped by ``method_label``), the mean relative kernel approximation error over
runs against n, with a 95% t-interval band. ``--reference`` overlays the paper's
reported means as dashed lines.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np
import pandas as pd
from scipy import stats

from kernelbench.errors import KernelbenchError, choices_error

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: ``--metric`` choice -> results column.
METRICS: dict[str, str] = {"fro": "rel_fro_error", "spec": "rel_spec_error"}
METRIC_LABELS: dict[str, str] = {
    "fro": r"$\|K - \hat K\|_F \,/\, \|K\|_F$",
    "spec": r"$\|K - \hat K\|_2 \,/\, \|K\|_2$",
}
#: Kernel rows, top to bottom, and their display names.
KERNEL_ORDER: tuple[str, ...] = ("rbf", "arccos0", "arccos1")
KERNEL_NAMES: dict[str, str] = {"rbf": "Gaussian", "arccos0": "Arc-cos 0", "arccos1": "Arc-cos 1"}
DATASET_NAMES: dict[str, str] = {
    "powerplant": "Powerplant",
    "letter": "LETTER",
    "usps": "USPS",
    "mnist": "MNIST",
    "cifar100": "CIFAR-100",
    "leukemia": "LEUKEMIA",
}
#: Fixed (colour, marker) per method label so a method looks the same in every panel.
METHOD_STYLES: dict[str, tuple[str, str]] = {
    "rff": ("tab:blue", "o"),
    "orf": ("tab:orange", "s"),
    "orf_tallqr": ("tab:olive", "D"),
    "sorf": ("tab:green", "^"),
    "qmc": ("tab:red", "v"),
    "gq": ("tab:purple", "P"),
    "sr33": ("tab:brown", "X"),
    "sr33_haar": ("tab:pink", "*"),
    "sr11": ("tab:gray", "<"),
    "sr13": ("tab:cyan", ">"),
}
_FALLBACK_COLOURS: tuple[str, ...] = (
    "#1b9e77",
    "#d95f02",
    "#7570b3",
    "#e7298a",
    "#66a61e",
    "#e6ab02",
    "#a6761d",
    "#666666",
    "#17becf",
    "#bcbd22",
)
_FALLBACK_MARKERS: tuple[str, ...] = ("h", "p", "8", "d", "H", "1", "2", "3", "4", "+")
#: Columns the figure needs (besides the metric column).
REQUIRED_COLUMNS: tuple[str, ...] = ("dataset", "kernel", "method", "n")
SUMMARY_STEM = "fig1_summary"
FIGURE_STEM = "fig1_kernel_error"
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
REFERENCE_SOURCE = "paper"


def method_style(label: str) -> tuple[str, str]:
    """The (colour, marker) of a method label: fixed for known labels, else hash-stable."""
    if label in METHOD_STYLES:
        return METHOD_STYLES[label]
    h = zlib.crc32(label.encode())
    return _FALLBACK_COLOURS[h % len(_FALLBACK_COLOURS)], _FALLBACK_MARKERS[
        (h // len(_FALLBACK_COLOURS)) % len(_FALLBACK_MARKERS)
    ]


def kernel_name(kernel: str) -> str:
    """Display name of a kernel id (``rbf`` -> ``Gaussian``)."""
    return KERNEL_NAMES.get(kernel, kernel)


def dataset_name(dataset: str) -> str:
    """Display name of a dataset id (``letter`` -> ``LETTER``)."""
    return DATASET_NAMES.get(str(dataset).lower(), str(dataset))


# --------------------------------------------------------------------------- loading


def _read_parquet_dir(path: Path) -> pd.DataFrame:
    """Fallback reader: every non-hidden, non-temporary ``**/*.parquet`` under ``path``."""
    if not path.is_dir():
        raise KernelbenchError(f"results directory {str(path)!r} does not exist")
    shards = sorted(
        p
        for p in path.rglob("*.parquet")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
    )
    if not shards:
        raise KernelbenchError(f"no result shards (*.parquet) found under {str(path)!r}")
    return pd.concat([pd.read_parquet(p) for p in shards], ignore_index=True)


def load_results(path: str | Path) -> pd.DataFrame:
    """Load every result shard under ``path`` (one row per run)."""
    path = Path(path)
    try:
        from kernelbench.results import read_results
    except ModuleNotFoundError as err:  # runner module not present yet
        if err.name != "kernelbench.results":
            raise
        return _read_parquet_dir(path)
    return read_results(path)


def prepare(df: pd.DataFrame, metric: str, experiment: str | None = None) -> pd.DataFrame:
    """Validate and normalise results for plotting: one experiment, clean labels, numeric n."""
    if metric not in METRICS:
        raise choices_error("metric", metric, METRICS)
    column = METRICS[metric]
    missing = [c for c in (*REQUIRED_COLUMNS, column) if c not in df.columns]
    if missing:
        raise KernelbenchError(f"results lack the column(s) {', '.join(missing)}")
    df = df.copy()
    if "experiment" in df.columns:
        names = sorted(df["experiment"].dropna().astype(str).unique())
        if experiment is not None:
            if experiment not in names:
                raise choices_error("experiment", experiment, names)
            df = df[df["experiment"].astype(str) == experiment]
        elif len(names) > 1:
            raise KernelbenchError(
                f"results hold several experiments ({', '.join(names)}); pick one with --experiment"
            )
    elif experiment is not None:
        raise KernelbenchError("results have no 'experiment' column; drop --experiment")
    else:
        df["experiment"] = ""
    if "method_label" not in df.columns:
        df["method_label"] = df["method"]
    df["method_label"] = df["method_label"].fillna(df["method"]).astype(str)
    df["method_label"] = df["method_label"].where(df["method_label"] != "", df["method"])
    if "paper_label" not in df.columns:
        df["paper_label"] = ""
    df["paper_label"] = df["paper_label"].fillna("").astype(str)
    if "d" not in df.columns:
        df["d"] = np.nan
    df["n"] = pd.to_numeric(df["n"])
    df = df[df["n"].notna()]
    if (df["n"] % 1 == 0).all():
        df["n"] = df["n"].astype(int)
    if df[column].isna().all():
        raise KernelbenchError(f"results hold no {column} values to plot")
    return df


# --------------------------------------------------------------------------- summary

SUMMARY_KEYS: tuple[str, ...] = ("experiment", "dataset", "kernel", "method_label")


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, std (ddof=1), sem and half-width of the t-interval of ``values``.

    With fewer than two values std, sem and the half-width are NaN.
    """
    values = np.asarray(values, dtype=float)
    r = values.size
    mean = float(values.mean()) if r else math.nan
    if r < 2:
        return mean, math.nan, math.nan, math.nan
    std = float(values.std(ddof=1))
    sem = std / math.sqrt(r)
    half = float(stats.t.ppf(0.5 + level / 2, r - 1)) * sem
    return mean, std, sem, half


def summarise(df: pd.DataFrame, metrics: Sequence[str] = ("fro", "spec")) -> pd.DataFrame:
    """Tidy summary: one row per (experiment, dataset, kernel, method_label, n, metric).

    Columns: experiment, dataset, d, kernel, method_label, method, paper_label, n,
    metric, runs, mean, std, sem, ci_low, ci_high (95% t-interval over runs).
    Metrics whose column is absent or all-NaN are left out.
    """
    rows: list[dict[str, object]] = []
    for metric in metrics:
        column = METRICS[metric]
        if column not in df.columns or df[column].isna().all():
            continue
        for key, g in df.groupby([*SUMMARY_KEYS, "n"], sort=True, dropna=False):
            values = g[column].dropna().to_numpy(dtype=float)
            if values.size == 0:
                continue
            mean, std, sem, half = t_interval(values)
            exp, ds, kernel, label, n = key
            paper = next((p for p in g["paper_label"] if p), "")
            rows.append(
                {
                    "experiment": exp,
                    "dataset": ds,
                    "d": g["d"].iloc[0],
                    "kernel": kernel,
                    "method_label": label,
                    "method": g["method"].iloc[0],
                    "paper_label": paper,
                    "n": n,
                    "metric": metric,
                    "runs": int(values.size),
                    "mean": mean,
                    "std": std,
                    "sem": sem,
                    "ci_low": mean - half,
                    "ci_high": mean + half,
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    order = _dataset_order(df)
    out["_ds"] = out["dataset"].map({ds: i for i, ds in enumerate(order)})
    out["_k"] = out["kernel"].map(_kernel_rank)
    out["_m"] = out["method_label"].map(_label_rank)
    out = out.sort_values(["metric", "experiment", "_k", "_ds", "_m", "n"])
    return out.drop(columns=["_ds", "_k", "_m"]).reset_index(drop=True)


def _fmt(value: object) -> str:
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return ""
        return f"{value:.6g}"
    return str(value)


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of ``df`` (floats to 6 significant digits)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        cells = [_fmt(v).replace("|", r"\|") for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_summary(summary: pd.DataFrame, out: Path, notes: Sequence[str] = ()) -> list[Path]:
    """Write ``<out>/fig1_summary.csv`` and ``.md``; return the written paths."""
    csv_path, md_path = out / f"{SUMMARY_STEM}.csv", out / f"{SUMMARY_STEM}.md"
    summary.to_csv(csv_path, index=False)
    text = ["# Figure 1 summary: relative kernel approximation error", ""]
    text.append(
        "Mean over runs, sample std, standard error and 95% t-interval "
        "(mean ± t_{0.975, runs-1} · std / √runs).\n"
    )
    text.append(markdown_table(summary))
    if notes:
        text += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    md_path.write_text("\n".join(text).rstrip() + "\n")
    return [csv_path, md_path]


# --------------------------------------------------------------------------- figure


def _kernel_rank(kernel: str) -> tuple[int, str]:
    return (
        (KERNEL_ORDER.index(kernel), "") if kernel in KERNEL_ORDER else (len(KERNEL_ORDER), kernel)
    )


def _label_rank(label: str) -> tuple[int, str]:
    known = list(METHOD_STYLES)
    return (known.index(label), "") if label in known else (len(known), label)


def _dataset_order(df: pd.DataFrame) -> list[str]:
    """Datasets sorted by input dimension d (unknown d last), then by name."""
    d = pd.to_numeric(df["d"], errors="coerce").groupby(df["dataset"]).min()
    return sorted(d.index, key=lambda ds: (math.isnan(d[ds]), d[ds] if d[ds] == d[ds] else 0, ds))


@dataclass
class FigureResult:
    """The drawn figure, its grid and the notes about skipped cells."""

    figure: Figure
    kernels: list[str]
    datasets: list[str]
    notes: list[str] = field(default_factory=list)


def _reference_for_label(label: str, method: str, ref_methods: set[str]) -> str | None:
    """The reference method a result label is compared with (exact label, else its method id)."""
    if label in ref_methods:
        return label
    if method in ref_methods:
        return method
    return None


def draw_figure(
    df: pd.DataFrame,
    metric: str = "fro",
    reference: pd.DataFrame | None = None,
    log: bool = True,
) -> FigureResult:
    """Draw Figure 1 from prepared results (see :func:`prepare`).

    ``reference`` (the Munkhoeva Fig. 1 table) is overlaid as dashed lines; it
    holds Frobenius errors, so it is only drawn for ``metric == "fro"``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    summary = summarise(df, [metric])
    kernels = sorted(summary["kernel"].unique(), key=_kernel_rank)
    datasets = [ds for ds in _dataset_order(df) if ds in set(summary["dataset"])]
    labels = sorted(summary["method_label"].unique(), key=_label_rank)
    paper = {
        lab: next((p for p in summary.loc[summary["method_label"] == lab, "paper_label"] if p), "")
        for lab in labels
    }
    notes: list[str] = []

    if reference is not None and metric != "fro":
        notes.append(f"reference numbers are Frobenius errors; not overlaid on the {metric} metric")
        reference = None
    ref = None
    if reference is not None:
        ref = reference.copy()
        ref["_ds"] = ref["dataset"].astype(str).str.lower()
    ref_methods = set(ref["method"]) if ref is not None else set()

    nrows, ncols = len(kernels), len(datasets)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(3.6 * ncols + 0.6, 2.8 * nrows + 1.2),
        squeeze=False,
        layout="constrained",
    )
    handles: dict[str, Line2D] = {}
    ref_handles: dict[str, Line2D] = {}
    for i, kernel in enumerate(kernels):
        for j, ds in enumerate(datasets):
            ax: Axes = axes[i, j]
            cell = summary[(summary["kernel"] == kernel) & (summary["dataset"] == ds)]
            d = cell["d"].iloc[0] if not cell.empty else df.loc[df["dataset"] == ds, "d"].iloc[0]
            if i == 0:
                dtxt = f" (d = {int(d)})" if pd.notna(d) else ""
                ax.set_title(f"{dataset_name(ds)}{dtxt}")
            if j == 0:
                ax.set_ylabel(f"{kernel_name(kernel)}\n{METRIC_LABELS[metric]}")
            if i == nrows - 1:
                ax.set_xlabel("n")
            if cell.empty:
                notes.append(f"no results for {kernel_name(kernel)} × {dataset_name(ds)}; skipped")
                ax.text(0.5, 0.5, "no results", ha="center", va="center", transform=ax.transAxes)
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            present = set(cell["method_label"])
            absent = [lab for lab in labels if lab not in present]
            if absent:
                notes.append(
                    f"{kernel_name(kernel)} × {dataset_name(ds)}: no results for "
                    f"{', '.join(absent)}; skipped"
                )
            positive: list[float] = []
            drawn_refs: dict[str, str] = {}
            for lab in labels:
                g = cell[cell["method_label"] == lab].sort_values("n")
                if g.empty:
                    continue
                colour, marker = method_style(lab)
                x = g["n"].to_numpy(dtype=float)
                y = g["mean"].to_numpy(dtype=float)
                lo = g["ci_low"].to_numpy(dtype=float)
                hi = g["ci_high"].to_numpy(dtype=float)
                (line,) = ax.plot(x, y, color=colour, marker=marker, ms=5, lw=1.5, label=lab)
                handles.setdefault(lab, line)
                if np.isfinite(lo).any():
                    low = np.where(lo > 0, lo, y) if log else lo
                    ax.fill_between(x, low, hi, color=colour, alpha=0.2, lw=0)
                positive += [v for v in (*y, *lo) if np.isfinite(v) and v > 0]
                target = _reference_for_label(lab, str(g["method"].iloc[0]), ref_methods)
                # one overlay per reference method, coloured like the exact label if present
                if target is not None and (target not in drawn_refs or lab == target):
                    drawn_refs[target] = lab
            if ref is not None:
                for target, lab in drawn_refs.items():
                    r = ref[
                        (ref["_ds"] == str(ds).lower())
                        & (ref["kernel"] == kernel)
                        & (ref["method"] == target)
                    ].sort_values("n")
                    if r.empty:
                        continue
                    colour, marker = method_style(lab)
                    (rline,) = ax.plot(
                        r["n"].to_numpy(dtype=float),
                        r["mean"].to_numpy(dtype=float),
                        color=colour,
                        ls="--",
                        lw=1.1,
                        marker=marker,
                        mfc="none",
                        ms=6,
                        alpha=0.9,
                    )
                    paper_label = str(r["paper_method"].iloc[0]) if "paper_method" in r else target
                    ref_handles.setdefault(paper_label, rline)
                    positive += [v for v in r["mean"] if v > 0]
            if log:
                ax.set_yscale("log")
                if positive:
                    ax.set_ylim(bottom=min(positive) / 1.3)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, which="major", alpha=0.3)

    legend_handles: list[Line2D] = []
    legend_labels: list[str] = []
    for lab in labels:
        if lab in handles:
            legend_handles.append(handles[lab])
            legend_labels.append(f"{lab} ({paper[lab]})" if paper[lab] else lab)
    for paper_label, h in ref_handles.items():
        legend_handles.append(h)
        legend_labels.append(f"{REFERENCE_SOURCE}: {paper_label}")
    ncol = max(1, min(len(legend_handles), 2 * ncols + 1))
    fig.legend(legend_handles, legend_labels, loc="outside lower center", ncol=ncol, fontsize=9)
    return FigureResult(fig, kernels, datasets, notes)


# --------------------------------------------------------------------------- command


def _parse_formats(value: str) -> list[str]:
    formats = [f.strip().lower().lstrip(".") for f in value.split(",") if f.strip()]
    if not formats:
        raise KernelbenchError("--format needs at least one of: " + ", ".join(FORMATS))
    for f in formats:
        if f not in FORMATS:
            raise choices_error("format", f, FORMATS)
    return list(dict.fromkeys(formats))


def make_plots(
    results_dir: str | Path,
    out: str | Path | None = None,
    *,
    metric: str = "fro",
    reference: bool = False,
    formats: Sequence[str] = ("png", "pdf"),
    log: bool = True,
    experiment: str | None = None,
) -> tuple[list[Path], list[str]]:
    """Load results, draw Figure 1 and write the summary; return (written paths, notes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = prepare(load_results(results_dir), metric, experiment)
    ref_df = None
    if reference:
        from kernelbench.reference import load_reference

        ref_df = load_reference("munkhoeva2018_fig1_kernel_error")
    out_dir = Path(out) if out is not None else Path(results_dir) / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)

    result = draw_figure(df, metric, ref_df, log=log)
    written: list[Path] = []
    try:
        for fmt in formats:
            path = out_dir / f"{FIGURE_STEM}_{metric}.{fmt}"
            result.figure.savefig(path, dpi=150, bbox_inches="tight")
            written.append(path)
    finally:
        plt.close(result.figure)
    written += write_summary(summarise(df), out_dir, result.notes)
    return written, result.notes


@click.command("plot", short_help="Draw Fig. 1 (kernel approximation error) from results.")
@click.argument("results_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output directory [default: RESULTS_DIR/figures].",
)
@click.option(
    "--reference", is_flag=True, help="Overlay the paper's reported means (dashed lines)."
)
@click.option(
    "--metric",
    type=click.Choice(sorted(METRICS)),
    default="fro",
    show_default=True,
    help="Relative error in the Frobenius (fro) or spectral (spec) norm.",
)
@click.option(
    "--format",
    "formats",
    default="png,pdf",
    show_default=True,
    help="Comma-separated figure formats (png, pdf, svg).",
)
@click.option("--log/--linear", default=True, show_default=True, help="Y-axis scale.")
@click.option("--experiment", default=None, help="Plot only this experiment's results.")
def plot(
    results_dir: Path,
    out: Path | None,
    reference: bool,
    metric: str,
    formats: str,
    log: bool,
    experiment: str | None,
) -> None:
    """Draw Munkhoeva et al. (2018) Figure 1 (kernel approximation error) from RESULTS_DIR.

    Rows are kernels, columns datasets (by d), x is n, y the relative error: the
    mean over runs with a 95% t-interval band, one line per method. Writes the
    figure and a summary table (fig1_summary.csv/.md) to --out.
    """
    written, notes = make_plots(
        results_dir,
        out,
        metric=metric,
        reference=reference,
        formats=_parse_formats(formats),
        log=log,
        experiment=experiment,
    )
    for note in notes:
        click.echo(f"note: {note}", err=True)
    for path in written:
        click.echo(f"wrote {path}")
