"""Nystroem features: the properties the mutation run (docs/mutation.md) found unchecked."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map
from kernelbench.kernels import exact_kernel


def _data(seed: int = 0, N: int = 120, d: int = 6) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, d))


def test_a_zero_landmark_kernel_has_rank_zero_and_zero_features():
    """arccos1 of zero rows is 0 (k(x, y) = |x| |y| J_1(theta) / pi): K_LL = 0 has no
    eigenvalue above the cut-off, so z = 0 and K_hat = K = 0, not 0 / 0."""
    X = np.zeros((10, 3))
    fm = make_feature_map("nystrom", kernel="arccos1", n=1, random_state=0).fit(X)
    assert fm.rank_ == 0
    np.testing.assert_array_equal(fm.transform(X), 0.0)
    np.testing.assert_array_equal(fm.approximate_kernel(X), exact_kernel("arccos1", X))


def test_the_rank_cut_off_is_relative_to_the_largest_eigenvalue():
    """arccos1 is homogeneous, k(cx, cy) = c^2 k(x, y): scaling the rows by 1e-9 scales
    K_LL's eigenvalues by 1e-18 (to about 1e-17 and below), keeps the rank (the cut-off
    is m eps lambda_max) and scales K_hat by c^2."""
    X, Y = _data(0), _data(1, N=7)
    c = 1e-9
    fm = make_feature_map("nystrom", kernel="arccos1", n=1, random_state=3).fit(X)
    small = make_feature_map("nystrom", kernel="arccos1", n=1, random_state=3).fit(c * X)
    np.testing.assert_array_equal(small.landmark_indices_, fm.landmark_indices_)
    assert fm.rank_ == small.rank_ == fm.n_features_out_ == 14
    K_hat = fm.approximate_kernel(X, Y)
    np.testing.assert_allclose(small.approximate_kernel(c * X, c * Y), c**2 * K_hat, rtol=1e-9)


@pytest.mark.parametrize("batch_invariant", [False, True])
@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
def test_one_fitted_row_is_one_landmark_the_rank_one_nystrom_estimate(kernel, batch_invariant):
    """Fitted on one row l: m = 1 and k_hat(x, y) = k(x, l) k(l, y) / k(l, l)
    (Williams & Seeger 2001, with K_LL = k(l, l))."""
    X, Y = _data(0, N=1), _data(1, N=9)
    fm = make_feature_map(
        "nystrom", kernel=kernel, n=1, random_state=0, batch_invariant=batch_invariant
    ).fit(X)
    assert fm.n_features_out_ == fm.rank_ == 1
    np.testing.assert_array_equal(fm.landmarks_, X)
    k_xl = exact_kernel(kernel, Y, X)
    expect = k_xl @ k_xl.T / exact_kernel(kernel, X)[0, 0]
    np.testing.assert_allclose(fm.approximate_kernel(Y), expect, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kernel", ["rbf", "arccos1"])
def test_fixed_row_blocks_give_the_plain_products_features_row_by_row(kernel):
    """``batch_invariant``: the same landmarks and features as the plain GEMM (to
    rounding), and a row alone has the bits it has in a batch (kernelbench.testing's
    ``batch_independent``, which Nystroem claims only so)."""
    X, Y = _data(0), _data(1, N=40)
    plain = make_feature_map("nystrom", kernel=kernel, n=1, random_state=2).fit(X)
    fixed = make_feature_map(
        "nystrom", kernel=kernel, n=1, random_state=2, batch_invariant=True
    ).fit(X)
    assert "batch_independent" in fixed.claimed() - plain.claimed()
    Z = fixed.transform(Y)
    np.testing.assert_allclose(Z, plain.transform(Y), rtol=1e-11, atol=1e-13)
    for i in (0, 17, 39):
        np.testing.assert_array_equal(fixed.transform(Y[i : i + 1])[0], Z[i])


def test_transform_refuses_rows_of_another_width_and_keeps_the_fitted_one():
    fm = make_feature_map("nystrom", n=1, random_state=0).fit(_data(0, d=6))
    with pytest.raises(ValueError, match="X has 5 features, but Nystrom is expecting 6"):
        fm.transform(_data(1, d=5))
    assert fm.n_features_in_ == 6


def test_nystrom_has_no_projections_and_says_so_in_one_line():
    """Its features are kernel values at the landmarks, not cos/phi of X W^T."""
    fm = make_feature_map("nystrom", n=1, random_state=0).fit(_data(0))
    whole = r"^nystrom has no projections W; use transform$"
    with pytest.raises(KernelbenchError, match=whole):
        fm.projections(_data(1))
    with pytest.raises(KernelbenchError, match=whole):
        fm.weight_matrix()


def test_feature_names_are_one_per_landmark():
    """One name per column of z (scikit-learn's ``set_output`` labels the columns so)."""
    X = _data(0, N=5)
    fm = make_feature_map("nystrom", n=1, random_state=0).fit(X)
    names = list(fm.get_feature_names_out())
    assert names == ["nystrom0", "nystrom1", "nystrom2", "nystrom3", "nystrom4"]
    frame = fm.set_output(transform="pandas").transform(X)
    assert list(frame.columns) == names
