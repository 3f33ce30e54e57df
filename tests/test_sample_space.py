"""Sample-space draws (``RandomFeatureMap.fit_sample_space``, kernel_approx ``draws``).

Where m = 2N points span less than R^d, rff and orf draw the projections A~ W^T of
the points directly (R^T G for rff; R^T V^T S per orthogonal block for orf, V a Haar
d x m frame). Their law equals that of the weight-space projections; checked here by
exact identities, second moments with Wishart-variance bounds, exact Beta marginals of
the frame, and two-sample KS tests of the relative Frobenius errors.

KS tests: 50 runs per side, fixed seeds (so each p-value is a fixed number: the test
is deterministic; it was 0.18-0.97 when written, 0.72-0.87 for float32). Under equal
laws p is uniform: alpha = 0.01 per case fails a correct implementation with
probability 0.01 per seed choice, and the power controls below show the same test
separating rff's error law from orf's (p < 1e-6) where they differ.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map
from kernelbench.features.base import distinct_rows, sample_factor
from kernelbench.kernels import exact_kernel

ALPHA = 0.01
RUNS = 50


@pytest.fixture(scope="module")
def pair() -> tuple[np.ndarray, np.ndarray]:
    """Five and five digits (d = 64 >> 2N = 10), scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    X0 = load_digits().data / 16.0
    ix = np.random.default_rng(7).choice(len(X0), 10, replace=False)
    return X0[ix[:5]], X0[ix[5:]]


@pytest.fixture(scope="module")
def shared_pair(pair) -> tuple[np.ndarray, np.ndarray]:
    """X of :func:`pair` and a Y holding two of its rows, first and fourth (X and Y
    drawn independently share rows: LEUKEMIA's seed-0 sample shares 2 of 10), so
    [X; Y] is rank deficient."""
    X, Y = pair
    return X, np.stack([X[3], Y[0], Y[1], X[1], Y[2]])


def _errors(X, Y, method, kernel, n, space, dtype=np.float64, runs=RUNS, **params):
    """Relative Frobenius errors of K_hat over ``runs`` maps drawn in ``space``."""
    K = exact_kernel(kernel, X, Y)
    Xa, Ya = X.astype(dtype), Y.astype(dtype)
    out = []
    for r in range(runs):
        rng = np.random.default_rng([space == "sample", r])
        fm = make_feature_map(method, kernel=kernel, n=n, random_state=rng, **params)
        if space == "sample":
            Z = fm.features(fm.fit_sample_space(np.concatenate([Xa, Ya])))
            assert Z.dtype == dtype  # float32 kept
            Zx, Zy = Z[: len(X)], Z[len(X) :]
        else:
            fm.fit(Xa)
            Zx, Zy = fm.transform(Xa), fm.transform(Ya)
        K_hat = Zx.astype(np.float64) @ Zy.astype(np.float64).T + fm.constant_
        out.append(np.linalg.norm(K - K_hat) / np.linalg.norm(K))
    return np.array(out)


# ---------------------------------------------------------------- exact identities


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sample_factor_reproduces_the_gram_matrix(dtype):
    """R^T R = A A^T (A^T = Q R): the projections R^T (W Q)^T are A W^T."""
    A = np.random.default_rng(0).standard_normal((6, 40)).astype(dtype)
    R = sample_factor(A)
    assert R.shape == (6, 6) and R.dtype == np.float64
    A64 = A.astype(np.float64)
    np.testing.assert_allclose(R.T @ R, A64 @ A64.T, rtol=1e-12, atol=1e-12)


def test_rff_sample_space_is_weight_space_for_a_given_w():
    """For one W, R^T (W Q)^T equals A W^T: the map the draw stands in for."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 30))
    W = rng.standard_normal((50, 30))
    Q, R = np.linalg.qr(A.T)
    np.testing.assert_allclose(R.T @ (W @ Q).T, A @ W.T, rtol=1e-10, atol=1e-12)


def test_orf_frame_is_orthonormal_and_full_blocks_keep_the_gram_matrix():
    """A full orf block is S H with H orthogonal: (A H^T)(A H^T)^T = A A^T, so the
    sample-space block P_b diag(1/S) must satisfy the same identity."""
    d, m = 12, 4
    A = np.random.default_rng(2).standard_normal((m, d))
    fm = make_feature_map("orf", kernel="arccos1", n=1, random_state=3)  # D = 26 = 2 d + 2
    P = fm.fit_sample_space(A)
    assert P.shape == (m, 26)
    # the draw order of _draw_sample_space: per block a d x m Gaussian, then chi(d) norms
    rng = np.random.default_rng(3)
    for b in range(2):  # the two full blocks
        rng.standard_normal((d, m))
        S = np.sqrt(rng.chisquare(d, size=d))
        Pb = P[:, b * d : (b + 1) * d] / S[None, :]
        np.testing.assert_allclose(Pb @ Pb.T, A @ A.T, rtol=1e-10, atol=1e-10)


def test_distinct_rows_rebuild_the_matrix_in_order_of_first_occurrence():
    A = np.array([[2.0, 0.0], [1.0, 1.0], [2.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    U, index = distinct_rows(A)
    np.testing.assert_array_equal(U, A[[0, 1, 3]])
    np.testing.assert_array_equal(U[index], A)
    B = np.random.default_rng(0).random((5, 3))
    U, index = distinct_rows(B)  # no repeats: the matrix itself
    np.testing.assert_array_equal(U, B)
    np.testing.assert_array_equal(index, np.arange(5))


@pytest.mark.parametrize("method", ["rff", "orf"])
def test_repeated_points_share_their_projections(shared_pair, method):
    """A repeated point gets its first copy's projections exactly, as under any W."""
    X, Y = shared_pair
    fm = make_feature_map(method, kernel="arccos0", n=1, random_state=3)
    P = fm.fit_sample_space(np.concatenate([X, Y]))
    np.testing.assert_array_equal(P[len(X)], P[3])
    np.testing.assert_array_equal(P[len(X) + 3], P[1])


@pytest.mark.parametrize("method", ["rff", "orf"])
def test_repeated_points_draw_stable_to_rounding(method):
    """The draw moves at rounding level when the arithmetic does: the points scaled by
    1 + 4 eps (repeats kept), or their last coordinates reordered (another summation
    order, as in another BLAS kernel), give the same projections to 1e-13 of their
    scale. A QR of the rank-deficient points themselves moves them by 5-20% here
    (LEUKEMIA's rff cells by up to 3% per run between OpenBLAS kernels): its reflector
    for a repeated column is built from a rounding residual (docs/verification.md)."""
    rng = np.random.default_rng(11)
    A = rng.standard_normal((10, 64))  # not dyadic: the residuals are rounding noise
    A[[5, 8]] = A[[3, 1]]
    order = np.concatenate([np.arange(10), 10 + rng.permutation(54)])  # R's signs kept

    def draw(B):
        fm = make_feature_map(method, kernel="arccos0", n=1, random_state=3)
        return fm.fit_sample_space(B)

    P = draw(A)
    scale = 1.0 + 4 * np.finfo(float).eps
    for Q in (draw(A * scale), draw(A[:, order])):
        assert np.abs(Q - P).max() <= 1e-13 * np.abs(P).max()


# ---------------------------------------------------------------- moments and marginals


@pytest.mark.parametrize("method", ["rff", "orf"])
def test_projection_covariance_is_the_gram_matrix(method):
    """E[P P^T] / D = A~ A~^T (every row of W is marginally N(0, I)): each entry of the
    empirical P P^T / D within 5 standard errors of the Wishart variance
    (S_ii S_jj + S_ij^2) / D (an upper bound for orf, whose rows are less variable)."""
    d, m = 50, 4
    A = np.random.default_rng(4).standard_normal((m, d)) / np.sqrt(d)
    fm = make_feature_map(method, kernel="arccos1", n=40, random_state=5)  # D = 4080
    P = fm.fit_sample_space(A)
    D = P.shape[1]
    S = A @ A.T
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / D)
    z = (P @ P.T / D - S) / se
    assert np.abs(z).max() < 5.0
    assert np.abs(P.mean(axis=1) / np.sqrt(np.diag(S) / D)).max() < 5.0


def test_haar_frame_rows_have_the_beta_law():
    """Row r of a Haar d x m frame (the law of H Q_A) has |v_r|^2 ~ Beta(m/2, (d-m)/2)
    (the squared norm of the projection of a uniform unit vector on m coordinates);
    KS against the exact CDF, first and last row of a block, 400 draws; and each entry
    is symmetric about 0 (binomial test of its sign)."""
    d, m = 20, 3
    A = np.eye(m, d)  # R = I: P[:, block] = V[:rows]^T diag(S)
    first, last, corner = [], [], []
    for r in range(400):
        fm = make_feature_map("orf", kernel="arccos1", n=0.4, random_state=r)  # D = 17 < d
        P = fm.fit_sample_space(A)
        rng = np.random.default_rng(r)
        rng.standard_normal((d, m))
        S = np.sqrt(rng.chisquare(d, size=d))
        V = (P / S[None, : P.shape[1]]).T
        first.append(V[0] @ V[0])
        last.append(V[-1] @ V[-1])
        corner.append(V[0, 0] > 0)
    beta = stats.beta(m / 2, (d - m) / 2).cdf
    assert stats.kstest(first, beta).pvalue > ALPHA
    assert stats.kstest(last, beta).pvalue > ALPHA
    # sign symmetry (the sign fix: LAPACK's Q alone has V[0, 0] < 0 always)
    assert stats.binomtest(sum(corner), len(corner)).pvalue > ALPHA


# ---------------------------------------------------------------- error distributions


KERNELS = ("rbf", "arccos0", "arccos1")
CASES = [
    (method, kernel, n)
    for method in ("rff", "orf")
    for kernel in KERNELS
    for n in (0.25, 1.0)  # D = 32 < d = 64; D = 130 = 2 d + 2 (orf: two blocks and two rows)
]


@pytest.mark.parametrize(("method", "kernel", "n"), CASES)
def test_error_distribution_equals_weight_space(pair, method, kernel, n):
    """Two-sample KS of the relative Frobenius errors, 50 runs each (module docstring)."""
    X, Y = pair
    a = _errors(X, Y, method, kernel, n, "weights")
    b = _errors(X, Y, method, kernel, n, "sample")
    assert stats.ks_2samp(a, b).pvalue > ALPHA


@pytest.mark.parametrize(("method", "kernel"), [(m, k) for m in ("rff", "orf") for k in KERNELS])
def test_error_distribution_with_repeated_points_equals_weight_space(shared_pair, method, kernel):
    """The same KS test where Y repeats two rows of X (the distinct points are drawn,
    the repeats copied): p was 0.18-0.97 when written."""
    X, Y = shared_pair
    a = _errors(X, Y, method, kernel, 1.0, "weights")
    b = _errors(X, Y, method, kernel, 1.0, "sample")
    assert stats.ks_2samp(a, b).pvalue > ALPHA


@pytest.mark.parametrize("method", ["rff", "orf"])
def test_error_distribution_equals_weight_space_float32(pair, method):
    X, Y = pair
    a = _errors(X, Y, method, "rbf", 1.0, "weights", np.float32)
    b = _errors(X, Y, method, "rbf", 1.0, "sample", np.float32)
    assert stats.ks_2samp(a, b).pvalue > ALPHA


@pytest.mark.parametrize("n", [0.25, 1.0])
def test_ks_separates_rff_from_orf(pair, n):
    """Power control: the same KS test tells rff's error law from orf's (p < 1e-6)."""
    X, Y = pair
    a = _errors(X, Y, "rff", "rbf", n, "weights")
    b = _errors(X, Y, "orf", "rbf", n, "weights")
    assert stats.ks_2samp(a, b).pvalue < 1e-6


# ---------------------------------------------------------------- the published tall QR

TALL = {"construction": "tall_qr", "tall_qr_sample_space": True}


@pytest.mark.parametrize(
    ("d", "D", "m", "panel"), [(10, 26, 3, 4), (10, 13, 3, 4), (10, 10, 4, 3), (20, 42, 25, 8)]
)
def test_tall_qr_reduced_is_the_householder_product(d, D, m, panel):
    """The algebra of the tall-QR sample-space draw, for given reflector vectors: with
    their bottoms G_b = F R (any QR), ``tall_qr_reduced`` gives Q [A^T; 0] =
    [Y_top; F E] of the HouseholderProduct built from the whole vectors (to rounding).
    D - d = 16, 3, 0 and 22 rows below the top: k = R's rows = d, 3, 0 and 20."""
    from kernelbench.features.orf import tall_qr_reduced
    from kernelbench.transforms import HouseholderProduct, _wy_panel

    rng = np.random.default_rng(d + D + m)
    nb, k = D - d, min(D - d, d)
    tops = np.tril(rng.standard_normal((d, d)))  # reflector i: rows i..d-1 of column i
    Gb = rng.standard_normal((nb, d))
    full = np.vstack([tops, Gb])
    panels, betas = [], []
    for off in range(0, d, panel):
        b = min(panel, d - off)
        panels.append(_wy_panel(off, np.tril(full[off:, off : off + b]), betas))
    Q = HouseholderProduct(D, d, tuple(panels), np.concatenate(betas))
    A = rng.standard_normal((m, d))
    Xp = np.zeros((m, D))
    Xp[:, :d] = A
    F, R = np.linalg.qr(Gb) if nb else (np.zeros((0, 0)), np.zeros((0, d)))
    Yt, E = tall_qr_reduced(
        A.T,
        lambda i0, i1: tops[i0:, i0:i1].copy(),
        lambda i0, i1: R[: min(i1, k), i0:i1].copy(),
        k,
        panel,
    )
    np.testing.assert_allclose(np.vstack([Yt, F @ E]), Q.apply_rows(Xp).T, atol=1e-13)


def _tall_projections(space, r, d=12, m=3, n=1.0):
    """A W^T of A = the first m unit vectors (so P[i, j] = W[j, i]), run r."""
    A = np.eye(m, d)
    fm = make_feature_map("orf", kernel="arccos1", n=n, random_state=r, **TALL)
    return fm.fit_sample_space(A) if space == "sample" else fm.fit(A).projections(A)


@pytest.mark.parametrize("n", [0.5, 1.0])
def test_tall_qr_projections_have_the_weight_space_law(n):
    """Entries of W = diag(chi(D)) Q[:, :d] seen through A = e_1..e_3: LAPACK's sign of
    Q's first column kept (W[0, 0] < 0 always, both ways; a Haar block would give
    either sign), and two-sample KS tests (300 draws a side) of W[j, i] for rows
    j = 0, 1, d - 1, d, D - 1 (top, bottom) and columns 0-2, at D = 13 = d + 1 (one row
    below the top) and D = 26."""
    d = 12
    w = np.array([_tall_projections("weights", r, d=d, n=n) for r in range(300)])
    s = np.array([_tall_projections("sample", 1000 + r, d=d, n=n) for r in range(300)])
    assert (w[:, 0, 0] < 0).all() and (s[:, 0, 0] < 0).all()
    D = w.shape[2]
    pvalues = [
        stats.ks_2samp(w[:, i, j], s[:, i, j]).pvalue
        for i in range(3)
        for j in (0, 1, d - 1, d, D - 1)
    ]
    assert min(pvalues) > ALPHA / len(pvalues)  # Bonferroni over the 15 entries


@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
@pytest.mark.parametrize("n", [0.5, 1.0])
def test_tall_qr_error_distribution_equals_weight_space(pair, kernel, n):
    """As for rff and orf: KS of the relative Frobenius errors, 50 runs a side (D = 65,
    one row below the top, and 130)."""
    X, Y = pair
    a = _errors(X, Y, "orf", kernel, n, "weights", **TALL)
    b = _errors(X, Y, "orf", kernel, n, "sample", **TALL)
    assert stats.ks_2samp(a, b).pvalue > ALPHA


def test_tall_qr_sample_space_is_opt_in_and_needs_d_rows():
    """Off by default (the map's default keeps its numbers); D < d draws W."""
    assert not make_feature_map("orf", n=1, construction="tall_qr").supports_sample_space(4, 30)
    assert make_feature_map("orf", n=1, **TALL).supports_sample_space(4, 30)
    assert not make_feature_map("orf", n=0.4, **TALL).supports_sample_space(4, 30)  # D = 25
    with pytest.raises(KernelbenchError, match="true or false"):
        make_feature_map("orf", n=1, construction="tall_qr", tall_qr_sample_space="yes").fit(
            np.ones((2, 3))
        )


# ---------------------------------------------------------------- the map's contract


def test_sample_space_uses_the_generator_and_refuses_other_points():
    A = np.random.default_rng(0).random((4, 30))
    for method in ("rff", "orf"):
        P1 = make_feature_map(method, n=1, random_state=np.random.default_rng(9)).fit_sample_space(
            A
        )
        fm = make_feature_map(method, n=1, random_state=np.random.default_rng(9))
        np.testing.assert_array_equal(fm.fit_sample_space(A), P1)
        with pytest.raises(KernelbenchError, match="fit_sample_space"):
            fm.transform(A)
        assert fm.fit(A).transform(A).shape == (4, fm.n_features_out_)  # a fit redraws W


@pytest.mark.parametrize(
    ("method", "params", "shape"),
    [
        ("rff", {}, (30, 30)),  # 2N >= d
        ("orf", {}, (40, 30)),
        ("orf", {"construction": "tall_qr"}, (4, 30)),  # the published code: not supported
        ("sorf", {}, (4, 32)),
    ],
)
def test_unsupported_draws_refuse(method, params, shape):
    fm = make_feature_map(method, n=1, random_state=0, **params)
    assert not fm.supports_sample_space(*shape)
    with pytest.raises(KernelbenchError, match="fit and transform"):
        fm.fit_sample_space(np.ones(shape))


# ---------------------------------------------------------------- the protocol


def _digits_cell(method, samples, protocol, runs=2):
    """A kernel_approx cell on ``samples`` + ``samples`` rows of digits (d = 64)."""
    return {
        "protocol": protocol,
        "dataset": {
            "name": "digits",
            "splits": {"kernel_approx": {"part": "train", "scaling": "max", "samples": samples}},
        },
        "kernel": {"name": "rbf"},
        "method": {"name": method},
        "n": 1,
        "runs": runs,
    }


def _rows(method, samples, draws, runs=2):
    from kernelbench.experiment import run_cell

    protocol = {"name": "kernel_approx", "data": "kernel_approx", "draws": draws}
    return run_cell(_digits_cell(method, samples, protocol, runs))


STABLE = ["D", "rel_fro_error", "rel_spec_error", "draws", "config_hash", "protocol_params"]


@pytest.mark.parametrize("method", ["rff", "orf", "sorf"])
def test_fallback_where_2n_reaches_d_is_bit_identical(method):
    """2N = 80 >= d = 64 (and sorf anywhere): draws=sample_space gives the rows of
    draws=weights bit for bit, and the same config hash (the default is not stored)."""
    a = _rows(method, 40, "sample_space")
    b = _rows(method, 40, "weights")
    assert list(a["draws"]) == ["weights", "weights"]
    cols = ["D", "rel_fro_error", "rel_spec_error", "draws"]
    assert a[cols].equals(b[cols])
    assert json.loads(a["protocol_params"].iloc[0]) == {"data": "kernel_approx"}
    assert json.loads(b["protocol_params"].iloc[0])["draws"] == "weights"


def test_sample_space_rows_say_so():
    """2N = 20 < d = 64: rff draws in sample space (other numbers), sorf cannot."""
    a = _rows("rff", 10, "sample_space")
    b = _rows("rff", 10, "weights")
    assert list(a["draws"]) == ["sample_space"] * 2 and list(b["draws"]) == ["weights"] * 2
    assert not np.array_equal(a["rel_fro_error"], b["rel_fro_error"])
    assert list(_rows("sorf", 10, "sample_space")["draws"]) == ["weights"] * 2


def test_bad_draws_setting_names_the_choices():
    from kernelbench.protocols import PROTOCOLS

    with pytest.raises(KernelbenchError, match="sample_space"):
        PROTOCOLS.get("kernel_approx").check_settings({"name": "kernel_approx", "draws": "w"})
