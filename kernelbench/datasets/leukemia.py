"""Leukemia (Golub et al.), from the LIBSVM archive (leu, leu.t) as Munkhoeva et al. used.

LIBSVM's files are already normalised (train and test merged, rows then columns scaled to
zero mean and unit variance, split back 38/34) and used as they are. The mirror rebuilds
them from the raw Golub et al. values so (value rounding and row order may differ). The
published download script fetched ``leu`` for both parts; Fig. 1 reads the 38 train rows.
"""

from __future__ import annotations

from kernelbench.datasets.convert import libsvm_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="leukemia",
        task="classification",
        n_train=38,
        n_test=34,
        d=7129,
        n_classes=2,
        title="Leukemia ALL/AML gene expression (Golub et al.)",
        source="LIBSVM archive (leu, leu.t)",
        **libsvm_source("binary", "leu.bz2", "leu.t.bz2", 7129, label_order=("-1", "1")),
        citation=(
            "Golub, T. R. et al. (1999). Molecular classification of cancer: class discovery "
            "and class prediction by gene expression monitoring. Science 286(5439), 531-537."
        ),
        licence="no licence stated by the distributors (research use)",
        sha256="08964a4e53a010443dfc32dc6a3021d1d11197414c15a20ef56a5fb7394a0c6a",
        mirror_deviation="LIBSVM leu rebuilt from the raw values; not byte-identical",
        download_deviation=(
            "none known (LIBSVM leu/leu.t; the original download script fetched leu for both)"
        ),
    )
)
