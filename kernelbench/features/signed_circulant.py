"""Signed circulant random features (Feng, Hu & Liao, IJCAI 2015)."""

from __future__ import annotations

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap
from kernelbench.transforms import circulant_rows, rademacher


@FEATURE_MAPS.register("signed_circulant")
class SignedCirculant(RandomFeatureMap):
    """Blocks P = diag(s) C, C = circ(c) with c ~ N(0, I_d), s Rademacher (Feng et al.
    2015: the signed circulant random matrix), built from :mod:`kernelbench.blocks`.

    Row i of C is c cyclically shifted, so every row of P is marginally N(0, I_d) and the
    estimate is unbiased (Feng et al. prove it for the Gaussian kernel) for every kernel
    of the Gaussian representation; the signs decorrelate the rows' features. All rows of
    a block share the norm ||c|| ~ chi(d). Independent blocks of d rows are stacked to D
    rows, the last one truncated (as sorf's); C x by the real FFT, O(d log d) per block
    and row, any d, no d x d matrix (only c and its spectrum are kept).
    """

    paper_label = "SCRF"

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        t = -(-D // d)
        self.columns_ = rng.standard_normal((t, d))  # c of each block
        self.signs_ = rademacher(rng, (t, d))  # s of each block
        self.spectra_ = np.fft.rfft(self.columns_, axis=1)
        return np.full(D, 1.0 / D), 0.0

    def _project(self, X: np.ndarray) -> np.ndarray:
        N, d = X.shape
        D = self.n_projections_
        dt = X.dtype
        out = np.empty((N, D), dtype=dt)
        for b in range(len(self.columns_)):
            lo, hi = b * d, min(D, (b + 1) * d)
            P = circulant_rows(X, self.spectra_[b])
            out[:, lo:hi] = P[:, : hi - lo] * self.signs_[b, : hi - lo].astype(dt)
        return out
