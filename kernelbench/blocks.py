"""Public building blocks of structured random feature maps, each documented with the
equation it implements; a plug-in map is built from these (kernelbench's own sorf, orf,
sr33, fastfood and signed_circulant are). Nothing here forms a dense d x d matrix,
except :func:`haar_orthogonal`, which is the dense Haar draw.

Row convention: a batch of vectors is an N x d array whose rows are the vectors.

==================================== ==================================================
block                                what it is
==================================== ==================================================
:func:`fwht_rows`                    H x for every row x, H the normalised Walsh-Hadamard
                                     matrix (H = H^T, H H = I), O(d log d) per row
:func:`hd_blocks_rows`               sqrt(m) H D_1 ... H D_k x, stacked blocks (SORF)
:func:`next_pow2`                    the padded dimension of a Hadamard transform
:class:`Butterfly`                   random butterfly rotations (Genz 1998), any d
:func:`haar_orthogonal`              a Haar-distributed orthogonal matrix (Mezzadri 2006)
:class:`HouseholderProduct`          a Haar block kept as Householder reflectors
:func:`chi_norms`                    chi(d) row norms (ORF's and Fastfood's S)
:func:`rademacher`                   +-1 sign diagonals
:func:`circulant_rows`               circulant products by the real FFT
:func:`row_products`                 X W^T with a row's bits independent of its batch
                                     (fixed row blocks; ``batch_invariant``)
==================================== ==================================================
"""

from __future__ import annotations

from kernelbench.transforms import (
    Butterfly,
    HouseholderProduct,
    chi_norms,
    circulant_rows,
    fwht_rows,
    haar_orthogonal,
    hd_blocks_rows,
    next_pow2,
    rademacher,
    row_products,
)

__all__ = [
    "Butterfly",
    "HouseholderProduct",
    "chi_norms",
    "circulant_rows",
    "fwht_rows",
    "haar_orthogonal",
    "hd_blocks_rows",
    "next_pow2",
    "rademacher",
    "row_products",
]
