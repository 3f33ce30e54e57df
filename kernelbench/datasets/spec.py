"""What a dataset is: its :class:`DatasetSpec`, the ``DATASETS`` registry and :class:`Dataset`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from kernelbench.registry import Registry

#: The arrays of a dataset in the mirror/cache format: ``X``, ``y`` and
#: optionally ``X_test``, ``y_test``.
Arrays = dict[str, np.ndarray]

#: Converts the files fetched into a scratch directory into :data:`Arrays`.
#: It receives the scratch directory and a ``progress`` flag.
Downloader = Callable[[Path, bool], Arrays]


@dataclass(frozen=True, kw_only=True)
class DatasetSpec:
    """Static facts about one dataset (no data), given by keyword: ``n_train``/``n_test``
    of the official split (0: no test file). A local dataset (a plug-in's ``bundled``
    loader) needs only ``name``, ``task``, ``n_train``, ``d`` and ``bundled``."""

    name: str
    task: Literal["classification", "regression"]
    n_train: int
    d: int
    n_test: int = 0
    n_classes: int | None = None
    title: str = ""
    #: Where a download comes from, in words: "OpenML 6", "UCI archive", ...
    source: str = "local"
    openml_id: int | None = None
    urls: tuple[str, ...] = ()
    citation: str = ""
    licence: str = ""
    #: SHA-256 of the reference ``<name>.npz`` (the mirror's file); None if unknown.
    sha256: str | None = None
    #: One line: how the mirror's copy differs from the data the papers used.
    mirror_deviation: str = "not a paper dataset"
    #: One line: how a download differs from the data the papers used.
    download_deviation: str = "not a paper dataset"
    #: Turns the fetched files into arrays; None for bundled datasets.
    downloader: Downloader | None = field(default=None, repr=False, compare=False)
    #: Returns the arrays of a bundled dataset (no download needed).
    bundled: Callable[[], Arrays] | None = field(default=None, repr=False, compare=False)
    optional: bool = False
    #: Whether the dataset mirror (KERNELBENCH_DATA) holds it; default: unless bundled.
    in_mirror: bool | None = None

    def __post_init__(self) -> None:
        if self.in_mirror is None:
            object.__setattr__(self, "in_mirror", self.bundled is None)
        if not self.title:
            object.__setattr__(self, "title", self.name)

    @property
    def n_total(self) -> int:
        """Rows of the official train and test files together."""
        return self.n_train + self.n_test


@dataclass
class Dataset:
    """A loaded dataset: the arrays and where they came from."""

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None
    y_test: np.ndarray | None
    source: Literal["mirror", "cache", "download", "bundled"]
    path: str | None
    spec: DatasetSpec
    #: SHA-256 of the file the arrays were read from (None when bundled).
    sha256: str | None = None

    @property
    def deviation(self) -> str:
        """The known deviation of this copy from the papers' data, one line."""
        if self.source == "mirror":
            return self.spec.mirror_deviation
        return self.spec.download_deviation


DATASETS: Registry[DatasetSpec] = Registry("dataset")


def register(spec: DatasetSpec) -> DatasetSpec:
    """Add ``spec`` to :data:`DATASETS` under its name and return it."""
    DATASETS.add(spec.name, spec)
    return spec
