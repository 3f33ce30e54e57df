"""UCI MAGIC Gamma Telescope, from OpenML 1120 (Liu et al. 2020)."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="magic04",
        task="classification",
        n_train=19020,
        d=10,
        n_classes=2,
        title="MAGIC Gamma Telescope (UCI 159)",
        source="OpenML 1120 (MagicTelescope)",
        **openml_source(1120, task="classification", label_order=("g", "h")),
        citation=(
            "Bock, R. K. et al. (2004). Methods for multidimensional event classification: a "
            "case study using images from a Cherenkov gamma-ray telescope. Nucl. Instr. Meth. "
            "A 516, 511-528."
        ),
        licence="CC BY 4.0 (UCI Machine Learning Repository)",
        sha256="6186baafc3b301f3aa24f5b830d629605530659af6f94d6b2fbcc3737e979ffc",
        mirror_deviation="none known (UCI magic04.data, original order; g=0, h=1)",
        download_deviation="none known (OpenML 1120; g=0, h=1)",
    )
)
