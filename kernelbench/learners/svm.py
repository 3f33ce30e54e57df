"""``svm_precomputed``: an SVM on the approximate kernel (Munkhoeva et al. 2018, Sec. 4.3).

Fig. 2's learner: scikit-learn's SVC / SVR, ``kernel="precomputed"``, default C = 1,
on K_hat = z(X) z(X)^T + constant_ (the constant changes nothing, :mod:`kernelbench.
learners`; added as the paper's code did). Memory: the N x N training Gram matrix
(8 N^2 bytes: 0.8 GB for LETTER's 10000 rows) plus a ``chunk_rows`` x N test block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kernelbench.learners import LEARNERS, Fitted, KernelFn, Learner, check_task
from kernelbench.validation import check_int


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

    def _fit_gram(
        self, K: np.ndarray, y: np.ndarray, task: str, cross: Callable[[np.ndarray], np.ndarray]
    ) -> Fitted:
        from sklearn.svm import SVC, SVR

        check_task(task)
        model = (SVC if task == "classification" else SVR)(kernel="precomputed", C=self.C)
        model = model.fit(K, y)
        del K
        info = {"n_support": float(len(model.support_))}
        return self._fitted(lambda r: model.predict(cross(r)), info)

    def fit(self, Z: np.ndarray, y: np.ndarray, task: str, constant: float = 0.0) -> Fitted:
        Z = np.asarray(Z)
        c = Z.dtype.type(constant)

        def gram(rows: np.ndarray) -> np.ndarray:
            G = rows @ Z.T
            if constant != 0.0:
                G += c
            return G.astype(np.float64, copy=False)

        return self._fit_gram(gram(Z), y, task, gram)

    def fit_exact(self, kernel: KernelFn, X: np.ndarray, y: np.ndarray, task: str) -> Fitted:
        return self._fit_gram(kernel(X, X), y, task, lambda rows: kernel(rows, X))
