"""Locate and load the papers' published reference numbers (``results/reference/*.csv``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.packaged import data_dir

DEFAULT_REFERENCE = "munkhoeva2018_fig1_kernel_error"


def reference_dir() -> Path:
    """The directory of the reference CSVs: the package ``kernelbench.reference_data``
    (``results/reference`` of the source tree; :mod:`kernelbench.packaged`)."""
    return data_dir("results/reference")


def load_reference(name: str = DEFAULT_REFERENCE) -> pd.DataFrame:
    """Read the reference table ``<name>.csv`` (``name`` may also carry the ``.csv``), or
    the CSV file at the absolute path ``name`` (a plug-in's own table)."""
    if Path(name).is_absolute():
        if not Path(name).is_file():
            raise KernelbenchError(f"reference table {name!r} does not exist")
        return pd.read_csv(name)
    stem = name.removesuffix(".csv")
    path = reference_dir() / f"{stem}.csv"
    if not path.is_file():
        names = sorted(p.stem for p in reference_dir().glob("*.csv"))
        raise choices_error("reference table", stem, names)
    return pd.read_csv(path)
