"""What a section of REPRODUCTION.md is, and the helpers its sections share.

A section is data, rendered twice: the Markdown of REPRODUCTION.md and the HTML site
(:mod:`kernelbench.outputs.site`): Markdown lines and :class:`Claim` items in its body, its
cell-by-cell verdicts a table (:attr:`Section.cells`). Its prose is a Jinja2 template,
``templates/report/<section>.md``, which its module fills with the numbers (:func:`render`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench.outputs.style import markdown_text as table
from kernelbench.outputs.verdicts import DEVIATES, KNOWN, tally
from kernelbench.packaged import baseline_dir, tree_name

#: The committed baseline tables the sections read (``results/baseline``, shipped as
#: package data: :mod:`kernelbench.packaged`).
BASE = baseline_dir()


@dataclass
class Summary:
    """One row of the report's summary table: cell verdict counts, or claims checked."""

    cells: int = 0
    reproduced: int = 0
    known: int = 0
    deviate: int = 0
    not_run: int = 0
    claims: int = 0
    claims_hold: int = 0
    note: str = ""
    #: the claims ``claims`` counts, where the body also lists others (re-checks)
    counted: tuple[Claim, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A paper claim checked on our numbers (``holds`` None: not measured), written by
    ``template`` with ``words`` for True, False and None."""

    text: str
    holds: bool | None
    evidence: str = ""
    template: str = "- **{verdict}**: {text} {evidence}"
    words: tuple[str, str, str] = ("holds", "does not hold", "not measured")

    @property
    def verdict(self) -> str:
        return self.words[0 if self.holds else 2 if self.holds is None else 1]

    def __str__(self) -> str:
        return self.template.format(verdict=self.verdict, text=self.text, evidence=self.evidence)


@dataclass
class Section:
    """A section: anchor, title, summary row, body (Markdown lines and :class:`Claim`
    items), appendix and, where the paper gives numbers, its verdict table."""

    key: str
    title: str
    summary: Summary
    body: list[str | Claim]
    appendix: list[str] = field(default_factory=list)
    cells: pd.DataFrame | None = None

    @property
    def claims(self) -> list[Claim]:
        return [x for x in self.body if isinstance(x, Claim)]

    def markdown(self) -> list[str]:
        """The body as Markdown lines."""
        return [str(x) for x in self.body]


def fmt(x: float | None, spec: str = ".4g") -> str:
    """A number for a table ('–' for missing or non-finite)."""
    return "–" if x is None or not np.isfinite(x) else format(x, spec)


def rel(p: Path | str | None) -> str:
    """A path for the report: a shipped table as in the source tree
    (``results/baseline/...``), else relative to the current directory when under it."""
    if p is None:
        return ""
    shipped = tree_name(p)
    if shipped is not None:
        return shipped
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


#: The report's sections, in report order (each built by its paper's module:
#: :data:`kernelbench.outputs.papers.BUILDERS`).
SECTIONS = ("fig1", "fig2", "fig3", "liu2020", "yu2016", "yang2014")


def render(template: str, **context) -> list[str | Claim]:
    """``templates/report/<template>.md`` filled with ``context``, as body lines; a :class:`Claim`
    printed on a line of its own stays a Claim (the site boxes it)."""
    import jinja2

    claims: list[Claim] = []

    def keep(value):
        if isinstance(value, Claim):
            claims.append(value)
            return f"\0{len(claims) - 1}\0"
        return value

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("kernelbench.outputs", "templates/report"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=keep,
    )
    env.filters.update(fmt=fmt, rel=rel, f=format)
    text = env.get_template(f"{template}.md").render(context).removesuffix("\n")
    return [claims[int(x[1:-1])] if x.startswith("\0") else x for x in text.split("\n")]


def rank(values: pd.Series, order: Sequence[str]) -> pd.Series:
    """Each value's position in ``order`` (values not in it last)."""
    return values.map(lambda v: order.index(v) if v in order else len(order))


def ordered(df: pd.DataFrame, by: Sequence[str], orders: dict[str, Sequence[str]], **kw):
    """``df`` sorted by the columns ``by``, those of ``orders`` by their :func:`rank`."""
    keys = {c: rank(df[c], orders[c]) if c in orders else df[c] for c in by}
    return df.loc[pd.DataFrame(keys).sort_values(list(by), **kw).index]


def with_sem(ours: pd.DataFrame) -> pd.DataFrame:
    """A baseline table with its ``sem`` column (std / sqrt(runs) where absent)."""
    if "sem" not in ours:
        ours["sem"] = ours["std"] / np.sqrt(ours["runs"])
    return ours


def counts(v: Iterable[str]) -> tuple[int, int, int, int]:
    """(reproduced, known deviations, deviate, not run) among the verdicts ``v``."""
    v = pd.Series(list(v), dtype=object).astype(str)
    return (*tally(v).values(), int((v == "not run").sum()))


def means(t: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The mean of ``metric`` per (dataset, n) cell, one column per method label."""
    return t[t["metric"] == metric].pivot_table(
        index=["dataset", "n"], columns="method_label", values="mean"
    )


def ratio_claim(r: pd.Series, test: Callable[[float], bool], key: str, text: str, what: str):
    """The claim ``text``: ``test`` on the ratio ``r`` in every (dataset, n) cell that has
    one; its evidence: how many pass, of how many (``what``), and the failures."""
    r = r.dropna()
    ok = r.map(test).astype(bool)
    fails = ", ".join(f"{ds} {key}={n:g}: {x:.3g}" for (ds, n), x in r[~ok].items())
    fails = f"; not in: {fails}" if fails else ""
    return Claim(text, len(r) > 0 and bool(ok.all()), f"{ok.sum()} of {len(r)} {what}{fails}.")


def verdict_changes(head: str, now: Iterable[bool], before: Iterable[tuple]) -> str:
    """A table of claims' verdicts: the earlier report's (text, verdict, evidence), now."""
    word = {True: "holds", False: "does not hold"}
    return table(
        [head, "before", "now"],
        (
            [text, f"{word[old]} ({ev})", word[new] + ("" if old == new else " (changed)")]
            for (text, old, ev), new in zip(before, now, strict=True)
        ),
    )


def first_file(*paths: Path) -> Path | None:
    """The first of ``paths`` that is a file."""
    return next((p for p in paths if p.is_file()), None)


def largest_z(pooled: pd.DataFrame) -> pd.Series | None:
    """The row of ``pooled`` with the largest |z| among those that must reproduce."""
    gated = pooled[~pooled["verdict"].astype(str).str.startswith(KNOWN)]
    return gated.loc[gated["z"].abs().idxmax()] if len(gated) else None


def pooled_lines(
    pooled, names: dict[str, str] | None = None, kernels: dict[str, str] | None = None
):
    """The pooled bias test of ``kernelbench verify`` (one row per family across n) as
    (per-dataset counts, every family) Markdown tables."""
    names, kernels = names or {}, kernels or {}
    head = []
    for ds, g in pooled.groupby("dataset", sort=False):
        rep, known, dev, _ = counts(g["verdict"])
        top = largest_z(g)
        where = (
            f"{fmt(abs(top['z']), '.2f')} ({kernels.get(top['kernel'], top['kernel'])} "
            f"`{top['method_label']}`, ratio {fmt(top['ratio'], '.2f')})"
            if top is not None
            else "–"
        )
        head.append([names.get(ds, ds), len(g), rep, known, dev, where])
    full = [
        [
            names.get(r["dataset"], r["dataset"]),
            kernels.get(r["kernel"], r["kernel"]),
            f"`{r['method_label']}`",
            r["cells"],
            fmt(r["ratio"], ".3f"),
            f"{fmt(r['ratio_min'], '.2f')}–{fmt(r['ratio_max'], '.2f')}",
            fmt(r["z"], "+.2f"),
            fmt(r["z_crit"], ".2f"),
            "**deviates**" if r["verdict"] == DEVIATES else r["verdict"],
        ]
        for r in pooled.to_dict("records")
    ]
    cols = ["dataset", "families", "reproduced", "known deviations", "deviate"]
    cols_full = ["dataset", "kernel", "method", "cells", "mean ratio", "ratio range", "z", "z_crit"]
    return table([*cols, "largest \\|z\\| (family)"], head), table([*cols_full, "verdict"], full)
