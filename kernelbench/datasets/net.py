"""The network boundary: the only two functions that talk to the outside world (tests
replace them; everything after them works on local files)."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

TIMEOUT_S = 60


def http_get(url: str, dest: Path, progress: bool = True) -> Path:
    """Download ``url`` to ``dest`` (a file path), with a byte progress bar."""
    from tqdm.auto import tqdm

    request = urllib.request.Request(url, headers={"User-Agent": "kernelbench"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
        total = int(response.headers.get("Content-Length") or 0) or None
        with (
            open(dest, "wb") as out,
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                desc=Path(url).name,
                disable=not progress,
                leave=False,
            ) as bar,
        ):
            while chunk := response.read(1 << 16):
                out.write(chunk)
                bar.update(len(chunk))
    return dest


def openml_frame(openml_id: int) -> tuple[pd.DataFrame, str]:
    """Download OpenML dataset ``openml_id``: the whole table and its target column name."""
    import openml

    ds = openml.datasets.get_dataset(
        openml_id,
        download_data=True,
        download_qualities=False,
        download_features_meta_data=False,
    )
    frame = ds.get_data(dataset_format="dataframe")[0]
    return frame, str(ds.default_target_attribute)
