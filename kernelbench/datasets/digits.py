"""scikit-learn's bundled 8x8 digits: no download, the default for quick runs."""

from __future__ import annotations

import numpy as np

from kernelbench.datasets.spec import Arrays, DatasetSpec, register


def load() -> Arrays:
    """The 1797 digits as float64 pixels 0..16 and int64 labels 0..9."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return {"X": np.asarray(bunch.data, dtype=np.float64), "y": bunch.target.astype(np.int64)}


SPEC = register(
    DatasetSpec(
        name="digits",
        task="classification",
        n_train=1797,
        d=64,
        n_classes=10,
        title="Optical handwritten digits, 8x8 (bundled with scikit-learn)",
        source="bundled with scikit-learn (sklearn.datasets.load_digits)",
        urls=("https://archive.ics.uci.edu/dataset/80",),
        citation=(
            "Alpaydin, E. and Kaynak, C. (1998). Optical Recognition of Handwritten Digits. "
            "UCI Machine Learning Repository."
        ),
        licence="CC BY 4.0 (UCI Machine Learning Repository)",
        mirror_deviation="not a paper dataset (quick default)",
        download_deviation="not a paper dataset (quick default)",
        bundled=load,
    )
)
