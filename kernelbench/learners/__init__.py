"""Downstream learners on random features (layer 2): one module per learner.

Learners turn a fitted feature map into a prediction: on the approximate kernel
z(X) z(X')^T + constant (a precomputed-kernel SVM), or on the explicit features
(a linear model, or kernel ridge regression solved by chunked normal equations).

=============== ================================================================
id              model
=============== ================================================================
svm_precomputed SVC / SVR on K_hat = z(X) z(X')^T + constant_, default C
                (Munkhoeva et al. 2018, Sec. 4.3, Fig. 2)
linear          ridge on the explicit features with an unpenalised intercept
                (ridge classifier on +-1 targets for classes), its penalty
                chosen by exact leave-one-out cross-validation
=============== ================================================================

Every learner fits two ways, so the exact kernel gives a ceiling for the same
model: :meth:`Learner.fit` on explicit features Z = z(X) (plus the map's f(0)
term ``constant_``), and :meth:`Learner.fit_exact` on the exact kernel k.

How the f(0) term enters. A feature map estimates k(x, y) by z(x).z(y) + c, with
c = ``constant_`` (the f(0) term of the rule, weight 1 - sum_j d/((d+1) rho_j^2) in
Munkhoeva et al. Sec. 2.3, Eq. (5); negative for an sr33 rule with small radii).
Both learners here fit an unpenalised intercept b, and then c does not change the
fitted predictor:

* SVM: the dual has the constraint sum_i alpha_i y_i = 0 (SVR: sum_i (alpha_i -
  alpha_i^*) = 0), so adding c 11^T to the Gram matrix adds c (sum_i alpha_i
  y_i)^2 = 0 to the dual objective and c sum_i alpha_i y_i = 0 to every
  decision value: the same model for any c, negative included. ``svm_precomputed``
  adds c to K_hat anyway, as the paper's code did.
* ridge: with an unpenalised intercept the features are centred, and centring
  removes c 11^T from the Gram matrix (H (K + c 11^T) H = H K H, H = I - 11^T/N);
  so ``linear`` ignores c, and gives exactly the kernel ridge regression (with
  intercept) on K_hat, for any sign of c. A constant feature sqrt(c) could carry
  only c >= 0, and would be penalised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.registry import Registry

#: Tasks a dataset can have, and the score each is measured by (on the test rows).
TASKS: tuple[str, ...] = ("classification", "regression")
#: ``rel_error`` = ||y_hat - y||_2 / ||y||_2 (Yang et al. 2014, Tables 1-2) is the one
#: where lower is better (:data:`LOWER_IS_BETTER`).
TASK_METRICS: dict[str, tuple[str, ...]] = {
    "classification": ("accuracy",),
    "regression": ("r2", "rel_error"),
}
#: Metrics where a lower score is better (errors rather than accuracies).
LOWER_IS_BETTER: frozenset[str] = frozenset({"rel_error"})

#: k(A, B) -> the exact Gram matrix (len(A) x len(B)).
KernelFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Fitted:
    """A fitted learner: ``predict(rows)`` on test rows (features Z or inputs X), and
    what it chose (e.g. the ridge penalty ``alpha``)."""

    predict: Callable[[np.ndarray], np.ndarray]
    info: dict[str, float] = field(default_factory=dict)


class Learner:
    """Base class: parameters in ``__init__``; :meth:`fit` on explicit features,
    :meth:`fit_exact` on the exact kernel (the ceiling of the same model)."""

    #: registry id
    name: ClassVar[str] = ""
    #: one line for tables and ``--help``
    summary: ClassVar[str] = ""

    def params(self) -> dict[str, Any]:
        """The learner's parameters (recorded with its results)."""
        return {}

    def fit(self, Z: np.ndarray, y: np.ndarray, task: str, constant: float = 0.0) -> Fitted:
        """Fit on features Z = z(X) with k_hat(x, y) = z(x).z(y) + constant."""
        raise NotImplementedError

    def fit_exact(self, kernel: KernelFn, X: np.ndarray, y: np.ndarray, task: str) -> Fitted:
        """Fit on the exact kernel k(X, X); the predictor takes test inputs."""
        raise NotImplementedError


#: Learners by id; each plug-in module registers its own (:mod:`kernelbench.plugins`).
LEARNERS: Registry[type[Learner]] = Registry("learner")


def check_task(task: str, metric: str | None = None) -> str:
    """The task's metric (``metric`` if given and valid for the task)."""
    if task not in TASK_METRICS:
        raise choices_error("task", task, TASKS)
    valid = TASK_METRICS[task]
    if metric is None:
        return valid[0]
    if metric not in valid:
        raise KernelbenchError(
            f"metric {metric!r} does not apply to a {task} dataset; valid choices: "
            + ", ".join(valid)
        )
    return metric


def make_learner(name: str, **params: Any) -> Learner:
    """A learner by id; unknown ids or parameters give one line naming the valid ones."""
    import inspect

    cls = LEARNERS.get(name)
    valid = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    bad = sorted(set(params) - set(valid))
    if bad:
        raise KernelbenchError(
            f"unknown parameter(s) {', '.join(bad)} for learner {name!r}; "
            f"valid: {', '.join(valid) or 'none'}"
        )
    return cls(**params)


def rel_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """||y_hat - y||_2 / ||y||_2, the regression error of Yang et al. 2014, Tables 1-2."""
    y = np.asarray(y_true, dtype=np.float64).ravel()
    diff = np.asarray(y_pred, dtype=np.float64).ravel() - y
    return float(np.linalg.norm(diff) / np.linalg.norm(y))


def score(metric: str, y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Test accuracy (fraction correct), the coefficient of determination R^2, or the
    relative error ||y_hat - y||_2 / ||y||_2 (Yang et al. 2014; lower is better)."""
    from sklearn.metrics import accuracy_score, r2_score

    if metric == "accuracy":
        return float(accuracy_score(y_true, y_pred))
    if metric == "r2":
        return float(r2_score(y_true, y_pred))
    if metric == "rel_error":
        return rel_error(y_true, y_pred)
    raise choices_error("metric", metric, ("accuracy", "r2", "rel_error"))


def predict_in_chunks(
    predict: Callable[[np.ndarray], np.ndarray], rows: np.ndarray, chunk_rows: int
) -> np.ndarray:
    """``predict`` applied to ``chunk_rows`` rows at a time (bounds the test Gram block)."""
    parts = [predict(rows[i : i + chunk_rows]) for i in range(0, len(rows), chunk_rows)]
    return np.concatenate(parts) if parts else np.empty(0)


__all__ = [
    "LEARNERS",
    "LOWER_IS_BETTER",
    "TASKS",
    "TASK_METRICS",
    "Fitted",
    "KernelFn",
    "Learner",
    "check_task",
    "make_learner",
    "predict_in_chunks",
    "rel_error",
    "score",
]
