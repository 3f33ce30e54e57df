"""Datasets: registry, sources (mirror, cache, download) and experiment protocols.

The datasets and their sources: docs/data.md, ``kernelbench datasets list|info``.
Adding one is an entry of ``catalogue.yaml`` (its :class:`DatasetSpec` facts and how its
download becomes arrays, registered by :mod:`.catalogue`) and ``configs/dataset/<name>.yaml``.
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
