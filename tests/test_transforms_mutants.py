"""kernelbench.transforms: the properties the mutation run (docs/mutation.md) found
unchecked by tests/test_transforms.py. Small inputs: the run executes the numba kernels
as Python (NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy import stats

from kernelbench.transforms import (
    ROWS_IN_N_MAX,
    HouseholderProduct,
    WideReflectors,
    chi_norms,
    circulant_rows,
    haar_orthogonal,
    rademacher,
    reflector_scalars,
)


def test_chi_norms_have_the_chi_law_of_their_degrees_of_freedom():
    """The norm of a standard Gaussian vector in R^dof (KS test, 4000 draws)."""
    x = chi_norms(np.random.default_rng(0), 5, 4000)
    assert x.shape == (4000,) and np.all(x > 0)
    assert stats.kstest(x, stats.chi(5).cdf).pvalue > 1e-3
    assert stats.kstest(x, stats.chi(6).cdf).pvalue < 1e-6  # the test can fail
    assert chi_norms(np.random.default_rng(0), 3, (2, 7)).shape == (2, 7)


def test_rademacher_signs_are_int8_plus_minus_one_with_probability_one_half():
    s = rademacher(np.random.default_rng(1), (4, 2500))
    assert s.dtype == np.int8 and s.shape == (4, 2500)
    assert set(np.unique(s)) == {-1, 1}
    # 10,000 fair signs: the mean is within 4 standard errors (1 / 100) of 0
    assert abs(s.astype(float).mean()) < 0.04


def test_haar_frame_has_orthonormal_columns_and_is_the_square_ones_first_columns():
    Q = haar_orthogonal(np.random.default_rng(2), 7, 3)
    assert Q.shape == (7, 3)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-12)
    # the sign correction: Q = G R^-1 with R's diagonal positive, so Q^T G has a
    # positive diagonal (G the same Gaussian draws)
    G = np.random.default_rng(2).standard_normal((7, 3))
    assert np.all(np.diag(Q.T @ G) > 0)


def test_a_householder_product_refuses_more_reflectors_than_rows():
    rng = np.random.default_rng(3)
    with pytest.raises(ValueError, match=r"^need 0 <= k <= m, got m=3, k=4$"):
        HouseholderProduct.gaussian(rng, 3, 4)
    with pytest.raises(ValueError, match="need 0 <= k <= m"):
        HouseholderProduct.gaussian(rng, 3, -1)
    assert HouseholderProduct.gaussian(rng, 4).k == 4  # k defaults to m
    empty = HouseholderProduct.gaussian(rng, 4, 0)
    assert empty.beta.shape == (0,) and empty.panels == ()
    np.testing.assert_array_equal(empty.matrix(), np.eye(4))
    assert empty.reduced().shape == (4, 0) and empty.reduced_rows().shape == (0, 4)


def test_r_signs_are_the_signs_of_beta_with_plus_one_for_zero():
    hp = HouseholderProduct(3, 3, (), np.array([-2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(hp.r_signs, [-1.0, 1.0, 1.0])


def test_apply_rows_refuses_rows_of_another_length():
    hp = HouseholderProduct.gaussian(np.random.default_rng(4), 5, 3)
    with pytest.raises(ValueError, match=r"^rows must have length 5, got 4$"):
        hp.apply_rows(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"^rows must have length 5, got 4$"):
        WideReflectors.of(hp).apply_rows(np.ones((2, 4)))
    X = np.ones((2, 5))
    hp.apply_rows(X)
    np.testing.assert_array_equal(X, 1.0)  # the input is not changed


@pytest.mark.parametrize("width", [3, 6, 9, 100])
def test_merged_panels_hold_the_same_q(width):
    """dlarft's recursion joins panels of 3 into panels of ``width``: Q unchanged."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(5), 11, 8, panel=3)
    wide = hp.merged(width)
    expect = [min(width - width % 3, 8 - off) for off in range(0, 8, width - width % 3)]
    assert [V.shape[1] for _, V, _ in wide.panels] == expect
    assert [off for off, _, _ in wide.panels] == list(range(0, 8, width - width % 3))
    np.testing.assert_allclose(wide.matrix(), hp.matrix(), atol=1e-13)
    np.testing.assert_array_equal(wide.beta, hp.beta)
    # from panels of one reflector: width reflectors per joined panel
    one = HouseholderProduct.gaussian(np.random.default_rng(5), 11, 8, panel=1).merged(width)
    assert [V.shape[1] for _, V, _ in one.panels][0] == min(width, 8)


@pytest.mark.parametrize("rows", [4, ROWS_IN_N_MAX + 1])  # rows in BLAS's N; in M
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_wide_reflectors_apply_q_and_its_transpose(transpose, dtype, rows):
    hp = HouseholderProduct.gaussian(np.random.default_rng(6), 9, 6, panel=2)
    Q = hp.matrix()
    W = WideReflectors.of(hp, transpose=transpose)
    np.testing.assert_array_equal(W.r_signs, hp.r_signs)
    X = np.random.default_rng(7).standard_normal((rows, 9))
    got = W.apply_rows(X.astype(dtype))
    assert got.dtype == dtype and got.shape == (rows, 9)
    want = X @ Q if transpose else X @ Q.T
    np.testing.assert_allclose(got, want, atol=1e-12 if dtype == np.float64 else 1e-5)
    assert W.apply_rows(np.zeros((0, 9), dtype=dtype)).shape == (0, 9)
    if not transpose:  # Q itself unless Q^T is asked for
        default = WideReflectors.of(hp).apply_rows(X.astype(dtype))
        np.testing.assert_array_equal(default, got)


def test_reflector_scalars_map_the_vector_onto_the_first_axis():
    """dlarfg: H (alpha, x) = (beta, 0) with beta = -sign(alpha) ||(alpha, x)||, and
    H = I (tau = 0, beta = alpha) where x = 0."""
    rng = np.random.default_rng(8)
    for alpha in (1.5, -0.7):
        x = rng.standard_normal(4)
        beta, tau, scale = (
            float(a[0]) for a in reflector_scalars(np.array([alpha]), np.array([np.linalg.norm(x)]))
        )
        assert beta == pytest.approx(-np.sign(alpha) * np.hypot(alpha, np.linalg.norm(x)))
        v = np.concatenate([[1.0], scale * x])
        H = np.eye(5) - tau * np.outer(v, v)
        np.testing.assert_allclose(H @ np.concatenate([[alpha], x]), [beta, 0, 0, 0, 0], atol=1e-12)
        np.testing.assert_allclose(H @ H.T, np.eye(5), atol=1e-12)
    beta, tau, scale = reflector_scalars(np.array([-0.3, 2.0]), np.zeros(2))
    np.testing.assert_array_equal(beta, [-0.3, 2.0])
    np.testing.assert_array_equal(tau, 0.0)
    np.testing.assert_array_equal(scale, 0.0)


@pytest.mark.parametrize("d", [1, 4, 7])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_circulant_rows_are_the_dense_circulant_product(d, dtype):
    """C x with C_ij = c_{(i - j) mod d} (scipy's circulant), from rfft(c)."""
    rng = np.random.default_rng(d)
    c = rng.standard_normal(d)
    X = rng.standard_normal((3, d))
    got = circulant_rows(X.astype(dtype), np.fft.rfft(c))
    assert got.dtype == dtype and got.shape == (3, d)
    want = X @ scipy.linalg.circulant(c).T
    np.testing.assert_allclose(got, want, atol=1e-12 if dtype == np.float64 else 1e-5)


def test_drawn_products_are_immutable_values():
    """A drawn Q is shared by the maps that hold it: its fields cannot be rebound."""
    import dataclasses

    hp = HouseholderProduct.gaussian(np.random.default_rng(9), 4, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        hp.m = 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        WideReflectors.of(hp).transpose = True


def test_wide_reflectors_of_several_wide_panels_apply_them_in_order():
    """k > APPLY_PANEL: two wide panels, applied last to first for Q (first to last for
    Q^T), as the dense Q."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(10), 300, 270)
    Q = hp.matrix()
    for rows in (3, ROWS_IN_N_MAX + 1):  # the rows in BLAS's N dimension; in M
        X = np.random.default_rng(11).standard_normal((rows, 300))
        for transpose, want in ((False, X @ Q.T), (True, X @ Q)):
            W = WideReflectors.of(hp, transpose=transpose)
            assert len(W.panels) == 2
            np.testing.assert_allclose(W.apply_rows(X), want, atol=1e-11)


def test_wide_reflectors_take_the_rows_form_by_the_calls_rows():
    """A call of at most ROWS_IN_N_MAX rows is mapped row-major (its rows in BLAS's N
    dimension), a longer one, or any with ``gemm_only`` (batch_invariant's form), in F
    order (rows in M); both are X Q^T, and a call's result is its own rerun's bits."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(14), 40, 40)
    W = WideReflectors.of(hp)
    X = np.random.default_rng(15).standard_normal((ROWS_IN_N_MAX + 1, 40))
    few, many = W.apply_rows(X[:-1]), W.apply_rows(X)
    assert few.flags.c_contiguous and not few.flags.f_contiguous
    assert many.flags.f_contiguous and not many.flags.c_contiguous
    assert W.apply_rows(X[:5], gemm_only=True).flags.f_contiguous
    want = X @ hp.matrix().T
    np.testing.assert_allclose(few, want[:-1], atol=1e-12)
    np.testing.assert_allclose(many, want, atol=1e-12)
    np.testing.assert_array_equal(W.apply_rows(X[:-1]), few)
    np.testing.assert_array_equal(X, np.random.default_rng(15).standard_normal(X.shape))


def test_the_drawn_betas_have_the_chi_laws_of_the_columns_tails():
    """beta_i = -sign(alpha) ||(alpha, x)|| of a fresh N(0, I) vector of length m - i, so
    beta_i^2 ~ chi^2(m - i) (Stewart 1980): mean m - i, variance 2 (m - i); 2000 draws,
    means within 4 standard errors."""
    rng = np.random.default_rng(12)
    m, k, R = 6, 4, 2000
    b2 = np.stack([HouseholderProduct.gaussian(rng, m, k, panel=3).beta for _ in range(R)]) ** 2
    dof = m - np.arange(k)
    assert np.all(np.abs(b2.mean(axis=0) - dof) < 4 * np.sqrt(2 * dof / R))


def test_wide_reflectors_convert_their_panels_once_for_float32_input():
    """``cast`` holds the panels converted for a float32 input (once), none for float64."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(13), 6, 4)
    W = WideReflectors.of(hp)
    W.apply_rows(np.ones((2, 6)))
    assert W.cast == {}
    W.apply_rows(np.ones((2, 6), dtype=np.float32))
    assert list(W.cast) == [np.dtype(np.float32)]
    assert all(V.dtype == U.dtype == np.float32 for _, V, U in W.cast[np.dtype(np.float32)])


@pytest.mark.parametrize("m, k, panel", [(300, 300, 64), (300, 270, 64), (40, 40, 3), (9, 6, 2)])
def test_wide_panels_top_blocks_are_the_triangles_trmm_reads(m, k, panel):
    """Calls of more than ROWS_IN_N_MAX rows map each panel's top b x b blocks by TRMM,
    which reads one triangle: V's is unit lower triangular (ones stored on the diagonal,
    so TRMM's unit and non-unit forms agree) and U = T V^T's (Q, not Q^T) upper
    triangular, exactly; the rows then agree with the plain GEMMs' (gemm_only)."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(16), m, k, panel=panel)
    W = WideReflectors.of(hp)
    for _, V, U in W.panels:
        b = V.shape[1]
        np.testing.assert_array_equal(np.triu(V[:b], 1), 0.0)
        np.testing.assert_array_equal(np.diag(V[:b]), 1.0)
        np.testing.assert_array_equal(np.tril(U[:, :b], -1), 0.0)
    X = np.random.default_rng(17).standard_normal((ROWS_IN_N_MAX + 3, m))
    for Wq in (W, WideReflectors.of(hp, transpose=True)):
        plain = Wq.apply_rows(X, gemm_only=True)
        np.testing.assert_allclose(Wq.apply_rows(X), plain, rtol=0, atol=1e-12)


@pytest.mark.parametrize("d, k", [(8, 1), (64, 8), (1000, 3), (3074, 100)])
def test_a_tall_haar_frame_by_cholesky_qr_is_the_householder_ones(d, k):
    """A frame of k <= d / 8 columns is G C^-1 with C the Cholesky factor of G^T G: the
    Q of the sign-corrected Householder QR of the same G, up to rounding."""
    Q = haar_orthogonal(np.random.default_rng(k), d, k)
    G = np.random.default_rng(k).standard_normal((d, k))
    Qh, R = np.linalg.qr(G)
    Qh *= np.where(np.diagonal(R) < 0.0, -1.0, 1.0)[None, :]
    assert Q.shape == (d, k) and Q.flags.c_contiguous
    np.testing.assert_allclose(Q, Qh, rtol=0, atol=1e-13)
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), rtol=0, atol=1e-13)
