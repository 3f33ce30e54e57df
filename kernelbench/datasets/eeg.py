"""UCI EEG Eye State, from OpenML 1471 (Liu et al. 2020)."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="eeg",
        task="classification",
        n_train=14980,
        d=14,
        n_classes=2,
        title="EEG Eye State (UCI 264)",
        source="OpenML 1471 (eeg-eye-state)",
        **openml_source(1471, task="classification", label_order=("1", "2")),
        citation="Rösler, O. (2013). EEG Eye State. UCI Machine Learning Repository.",
        licence="CC BY 4.0 (UCI Machine Learning Repository)",
        sha256="ba106d33b26710ee40aba04bc1474e767c2834d0f6a2b965548b1395f0e5aff5",
        mirror_deviation="none known (UCI ARFF, original time order, outliers kept)",
        download_deviation="none known (OpenML 1471; classes 1, 2 -> 0, 1)",
    )
)
