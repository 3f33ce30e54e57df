"""Fastfood (Le, Sarlos & Smola, ICML 2013): V = (1 / (sigma sqrt d)) S H G Pi H B."""

from __future__ import annotations

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap
from kernelbench.transforms import chi_norms, fwht_rows, next_pow2, rademacher


@FEATURE_MAPS.register("fastfood")
class Fastfood(RandomFeatureMap):
    """Fastfood blocks V = (1 / sqrt(d')) S H G Pi H B (Le et al. 2013, Eq. 7; sigma = 1,
    the input arrives scaled), built from :mod:`kernelbench.blocks`.

    Per block of d' rows (d' the next power of two >= d, x zero-padded): B a Rademacher
    diagonal, H the unnormalised Walsh-Hadamard matrix, Pi a uniform permutation, G a
    diagonal of N(0, 1), S_ii = s_i / ||G||_F with s_i ~ chi(d'). Given B and Pi, a row of
    H G Pi H B is N(0, d' I) in G, so its direction is uniform and S sets its norm to
    s_i sqrt(d'): every row of V is marginally N(0, I_d') and the estimate is unbiased
    (as Le et al. show), for every kernel of the Gaussian representation. Independent
    blocks are stacked to D rows, the last one truncated (as sorf's); applied by the
    fast transform, O(d' log d') per block and row, no d' x d' matrix.
    """

    paper_label = "FF"

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        m = next_pow2(d)
        t = -(-D // m)
        self.padded_dim_ = m
        self.signs_ = rademacher(rng, (t, m))  # B
        self.perms_ = np.stack([rng.permutation(m) for _ in range(t)])  # Pi: (Pi v)_i = v_perm[i]
        self.gaussian_ = rng.standard_normal((t, m))  # G
        self.chi_ = chi_norms(rng, m, (t, m))  # s_i of S
        # S / sqrt(d'), with H = sqrt(d') H_n twice: the row scale of H_n G Pi H_n B
        self.scales_ = self.chi_ * np.sqrt(m) / np.linalg.norm(self.gaussian_, axis=1)[:, None]
        return np.full(D, 1.0 / D), 0.0

    def _project(self, X: np.ndarray) -> np.ndarray:
        N, d = X.shape
        m = self.padded_dim_
        D = self.n_projections_
        dt = X.dtype
        out = np.empty((N, D), dtype=dt)
        Xp = np.zeros((N, m), dtype=dt)
        Xp[:, :d] = X
        for b in range(len(self.signs_)):
            lo, hi = b * m, min(D, (b + 1) * m)
            V = fwht_rows(Xp * self.signs_[b].astype(dt))  # H B x
            V = V[:, self.perms_[b]] * self.gaussian_[b].astype(dt)  # G Pi
            V = fwht_rows(V)  # H
            out[:, lo:hi] = V[:, : hi - lo] * self.scales_[b, : hi - lo].astype(dt)  # S
        return out
