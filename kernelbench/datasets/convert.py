"""Parse downloaded files (OpenML tables, LIBSVM text, xlsx sheets) into the cache format.

Nothing here touches the network: :func:`kernelbench.datasets.catalogue.download` calls
:mod:`kernelbench.datasets.net` for the fetch and then these, which only read local files.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING
from xml.etree import ElementTree

import numpy as np

from kernelbench.datasets.spec import Arrays
from kernelbench.errors import KernelbenchError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def label_codes(
    values: Sequence[object] | np.ndarray, order: Sequence[str] | None = None
) -> np.ndarray:
    """Class labels as codes ``0..k-1`` (int64) in ``order`` (strings), by default the
    sorted distinct labels (numerically when they all parse as numbers)."""
    labels = np.asarray([str(v).strip() for v in values])
    if order is None:
        distinct = sorted(set(labels.tolist()))
        try:
            distinct = sorted(distinct, key=float)
        except ValueError:
            pass
        order = distinct
    index = {label: i for i, label in enumerate(order)}
    unknown = sorted(set(labels.tolist()) - set(index))
    if unknown:
        raise KernelbenchError(f"unexpected class labels {unknown[:5]}; expected {list(order)}")
    return np.fromiter((index[v] for v in labels), dtype=np.int64, count=len(labels))


def _cast_x(X: np.ndarray, x_dtype: str) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if x_dtype == "uint8":
        if X.min() < 0 or X.max() > 255 or not np.array_equal(X, np.round(X)):
            raise KernelbenchError("expected integer pixel values in 0..255")
        return X.astype(np.uint8)
    return X.astype(x_dtype)


def frame_to_arrays(
    frame: pd.DataFrame,
    target: str,
    *,
    task: str,
    n_train: int | None = None,
    x_dtype: str = "float32",
    label_order: Sequence[str] | None = None,
) -> Arrays:
    """Convert an OpenML table (features + ``target`` column) to the cache format, the rows
    after the first ``n_train`` becoming the test file."""
    if target not in frame.columns:
        raise KernelbenchError(f"target column {target!r} not in the downloaded table")
    features = frame.drop(columns=[target])
    X = _cast_x(features.to_numpy(dtype=np.float64), x_dtype)
    if task == "classification":
        y = label_codes(frame[target].astype(str).to_numpy(), label_order)
    else:
        y = frame[target].to_numpy(dtype=np.float64)
    if n_train is None or n_train >= len(X):
        return {"X": X, "y": y}
    return {"X": X[:n_train], "y": y[:n_train], "X_test": X[n_train:], "y_test": y[n_train:]}


def read_libsvm(
    path: Path, d: int, label_order: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Read a LIBSVM text file (``.bz2``/``.gz`` allowed) as dense float32 X and label codes."""
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path), n_features=d)
    labels = [f"{v:g}" for v in y]
    return np.asarray(X.todense(), dtype=np.float32), label_codes(labels, label_order)


_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _column_index(ref: str) -> int:
    letters = re.match(r"[A-Z]+", ref)
    if letters is None:
        raise KernelbenchError(f"bad cell reference {ref!r} in xlsx sheet")
    index = 0
    for ch in letters.group():
        index = index * 26 + ord(ch) - ord("A") + 1
    return index - 1


def read_xlsx(file: str | Path | IO[bytes], sheet: int = 0) -> list[list[object]]:
    """The cells of one worksheet of an ``.xlsx`` file (numbers as float, text as str),
    read with the standard library: shared, inline and numeric cells (UCI Power Plant)."""
    with zipfile.ZipFile(file) as zf:
        shared: list[str] = []
        if "xl/sharedStrings.xml" in zf.namelist():
            root = ElementTree.fromstring(zf.read("xl/sharedStrings.xml"))
            for si in root.iter(f"{_NS}si"):
                shared.append("".join(t.text or "" for t in si.iter(f"{_NS}t")))
        workbook = ElementTree.fromstring(zf.read("xl/workbook.xml"))
        sheets = list(workbook.iter(f"{_NS}sheet"))
        rel_id = sheets[sheet].get(_REL)
        rels = ElementTree.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
        target = next(r.get("Target", "") for r in rels if r.get("Id") == rel_id)
        member = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        root = ElementTree.fromstring(zf.read(member))
    rows: list[list[object]] = []
    for row in root.iter(f"{_NS}row"):
        cells: dict[int, object] = {}
        for c in row.iter(f"{_NS}c"):
            kind = c.get("t")
            v = c.find(f"{_NS}v")
            if kind == "inlineStr":
                value: object = "".join(t.text or "" for t in c.iter(f"{_NS}t"))
            elif v is None or v.text is None:
                continue
            elif kind == "s":
                value = shared[int(v.text)]
            elif kind in ("str", "e"):
                value = v.text
            else:
                value = float(v.text)
            cells[_column_index(c.get("r", "A"))] = value
        if cells:
            rows.append([cells.get(i) for i in range(max(cells) + 1)])
    return rows


POWERPLANT_COLUMNS = ("AT", "V", "AP", "RH", "PE")


def read_powerplant(path: Path) -> Arrays:
    """Sheet1 of ``Folds5x2_pp.xlsx`` in the UCI zip: X = AT, V, AP, RH; y = PE (MW)."""
    with zipfile.ZipFile(path) as zf:
        members = [m for m in zf.namelist() if m.lower().endswith(".xlsx")]
        if not members:
            raise KernelbenchError(f"no .xlsx file in {path.name}")
        rows = read_xlsx(io.BytesIO(zf.read(members[0])), sheet=0)
    header = [str(c).strip() for c in rows[0]]
    if tuple(header[: len(POWERPLANT_COLUMNS)]) != POWERPLANT_COLUMNS:
        raise KernelbenchError(
            f"unexpected Power Plant columns {header}; expected {POWERPLANT_COLUMNS}"
        )
    table = np.asarray([r[: len(POWERPLANT_COLUMNS)] for r in rows[1:]], dtype=np.float64)
    return {"X": table[:, :4].astype(np.float32), "y": table[:, 4]}
