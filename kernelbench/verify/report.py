"""How ``verify`` shows a comparison: the printed tables (:data:`WIDTH` wide, known
deviations as numbered notes, unless ``--wide``), their Markdown/CSV, the verdict line.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kernelbench.results import format_n
from kernelbench.verify.compare import CELL, DEFAULT_TAU, KNOWN

#: After z where the cell's tau is the config's declared default (its pair not measured).
UNMEASURED_MARK = " u"
#: The widest line ``verify`` prints without ``--wide``.
WIDTH = 120
#: Right-aligned (numeric) columns of the printed tables.
RIGHT = {"n", "runs", "ratio", "z", "z_crit", "z_base", "baseline (mean)", "cells", "ratio range"}


def _num(x: Any, spec: str = ".4g") -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-" if x is None or np.isnan(x) else ("inf" if x > 0 else "-inf")
    return format(x, spec)


def _pm(mean: Any, std: Any) -> str:
    """``0.0123 ± 0.0045``: ± is the standard deviation over runs, as everywhere."""
    return f"{mean:.4g} ± {_num(std, '.2g')}" if np.isfinite(mean) else "-"


def _key_columns(t: pd.DataFrame, keys: Sequence[str]) -> dict[str, Any]:
    return {
        "method" if k == "method_label" else k: t[k].map(format_n) if k == "n" else t[k]
        for k in keys
        if k in t
    }


def _reason(verdict: Any) -> str | None:
    """A known deviation's reason, None for any other verdict."""
    if isinstance(verdict, str) and verdict.startswith(KNOWN + ": "):
        return verdict[len(KNOWN) + 2 :]
    return None


def known_notes(verdicts: Iterable[str]) -> dict[str, int]:
    """Known-deviation reasons, numbered in order of appearance (the narrow table's notes)."""
    notes: dict[str, int] = {}
    for reason in filter(None, map(_reason, verdicts)):
        notes.setdefault(reason, len(notes) + 1)
    return notes


def _verdicts(v: pd.Series, wide: bool, notes: Mapping[str, int] | None) -> Any:
    """The verdict column; narrow: known deviations as ``known [i]`` (:func:`known_notes`)."""
    if wide:
        return v
    return [f"known [{notes[r]}]" if (r := _reason(x)) else x for x in v]


def display_frame(
    t: pd.DataFrame, keys: Sequence[str] = CELL, wide: bool = True, notes=None
) -> pd.DataFrame:
    """The printed columns, one row per cell; narrow (not ``wide``): no std, z_crit or
    baseline mean, known deviations as ``known [i]`` (``notes``: :func:`known_notes`)."""
    cols = _key_columns(t, keys)
    cols["runs"] = t["runs"].astype(int).astype(str)
    for name, mean in (("ours", "mean"), ("paper", "paper_mean")):
        if wide:
            cols[f"{name} (mean ± std)"] = list(map(_pm, t[mean], t[mean.replace("mean", "std")]))
        else:
            cols[name] = t[mean].map(_num)
    cols["ratio"] = t["ratio"].map(lambda x: _num(x, ".3f"))
    cols["z"] = t["z"].map(lambda x: _num(x, "+.2f"))
    if "tau_source" in t:  # a pair whose tau is the config's default, not measured
        mark = np.where(t["tau_source"] == DEFAULT_TAU, UNMEASURED_MARK, "")
        cols["z"] = cols["z"] + mark
    if wide:
        cols["z_crit"] = t["z_crit"].map(lambda x: _num(x, ".2f"))
    if "base_verdict" in t:
        if wide:
            cols["baseline (mean)"] = t["base_mean"].map(lambda x: _num(x, ".4g"))
        cols["z_base"] = t["base_z"].map(lambda x: _num(x, "+.2f"))
        cols["vs baseline"] = t["base_verdict"]
    cols["verdict"] = _verdicts(t["verdict"], wide, notes)  # last: the reasons are long
    return pd.DataFrame(cols)


def pooled_frame(
    p: pd.DataFrame, keys: Sequence[str] = CELL, wide: bool = True, notes=None
) -> pd.DataFrame:
    """The pooled families as printed: keys, cells, mean ratio (range), z, z_crit, verdict."""
    fam = [k for k in keys if k != "n"]
    cols = _key_columns(p, fam)
    cols["cells"] = p["cells"].astype(str)
    cols["ratio"] = p["ratio"].map(lambda x: _num(x, ".3f"))
    ranges = zip(p["ratio_min"], p["ratio_max"], strict=True)
    cols["ratio range"] = [f"{_num(a, '.2f')}-{_num(b, '.2f')}" for a, b in ranges]
    cols["z"] = p["z"].map(lambda x: _num(x, "+.2f"))
    cols["z_crit"] = p["z_crit"].map(lambda x: _num(x, ".2f"))
    cols["verdict"] = _verdicts(p["verdict"], wide, notes)
    return pd.DataFrame(cols)


def format_text(d: pd.DataFrame) -> str:
    """A plain-text table: columns padded, numbers right-aligned, two spaces apart."""
    widths = [max(len(str(c)), *(len(str(v)) for v in d[c])) for c in d.columns]

    def line(vals: Iterable[Any]) -> str:
        cells = zip(d.columns, vals, widths, strict=True)
        return "  ".join(
            str(v).rjust(w) if c in RIGHT else str(v).ljust(w) for c, v, w in cells
        ).rstrip()

    out = [line(d.columns), line("-" * w for w in widths)]
    out += [line(row) for row in d.itertuples(index=False)]
    return "\n".join(out)


def wrap(text: str, indent: str = "") -> str:
    """``text`` as lines of at most :data:`WIDTH` characters (continuation lines indented)."""
    return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False))


def format_notes(notes: Mapping[str, int]) -> str:
    """The narrow tables' notes: ``[i] known deviation: reason``, wrapped."""
    return "\n".join(wrap(f"[{i}] {KNOWN}: {r}", indent="    ") for r, i in notes.items())


def unmeasured_line(t: pd.DataFrame, default: Any) -> str | None:
    """The legend line of the cells marked :data:`UNMEASURED_MARK` (None: no such cell)."""
    n = int((t["tau_source"] == DEFAULT_TAU).sum()) if "tau_source" in t else 0
    if not n:
        return None
    return (
        f"{UNMEASURED_MARK.strip()}: {n} cells of (dataset, kernel) pairs whose sample "
        f"variation is not measured take the declared tau / mean = {default.cv:g} "
        f"({default.reason})."
    )


def summary_line(c: Mapping[str, int]) -> str:
    """The counts: reproduced, known, deviations (split cells/pooled), drift."""
    pooled = c.get("pooled_deviate", 0)
    dev = c["deviate"] + pooled
    text = f"{c['reproduced']} reproduced, {c['known']} known deviations, {dev} deviations"
    if dev:
        text += f" ({c['deviate']} cells, {pooled} pooled)"
    if "drift" in c:
        text += f", {c['drift']} drift"
    return text


def verdict_line(c: Mapping[str, int], failed: bool, written: Path) -> str:
    """``PASS: <counts>; written to <path>`` (or FAIL), the path shortened to
    ``.../`` its last parts to fit :data:`WIDTH`."""
    text = f"{'FAIL' if failed else 'PASS'}: {summary_line(c)}"
    full, cwd = Path(written).resolve(), Path.cwd().resolve()
    path = str(full.relative_to(cwd) if full.is_relative_to(cwd) else written)
    room = WIDTH - len(text) - len("; written to ")
    if len(path) > room:  # the longest tail of parts that fits, at least the last
        parts = Path(path).parts
        tails = ("/".join(parts[i:]) for i in range(1, len(parts)))
        path = ".../" + next((t for t in tails if len(t) + 4 <= room), parts[-1])
    return f"{text}; written to {path}"


def write_table(
    t: pd.DataFrame, path: Path, keys: Sequence[str], pooled: pd.DataFrame
) -> list[Path]:
    """``.csv``: every column (pooled families in ``<stem>_pooled.csv``); ``.md``: the
    wide printed tables. The files written."""
    from kernelbench.outputs.style import markdown_table

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".md":
        text = markdown_table(display_frame(t, keys))
        if len(pooled):
            text += "\nPooled per family (bias across n):\n\n"
            text += markdown_table(pooled_frame(pooled, keys))
        path.write_text(text)
        return [path]
    t.to_csv(path, index=False)
    side = path.with_name(f"{path.stem}_pooled{path.suffix or '.csv'}")
    pooled.to_csv(side, index=False)
    return [path, side]
