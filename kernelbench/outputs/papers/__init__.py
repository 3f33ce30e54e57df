"""The papers, one module each (:mod:`.munkhoeva2018`, :mod:`.liu2020`, :mod:`.yu2016`,
:mod:`.yang2014`): its figures declared once (:class:`~kernelbench.outputs.spec.FigureSpec`),
the figure functions its protocols name, its baseline tables, its report sections with
the claims checked, and what reproducing it means (a
:class:`~kernelbench.outputs.verdicts.VerifyConfig`). This module gathers what each
declares: the report's sections (:data:`SECTIONS`, :func:`load_sections`), the site's
figures per page (:data:`PAGES`), the committed PNGs (:data:`BASELINE_FIGURES`) and the
verify configs (:data:`VERIFY`, read by ``kernelbench verify``).

A section's verdicts are ``kernelbench verify``'s: the report command hands
:func:`load_sections` the ``kernelbench.verify`` module, so these declarations import no
part of verify (nor any renderer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernelbench.outputs.papers import liu2020, munkhoeva2018, yang2014, yu2016
from kernelbench.outputs.sections import SECTIONS, Section
from kernelbench.outputs.spec import BaselineFigure, FigureSpec
from kernelbench.outputs.verdicts import VerifyConfig

_PAPERS = (munkhoeva2018, liu2020, yu2016, yang2014)

_BUILDERS = {k: f for p in _PAPERS for k, f in p.SECTIONS.items()}
#: section key -> its builder (given ``kernelbench.verify``), in report order
BUILDERS: dict[str, Callable[[Any], Section | None]] = {k: _BUILDERS[k] for k in SECTIONS}
#: section key -> the figures of its site page
PAGES: dict[str, tuple[FigureSpec, ...]] = {k: v for p in _PAPERS for k, v in p.PAGES.items()}
#: PNG stem (``<stem>.png``, ``<stem>_<page>.png`` for a spec with pages) -> its figure
BASELINE_FIGURES: dict[str, BaselineFigure] = {
    k: v for p in (munkhoeva2018, liu2020, yang2014, yu2016) for k, v in p.BASELINE_FIGURES.items()
}

#: verify config name -> what reproducing it means (``kernelbench verify --config NAME``)
VERIFY: dict[str, VerifyConfig] = {
    k: v for p in (munkhoeva2018, liu2020) for k, v in p.VERIFY.items()
}


def load_sections(verify: Any, only: list[str] | None = None) -> list[Section]:
    """The sections (:data:`~kernelbench.outputs.sections.SECTIONS`, or ``only`` these)
    that build, in report order; ``verify`` is the :mod:`kernelbench.verify` module, which
    judges their cells."""
    built = (f(verify) for k, f in BUILDERS.items() if not only or k in only)
    return [s for s in built if s is not None]
