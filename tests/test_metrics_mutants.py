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


@pytest.fixture
def no_fallback(monkeypatch):
    """Make the O(n^3) Gram fallback fail the test: Golub-Kahan must answer."""
    import kernelbench.metrics as metrics

    def refuse(A):
        raise AssertionError(f"the Gram fallback was taken on a {A.shape} matrix")

    monkeypatch.setattr(metrics, "_gram_top", refuse)


@pytest.mark.parametrize("scale", [1.0, 2.0**-60, 2.0**60])
def test_a_well_conditioned_matrix_never_takes_the_gram_fallback(no_fallback, scale):
    """Golub-Kahan-Lanczos answers for a random matrix at any scale: its breakdown and
    stopping tests are relative to the norm, not to 1."""
    A = np.random.default_rng(3).standard_normal((200, 90))
    assert spectral_norm(scale * A) == pytest.approx(scale * np.linalg.norm(A, 2), rel=1e-12, abs=0)


@pytest.mark.parametrize("shape", [(12, 7), (200, 90)])
@pytest.mark.parametrize("scale", [2.0**-60, 2.0**60])
def test_the_norm_is_homogeneous(shape, scale):
    """||c A|| = c ||A|| far below and above 1, on the Gram path (<= 32 columns) and the
    Golub-Kahan path: nothing is clamped at 1."""
    A = np.random.default_rng(4).standard_normal(shape)
    assert spectral_norm(scale * A) == pytest.approx(scale * np.linalg.norm(A, 2), rel=1e-12, abs=0)


@pytest.mark.parametrize("shape", [(90, 20), (200, 45)])
def test_a_matrix_and_its_transpose_give_the_same_bits(shape):
    """A non-square matrix is reduced in its tall orientation, so the norms of A and of
    its transpose (a view) are the same float."""
    A = np.random.default_rng(shape[0]).standard_normal(shape)
    assert spectral_norm(A.T) == spectral_norm(A)


def test_golub_kahan_runs_to_its_last_steps_when_the_top_is_not_separated():
    """Singular values 1, 0.99, ..., 0.61: the top one is not separated enough for the
    residual to converge before the Krylov space is full, and the last steps still give
    the right norm."""
    s = np.linspace(1.0, 0.61, 40)
    rng = np.random.default_rng(11)
    Q1, _ = np.linalg.qr(rng.standard_normal((70, 40)))
    Q2, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    assert spectral_norm((Q1 * s) @ Q2.T) == pytest.approx(1.0, rel=1e-12)


def test_an_exact_invariant_subspace_at_the_first_step_is_the_answer(no_fallback):
    """2 I on 64 columns: the start vector (1, ..., 1) / 8 is exact, the first residual
    is exactly 0 (beta_0 = 0): B_1 = (2) holds the norm, no breakdown."""
    assert spectral_norm(2.0 * np.eye(64)) == 2.0


def test_the_zero_matrix_needs_no_eigensolver(no_fallback):
    """0 at once (Golub-Kahan would find alpha_0 = 0 and hand it to the Gram fallback)."""
    assert spectral_norm(np.zeros((64, 40))) == 0.0


def test_a_near_breakdown_of_beta_hands_the_matrix_to_lapack():
    """A = 3 u v0^T + B with v0 = (1, ..., 1) / 8 the start vector, B v0 = 0 and
    u^T B = 0: after one step the Krylov space is invariant up to rounding (beta_0 at
    rounding level, below BREAKDOWN x alpha_0), while ||B|| > 3 lies outside it.
    Golub-Kahan gives up rather than divide by beta_0 (which would continue from
    rounding noise), and the norm is LAPACK's: the same float as the Gram fallback's."""
    from kernelbench.metrics import _gram_top

    rng = np.random.default_rng(8)
    v0 = np.full(64, 1.0 / 8.0)
    u = rng.standard_normal(100)
    u /= np.linalg.norm(u)
    B = rng.standard_normal((100, 64))
    B -= np.outer(u, u @ B)
    B -= np.outer(B @ v0, v0)
    A = 3.0 * np.outer(u, v0) + B
    assert _golub_kahan_top(A) is None
    assert spectral_norm(A) == _gram_top(A)
    assert spectral_norm(A) == pytest.approx(np.linalg.norm(B, 2), rel=1e-12)
