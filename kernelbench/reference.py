"""Locate and load the papers' published reference numbers (``results/reference/*.csv``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.errors import KernelbenchError, choices_error

DEFAULT_REFERENCE = "munkhoeva2018_fig1_kernel_error"


def _candidates() -> list[Path]:
    """Where reference tables may live, in lookup order: packaged copy, then checkout."""
    here = Path(__file__).resolve()
    return [here.parent / "reference_data", here.parents[1] / "results" / "reference"]


def reference_dir() -> Path:
    """The directory of the reference CSVs: the packaged ``kernelbench/reference_data/``
    of a wheel when it holds one, else the checkout's ``results/reference``."""
    for candidate in _candidates():
        if candidate.is_dir() and any(candidate.glob("*.csv")):
            return candidate
    looked = ", ".join(str(p) for p in _candidates())
    raise KernelbenchError(f"reference tables not found (looked in {looked})")


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
