"""ORF (kernelbench.features.orf): the properties the mutation run (docs/mutation.md)
found unchecked. W is drawn the same way whatever route ``fit`` then takes (W formed by
dorgqr or by the panels' GEMMs, the drawn panels, the wide panels, fixed row blocks,
row tiles): every route must give the same projections, up to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map

#: (construction, n, d): D = round(2n(d + 1)) = 82 > d (stacked: a short last block of
#: 2 rows), 25 < d, and D = d = 9.
SHAPES = [
    ("stacked", 1, 40),
    ("stacked", 0.3, 40),
    ("stacked", 0.45, 9),
    ("tall_qr", 1, 40),
    ("tall_qr", 0.3, 40),
    ("tall_qr", 0.45, 9),
]


def _rows(N: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, d))


def _orf(construction: str, n: float, **params):
    return make_feature_map("orf", construction=construction, n=n, random_state=7, **params)


@pytest.mark.parametrize(("construction", "n", "d"), SHAPES)
def test_every_route_gives_the_projections_of_the_same_w(construction, n, d):
    X, Y = _rows(300, d, 0), _rows(50, d, 1)
    ref = _orf(construction, n).fit(X)
    assert ref.W_ is not None  # formed by dorgqr (under dense_limit_mb)
    P = ref.projections(Y)
    routes = {
        "gemm": _orf(construction, n, dense_limit_mb=1e-12).fit(X),  # formed by GEMMs
        "panels": _orf(construction, n, dense_limit_mb=0).fit(X[:20]),
        "wide": _orf(construction, n, dense_limit_mb=0).fit(X),  # >= 256 fit rows
        "fixed": _orf(construction, n, dense_limit_mb=0, batch_invariant=True).fit(X[:20]),
    }
    assert routes["gemm"].W_ is not None
    for name, fm in routes.items():
        got = fm.projections(Y)
        assert got.shape == P.shape == (50, ref.n_projections_)
        np.testing.assert_allclose(got, P, rtol=0, atol=1e-12 * np.abs(P).max(), err_msg=name)
        np.testing.assert_allclose(fm.weight_matrix(), ref.W_, rtol=0, atol=1e-13, err_msg=name)
    fixed = routes["fixed"]  # a row alone has its bits in the batch
    Z = fixed.projections(Y)
    for i in (0, 31, 49):
        np.testing.assert_array_equal(fixed.projections(Y[i : i + 1])[0], Z[i])


@pytest.mark.parametrize(("construction", "n", "d"), SHAPES)
def test_panels_keep_float32_rows_float32(construction, n, d):
    fm = _orf(construction, n, dense_limit_mb=0).fit(_rows(300, d, 0))
    Y = _rows(20, d, 1)
    P32 = fm.projections(Y.astype(np.float32))
    assert P32.dtype == np.float32
    np.testing.assert_allclose(P32, fm.projections(Y), rtol=0, atol=1e-4 * np.abs(P32).max())


@pytest.mark.parametrize("tile_bytes", [1, 100 * 8 * 12])
@pytest.mark.parametrize("construction", ["stacked", "tall_qr"])
def test_row_tiles_do_not_change_the_projections(construction, tile_bytes, monkeypatch):
    """The panels map rows in tiles of at most ROW_TILE_BYTES (64 rows at the least):
    150 rows of d = 12 in tiles of 64 or of 100 rows give the rows of one call."""
    from kernelbench.features import orf

    fm = _orf(construction, 1, dense_limit_mb=0).fit(_rows(20, 12, 0))
    Y = _rows(150, 12, 1)
    whole = fm.projections(Y)
    monkeypatch.setattr(orf, "ROW_TILE_BYTES", tile_bytes)
    np.testing.assert_array_equal(fm.projections(Y), whole)


def test_orf_has_sklearns_identity_and_repr():
    a, b = make_feature_map("orf", n=2), make_feature_map("orf", n=2)
    assert a != b and a == a and len({a, b}) == 2
    assert repr(a) == "ORF(n=2)"


def test_sample_space_needs_fewer_points_than_dimensions():
    """m < d points span less than R^d; at m = d the map says so and fit draws W."""
    with pytest.raises(KernelbenchError, match=r"^ORF cannot draw 5 points in d=5 in sample space"):
        make_feature_map("orf", random_state=0).fit_sample_space(_rows(5, 5, 0))
    P = make_feature_map("orf", random_state=0).fit_sample_space(_rows(4, 5, 0))
    assert P.shape == (4, 12)


@pytest.mark.parametrize("n", [0.45, 0.55, 1])
def test_tall_qr_sample_space_from_d_projections_on_keeps_the_weights(n):
    """tall_qr draws in sample space where D >= d (D = 9, 11, 20 at d = 9), with fit's
    weights 1/D and no node at zero."""
    fm = _orf("tall_qr", n, tall_qr_sample_space=True)
    A = _rows(3, 9, 0)
    assert fm.supports_sample_space(3, 9)
    P = fm.fit_sample_space(A)
    D = fm.n_projections_
    assert P.shape == (3, D) and D >= 9 and np.all(np.isfinite(P))
    np.testing.assert_array_equal(fm.weights_, np.full(D, 1.0 / D))
    assert fm.zero_weight_ == 0.0 and fm.constant_ == 0.0
    assert not _orf("tall_qr", 0.3, tall_qr_sample_space=True).supports_sample_space(3, 9)


def test_the_tall_qr_sample_space_draw_refuses_fewer_projections_than_dimensions():
    from kernelbench.features.orf import tall_qr_projections

    whole = r"^the tall-QR sample-space draw needs D >= d, got D=4, d=5$"
    with pytest.raises(ValueError, match=whole):
        tall_qr_projections(np.random.default_rng(0), _rows(2, 5, 0), 4)


def test_tall_qr_projections_over_several_panels_are_a_haar_frame(monkeypatch):
    """tall_qr_projections with panels of 4 reflectors (d = 12: panels from 0, 4 and
    8), the chi(D) row norms set to 1, A = I_d: P = Q[:, :d]^T, the first d columns of
    the QR of a D x d Gaussian matrix, a Haar frame. So P P^T = I (every draw), and each
    column Q e_i is uniform on the sphere of R^D: the squared norm of its bottom
    D - d = 8 entries is Beta((D - d)/2, d/2) = Beta(4, 6), its mean (D - d)/D (KS over
    400 draws for each of the 12 columns, Bonferroni at 1%). A reflector's top or
    bottom taken from another panel's rows, or R+'s diagonal of another chi law,
    changes the norms of the columns past the first panel."""
    from scipy import stats

    from kernelbench.features import orf

    monkeypatch.setattr(orf, "chi_norms", lambda rng, n, dof: np.ones(n))
    d, D, draws = 12, 20, 400
    rng = np.random.default_rng(20)
    bottoms = np.empty((draws, d))
    for r in range(draws):
        P = orf.tall_qr_projections(rng, np.eye(d), D, panel=4)
        np.testing.assert_allclose(P @ P.T, np.eye(d), atol=1e-12)
        bottoms[r] = np.sum(P[:, d:] ** 2, axis=1)
    law = stats.beta((D - d) / 2, d / 2)
    pvalues = [stats.kstest(bottoms[:, i], law.cdf).pvalue for i in range(d)]
    assert min(pvalues) > 0.01 / d, pvalues
