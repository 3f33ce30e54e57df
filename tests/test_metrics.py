"""The spectral norm used for the relative spectral error."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.metrics import spectral_norm


@pytest.mark.parametrize("shape", [(1, 1), (10, 7), (50, 50), (550, 300), (300, 550), (550, 550)])
def test_spectral_norm_matches_svd_and_is_deterministic(shape):
    A = np.random.default_rng(sum(shape)).standard_normal(shape)
    expected = np.linalg.norm(A, 2)
    got = spectral_norm(A)
    assert got == pytest.approx(expected, rel=1e-12)
    assert spectral_norm(A.copy()) == got


def test_spectral_norm_of_low_rank_kernel_matrix():
    X = np.random.default_rng(0).uniform(size=(400, 3))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    assert spectral_norm(K) == pytest.approx(np.linalg.eigvalsh(K)[-1], rel=1e-12)
    assert spectral_norm(np.zeros((40, 40))) == 0.0
