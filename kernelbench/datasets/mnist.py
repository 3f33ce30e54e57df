"""MNIST handwritten digits, from OpenML 554 (mnist_784, the 60000 train rows first)."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="mnist",
        task="classification",
        n_train=60000,
        n_test=10000,
        d=784,
        n_classes=10,
        title="MNIST handwritten digits",
        source="OpenML 554 (mnist_784)",
        **openml_source(554, task="classification", n_train=60000, x_dtype="uint8"),
        citation=(
            "LeCun, Y., Bottou, L., Bengio, Y. and Haffner, P. (1998). Gradient-based "
            "learning applied to document recognition. Proc. IEEE 86(11), 2278-2324."
        ),
        licence="CC BY-SA 3.0 (Y. LeCun and C. Cortes)",
        sha256="43fa57d93d56332322f6e638f93664d244362e5a71d4ab7fe979d9ba45846adb",
        mirror_deviation="none known (official 60000/10000 split, original order, uint8)",
        download_deviation="none known (OpenML 554: train rows first, then test)",
    )
)
