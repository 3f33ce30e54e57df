"""CIFAR-100 (fine labels), from OpenML 41983."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="cifar100",
        task="classification",
        n_train=50000,
        n_test=10000,
        d=3072,
        n_classes=100,
        title="CIFAR-100 (fine labels)",
        source="OpenML 41983",
        **openml_source(
            41983,
            "https://www.cs.toronto.edu/~kriz/cifar.html",
            task="classification",
            n_train=50000,
            x_dtype="uint8",
        ),
        citation=(
            "Krizhevsky, A. (2009). Learning multiple layers of features from tiny images. "
            "Technical report, University of Toronto."
        ),
        licence="no licence stated by the authors (research use)",
        sha256="b4eb82824f113a01021ef82e58177d757729d7bab62fa487db943621ce338e0a",
        mirror_deviation=(
            "class-balanced subset of the official split: 10000 train (first 100 per class), "
            "2000 test (first 20 per class)"
        ),
        download_deviation=(
            "OpenML 41983 layout and row order not checked against the official files"
        ),
    )
)
