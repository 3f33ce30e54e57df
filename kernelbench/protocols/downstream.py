"""``downstream``: a learner on the features (Munkhoeva et al. 2018, Sec. 4.3, Fig. 2).

The dataset's ``downstream`` recipe gives the split (the train part of Fig. 1, the
test rows after it). Per run a fresh map (:func:`.common.run_rng`: the same for both
learners, paired comparisons) is fitted on the train part, both parts are mapped, and
the learner is trained on z(X_train) and scored on z(X_test):

    score = test accuracy (classification) or R^2 (regression)   [``metric``]
            or ||y_hat - y||_2 / ||y||_2 (``rel_error``, Yang et al. 2014, Tables 1-2)

The same learner on the exact kernel, ``exact_score``, is computed once per (dataset,
kernel, learner and parameters, metric, seed) and cached under
``<output_dir>/.exact/<hash>.json``. Settings: :class:`DownstreamSettings`. Reporting
side: :mod:`kernelbench.outputs.papers.munkhoeva2018` (figure ``fig2``).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import Figure, Metric, Protocol
from kernelbench.protocols.common import (
    data_columns,
    feature_map,
    fit_transform,
    kernel_params,
    map_n,
    run_rng,
    split_cached,
)
from kernelbench.results import SCHEMA_VERSION, atomic_write, dumps
from kernelbench.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work

#: Directory (under the output directory) of the cached exact-kernel scores.
EXACT_DIR = ".exact"
#: Exact-kernel scores computed in this process: hash -> (score, info).
_EXACT_MEMO: dict[str, tuple[float, dict[str, Any]]] = {}


def _read_exact(path: Path | None) -> float | None:
    """The cached exact score at ``path``; None if absent or unreadable (recomputed)."""
    if path is None or not path.is_file():
        return None
    try:
        return float(json.loads(path.read_text())["score"])
    except (OSError, ValueError, KeyError):
        return None


@contextmanager
def _exact_lock(path: Path | None) -> Iterator[None]:
    """An exclusive lock per exact score file (a lock file in the temporary folder,
    named by the file's absolute path): concurrent workers of one grid wait for the
    first one's ceiling instead of computing it again."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, at worst computed twice
        yield
        return
    if path is None:
        yield
        return
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    lock = Path(tempfile.gettempdir()) / f"kernelbench-exact-{name}.lock"
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Context:
    """What every run of a cell shares: the split, task, metric, learner and ceiling."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    task: str
    metric: str
    learner: Any
    exact_score: float
    provenance: dict[str, Any]


def exact_key(cell: Cell, proto: Downstream) -> tuple[str, dict[str, Any]]:
    """The hash (16 hex digits) and payload naming a cell's exact-kernel score."""
    payload = {
        "dataset": cell.dataset,  # the key of the exact score's cache
        "data": cell.data_key,
        "kernel": cell.kernel["name"],
        "kernel_params": cell.kernel["params"],
        "learner": proto.learner_name(cell),
        "learner_params": proto.learner(cell).params(),
        "metric": proto.metric_name(cell),
        "seed": cell.seed,
        "schema_version": SCHEMA_VERSION,
    }
    return hashlib.sha256(dumps(payload).encode()).hexdigest()[:16], payload


@dataclass
class DownstreamSettings(ProtocolSettings):
    """Settings of ``downstream`` (Munkhoeva et al. 2018, Fig. 2; Yang et al. 2014,
    Tables 1-2).

    ``data``: the recipe giving the split (train rows, test: rest, scaling fitted on the
    train part). ``learner``: svm_precomputed (the paper's: SVC/SVR on z(X) z(X')^T plus
    the f(0) term, default C) or linear (ridge / ridge classifier on z(X), alpha by
    leave-one-out CV), with ``learner_params`` ({}: its defaults). ``metric``: null for
    the dataset's task metric (accuracy or r2), or rel_error = ||y_hat - y|| / ||y||
    (Yang et al. 2014, Tables 1-2; lower is better). ``budget``: what the cell's n counts,
    n (D = 2 n (d + 1)) or s (Yang et al.: s = D points). ``exact``: also score the learner
    on the exact kernel (cached under <output_dir>/.exact/). ``runs``: when neither the
    cell nor the dataset gives them; the run-to-run std of the score is 0.1-1 %
    (docs/downstream.md), so 10 runs give a 95% band of +-0.7 std.
    """

    name: str = "downstream"
    data: str | None = "downstream"
    learner: str = "svm_precomputed"
    learner_params: dict[str, Any] = field(default_factory=dict)
    metric: str | None = None
    budget: str = "n"
    exact: bool = True
    runs: int | None = 10


class Downstream(Protocol[DownstreamSettings]):
    """Test accuracy / R^2 of a learner on the features, and its exact-kernel ceiling."""

    name = "downstream"
    Settings = DownstreamSettings
    columns = (
        ("learner", pa.string()),
        ("metric", pa.string()),
        ("train_rows", pa.int64()),
        ("test_rows", pa.int64()),
        ("score", pa.float64()),
        ("exact_score", pa.float64()),
        ("alpha", pa.float64()),
        ("train_seconds", pa.float64()),
        ("predict_seconds", pa.float64()),
    )
    keys = ("learner",)

    # -- settings ------------------------------------------------------------------
    def learner_name(self, cell: Cell) -> str:
        return str(self._opts(cell).learner)

    metrics = {"score": Metric("score", "test accuracy / $R^2$ / rel. error", short="score")}
    headline = "score"
    figures = (
        Figure(
            "fig2",
            "Munkhoeva Fig. 2: test accuracy / R^2 vs n (kernels x datasets), per learner",
            "kernelbench.outputs.papers.munkhoeva2018:draw_fig2",
            metrics=("score",),
        ),
    )

    def learner(self, cell: Cell) -> Any:
        """The cell's learner (one line naming the learners if unknown)."""
        from kernelbench.learners import make_learner

        return make_learner(self.learner_name(cell), **(self._opts(cell).learner_params or {}))

    def task(self, cell: Cell) -> str:
        from kernelbench.datasets import DATASETS

        return DATASETS.get(str(cell.dataset["name"])).task

    def metric_name(self, cell: Cell) -> str:
        """``metric`` (null: accuracy for classification, R^2 for regression)."""
        from kernelbench.learners import check_task

        task = self.task(cell)
        try:
            return check_task(task, self._opts(cell).metric)
        except KernelbenchError as err:
            raise KernelbenchError(f"dataset {cell.dataset['name']!r}: {err}") from None

    # -- measurement -----------------------------------------------------------------
    def skip(self, cell: Cell) -> str | None:
        if reason := super().skip(cell):
            return reason
        self.learner(cell)  # one line naming the learners, metrics if unknown
        self.metric_name(cell)
        return None

    def price(self, cell: Cell) -> Work:
        """Per run the learner on the features: svm_precomputed forms K_hat by syrk (about
        a GEMM's time) and libsvm fits on it (the test rows go through the primal
        weights: negligible), holding the N x N K_hat and a 2048-row test block; linear
        one Gram and eigendecomposition of the smaller side (p = min(N, F)). The exact
        kernel's score (``exact``) once."""
        from kernelbench.cost import Work, data_shape, features, make_shapes, split_rows

        rows, train, d = data_shape(cell)
        N, M = split_rows(cell, rows, train)
        s = make_shapes(cell, N, M, d, rows * d, map_n(cell, d))
        R, F, opts = s.runs, features(cell, s), cell.settings
        if opts.get("learner") == "linear":
            p = min(N, F)
            terms = {"gemm": R * (2.0 * N * p * max(N, F) + 2.0 * M * F), "eigh": R * p**3}
            once = {"exact": 2.0 * N * (N + M) * s.d, "eigh": float(N) ** 3}
        else:
            terms = {"gemm": R * 2.0 * N * N * F, "learn": R * float(N) * N}
            once = {"exact": 2.0 * N * (N + M) * s.d, "learn": float(N) * (N + M)}
        svm = N * (N + 2048) if opts.get("learner") == "svm_precomputed" else 0
        held = svm + (N + M) * s.F + s.F * s.F
        return Work(s, terms, once if opts.get("exact", True) else {}, held=held)

    def prepare(self, cell: Cell) -> Context:
        dataset_json, seed, data_json, key = cell.pair_key
        Xtr, ytr, Xte, yte, prov = split_cached(dataset_json, key, seed, data_json)
        task, metric = self.task(cell), self.metric_name(cell)
        ctx = Context(Xtr, ytr, Xte, yte, task, metric, self.learner(cell), float("nan"), prov)
        if self._opts(cell).exact:
            ctx = replace(ctx, exact_score=self.exact_score(cell, ctx))
        return ctx

    def exact_score(self, cell: Cell, ctx: Context) -> float:
        """The learner's test score on the exact kernel, from the cache or computed."""
        digest, payload = exact_key(cell, self)
        out = cell.output_dir
        path = Path(out) / EXACT_DIR / f"{digest}.json" if out else None
        cached = _read_exact(path)
        if cached is not None:
            return cached
        # workers of one output directory compute a ceiling once: the others wait for it
        with _exact_lock(path):
            cached = _read_exact(path) if digest not in _EXACT_MEMO else None
            if cached is not None:
                return cached
            if digest not in _EXACT_MEMO:
                _EXACT_MEMO[digest] = self._compute_exact(cell, ctx)
            value, info = _EXACT_MEMO[digest]
            if path is not None:
                text = json.dumps(
                    {**payload, **info, "score": value}, sort_keys=True, indent=1, default=str
                )
                atomic_write(path, lambda f: f.write(text.encode()))
        return value

    def _compute_exact(self, cell: Cell, ctx: Context) -> tuple[float, dict[str, Any]]:
        """The learner on the exact kernel: its test score and what it chose."""
        from kernelbench.kernels import exact_kernel
        from kernelbench.learners import score

        name, params = cell.kernel["name"], kernel_params(cell)

        def kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
            return exact_kernel(name, A, B, **params)

        t0 = time.perf_counter()
        fitted = self.learner(cell).fit_exact(kernel, ctx.X_train, ctx.y_train, ctx.task)
        value = score(ctx.metric, ctx.y_test, fitted.predict(ctx.X_test))
        return value, {"seconds": time.perf_counter() - t0, **fitted.info}

    def cell_columns(self, cell: Cell, ctx: Context) -> dict[str, Any]:
        rows = {"train_rows": len(ctx.X_train), "test_rows": len(ctx.X_test)}
        return data_columns(
            ctx.X_train.shape[1],
            ctx.provenance,
            metric=ctx.metric,
            exact_score=ctx.exact_score,
            **rows,
        )

    def run(self, cell: Cell, ctx: Context, run: int) -> list[dict]:
        from kernelbench.learners import score

        fm = feature_map(cell, run_rng(cell, run), d=ctx.X_train.shape[1])
        (Ztr, Zte), row = fit_transform(fm, ctx.X_train, ctx.X_train, ctx.X_test)
        t2 = time.perf_counter()
        fitted = ctx.learner.fit(Ztr, ctx.y_train, ctx.task, fm.constant_)
        t3 = time.perf_counter()
        pred = fitted.predict(Zte)
        t4 = time.perf_counter()
        return [
            {
                **row,
                "score": score(ctx.metric, ctx.y_test, pred),
                "alpha": float(fitted.info.get("alpha", np.nan)),
                "train_seconds": t3 - t2,
                "predict_seconds": t4 - t3,
            }
        ]
