"""The spectral norm: the properties the mutation run (docs/mutation.md) found unchecked."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.metrics import _golub_kahan_top, spectral_norm


@pytest.mark.parametrize("shape", [(120, 40), (300, 200)])
def test_golub_kahan_converges_without_the_lapack_fallback(shape):
    """On a well-conditioned random matrix Golub-Kahan-Lanczos itself returns the top
    singular value (None would hand every matrix to the O(n^3) Gram fallback)."""
    A = np.random.default_rng(sum(shape)).standard_normal(shape)
    top = _golub_kahan_top(A)
    assert top is not None
    assert top == pytest.approx(np.linalg.norm(A, 2), rel=1e-12)


def test_spectral_norm_of_a_rank_one_matrix():
    """u v^T: after one step the residual is at rounding level (a breakdown), and the
    norm is |u| |v| either way."""
    rng = np.random.default_rng(5)
    u, v = rng.standard_normal(80), rng.standard_normal(50)
    A = np.outer(u, v)
    assert spectral_norm(A) == pytest.approx(np.linalg.norm(u) * np.linalg.norm(v), rel=1e-12)
    assert spectral_norm(A.T) == pytest.approx(np.linalg.norm(u) * np.linalg.norm(v), rel=1e-12)
