"""Experiment protocols, one module per protocol, registered by name.

=============== ==================================================================
name            what a cell measures
=============== ==================================================================
kernel_approx   relative Frobenius/spectral Gram errors (Munkhoeva et al. 2018, Fig. 1)
variance_ratio  Var(method) / Var(RFF) for synthetic pairs at distance z sigma
                (Yu et al. 2016, Fig. 2); one row per (run, z)
pair_mse        kernel MSE over pairs, d zero-padded to a power of two, against D/d
                (Yu et al. 2016, Figs. 4 and 5(c))
qmc_adaptive    box discrepancy and Gram errors per CG iteration of adaptive QMC
                (Yang et al. 2014, Fig. 4); one row per (run, iteration)
qmc_discrepancy box discrepancy of the frequencies beside the Gram errors
                (Yang et al. 2014, Fig. 3)
walltime        fit and map time on a few points, one thread (Munkhoeva et al. 2018, Fig. 3)
krr             KRR test accuracy and feature time (Liu et al. 2020, Table 3, Fig. 1)
downstream      test accuracy / R^2 of a learner on the features (Munkhoeva et al., Fig. 2)
=============== ==================================================================

Adding a protocol is one module (a :class:`Protocol` subclass registered in
:data:`PROTOCOLS`: how a cell is measured), its reporting side
(``kernelbench/reporting/<name>.py``: metrics, figures, reference cells; registered in
:data:`kernelbench.reporting.REPORTING` under the same name), and
``configs/protocol/<name>.yaml`` with its settings.
"""

from __future__ import annotations

from kernelbench.cell import PROTOCOLS, get_protocol, protocol_name
from kernelbench.protocols.base import Protocol

__all__ = [
    "PROTOCOLS",
    "Protocol",
    "get_protocol",
    "protocol_name",
]
