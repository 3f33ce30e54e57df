"""USPS handwritten digits (16x16), from the LIBSVM archive as Munkhoeva et al. used."""

from __future__ import annotations

from kernelbench.datasets.convert import libsvm_source
from kernelbench.datasets.spec import DatasetSpec, register

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
        **libsvm_source("multiclass", "usps.bz2", "usps.t.bz2", 256),  # labels 1..10 -> 0..9
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
    )
)
