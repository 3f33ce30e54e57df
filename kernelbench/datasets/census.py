"""Census house prices (house_16H, OpenML 574): a stand-in for the ``census`` of Yang et al. 2014.

Yang et al. 2014 (Sec. 6.1, Tables 1-2) use a ``census`` regression with 119
features (the copy distributed with Rahimi & Recht 2007). No such table could
be found on OpenML or another archive with a verifiable identity, so this
registers the closest public census regression we could verify: OpenML 574,
house_16H (Delve census-house, prototask house-price-16H): the median house
price of a region from 16 aggregates of the 1990 US census. Results on it are
not comparable with the paper's numbers (see ``download_deviation``).
"""

from __future__ import annotations

from kernelbench.datasets.convert import openml_downloader
from kernelbench.datasets.spec import DatasetSpec, register

#: OpenML 574 (house_16H): 22784 rows, 16 numeric features, target ``price``.
OPENML_ID = 574
TARGET = "price"

SPEC = register(
    DatasetSpec(
        name="census",
        task="regression",
        n_train=22784,
        n_test=0,
        d=16,
        n_classes=None,
        title="Census house prices (Delve census-house, house_16H)",
        source="OpenML 574 (house_16H)",
        openml_id=OPENML_ID,
        urls=(
            "https://www.openml.org/d/574",
            "https://www.cs.toronto.edu/~delve/data/census-house/censusDetail.html",
        ),
        citation=(
            "US Census Bureau (1990), Summary Tape File 1; prepared as the Delve census-house "
            "dataset: Rasmussen, C. E. et al. (1996). DELVE. University of Toronto."
        ),
        licence="US Census Bureau data (a US government work); Delve preparation, research use",
        sha256=None,
        mirror_deviation="not in the mirror (download only)",
        download_deviation=(
            "a stand-in: Yang et al. 2014's census has 119 features and is not on OpenML; "
            "this is OpenML 574 house_16H (22784 x 16), another 1990 US census regression"
        ),
        downloader=openml_downloader(
            OPENML_ID, task="regression", x_dtype="float64", target=TARGET
        ),
        optional=True,
        in_mirror=False,
    )
)
