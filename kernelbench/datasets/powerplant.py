"""UCI Combined Cycle Power Plant (regression; not on OpenML: the UCI archive)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np

from kernelbench.datasets.convert import read_xlsx, url_source
from kernelbench.datasets.spec import Arrays, DatasetSpec, register
from kernelbench.errors import KernelbenchError

URL = "https://archive.ics.uci.edu/static/public/294/combined+cycle+power+plant.zip"
COLUMNS = ("AT", "V", "AP", "RH", "PE")
DEVIATION = "none known (UCI Folds5x2_pp.xlsx Sheet1, original row order)"


def convert(paths: list[Path]) -> Arrays:
    """Sheet1 of ``Folds5x2_pp.xlsx`` in the UCI zip: X = AT, V, AP, RH; y = PE (MW)."""
    with zipfile.ZipFile(paths[0]) as zf:
        members = [m for m in zf.namelist() if m.lower().endswith(".xlsx")]
        if not members:
            raise KernelbenchError(f"no .xlsx file in {paths[0].name}")
        rows = read_xlsx(io.BytesIO(zf.read(members[0])), sheet=0)
    header = [str(c).strip() for c in rows[0]]
    if tuple(header[: len(COLUMNS)]) != COLUMNS:
        raise KernelbenchError(f"unexpected Power Plant columns {header}; expected {COLUMNS}")
    table = np.asarray([r[: len(COLUMNS)] for r in rows[1:]], dtype=np.float64)
    return {"X": table[:, :4].astype(np.float32), "y": table[:, 4]}


SPEC = register(
    DatasetSpec(
        name="powerplant",
        task="regression",
        n_train=9568,
        d=4,
        title="Combined Cycle Power Plant (UCI 294)",
        source="UCI archive (dataset 294)",
        **url_source((URL,), convert),
        citation=(
            "Tüfekci, P. (2014). Prediction of full load electrical power output of a base "
            "load operated combined cycle power plant using machine learning methods. "
            "Int. J. Electrical Power & Energy Systems 60, 126-140."
        ),
        licence="CC BY 4.0 (UCI Machine Learning Repository)",
        sha256="67e982a3c3e558feea314496f5f23b733c5373204e35ec58c0a62109809d34eb",
        mirror_deviation=DEVIATION,
        download_deviation=DEVIATION,
    )
)
