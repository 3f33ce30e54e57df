"""What every figure and table shares: fixed styles and display names (a method looks the
same in every figure), orders, per-cell summaries, Markdown tables and the figure formats.
No renderer: matplotlib and Plotly draw with these (:mod:`kernelbench.outputs.render`,
:mod:`kernelbench.outputs.plotly_render`)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.stats import t_interval

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
    "eeg": "EEG",
    "codrna": "cod-RNA",
    "magic04": "magic04",
    "covtype": "covtype",
}
#: Fixed (colour, marker) per method label so a method looks the same in every panel:
#: every colour distinct (CIELAB distance >= 23 between any two, plug-in colours
#: included) and at least 3:1 contrast on white (WCAG 2.1 non-text contrast).
METHOD_STYLES: dict[str, tuple[str, str]] = {
    "rff": ("#1f77b4", "o"),
    "orf": ("#c2570a", "s"),
    "orf_tallqr": ("#4400ff", "D"),
    "sorf": ("#2a8a2a", "^"),
    "qmc": ("#d62728", "v"),
    "gq": ("#8e5cc2", "P"),
    "sr33": ("#8c564b", "X"),
    "sr33_haar": ("#992266", "*"),
    "sr11": ("#0055ff", "<"),
    "sr13": ("#8800bb", ">"),
    "lev_rff": ("#ff00ff", "h"),
    "slw_rff": ("#669988", "p"),
    "nystrom": ("#ff0099", "8"),
    "qmc_adaptive": ("#885511", "P"),
    "qmc_adaptive_half": ("#00aa00", "*"),
    "qmc_adaptive_half_rr2": ("#992233", "<"),
    "qmc_adaptive_quarter": ("#889955", ">"),
    "qmc_adaptive_rr2": ("#ff0000", "X"),
    "qmc_digital_net": ("#997799", "D"),
    "qmc_digital_net_order2": ("#006644", "h"),
    "qmc_fixed": ("#998800", "d"),
    "qmc_halton_rr2": ("#335566", "v"),
    "qmc_lattice": ("#dd44cc", "^"),
    "qmc_lattice_korobov": ("#aa66ff", "p"),
    "qmc_sobol": ("#555522", "s"),
    "sorf_hd1": ("#1188ff", "H"),
    "sorf_hd2": ("#ee5577", "o"),
    "fastfood": ("#990088", "H"),
    "signed_circulant": ("#111111", "8"),
}
#: Colours of labels not in METHOD_STYLES (plug-ins), none of them a fixed label's.
_FALLBACK_COLOURS = (
    "#aa22ff #cc7755 #cc7788 #3355aa #bb66aa #0099bb #ff0055 #779900 #998877 #446600".split()
)
_FALLBACK_MARKERS = "o s D ^ v P X * < > h p 8 d H".split()
#: Legend names of labels that share a paper label with another construction: the
#: paper's Gort is the published tall-QR code (orf_tallqr), not Yu et al.'s ORF (orf);
#: its B is the butterfly rotation (sr33), sr33_haar a Haar-rotated variant.
PAPER_VARIANTS: dict[str, str] = {
    "orf": "ORF, Yu et al.",
    "orf_tallqr": "Gort, QR, published",
    "sr33": "B, butterfly",
    "sr33_haar": "B, Haar",
}
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")


def method_style(label: str) -> tuple[str, str]:
    """The (colour, marker) of a method label: fixed for known labels, else (a plug-in)
    hash-stable from a reserve that no known label uses."""
    if label in METHOD_STYLES:
        return METHOD_STYLES[label]
    h, k = zlib.crc32(label.encode()), len(_FALLBACK_COLOURS)
    return _FALLBACK_COLOURS[h % k], _FALLBACK_MARKERS[(h // k) % len(_FALLBACK_MARKERS)]


def kernel_name(kernel: str) -> str:
    """Display name of a kernel id (``rbf`` -> ``Gaussian``)."""
    return KERNEL_NAMES.get(kernel, kernel)


def dataset_name(dataset: str) -> str:
    """Display name of a dataset id (``letter`` -> ``LETTER``)."""
    return DATASET_NAMES.get(str(dataset).lower(), str(dataset))


def kernel_rank(kernel: str) -> tuple[int, str]:
    return (
        (KERNEL_ORDER.index(kernel), "") if kernel in KERNEL_ORDER else (len(KERNEL_ORDER), kernel)
    )


def label_rank(label: str) -> tuple[int, str]:
    known = list(METHOD_STYLES)
    return (known.index(label), "") if label in known else (len(known), label)


def dataset_order(df: pd.DataFrame) -> list[str]:
    """Datasets sorted by input dimension d (unknown d last), then by name."""
    d = pd.to_numeric(df["d"], errors="coerce").groupby(df["dataset"]).min()
    return sorted(d.index, key=lambda ds: (math.isnan(d[ds]), d[ds] if d[ds] == d[ds] else 0, ds))


def parse_formats(value: str) -> list[str]:
    """Figure formats from ``png,pdf`` (one-line error naming the valid ones)."""
    formats = [f.strip().lower().lstrip(".") for f in value.split(",") if f.strip()]
    if not formats:
        raise KernelbenchError("--format needs at least one of: " + ", ".join(FORMATS))
    if bad := next((f for f in formats if f not in FORMATS), None):
        raise choices_error("format", bad, FORMATS)
    return list(dict.fromkeys(formats))


# --------------------------------------------------------------------------- tables


def summarise(df: pd.DataFrame, keys: Sequence[str], metrics: Mapping[str, str]) -> pd.DataFrame:
    """One row per (``keys``, metric id: column) over each cell's runs: keys, d, method,
    paper_label, metric, runs, mean, std, sem, ci_low, ci_high (95% t-interval); metrics
    absent or all-NaN are left out. Sorted by metric, experiment, kernel, dataset (by d),
    method (:func:`label_rank`), then the other keys."""
    rows: list[dict[str, object]] = []
    keys = list(keys)
    for metric, column in metrics.items():
        if column not in df.columns or df[column].isna().all():
            continue
        for key, g in df.groupby(keys, sort=True, dropna=False):
            values = g[column].dropna().to_numpy(dtype=float)
            if values.size == 0:
                continue
            mean, std, sem, half = t_interval(values)
            paper = next((p for p in g.get("paper_label", pd.Series(dtype=str)) if p), "")
            rows.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "d": g["d"].iloc[0] if "d" in g else np.nan,
                    "method": g["method"].iloc[0] if "method" in g else "",
                    "paper_label": paper,
                    "metric": metric,
                    "runs": int(values.size),
                    "mean": mean,
                    "std": std,
                    "sem": sem,
                    "ci_low": mean - half,
                    "ci_high": mean + half,
                }
            )
    order = {ds: i for i, ds in enumerate(dataset_order(df))} if "dataset" in keys else {}
    rest = [k for k in keys if k not in ("experiment", "kernel", "dataset", "method_label")]
    rows.sort(
        key=lambda r: (
            r["metric"],
            r.get("experiment", ""),
            kernel_rank(r["kernel"]) if "kernel" in r else 0,
            order.get(r["dataset"], math.nan) if "dataset" in r else 0,
            label_rank(r["method_label"]) if "method_label" in r else 0,
            *(str(r[k]) for k in rest),
        )
    )
    return pd.DataFrame(rows)


def _fmt(value: object) -> str:
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return ""
        return f"{value:.6g}"
    return str(value)


def markdown_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table, one string: the header, its rule, a line per row."""
    rule = "|" + "---|" * len(header)
    lines = (" | ".join(map(str, r)) for r in (header, *rows))
    return "\n".join([f"| {next(lines)} |", rule, *(f"| {line} |" for line in lines)])


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of ``df`` (floats to 6 significant digits)."""
    rows = ([_fmt(v).replace("|", r"\|") for v in row] for row in df.itertuples(index=False))
    return markdown_text([str(c) for c in df.columns], rows) + "\n"


def write_table(
    table: pd.DataFrame, out: Path, stem: str, title: str, intro: str = "", notes=()
) -> list[Path]:
    """Write ``<out>/<stem>.csv`` and ``<stem>.md`` (title, intro, table, notes)."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
    table.to_csv(csv_path, index=False)
    text = [f"# {title}", ""]
    if intro:
        text += [intro, ""]
    text.append(markdown_table(table))
    if notes:
        text += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    md_path.write_text("\n".join(text).rstrip() + "\n")
    return [csv_path, md_path]


# --------------------------------------------------------------------------- figures


#: A log panel with an empty gap of more than this many decades shows only the values
#: above it; a mean further down (rounding level, e.g. Nystroem, docs/nystrom.md) is drawn
#: on the bottom edge as a triangle pointing down, and noted.
LOG_GAP = 4.0


def _log_bottom(positive: Sequence[float]) -> float:
    """A log panel's lower y limit: below its smallest value, or a decade below the values
    above a gap of more than :data:`LOG_GAP` decades."""
    logs = np.sort(np.log10(np.asarray(positive, dtype=float)))
    gaps = np.nonzero(np.diff(logs) > LOG_GAP)[0]
    if gaps.size:
        return float(10.0 ** (logs[gaps[-1] + 1] - 1.0))
    return float(10.0 ** logs[0] / 1.3)
