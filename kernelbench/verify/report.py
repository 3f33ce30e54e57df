"""How ``verify`` shows a comparison: the printed table, its Markdown/CSV, one-line counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kernelbench.verify.compare import CELL
from kernelbench.verify.config import n_str


def _num(x: Any, spec: str = ".4g") -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-" if x is None or np.isnan(x) else ("inf" if x > 0 else "-inf")
    return format(x, spec)


def _pm(mean: Any, std: Any) -> str:
    """``0.0123 ± 0.0045``: ± is the standard deviation over runs, as everywhere."""
    if mean is None or not np.isfinite(mean):
        return "-"
    return f"{mean:.4g} ± {_num(std, '.2g')}"


def display_frame(t: pd.DataFrame, keys: Sequence[str] = CELL) -> pd.DataFrame:
    """The printed columns: one row per cell (its keys, runs, both means, ratio, z)."""
    cols: dict[str, Any] = {}
    for k in keys:
        name = "method" if k == "method_label" else k
        cols[name] = t[k].map(n_str) if k == "n" else t[k]
    cols.update(
        {
            "runs": t["runs"].astype(int).astype(str),
            "ours (mean ± std)": [_pm(m, s) for m, s in zip(t["mean"], t["std"], strict=True)],
            "paper (mean ± std)": [
                _pm(m, s) for m, s in zip(t["paper_mean"], t["paper_std"], strict=True)
            ],
            "ratio": t["ratio"].map(lambda x: _num(x, ".3f")),
            "z": t["z"].map(lambda x: _num(x, "+.2f")),
            "z_crit": t["z_crit"].map(lambda x: _num(x, ".2f")),
        }
    )
    if "base_verdict" in t:
        cols["baseline (mean)"] = t["base_mean"].map(lambda x: _num(x, ".4g"))
        cols["z_base"] = t["base_z"].map(lambda x: _num(x, "+.2f"))
        cols["vs baseline"] = t["base_verdict"]
    cols["verdict"] = t["verdict"]  # last: the reasons of known deviations are long
    return pd.DataFrame(cols)


def format_text(d: pd.DataFrame) -> str:
    widths = [max(len(str(c)), *(len(str(v)) for v in d[c])) for c in d.columns]
    right = {"n", "runs", "ratio", "z", "z_crit", "z_base", "baseline (mean)"}

    def line(vals: Iterable[Any]) -> str:
        parts = []
        for c, v, w in zip(d.columns, vals, widths, strict=True):
            parts.append(str(v).rjust(w) if c in right else str(v).ljust(w))
        return "  ".join(parts).rstrip()

    out = [line(d.columns), line("-" * w for w in widths)]
    out += [line(row) for row in d.itertuples(index=False)]
    return "\n".join(out)


def summary_line(c: Mapping[str, int]) -> str:
    return f"{c['reproduced']} reproduced, {c['known']} known deviations, {c['deviate']} deviate"


def write_table(t: pd.DataFrame, path: Path, keys: Sequence[str] = CELL) -> None:
    """``.csv``: every column of the comparison; ``.md``: the printed table as Markdown."""
    from kernelbench.drawing import markdown_table

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".md":
        path.write_text(markdown_table(display_frame(t, keys)))
    else:
        t.to_csv(path, index=False)
