"""Kernel ridge regression on explicit random features, by chunked normal equations.

Liu et al. 2020, Eq. (7)-(8): beta = (Z^T Z + n lambda I)^{-1} Z^T y, f(x) = z(x)^T beta,
a classifier by sign(f) on labels +-1 (Sec. 5, Table 3). :class:`ChunkedRidge` streams
the rows in ``chunk_rows`` chunks through the feature map and accumulates Z^T Z (syrk,
upper triangle) and Z^T y per fold: memory O(k s^2 + chunk s) for k folds, s features.

lambda is chosen by k-fold CV over a grid (accuracy of the sign, pooled over the folds;
ties to the later value, the public code's ``>=``), the folds a permutation drawn from
``random_state``; the held-out predictions take a second pass over the rows. Readings
left open by the paper are parameters: ``lambda_times_n`` (n lambda as in Eq. (8), or
lambda as in the code) and ``center`` (fit y - mean(y), as the code does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from kernelbench.errors import KernelbenchError
from kernelbench.features.lev_rff import gram_upper, symmetrize_upper
from kernelbench.learners import check_grid
from kernelbench.validation import check_int, check_random_state

#: Rows turned into features at once (memory O(chunk_rows * s)).
CHUNK_ROWS = 4096

Transform = Callable[[np.ndarray], np.ndarray]


def _identity(X: np.ndarray) -> np.ndarray:
    return X


def check_lambdas(lambdas: Any) -> tuple[float, ...]:
    """A non-empty grid of positive finite lambdas."""
    return check_grid("lambdas", lambdas)


def sign_labels(pred: np.ndarray) -> np.ndarray:
    """+1 where pred >= 0, else -1."""
    return np.where(pred >= 0, 1.0, -1.0)


class ChunkedRidge:
    """Ridge regression on features streamed in row chunks (module docstring).

    ``fit(X, y, transform)``: ``transform`` maps rows of X to features (default: none).
    Attributes after fit: ``lambda_``, ``coef_`` (s), ``intercept_`` (mean of y if
    ``center``, else 0), ``cv_accuracy_`` (per grid value; empty without CV),
    ``n_features_``, ``accumulator_bytes_`` (of Z^T Z), ``transform_seconds_`` (in the
    first pass's ``transform``, then also in the predictions') and ``solve_seconds_``.
    """

    def __init__(
        self,
        lambdas: Sequence[float] | float = (0.05, 0.1, 0.5, 1.0),
        cv_folds: int = 5,
        lambda_times_n: bool = True,
        center: bool = False,
        chunk_rows: int = CHUNK_ROWS,
        random_state: Any = None,
    ) -> None:
        self.lambdas = lambdas
        self.cv_folds = cv_folds
        self.lambda_times_n = lambda_times_n
        self.center = center
        self.chunk_rows = chunk_rows
        self.random_state = random_state

    def _penalty(self, lam: float, n_rows: int) -> float:
        return lam * n_rows if self.lambda_times_n else lam

    def _solve(self, G: np.ndarray, b: np.ndarray, zsum: np.ndarray, ysum: float, n: int, lam):
        """(beta, intercept) of the fit on rows with Gram G, Z^T y = b, column sums zsum."""
        mean = ysum / n if self.center else 0.0
        rhs = b - mean * zsum if self.center else b
        # Fortran order, factored in place: LAPACK's layout, so no transposing copy
        # inside ``potrf``'s wrapper (2-3x the factorisation's time at s = 3584)
        A = np.array(G, order="F", copy=True)
        A[np.diag_indices_from(A)] += self._penalty(lam, n)
        try:
            factor = cho_factor(A, lower=False, check_finite=False, overwrite_a=True)
            beta = cho_solve(factor, rhs, check_finite=False)  # the factor: finite, just made
        except LinAlgError:  # pragma: no cover - lambda > 0 keeps A positive definite
            A = np.array(G, order="F", copy=True)
            A[np.diag_indices_from(A)] += self._penalty(lam, n)
            beta = np.linalg.solve(symmetrize_upper(A), rhs)
        return beta, mean

    def _features(self, transform: Transform, rows: np.ndarray) -> np.ndarray:
        """``transform(rows)`` as float64, its seconds added to ``transform_seconds_``."""
        t0 = time.perf_counter()
        Z = np.asarray(transform(rows), dtype=np.float64)
        self.transform_seconds_ += time.perf_counter() - t0
        return Z

    def _chunks(self, n: int):
        step = check_int("chunk_rows", self.chunk_rows, 1)
        for start in range(0, n, step):
            yield slice(start, min(n, start + step))

    def fit(self, X: Any, y: Any, transform: Transform | None = None) -> ChunkedRidge:
        """Choose lambda by k-fold CV, then solve on all rows (two or three passes)."""
        transform = transform or _identity
        grid = check_lambdas(self.lambdas)
        k = check_int("cv_folds", self.cv_folds, 1)
        y = np.asarray(y, dtype=np.float64)
        n = len(y)
        if np.ndim(y) != 1 or len(X) != n:
            raise KernelbenchError(f"X has {len(X)} rows but y has shape {np.shape(y)}")
        do_cv = k > 1 and len(grid) > 1
        if do_cv and n < k:
            raise KernelbenchError(f"{k}-fold cross-validation needs >= {k} rows, got {n}")
        folds = (
            check_random_state(self.random_state).permutation(n) % k
            if do_cv
            else np.zeros(n, dtype=np.int64)
        )
        n_parts = k if do_cv else 1
        G = b = zs = None
        ys = np.zeros(n_parts)
        counts = np.bincount(folds, minlength=n_parts)
        self.transform_seconds_ = 0.0
        for sl in self._chunks(n):
            Z = self._features(transform, X[sl])
            if G is None:
                s = Z.shape[1]
                G = [np.zeros((s, s), order="F") for _ in range(n_parts)]
                b = np.zeros((n_parts, s))
                zs = np.zeros((n_parts, s))
            f, yy = folds[sl], y[sl]
            for j in range(n_parts):
                rows = f == j
                if not rows.any():
                    continue
                Zj = Z[rows] if n_parts > 1 else Z
                yj = yy[rows] if n_parts > 1 else yy
                gram_upper(Zj, out=G[j])
                b[j] += yj @ Zj
                zs[j] += Zj.sum(axis=0)
                ys[j] += yj.sum()
        assert G is not None and b is not None and zs is not None
        self.n_features_ = G[0].shape[1]
        self.accumulator_bytes_ = int(sum(g.nbytes for g in G))
        t0 = time.perf_counter()
        Gt = G[0].copy(order="F")  # = np.sum(G, axis=0) bit for bit, without a k s^2 stack
        for g in G[1:]:
            Gt += g
        bt, zt, yt = b.sum(axis=0), zs.sum(axis=0), float(ys.sum())
        if do_cv:
            self.cv_accuracy_ = self._cross_validate(
                X, y, transform, folds, G, b, zs, ys, counts, Gt, bt, zt, yt, grid
            )
            best = max(range(len(grid)), key=lambda i: (self.cv_accuracy_[i], i))
            self.lambda_ = grid[best]
        else:
            self.cv_accuracy_ = np.zeros(0)
            self.lambda_ = grid[-1] if len(grid) > 1 else grid[0]
        del G, b, zs
        self.coef_, self.intercept_ = self._solve(Gt, bt, zt, yt, n, self.lambda_)
        self.solve_seconds_ = time.perf_counter() - t0
        return self

    def _cross_validate(self, X, y, transform, folds, G, b, zs, ys, counts, Gt, bt, zt, yt, grid):
        k = len(G)
        # coefs[j] : s x len(grid) solutions of the fit without fold j
        coefs = np.empty((k, self.n_features_, len(grid)))
        means = np.empty((k, len(grid)))
        for j in range(k):
            Gj = Gt - G[j]
            for i, lam in enumerate(grid):
                coefs[j, :, i], means[j, i] = self._solve(
                    Gj, bt - b[j], zt - zs[j], yt - ys[j], int(counts.sum() - counts[j]), lam
                )
        correct = np.zeros(len(grid))
        for sl in self._chunks(len(y)):
            Z = np.asarray(transform(X[sl]), dtype=np.float64)
            f, yy = folds[sl], y[sl]
            for j in range(k):
                rows = f == j
                if rows.any():
                    pred = Z[rows] @ coefs[j] + means[j]
                    correct += (sign_labels(pred) == yy[rows][:, None]).sum(axis=0)
        return correct / len(y)

    def decision_function(self, X: Any, transform: Transform | None = None) -> np.ndarray:
        """f(x) = z(x)^T beta + intercept, computed in row chunks."""
        transform = transform or _identity
        out = np.empty(len(X))
        for sl in self._chunks(len(X)):
            out[sl] = self._features(transform, X[sl]) @ self.coef_
        return out + self.intercept_

    def predict(self, X: Any, transform: Transform | None = None) -> np.ndarray:
        """sign(f(x)) in {-1, +1}."""
        return sign_labels(self.decision_function(X, transform))

    def score(self, X: Any, y: Any, transform: Transform | None = None) -> float:
        """Accuracy of :meth:`predict` on labels +-1."""
        return float(np.mean(self.predict(X, transform) == np.asarray(y)))
