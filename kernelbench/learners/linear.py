"""``linear``: ridge on the explicit features, penalty by leave-one-out cross-validation.

Ridge with an unpenalised intercept, min_{w, b} ||Y - Z w - 1 b||^2 + alpha ||w||^2, on
y (regression) or on +-1 one-vs-rest targets with the arg-max rule (RidgeClassifier);
on the exact kernel, kernel ridge with an intercept. alpha: the best of ``alphas`` by
exact leave-one-out CV (Golub, Heath and Wahba 1979; docs/downstream.md), ties to the
largest alpha. Deterministic.

Cost: D <= N columns use the D x D matrix Z_c^T Z_c (O(N D^2)); wider features and
the exact kernel the N x N centred Gram matrix (O(N^3), 2-3 N x N float64 arrays): one
eigendecomposition serves every alpha; a grid of at most :data:`CHOLESKY_MAX_ALPHAS`
takes one Cholesky factorisation per alpha instead (the same ridge, other rounding;
docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelbench.errors import KernelbenchError
from kernelbench.learners import LEARNERS, Fitted, KernelFn, Learner, check_grid, check_task, score
from kernelbench.validation import check_int

#: The default penalty grid: features are scaled so that z(x).z(x) ~ k(x, x) <= O(1).
DEFAULT_ALPHAS: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)
#: Grids of at most this many alphas solve the N x N problem by a Cholesky factorisation
#: per alpha (2/3 N^3 flops of BLAS 3 with the LOO's diagonal of the inverse) instead of
#: one eigendecomposition (whose tridiagonal reduction is bound by memory): about 1/8 of
#: an eigendecomposition per alpha, measured (docs/performance.md).
CHOLESKY_MAX_ALPHAS = 4


class Targets:
    """Regression targets as one column, or classes as +-1 one-vs-rest columns
    (RidgeClassifier's encoding; binary: one column), and the decision rule back."""

    def __init__(self, y: np.ndarray, task: str) -> None:
        check_task(task)
        self.task = task
        y = np.asarray(y)
        if task == "regression":
            self.Y = y.astype(np.float64).reshape(len(y), 1)
            self.classes = None
            return
        from sklearn.preprocessing import LabelBinarizer

        lb = LabelBinarizer(neg_label=-1, pos_label=1)
        self.Y = lb.fit_transform(y).astype(np.float64)
        self.classes = lb.classes_
        if len(self.classes) < 2:
            raise KernelbenchError("classification needs at least two classes in the train rows")

    def decode(self, decision: np.ndarray) -> np.ndarray:
        """Predictions from decision values (one column per target column)."""
        if self.classes is None:
            return decision[:, 0]
        if decision.shape[1] == 1:
            return self.classes[(decision[:, 0] > 0).astype(int)]
        return self.classes[np.argmax(decision, axis=1)]


@dataclass
class Spectrum:
    """Nonzero eigenpairs (lambda, U) of a centred Gram matrix (U orthogonal to 1)."""

    lam: np.ndarray
    U: np.ndarray

    @classmethod
    def of(cls, lam: np.ndarray, U: np.ndarray) -> Spectrum:
        lam = np.clip(lam, 0.0, None)
        tol = (lam.max() if lam.size else 0.0) * max(U.shape) * np.finfo(np.float64).eps
        keep = lam > tol
        return cls(lam[keep], U[:, keep])


def true_labels(targets: Targets) -> np.ndarray:
    """The observed targets the LOO predictions are scored against (labels or values)."""
    return targets.Y[:, 0] if targets.classes is None else targets.decode(targets.Y)


def loo_scores(
    spec: Spectrum, targets: Targets, alphas: Sequence[float], metric: str
) -> np.ndarray:
    """The leave-one-out score of ridge with an intercept for each alpha (exact)."""
    Y = targets.Y
    n = len(Y)
    y_mean = Y.mean(axis=0)
    UtY = spec.U.T @ (Y - y_mean)
    U2 = spec.U * spec.U
    y_true = true_labels(targets)
    out = np.empty(len(alphas))
    for a, alpha in enumerate(alphas):
        f = spec.lam / (spec.lam + alpha)
        fitted = y_mean + spec.U @ (f[:, None] * UtY)
        s = 1.0 / n + U2 @ f
        loo = (fitted - s[:, None] * Y) / (1.0 - s)[:, None]
        out[a] = score(metric, y_true, targets.decode(loo))
    return out


def loo_cholesky(
    K: np.ndarray, targets: Targets, alphas: Sequence[float], metric: str
) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """The leave-one-out scores and dual coefficients (K + alpha I)^{-1} Y_c per alpha on
    the centred Gram matrix K, from a Cholesky factorisation of K + alpha I (K is
    restored). The quantities of :func:`loo_scores` without the spectrum: the fitted
    values y_mean + K (K + alpha I)^{-1} Y_c = y_mean + Y_c - alpha A and
    1 - s = alpha diag((K + alpha I)^{-1}) - 1/n (Golub, Heath and Wahba 1979). None
    when a factorisation fails (K + alpha I not numerically positive definite)."""
    from scipy.linalg import cho_solve
    from scipy.linalg.lapack import dpotrf, dtrtri

    Y = targets.Y
    n = len(Y)
    y_mean = Y.mean(axis=0)
    Yc = Y - y_mean
    y_true = true_labels(targets)
    diag = np.diag_indices(n)
    k_diag = K[diag].copy()
    scores, duals = np.empty(len(alphas)), []
    try:
        for a, alpha in enumerate(alphas):
            K[diag] = k_diag + alpha
            L, info = dpotrf(K, lower=1, clean=1)
            if info != 0:
                return None
            dual = cho_solve((L, True), Yc, check_finite=False)
            L_inv, info = dtrtri(L, lower=1, overwrite_c=1)
            if info != 0:
                return None
            one_minus_s = alpha * np.einsum("ij,ij->j", L_inv, L_inv) - 1.0 / n
            del L, L_inv
            loo = (y_mean + (Yc - alpha * dual) - (1.0 - one_minus_s)[:, None] * Y) / (
                one_minus_s[:, None]
            )
            scores[a] = score(metric, y_true, targets.decode(loo))
            duals.append(dual)
    finally:
        K[diag] = k_diag
    return scores, duals


def pick_alpha(scores: np.ndarray, alphas: Sequence[float]) -> float:
    """The alpha with the best score; ties go to the largest alpha."""
    best = np.max(scores)
    return float(max(a for a, s in zip(alphas, scores, strict=True) if s == best))


def _eigh(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy.linalg import eigh

    return eigh(G, overwrite_a=True, check_finite=False, driver="evd")


@LEARNERS.register("linear")
class LinearRidge(Learner):
    """Ridge (classifier) on explicit features; kernel ridge on the exact kernel."""

    name = "linear"
    summary = "ridge / ridge classifier on z(X) with an intercept, alpha by leave-one-out CV"

    def __init__(self, alphas: Sequence[float] = DEFAULT_ALPHAS, chunk_rows: int = 2048) -> None:
        self.alphas = check_grid("alphas", alphas)
        self.chunk_rows = check_int("chunk_rows", chunk_rows, 1)

    def params(self) -> dict[str, Any]:
        return {"alphas": list(self.alphas)}

    def _select(self, spec: Spectrum, targets: Targets, task: str) -> tuple[float, dict]:
        """(alpha, the info of the fit): the LOO choice."""
        return self._choice(loo_scores(spec, targets, self.alphas, check_task(task)))

    def _choice(self, scores: np.ndarray) -> tuple[float, dict]:
        """(alpha, the info of the fit) for the LOO scores of ``self.alphas``."""
        alpha = pick_alpha(scores, self.alphas)
        return alpha, {"alpha": alpha, "loo_score": float(np.max(scores))}

    def _cholesky(
        self, K: np.ndarray, targets: Targets, task: str
    ) -> tuple[np.ndarray, dict] | None:
        """(dual coefficients at the LOO choice, info) on the centred N x N Gram matrix K
        by :func:`loo_cholesky`; None for a grid longer than CHOLESKY_MAX_ALPHAS or a
        failed factorisation (the caller takes the eigendecomposition)."""
        if len(self.alphas) > CHOLESKY_MAX_ALPHAS:
            return None
        got = loo_cholesky(K, targets, self.alphas, check_task(task))
        if got is None:
            return None
        scores, duals = got
        alpha, info = self._choice(scores)
        return duals[self.alphas.index(alpha)], info

    def fit(self, Z: np.ndarray, y: np.ndarray, task: str, constant: float = 0.0) -> Fitted:
        """Ridge on Z (``constant`` is absorbed by the intercept, so it is not used)."""
        Z = np.asarray(Z, dtype=np.float64)
        targets = Targets(y, task)
        z_mean = Z.mean(axis=0)
        Zc = Z - z_mean
        Yc = targets.Y - targets.Y.mean(axis=0)
        n, D = Zc.shape
        if D <= n:
            lam, V = _eigh(Zc.T @ Zc)
            spec = Spectrum.of(lam, V)
            spec = Spectrum(spec.lam, (Zc @ spec.U) / np.sqrt(spec.lam))
            alpha, info = self._select(spec, targets, task)
            lam_all = np.clip(lam, 0.0, None)
            W = V @ ((V.T @ (Zc.T @ Yc)) / (lam_all + alpha)[:, None])
        else:
            G = Zc @ Zc.T
            got = self._cholesky(G, targets, task)
            if got is not None:
                A, info = got
                W = Zc.T @ A
            else:
                lam, U = _eigh(G)
                spec = Spectrum.of(lam, U)
                alpha, info = self._select(spec, targets, task)
                W = Zc.T @ (spec.U @ ((spec.U.T @ Yc) / (spec.lam + alpha)[:, None]))
            del G
        y_mean = targets.Y.mean(axis=0)

        def predict(rows: np.ndarray) -> np.ndarray:
            dec = (np.asarray(rows, dtype=np.float64) - z_mean) @ W + y_mean
            return targets.decode(dec)

        return self._fitted(predict, info)

    def fit_exact(self, kernel: KernelFn, X: np.ndarray, y: np.ndarray, task: str) -> Fitted:
        """Kernel ridge with an intercept on k(X, X) (the centred N x N kernel)."""
        targets = Targets(y, task)
        K = np.asarray(kernel(X, X), dtype=np.float64)
        k_mean = K.mean(axis=0)
        grand = float(k_mean.mean())
        K -= k_mean[None, :]
        K -= k_mean[:, None]
        K += grand
        y_mean = targets.Y.mean(axis=0)
        got = self._cholesky(K, targets, task)
        if got is not None:
            del K
            A, info = got
        else:
            lam, U = _eigh(K)
            del K
            spec = Spectrum.of(lam, U)
            del U
            alpha, info = self._select(spec, targets, task)
            A = spec.U @ ((spec.U.T @ (targets.Y - y_mean)) / (spec.lam + alpha)[:, None])
        a_sum = A.sum(axis=0)
        k_mean_A = k_mean @ A

        def predict(rows: np.ndarray) -> np.ndarray:
            Kt = kernel(rows, X)
            dec = Kt @ A - k_mean_A - (Kt.mean(axis=1) - grand)[:, None] * a_sum + y_mean
            return targets.decode(dec)

        return self._fitted(predict, info)
