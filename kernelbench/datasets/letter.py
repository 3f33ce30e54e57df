"""UCI Letter Recognition (26 classes), from OpenML 6."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="letter",
        task="classification",
        n_train=20000,
        d=16,
        n_classes=26,
        title="Letter Recognition (UCI 59)",
        source="OpenML 6",
        **openml_source(6, task="classification", label_order=tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")),
        citation=(
            "Frey, P. W. and Slate, D. J. (1991). Letter recognition using Holland-style "
            "adaptive classifiers. Machine Learning 6(2), 161-182."
        ),
        licence="CC BY 4.0 (UCI Machine Learning Repository)",
        sha256="1a8f28bb875ef03d2c5011eee4bf8776ea7f2ac24279722cdbf9ef2a26b9be18",
        mirror_deviation="none known (UCI letter-recognition.data, original row order)",
        download_deviation="OpenML 6 row order assumed to be UCI's (not checked)",
    )
)
