"""The built-in datasets: one :class:`DatasetSpec` per entry of ``catalogue.yaml``,
registered when :mod:`kernelbench.builtin` imports this module."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from kernelbench.datasets import net
from kernelbench.datasets.convert import frame_to_arrays, read_libsvm, read_powerplant
from kernelbench.datasets.spec import Arrays, DatasetSpec, register

CATALOGUE = Path(str(resources.files("kernelbench.datasets") / "catalogue.yaml"))
#: The keys of an entry that say how its download becomes arrays (:func:`download`).
DOWNLOAD_KEYS = ("convert", "x_dtype", "target", "label_order")


def load_digits() -> Arrays:
    """scikit-learn's 1797 bundled 8x8 digits as float64 pixels 0..16 and int64 labels 0..9."""
    from sklearn import datasets

    bunch = datasets.load_digits()
    return {"X": np.asarray(bunch.data, dtype=np.float64), "y": bunch.target.astype(np.int64)}


def download(entry: Mapping[str, Any], workdir: Path, progress: bool) -> Arrays:
    """The arrays of catalogue ``entry``: its OpenML table, or its ``urls`` fetched into
    ``workdir`` and read by its ``convert`` (``libsvm``: train and test files)."""
    order = entry.get("label_order")
    order = None if order is None else [str(v) for v in order]
    if "openml_id" in entry:
        frame, default_target = net.openml_frame(entry["openml_id"])
        return frame_to_arrays(
            frame,
            entry.get("target") or default_target,
            task=entry["task"],
            n_train=entry["n_train"] if entry.get("n_test") else None,
            x_dtype=entry.get("x_dtype", "float32"),
            label_order=order,
        )
    paths = [
        net.http_get(url, workdir / url.rsplit("/", 1)[-1].replace("+", "_"), progress)
        for url in entry["urls"]
    ]
    if entry["convert"] == "powerplant":
        return read_powerplant(paths[0])
    (X, y), (X_test, y_test) = (read_libsvm(p, entry["d"], order) for p in paths)
    return {"X": X, "y": y, "X_test": X_test, "y_test": y_test}


def _spec(name: str, entry: dict[str, Any]) -> DatasetSpec:
    facts = {k: v for k, v in entry.items() if k not in DOWNLOAD_KEYS}
    urls = tuple(facts.pop("urls", ()))
    if "openml_id" in facts:
        urls = (f"https://www.openml.org/d/{facts['openml_id']}", *urls)
    if "bundled" in facts:
        facts["bundled"] = globals()[facts["bundled"]]
    else:
        facts["downloader"] = partial(download, entry)
    return DatasetSpec(name=name, urls=urls, **facts)


for _name, _entry in yaml.safe_load(CATALOGUE.read_text()).items():
    register(_spec(str(_name), _entry))
