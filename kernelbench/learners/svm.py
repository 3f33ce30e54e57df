"""``svm_precomputed``: an SVM on the approximate kernel (Munkhoeva et al. 2018, Sec. 4.3).

Fig. 2's learner: scikit-learn's SVC / SVR, ``kernel="precomputed"``, default C = 1,
on K_hat = z(X) z(X)^T + constant_ (the constant changes nothing, :mod:`kernelbench.
learners`; added as the paper's code did). Memory: the N x N training Gram matrix
(8 N^2 bytes: 0.8 GB for LETTER's 10000 rows) plus a ``chunk_rows`` x N test block on
the exact kernel.

On features the training K_hat is one symmetric rank-F product (BLAS syrk, half of a
GEMM's flops, then mirrored: :func:`symmetric_gram`), and the fitted machine predicts
through its primal weights (:class:`PrimalOvO`): with K_hat = Z Z^T + c, a pair's
decision sum_i a_i k_hat(x_i, x) - rho (libsvm, Chang and Lin 2011, Sec. 7) is
w . z(x) + b with w = sum_i a_i z(x_i) and b = c sum_i a_i - rho, so every pair's
decision of every test row is one GEMM of z(X_test) against the F x pairs matrix W,
voted as libsvm votes. Same math as libsvm's predict on the test Gram; the sums are
taken in another order, so a decision within rounding of 0 may fall on the other side
(docs/performance.md counts them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kernelbench.learners import LEARNERS, Fitted, KernelFn, Learner, check_task
from kernelbench.validation import check_int

#: Rows of a tile when K_hat's lower triangle is mirrored from its upper one.
MIRROR_TILE = 256


def symmetric_gram(Z: np.ndarray, constant: float = 0.0) -> np.ndarray:
    """K = Z Z^T + constant as a C-ordered float64 N x N array: the upper triangle by
    BLAS syrk (N^2 F flops, half of a GEMM's), mirrored into the lower one tile by tile.
    Exactly symmetric; equal to ``Z @ Z.T`` up to the order of the sums."""
    from scipy.linalg import blas

    Zf = np.asarray(Z)
    syrk = blas.ssyrk if Zf.dtype == np.float32 else blas.dsyrk
    Zf = np.ascontiguousarray(Zf, dtype=np.float32 if Zf.dtype == np.float32 else np.float64)
    # Z Z^T = A^T A with A = Z^T: Fortran view of the C-ordered Z (no copy); the result is
    # Fortran-ordered with the upper triangle set, so its transpose is C-ordered with the
    # lower triangle set
    K = syrk(1.0, Zf.T, trans=1, lower=0).T
    if K.dtype != np.float64:
        K = K.astype(np.float64)  # C order kept
    n = len(K)
    for i in range(0, n, MIRROR_TILE):
        j = min(n, i + MIRROR_TILE)
        K[i:j, j:] = K[j:, i:j].T  # the strip right of the diagonal tile
        tile = K[i:j, i:j]
        tile[np.triu_indices(j - i, 1)] = tile.T[np.triu_indices(j - i, 1)]
    if constant != 0.0:
        K += Zf.dtype.type(constant)
    return K


class PrimalOvO:
    """libsvm's prediction of a fitted SVC / SVR on a linear kernel z(x).z(y) + c, from
    its primal weights: ``decision(Z)`` (test rows x pairs) and ``predict(Z)``."""

    def __init__(self, model: Any, Z_train: np.ndarray, constant: float, task: str) -> None:
        Zs = np.asarray(Z_train[model.support_], dtype=np.float64)
        # libsvm's own coefficients and -rho (scikit-learn negates its public dual_coef_
        # and intercept_ for two classes)
        coef = np.asarray(model._dual_coef_, dtype=np.float64)
        rho = -np.asarray(model._intercept_, dtype=np.float64)
        if task != "classification":  # SVR: one decision, the prediction itself
            self.classes = None
            self.W = Zs.T @ coef[0][:, None]
            self.b = constant * coef.sum(axis=1) - rho
            return
        k = len(model.classes_)
        starts = np.concatenate([[0], np.cumsum(model.n_support_)])
        # P_i = Z_{S_i}^T A_i: class i's support vectors against its k - 1 coefficient
        # rows; libsvm's pair (i, j), i < j, takes row j - 1 for S_i and row i for S_j
        P = [
            Zs[starts[i] : starts[i + 1]].T @ coef[:, starts[i] : starts[i + 1]].T for i in range(k)
        ]
        S = [coef[:, starts[i] : starts[i + 1]].sum(axis=1) for i in range(k)]
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        self.W = np.empty((Zs.shape[1], len(pairs)))
        sums = np.empty(len(pairs))
        for p, (i, j) in enumerate(pairs):
            self.W[:, p] = P[i][:, j - 1] + P[j][:, i]
            sums[p] = S[i][j - 1] + S[j][i]
        self.b = constant * sums - rho
        self.classes = np.asarray(model.classes_)
        self.first = np.array([i for i, _ in pairs])
        self.second = np.array([j for _, j in pairs])
        self.k = k

    def decision(self, Z: np.ndarray) -> np.ndarray:
        """Every pair's decision value w . z(x) + b (libsvm's sum - rho), rows x pairs."""
        return np.asarray(Z, dtype=np.float64) @ self.W + self.b

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """libsvm's rule: pair (i, j) votes i where its decision is > 0, else j; the class
        with the most votes, ties to the lower class index (``svm_predict_values``)."""
        dec = self.decision(Z)
        if self.classes is None:
            return dec[:, 0]
        votes = np.zeros((len(dec), self.k), dtype=np.int64)
        pos = dec > 0
        for p in range(dec.shape[1]):
            votes[:, self.first[p]] += pos[:, p]
            votes[:, self.second[p]] += ~pos[:, p]
        return self.classes[np.argmax(votes, axis=1)]  # argmax: the first maximum


@LEARNERS.register("svm_precomputed")
class SVMPrecomputed(Learner):
    """SVC / SVR (libsvm) on a precomputed Gram matrix: K_hat or the exact kernel."""

    name = "svm_precomputed"
    summary = "SVC/SVR(kernel='precomputed'), default C, on z(X) z(X')^T + constant_"

    def __init__(self, C: float = 1.0, chunk_rows: int = 2048) -> None:
        self.C = float(C)
        self.chunk_rows = check_int("chunk_rows", chunk_rows, 1)

    def params(self) -> dict[str, Any]:
        return {"C": self.C}

    def _train(self, K: np.ndarray, y: np.ndarray, task: str) -> Any:
        from sklearn.svm import SVC, SVR

        check_task(task)
        model = (SVC if task == "classification" else SVR)(kernel="precomputed", C=self.C)
        return model.fit(K, y)

    def _fit_gram(
        self, K: np.ndarray, y: np.ndarray, task: str, cross: Callable[[np.ndarray], np.ndarray]
    ) -> Fitted:
        model = self._train(K, y, task)
        del K
        info = {"n_support": float(len(model.support_))}
        return self._fitted(lambda r: model.predict(cross(r)), info)

    def fit(self, Z: np.ndarray, y: np.ndarray, task: str, constant: float = 0.0) -> Fitted:
        """libsvm on K_hat = Z Z^T + constant (:func:`symmetric_gram`); predictions by
        the primal weights (:class:`PrimalOvO`)."""
        Z = np.asarray(Z)
        model = self._train(symmetric_gram(Z, constant), y, task)
        primal = PrimalOvO(model, Z, constant, task)
        info = {"n_support": float(len(model.support_))}
        return self._fitted(primal.predict, info)

    def fit_exact(self, kernel: KernelFn, X: np.ndarray, y: np.ndarray, task: str) -> Fitted:
        return self._fit_gram(kernel(X, X), y, task, lambda rows: kernel(rows, X))
