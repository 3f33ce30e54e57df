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
from kernelbench.features.base import sample_factor
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


CASES = [
    (method, kernel, n)
    for method in ("rff", "orf")
    for kernel in ("rbf", "arccos0", "arccos1")
    for n in (0.25, 1.0)  # D = 32 < d = 64; D = 130 = 2 d + 2 (orf: two blocks and two rows)
]


@pytest.mark.parametrize(("method", "kernel", "n"), CASES)
def test_error_distribution_equals_weight_space(pair, method, kernel, n):
    """Two-sample KS of the relative Frobenius errors, 50 runs each (module docstring)."""
    X, Y = pair
    a = _errors(X, Y, method, kernel, n, "weights")
    b = _errors(X, Y, method, kernel, n, "sample")
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
