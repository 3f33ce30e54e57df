"""cod-RNA, from the LIBSVM archive (cod-rna, cod-rna.t) (Liu et al. 2020)."""

from __future__ import annotations

from pathlib import Path

from kernelbench.datasets.convert import read_libsvm, url_downloader
from kernelbench.datasets.spec import Arrays, DatasetSpec, register

BASE = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"
URLS = (f"{BASE}/cod-rna", f"{BASE}/cod-rna.t")


def convert(paths: list[Path]) -> Arrays:
    """LIBSVM ``cod-rna``/``cod-rna.t``: labels -1, +1 -> 0, 1."""
    X, y = read_libsvm(paths[0], 8, label_order=("-1", "1"))
    X_test, y_test = read_libsvm(paths[1], 8, label_order=("-1", "1"))
    return {"X": X, "y": y, "X_test": X_test, "y_test": y_test}


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
        openml_id=None,
        urls=URLS,
        citation=(
            "Uzilov, A. V., Keegan, J. M. and Mathews, D. H. (2006). Detection of non-coding "
            "RNAs on the basis of predicted secondary structure formation free energy change. "
            "BMC Bioinformatics 7, 173."
        ),
        licence="no licence stated by the distributors (research use)",
        sha256="cdc8e75bab5fb2248bda687915e91b225156d874f72847f842f9d11f188dd293",
        mirror_deviation=(
            "test file is cod-rna.t (271617 rows); Liu et al. tested on cod-rna.r (157413 rows)"
        ),
        download_deviation=(
            "test file is cod-rna.t (271617 rows); Liu et al. tested on cod-rna.r (157413 rows)"
        ),
        downloader=url_downloader(URLS, convert),
    )
)
