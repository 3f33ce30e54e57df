"""Datasets: registry, sources (mirror, cache, download) and experiment protocols.

========== ============== ========================= =====================
name       task           source                    in the mirror
========== ============== ========================= =====================
powerplant regression     UCI archive (294)         yes
letter     classification OpenML 6                  yes
usps       classification LIBSVM archive            yes (ESL version)
mnist      classification OpenML 554                yes
cifar100   classification OpenML 41983              yes (balanced subset)
leukemia   classification LIBSVM archive            yes (leu rebuilt from raw)
eeg        classification OpenML 1471               yes
codrna     classification LIBSVM archive            yes
magic04    classification OpenML 1120               yes
covtype    classification OpenML 1596               no (optional)
cpu        regression     OpenML 197 (cpu_act)      no (optional)
census     regression     OpenML 574 (house_16H)    no (optional; stand-in)
digits     classification bundled (scikit-learn)    not needed
========== ============== ========================= =====================

Adding a dataset is one module here (a :class:`DatasetSpec` passed to ``register``,
with its downloader), found by :mod:`kernelbench.builtin`, and
``configs/dataset/<name>.yaml``.
"""

from __future__ import annotations

from kernelbench.datasets.sources import fetch_dataset, load_dataset, where
from kernelbench.datasets.spec import DATASETS, Dataset, DatasetSpec, register
from kernelbench.datasets.splits import (
    Split,
    clear_cache,
    dataset_config,
    kernel_approx_pair,
    protocol_split,
    train_part,
)

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetSpec",
    "Split",
    "clear_cache",
    "dataset_config",
    "fetch_dataset",
    "kernel_approx_pair",
    "load_dataset",
    "protocol_split",
    "register",
    "train_part",
    "where",
]
