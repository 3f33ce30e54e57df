"""Which figures each paper page of the site draws, by its report section's key
(:data:`kernelbench.report.common.SECTIONS`): the papers' figure specs, declared once in
:mod:`kernelbench.reporting.paper_figures`."""

from kernelbench.reporting.paper_figures import PAGES

__all__ = ["PAGES"]
