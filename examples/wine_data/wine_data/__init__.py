"""The UCI wine data as a kernelbench dataset: 178 wines, 13 chemical measurements,
3 cultivars, bundled with scikit-learn (``sklearn.datasets.load_wine``), so nothing is
downloaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelbench.datasets import DatasetSpec, register

#: dataset/wine.yaml (its data recipes) and an experiment grid on it
CONFIG_DIR = Path(__file__).parent / "configs"


def load() -> dict[str, np.ndarray]:
    """The arrays: ``X`` (float64, 178 x 13) and ``y`` (int64 labels 0, 1, 2)."""
    from sklearn.datasets import load_wine

    bunch = load_wine()
    return {"X": np.asarray(bunch.data, dtype=np.float64), "y": bunch.target.astype(np.int64)}


register(
    DatasetSpec(
        name="wine",
        task="classification",
        n_train=178,
        d=13,
        n_classes=3,
        title="Wine recognition (UCI, bundled with scikit-learn)",
        source="sklearn.datasets.load_wine",
        bundled=load,
    )
)
