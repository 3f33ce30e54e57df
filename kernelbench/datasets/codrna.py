"""cod-RNA, from the LIBSVM archive (cod-rna, cod-rna.t) (Liu et al. 2020)."""

from __future__ import annotations

from kernelbench.datasets.convert import libsvm_source
from kernelbench.datasets.spec import DatasetSpec, register

DEVIATION = "test file is cod-rna.t (271617 rows); Liu et al. tested on cod-rna.r (157413 rows)"

SPEC = register(
    DatasetSpec(
        name="codrna",
        task="classification",
        n_train=59535,
        n_test=271617,
        d=8,
        n_classes=2,
        title="cod-RNA",
        source="LIBSVM archive (cod-rna, cod-rna.t)",
        **libsvm_source("binary", "cod-rna", "cod-rna.t", 8, label_order=("-1", "1")),
        citation=(
            "Uzilov, A. V., Keegan, J. M. and Mathews, D. H. (2006). Detection of non-coding "
            "RNAs on the basis of predicted secondary structure formation free energy change. "
            "BMC Bioinformatics 7, 173."
        ),
        licence="no licence stated by the distributors (research use)",
        sha256="cdc8e75bab5fb2248bda687915e91b225156d874f72847f842f9d11f188dd293",
        mirror_deviation=DEVIATION,
        download_deviation=DEVIATION,
    )
)
