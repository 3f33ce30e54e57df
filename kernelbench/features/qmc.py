"""Quasi-Monte Carlo feature maps (Yang, Sindhwani, Avron & Mahoney 2014)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc as _qmc

from kernelbench.errors import KernelbenchError
from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import check_choice
from kernelbench.features.rff import DenseFeatureMap

SEQUENCES = ("halton", "sobol", "lattice")
#: Largest dimension each sequence supports (None: no limit).
MAX_DIM = {"halton": None, "sobol": 21201, "lattice": None}


def korobov_generator(n_points: int) -> int:
    """Generator a of a Korobov lattice z = (1, a, a^2, ...) mod N.

    The integer coprime to N nearest to N / golden ratio.
    """
    a = max(1, int(round(n_points * (np.sqrt(5.0) - 1.0) / 2.0)))
    while np.gcd(a, n_points) != 1:
        a += 1
    return a


def lattice_points(n_points: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Randomly shifted rank-1 Korobov lattice {i z / N + Delta} (Cranley-Patterson shift)."""
    a = korobov_generator(n_points)
    z = np.ones(d, dtype=np.int64)
    for k in range(1, d):
        z[k] = (z[k - 1] * a) % n_points
    i = np.arange(n_points, dtype=np.int64)[:, None]
    base = ((i * z[None, :]) % n_points) / n_points
    return np.mod(base + rng.random(d)[None, :], 1.0)


def qmc_points(
    sequence: str, n_points: int, d: int, scramble: bool, rng: np.random.Generator
) -> np.ndarray:
    """N points in [0, 1)^d of a (randomised) low-discrepancy sequence (scipy.stats.qmc)."""
    limit = MAX_DIM[sequence]
    if limit is not None and d > limit:
        raise KernelbenchError(
            f"qmc sequence {sequence!r} supports at most {limit} dimensions, got d={d}; "
            f"use sequence=halton or sequence=lattice"
        )
    if sequence == "lattice":
        return lattice_points(n_points, d, rng)
    engine_cls = _qmc.Halton if sequence == "halton" else _qmc.Sobol
    engine = engine_cls(d, scramble=scramble, rng=rng)
    skip = 0 if scramble else 1  # the unscrambled sequences start at the origin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Sobol' balance for non powers of 2
        pts = engine.random(n_points + skip)
    return pts[skip:]


@FEATURE_MAPS.register("qmc")
class QMC(DenseFeatureMap):
    """Rows w_j = Phi^{-1}(u_j), u_j low-discrepancy points in [0, 1]^d (Yang et al. 2014).

    ``sequence``: ``halton`` (default; scrambled/generalised Halton as in the
    papers), ``sobol`` (scrambled Sobol': a randomised digital net in base 2,
    Owen's LMS + digital shift) or ``lattice`` (rank-1 Korobov lattice with a
    random shift). With ``scramble=True`` each point is uniform, so the
    estimate is unbiased; equal weights 1/D.
    """

    paper_label = "QMC"

    def __init__(
        self,
        kernel="rbf",
        n=1,
        gamma=None,
        random_state=None,
        sequence: str = "halton",
        scramble: bool = True,
    ) -> None:
        super().__init__(kernel=kernel, n=n, gamma=gamma, random_state=random_state)
        self.sequence = sequence
        self.scramble = scramble

    def _check_params(self) -> None:
        check_choice("sequence", self.sequence, SEQUENCES)

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        U = qmc_points(self.sequence, D, d, bool(self.scramble), rng)
        eps = np.finfo(np.float64).eps
        self.W_ = ndtri(np.clip(U, eps, 1.0 - eps))
        return np.full(D, 1.0 / D), 0.0
