"""Census house prices (house_16H, OpenML 574): a stand-in for the ``census`` of Yang et al. 2014.

Yang et al. 2014 (Sec. 6.1, Tables 1-2) use a ``census`` regression with 119 features
(Rahimi & Recht 2007's copy), found in no archive with a verifiable identity. This is
the closest verifiable public census regression: the median house price of a region
from 16 aggregates of the 1990 US census; not comparable with the paper's numbers.
"""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="census",
        task="regression",
        n_train=22784,
        d=16,
        title="Census house prices (Delve census-house, house_16H)",
        source="OpenML 574 (house_16H)",
        **openml_source(
            574,  # house_16H: 22784 rows, 16 numeric features, target ``price``
            "https://www.cs.toronto.edu/~delve/data/census-house/censusDetail.html",
            task="regression",
            x_dtype="float64",
            target="price",
        ),
        citation=(
            "US Census Bureau (1990), Summary Tape File 1; prepared as the Delve census-house "
            "dataset: Rasmussen, C. E. et al. (1996). DELVE. University of Toronto."
        ),
        licence="US Census Bureau data (a US government work); Delve preparation, research use",
        mirror_deviation="not in the mirror (download only)",
        download_deviation=(
            "a stand-in: Yang et al. 2014's census has 119 features and is not on OpenML; "
            "this is OpenML 574 house_16H (22784 x 16), another 1990 US census regression"
        ),
        optional=True,
        in_mirror=False,
    )
)
