"""Orthogonal random features (Yu et al. 2016) and the published-code variant."""

from __future__ import annotations

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import check_choice
from kernelbench.features.rff import DenseFeatureMap
from kernelbench.transforms import haar_orthogonal

CONSTRUCTIONS = ("stacked", "tall_qr")


@FEATURE_MAPS.register("orf")
class ORF(DenseFeatureMap):
    """W = S Q (Yu et al. 2016, Sec. 3): Q Haar-orthogonal, S = diag(chi(d) norms).

    ``construction="stacked"`` (default, Yu et al.): ceil(D/d) independent d x d
    Haar blocks (QR of a Gaussian matrix with sign correction), each row scaled
    by an independent chi(d) norm, truncated to D rows; every row is then
    marginally N(0, I), so the estimate is unbiased.

    ``construction="tall_qr"`` (the code published with Munkhoeva et al. 2018):
    one QR of a D x d Gaussian matrix, whose D x d factor Q has orthonormal
    *columns*, rows scaled by chi(D) norms (no sign correction, as published).
    It reproduces the paper's Gort
    numbers but is not Yu et al.'s construction for D > d.
    """

    paper_label = "Gort"

    def __init__(
        self, kernel="rbf", n=1, gamma=None, random_state=None, construction: str = "stacked"
    ) -> None:
        super().__init__(kernel=kernel, n=n, gamma=gamma, random_state=random_state)
        self.construction = construction

    def _check_params(self) -> None:
        check_choice("construction", self.construction, CONSTRUCTIONS)

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        if self.construction == "stacked":
            blocks = []
            for _ in range(-(-D // d)):
                Q = haar_orthogonal(rng, d)
                S = np.sqrt(rng.chisquare(d, size=d))
                blocks.append(S[:, None] * Q)
            W = np.vstack(blocks)[:D]
        elif D >= d:  # the published code: no sign correction, chi(D) row norms
            Q, _ = np.linalg.qr(rng.standard_normal((D, d)))
            W = np.sqrt(rng.chisquare(D, size=D))[:, None] * Q
        else:
            Q, _ = np.linalg.qr(rng.standard_normal((d, D)))
            W = np.sqrt(rng.chisquare(D, size=D))[:, None] * Q.T
        self.W_ = W
        return np.full(D, 1.0 / D), 0.0
