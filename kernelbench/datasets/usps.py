"""USPS handwritten digits (16x16), from the LIBSVM archive as Munkhoeva et al. used."""

from __future__ import annotations

from pathlib import Path

from kernelbench.datasets.convert import read_libsvm, url_downloader
from kernelbench.datasets.spec import Arrays, DatasetSpec, register

BASE = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass"
URLS = (f"{BASE}/usps.bz2", f"{BASE}/usps.t.bz2")


def convert(paths: list[Path]) -> Arrays:
    """LIBSVM ``usps``/``usps.t``: pixels in [-1, 1], labels 1..10 -> 0..9."""
    X, y = read_libsvm(paths[0], 256)
    X_test, y_test = read_libsvm(paths[1], 256)
    return {"X": X, "y": y, "X_test": X_test, "y_test": y_test}


SPEC = register(
    DatasetSpec(
        name="usps",
        task="classification",
        n_train=7291,
        n_test=2007,
        d=256,
        n_classes=10,
        title="USPS handwritten digits",
        source="LIBSVM archive (usps, usps.t)",
        openml_id=None,
        urls=URLS,
        citation=(
            "Hull, J. J. (1994). A database for handwritten text recognition research. "
            "IEEE Trans. Pattern Analysis and Machine Intelligence 16(5), 550-554."
        ),
        licence="no licence stated by the distributors (research use)",
        sha256="0df723c194bee377956e19892e10ba7409c26e9cadebd4d32c1a2085e7c869b3",
        mirror_deviation=(
            "ESL version (pixels in [0,1]), not the LIBSVM usps file the paper used "
            "(values in [-1,1], smoothed); same images, order and labels"
        ),
        download_deviation="none known (LIBSVM usps/usps.t, as in Munkhoeva et al.)",
        downloader=url_downloader(URLS, convert),
    )
)
