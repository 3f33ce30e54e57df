"""Downstream learners: svm_precomputed is SVC/SVR on K_hat; linear is ridge with an
intercept whose leave-one-out selection is exact, deterministic and from the grid."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.svm import SVC, SVR

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map
from kernelbench.kernels import exact_kernel
from kernelbench.learners import LEARNERS, check_task, linear, make_learner, score
from kernelbench.learners.linear import pick_alpha


@pytest.fixture(scope="module")
def digits_part():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return X[:300], y[:300], X[300:420], y[300:420]


def _features(X, Xt, method="sr33", kernel="rbf", n=1, seed=3):
    fm = make_feature_map(method, kernel=kernel, n=n, random_state=seed).fit(X)
    return fm, fm.transform(X), fm.transform(Xt)


def test_registry_and_errors():
    assert sorted(LEARNERS.names()) == ["linear", "svm_precomputed"]
    with pytest.raises(KernelbenchError, match=r"unknown learner 'svm'; valid choices: linear"):
        make_learner("svm")
    with pytest.raises(KernelbenchError, match=r"unknown parameter\(s\) gamma .*valid: C"):
        make_learner("svm_precomputed", gamma=1.0)
    with pytest.raises(KernelbenchError, match="alphas must be positive"):
        make_learner("linear", alphas=[1.0, -1.0])
    msg = "metric 'accuracy' does not apply to a regression dataset; valid choices: r2"
    with pytest.raises(KernelbenchError, match=msg):
        check_task("regression", "accuracy")
    assert check_task("classification") == "accuracy" and check_task("regression") == "r2"


@pytest.mark.parametrize("kernel", ["rbf", "arccos0"])
def test_svm_precomputed_equals_svc_on_k_hat(digits_part, kernel):
    X, y, Xt, yt = digits_part
    fm, Z, Zt = _features(X, Xt, kernel=kernel)
    assert fm.constant_ != 0.0  # the f(0) term is part of K_hat
    K_hat = fm.approximate_kernel(X)
    ref = SVC(kernel="precomputed").fit(K_hat, y)
    ours = make_learner("svm_precomputed", chunk_rows=7).fit(Z, y, "classification", fm.constant_)
    expected = ref.predict(fm.approximate_kernel(Xt, X))
    np.testing.assert_array_equal(ours.predict(Zt), expected)
    assert score("accuracy", yt, ours.predict(Zt)) == pytest.approx(np.mean(expected == yt))


def test_svr_precomputed_equals_svr_on_k_hat(digits_part):
    X, _, Xt, _ = digits_part
    target = np.sin(3 * X[:, 20]) + X[:, 36]
    fm, Z, Zt = _features(X, Xt, kernel="arccos1", n=2)
    ref = SVR(kernel="precomputed").fit(fm.approximate_kernel(X), target)
    ours = make_learner("svm_precomputed").fit(Z, target, "regression", fm.constant_)
    np.testing.assert_allclose(
        ours.predict(Zt), ref.predict(fm.approximate_kernel(Xt, X)), rtol=0, atol=1e-12
    )


def test_svm_exact_is_svc_on_the_exact_kernel(digits_part):
    from kernelbench.kernels import exact_kernel

    X, y, Xt, _ = digits_part

    def kernel(A, B):
        return exact_kernel("rbf", A, B)

    ours = make_learner("svm_precomputed", chunk_rows=50).fit_exact(kernel, X, y, "classification")
    ref = SVC(kernel="precomputed").fit(kernel(X, X), y)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(kernel(Xt, X)))


@pytest.mark.parametrize("D", [6, 90])  # the primal (D <= N) and dual (D > N) branches
def test_linear_equals_sklearn_ridge(D):
    rng = np.random.default_rng(D)
    Z, Zt = rng.normal(size=(60, D)), rng.normal(size=(9, D))
    y = Z[:, 0] - 2 * Z[:, 1] + rng.normal(size=60)
    fit = make_learner("linear", alphas=[0.7]).fit(Z, y, "regression")
    np.testing.assert_allclose(
        fit.predict(Zt), Ridge(alpha=0.7).fit(Z, y).predict(Zt), rtol=1e-8, atol=1e-10
    )
    for classes in (2, 4):
        labels = np.array(list("abcd"))[rng.integers(0, classes, 60)]
        fit = make_learner("linear", alphas=[0.7]).fit(Z, labels, "classification")
        ref = RidgeClassifier(alpha=0.7).fit(Z, labels)
        np.testing.assert_array_equal(fit.predict(Zt), ref.predict(Zt))


@pytest.mark.parametrize("c", [-0.4, 0.0, 2.0])
def test_linear_constant_is_absorbed_by_the_intercept(c):
    """Ridge with an intercept on Z equals kernel ridge (with intercept) on Z Z^T + c,
    for a negative c too: the f(0) term cannot change the linear learner."""
    rng = np.random.default_rng(1)
    Z, Zt = rng.normal(size=(50, 12)), rng.normal(size=(8, 12))
    y = np.tanh(Z[:, 0]) + 0.1 * rng.normal(size=50)
    feat = make_learner("linear").fit(Z, y, "regression", constant=c)

    def kernel(A, B):  # the "inputs" are the features themselves: k_hat = a.b + c
        return A @ B.T + c

    exact = make_learner("linear").fit_exact(kernel, Z, y, "regression")
    assert feat.info["alpha"] == exact.info["alpha"]
    np.testing.assert_allclose(feat.predict(Zt), exact.predict(Zt), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("D", [15, 60])  # the D x D eigendecomposition; N x N by Cholesky
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_inner_cv_is_exact_loo_from_the_grid_and_deterministic(task, D):
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(40, D))
    signal = Z[:, 0] + 0.5 * Z[:, 1]
    if task == "regression":
        y, metric, model = signal + rng.normal(size=40), "r2", Ridge
    else:
        y, metric, model = (
            np.digitize(signal + rng.normal(size=40), [-0.7, 0.7]),
            "accuracy",
            (RidgeClassifier),
        )
    alphas = [0.01, 1.0, 30.0, 1000.0]
    brute = []
    for alpha in alphas:  # leave-one-out by refitting scikit-learn's model N times
        pred = [
            model(alpha=alpha).fit(np.delete(Z, i, 0), np.delete(y, i)).predict(Z[i : i + 1])[0]
            for i in range(len(y))
        ]
        brute.append(score(metric, y, np.array(pred)))
    learner = make_learner("linear", alphas=alphas)
    fit = learner.fit(Z, y, task)
    assert fit.info["alpha"] in alphas
    assert fit.info["alpha"] == pick_alpha(np.array(brute), alphas)
    assert fit.info["loo_score"] == pytest.approx(max(brute), abs=1e-9)
    again = make_learner("linear", alphas=alphas).fit(Z, y, task)
    assert again.info == fit.info
    np.testing.assert_array_equal(again.predict(Z), fit.predict(Z))


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_cholesky_route_equals_the_eigendecomposition(task, monkeypatch):
    """The N x N problem (features wider than the rows, and the exact kernel) by one
    Cholesky factorisation per alpha gives the eigendecomposition's leave-one-out
    scores, choice of alpha and predictions, to rounding."""
    rng = np.random.default_rng(11)
    Z, Zt = rng.normal(size=(70, 90)), rng.normal(size=(25, 90))
    X, Xt = rng.normal(size=(70, 3)), rng.normal(size=(25, 3))
    signal = np.sin(2 * X[:, 0]) + Z[:, 0] - X[:, 1] ** 2
    y = signal + 0.3 * rng.normal(size=70)
    if task == "classification":
        y = np.digitize(y, np.quantile(y, [0.33, 0.67]))

    def kernel(A, B):
        return exact_kernel("rbf", A, B, gamma=0.5)

    def both(alphas, fit):
        out = []
        for limit in (0, linear.CHOLESKY_MAX_ALPHAS):  # 0: every grid by eigh
            monkeypatch.setattr(linear, "CHOLESKY_MAX_ALPHAS", limit)
            fitted = fit(make_learner("linear", alphas=alphas, chunk_rows=7))
            out.append(fitted)
        return out

    for alphas in ([1e-3, 0.1, 10.0, 1000.0], [0.3]):
        for fit, rows in (
            (lambda L: L.fit(Z, y, task), Zt),
            (lambda L: L.fit_exact(kernel, X, y, task), Xt),
        ):
            eig, chol = both(alphas, fit)
            assert chol.info["alpha"] == eig.info["alpha"]
            assert chol.info["loo_score"] == pytest.approx(eig.info["loo_score"], abs=1e-12)
            if task == "regression":
                np.testing.assert_allclose(chol.predict(rows), eig.predict(rows), rtol=1e-9)
            else:
                np.testing.assert_array_equal(chol.predict(rows), eig.predict(rows))


def test_cholesky_route_gives_way_where_the_factorisation_fails():
    """K + alpha I not positive definite: None (the learner then takes the
    eigendecomposition), and K is left as it was."""
    rng = np.random.default_rng(2)
    B = rng.normal(size=(12, 12))
    K = B @ B.T - 3.0 * np.eye(12)  # an eigenvalue below -alpha
    K = K - np.eye(12) * max(0.0, np.linalg.eigvalsh(K)[0] + 1.0)
    before = K.copy()
    targets = linear.Targets(rng.normal(size=12), "regression")
    assert linear.loo_cholesky(K, targets, [0.5], "r2") is None
    np.testing.assert_array_equal(K, before)
    ok = B @ B.T
    assert linear.loo_cholesky(ok, targets, [0.5], "r2") is not None


def test_pick_alpha_prefers_the_largest_of_tied_alphas():
    assert pick_alpha(np.array([0.5, 0.9, 0.9, 0.1]), [1e-3, 1e-2, 1e-1, 1.0]) == 0.1


def _libsvm_decisions(model, K_test):
    """libsvm's own pairwise decision values (scikit-learn negates them for two classes)."""
    dec = model.decision_function(K_test)
    if dec.ndim == 1:
        return -dec[:, None]
    return dec


@pytest.mark.parametrize("classes", [2, 3, 10])
@pytest.mark.parametrize("method", ["rff", "sr33", "orf"])
def test_primal_ovo_predicts_as_libsvm_on_the_test_gram(digits_part, classes, method):
    """PrimalOvO (w_pair . z + b, libsvm's vote) against SVC.predict on z(X_test) z(X)^T + c:
    the same decision values to rounding, and the same prediction in every test row but
    those with a decision within rounding of 0; ties of votes (several classes) go to the
    lower class, as libsvm's, and they occur here so the rule is exercised."""
    from kernelbench.learners.svm import PrimalOvO, symmetric_gram

    X, y, Xt, _ = digits_part
    keep, keep_t = y < classes, np.ones(len(Xt), bool)
    X, y = X[keep], y[keep]
    ties = mismatched = near = 0
    for seed in range(4):
        for n in (1, 2):
            fm, Z, Zt = _features(X, Xt[keep_t], method=method, n=n, seed=seed)
            model = SVC(kernel="precomputed", decision_function_shape="ovo")
            model.fit(symmetric_gram(Z, fm.constant_), y)
            primal = PrimalOvO(model, Z, fm.constant_, "classification")
            K_test = Zt @ Z.T + fm.constant_
            ref_dec = _libsvm_decisions(model, K_test)
            dec = primal.decision(Zt)
            np.testing.assert_allclose(dec, ref_dec, rtol=0, atol=1e-10)
            close = (np.abs(ref_dec) < 1e-10).any(axis=1)
            ours, ref = primal.predict(Zt), model.predict(K_test)
            mismatched += int((ours != ref)[~close].sum())
            near += int(close.sum())
            if classes > 2:
                pos = ref_dec > 0
                votes = np.zeros((len(Zt), classes), int)
                pairs = [(a, b) for a in range(classes) for b in range(a + 1, classes)]
                for p, (a, b) in enumerate(pairs):
                    votes[:, a] += pos[:, p]
                    votes[:, b] += ~pos[:, p]
                ties += int((np.sort(votes, axis=1)[:, -1] == np.sort(votes, axis=1)[:, -2]).sum())
    assert mismatched == 0  # rows with a decision within 1e-10 of 0 may differ (none here)
    if classes > 2:
        assert ties > 0


def test_primal_svr_equals_libsvm_and_float32_features(digits_part):
    from kernelbench.learners.svm import PrimalOvO, symmetric_gram

    X, _, Xt, _ = digits_part
    target = np.sin(3 * X[:, 20]) + X[:, 36]
    fm, Z, Zt = _features(X, Xt, kernel="arccos1", n=2)
    model = SVR(kernel="precomputed").fit(symmetric_gram(Z, fm.constant_), target)
    primal = PrimalOvO(model, Z, fm.constant_, "regression")
    np.testing.assert_allclose(
        primal.predict(Zt), model.predict(Zt @ Z.T + fm.constant_), rtol=0, atol=1e-12
    )
    Z32, Zt32 = Z.astype(np.float32), Zt.astype(np.float32)
    labels = (X[:, 36] > 0.3).astype(int)
    fit = make_learner("svm_precomputed").fit(Z32, labels, "classification", fm.constant_)
    K32 = (Z32 @ Z32.T + np.float32(fm.constant_)).astype(np.float64)
    ref = SVC(kernel="precomputed").fit(K32, labels)
    Kt32 = (Zt32 @ Z32.T + np.float32(fm.constant_)).astype(np.float64)
    assert np.mean(fit.predict(Zt32) == ref.predict(Kt32)) >= 0.99


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("N", [1, 5, 255, 256, 257, 700])
def test_symmetric_gram_is_z_zt_exactly_symmetric(N, dtype):
    from kernelbench.learners.svm import symmetric_gram

    Z = np.random.default_rng(N).normal(size=(N, 9)).astype(dtype)
    K = symmetric_gram(Z, 0.3)
    assert K.dtype == np.float64 and K.flags.c_contiguous
    np.testing.assert_array_equal(K, K.T)
    ref = Z.astype(np.float64) @ Z.T.astype(np.float64) + 0.3
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(K, ref, rtol=0, atol=tol * np.abs(ref).max())
