"""Downstream learners on random features (layer 2): one module per learner
(``svm_precomputed``, ``linear``; docs/downstream.md).

Each fits on features Z = z(X) (:meth:`Learner.fit`) and on the exact kernel
(:meth:`Learner.fit_exact`, the ceiling of the same model). The f(0) term c =
``constant_`` of a map (Munkhoeva et al. Sec. 2.3, Eq. (5)) changes neither fitted
predictor (docs/downstream.md): ``svm_precomputed`` adds it, ``linear`` ignores it.
"""

from __future__ import annotations

import math
import numbers
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
    """Base class: parameters in ``__init__`` (``chunk_rows``: test rows predicted at
    once); :meth:`fit` on explicit features, :meth:`fit_exact` on the exact kernel."""

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

    def _fitted(self, predict: Callable[[np.ndarray], np.ndarray], info: dict) -> Fitted:
        """``predict`` applied ``chunk_rows`` test rows at a time (bounds the Gram block)."""

        def in_chunks(rows: np.ndarray) -> np.ndarray:
            n = self.chunk_rows
            parts = [predict(rows[i : i + n]) for i in range(0, len(rows), n)]
            return np.concatenate(parts) if parts else np.empty(0)

        return Fitted(in_chunks, info)


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

    from kernelbench.validation import check_params

    cls = LEARNERS.get(name)
    valid = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    check_params(f"learner {name!r}", params, valid)
    return cls(**params)


def check_grid(name: str, values: Any) -> tuple[float, ...]:
    """A non-empty grid of positive finite numbers (a number is a grid of one)."""
    try:
        grid = tuple(float(v) for v in ([values] if isinstance(values, numbers.Real) else values))
    except (TypeError, ValueError):
        grid = ()
    if not grid or not all(math.isfinite(v) and v > 0 for v in grid):
        raise KernelbenchError(
            f"{name} must be positive numbers (a non-empty list), got {values!r}"
        )
    return grid


def rel_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """||y_hat - y||_2 / ||y||_2, the regression error of Yang et al. 2014, Tables 1-2."""
    y = np.asarray(y_true, dtype=np.float64).ravel()
    diff = np.asarray(y_pred, dtype=np.float64).ravel() - y
    return float(np.linalg.norm(diff) / np.linalg.norm(y))


def score(metric: str, y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Test accuracy (fraction correct), the coefficient of determination R^2, or the
    relative error ||y_hat - y||_2 / ||y||_2 (Yang et al. 2014; lower is better)."""
    from sklearn.metrics import accuracy_score, r2_score

    scorers = {"accuracy": accuracy_score, "r2": r2_score, "rel_error": rel_error}
    if metric not in scorers:
        raise choices_error("metric", metric, tuple(scorers))
    return float(scorers[metric](y_true, y_pred))


__all__ = [
    "LEARNERS",
    "LOWER_IS_BETTER",
    "TASKS",
    "TASK_METRICS",
    "Fitted",
    "KernelFn",
    "Learner",
    "check_grid",
    "check_task",
    "make_learner",
    "rel_error",
    "score",
]
