"""UCI Forest Covertype (optional; not in the mirror), from OpenML 1596 (Liu et al. 2020)."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="covtype",
        task="classification",
        n_train=581012,
        d=54,
        n_classes=7,
        title="Forest Covertype (UCI 31)",
        source="OpenML 1596 (covertype)",
        **openml_source(
            1596, task="classification", label_order=tuple(str(k) for k in range(1, 8))
        ),
        citation=(
            "Blackard, J. A. and Dean, D. J. (1999). Comparative accuracies of artificial "
            "neural networks and discriminant analysis in predicting forest cover types from "
            "cartographic variables. Computers and Electronics in Agriculture 24(3), 131-151."
        ),
        licence="CC BY 4.0 (UCI Machine Learning Repository)",
        mirror_deviation="not in the mirror (optional dataset)",
        download_deviation="none known (OpenML 1596; classes 1..7 -> 0..6)",
        optional=True,
        in_mirror=False,
    )
)
