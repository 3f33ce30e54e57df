"""Leukemia (Golub et al.), from the LIBSVM archive (leu, leu.t) as Munkhoeva et al. used.

LIBSVM's files are already normalised (train and test merged, every row and then every
column scaled to zero mean and unit variance, split back 38/34), so the download is
used as it is. The mirror rebuilds them from the raw Golub et al. values with that
preprocessing; what still differs from LIBSVM's files is their value rounding and row
order (neither is known). The published download script fetched ``leu`` for both parts
(its test part was the train file); Fig. 1 reads only the 38 train rows.
"""

from __future__ import annotations

from pathlib import Path

from kernelbench.datasets.convert import read_libsvm, url_downloader
from kernelbench.datasets.spec import Arrays, DatasetSpec, register

BASE = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"
URLS = (f"{BASE}/leu.bz2", f"{BASE}/leu.t.bz2")


def convert(paths: list[Path]) -> Arrays:
    """LIBSVM ``leu``/``leu.t``: labels -1, +1 -> 0, 1."""
    X, y = read_libsvm(paths[0], 7129, label_order=("-1", "1"))
    X_test, y_test = read_libsvm(paths[1], 7129, label_order=("-1", "1"))
    return {"X": X, "y": y, "X_test": X_test, "y_test": y_test}


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
        openml_id=None,
        urls=URLS,
        citation=(
            "Golub, T. R. et al. (1999). Molecular classification of cancer: class discovery "
            "and class prediction by gene expression monitoring. Science 286(5439), 531-537."
        ),
        licence="no licence stated by the distributors (research use)",
        sha256="08964a4e53a010443dfc32dc6a3021d1d11197414c15a20ef56a5fb7394a0c6a",
        mirror_deviation=("LIBSVM leu rebuilt from the raw values; not byte-identical"),
        download_deviation=(
            "none known (LIBSVM leu/leu.t; the original download script fetched leu for both)"
        ),
        downloader=url_downloader(URLS, convert),
    )
)
