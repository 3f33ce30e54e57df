"""``krr``: kernel ridge regression accuracy (Liu et al. 2020, Table 3 and Figure 1).

The dataset's ``liu2020`` recipe gives a train/test split (cod-RNA its given partition,
the others random halves; features min-max scaled to [0, 1]), labels +-1. Per run a
fresh map with s = ``n`` x d frequencies (the cell's n is s/d; block-structured maps
truncate their last block, the row's ``s`` is the map's D) is fitted on the training
rows (with labels: ``lev_rff``, ``slw_rff``), and a KRR classifier
(:class:`kernelbench.learners.ridge.ChunkedRidge`, Eq. (7)-(8)) chooses lambda by
inner k-fold cross-validation:

    accuracy_pct    = 100 * mean(sign(z(x)^T beta) == y) on the test rows,
    feature_seconds = fit_seconds + transform_seconds (train and test rows),
    rel_spec_error  = ||K - K_hat||_2 / ||K||_2 on ``spectral_points`` training rows
                      (Fig. 1(a)), K_hat = Z Z^T + constant_.

The ridge sees the features z(x) only (sr33's constant_ is not a feature). Settings:
:class:`KRRSettings` (the readings the paper leaves open: docs/liu2020.md). Reporting
side: :mod:`kernelbench.outputs.papers.liu2020` (``liu_table3``, ``liu_fig1``).
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.metrics import spectral_norm
from kernelbench.protocols import Figure, Metric, Protocol, common
from kernelbench.results import dumps
from kernelbench.seeding import derive_rng
from kernelbench.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from kernelbench.cell import Cell
    from kernelbench.cost import Work

#: Dataset names of the paper's Table 3 -> kernelbench dataset ids.
PAPER_DATASETS = {"EEG": "eeg", "cod-RNA": "codrna", "covtype": "covtype", "magic04": "magic04"}
#: Methods whose fit computes leverage scores of the features first (priced: one more
#: pass over the train rows, Gram and factorisation).
LEVERAGE = ("lev_rff", "slw_rff")
#: Of those, the ones whose scores need the pass's Gram and a factorisation (lev_rff's
#: ridge leverage); slw_rff's are y^T Z, the cos/sin of the pass alone.
GRAM_SCORES = ("lev_rff",)
#: Kernel width conventions: gamma of exp(-gamma |x - x'|^2) for a given sigma.
WIDTHS = ("sigma2", "2sigma2")
#: How lev_rff and slw_rff use their scores (kernelbench.features.lev_rff.MODES).
SAMPLERS = ("reweight", "resample")
#: The readings of Table 3's setup (docs/liu2020.md): the value of each setting the
#: paper's text and the authors' public MATLAB code read differently. A setting left
#: null in the cell takes its reading's value; this table is the one place of these
#: defaults. ``code`` reproduces Table 3 (measured); ``paper`` is Algorithm 1 and
#: Sec. 5 as printed.
READINGS: dict[str, dict[str, Any]] = {
    "code": {
        "row_scaling": True,  # mapminmax on the n x d matrix: each row to [-1, 1]
        "sampler": "reweight",  # SERLSRFF.m / leverageRFF.m: all 2s columns re-weighted
        "shared_draw": True,  # W (and b) shared by rff, lev_rff, slw_rff of a repetition
        "center_labels": True,  # beta on y - mean(y), mean added back
        "cv_folds": 3,  # automaticParameterSelectionlambda.m resets 5 to 3
        "split_per_run": True,  # a fresh random half in every repetition
    },
    "paper": {
        "row_scaling": False,  # every feature to [0, 1] (the dataset's own scaling)
        "sampler": "resample",  # Algorithm 1: multinomial re-sampling, sqrt(p/q) weights
        "shared_draw": False,
        "center_labels": False,
        "cv_folds": 5,
        "split_per_run": False,
    },
}


@dataclass(frozen=True)
class KRRData:
    """What every run of a cell shares: the split (labels +-1) and the spectral subset."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    provenance: dict[str, Any]
    X_spec: np.ndarray
    K_spec: np.ndarray | None
    spec_norm: float


def binary_labels(y: np.ndarray, dataset: str) -> tuple[np.ndarray, list]:
    """Labels as -1/+1 (the larger class value is +1); one line if not two classes."""
    classes = np.unique(y)
    if len(classes) != 2:
        from kernelbench.config import group_options

        ok = [n for n in group_options("dataset") if _has_liu_data(n)]
        kind = f"{len(classes)} distinct label values"
        raise KernelbenchError(
            f"protocol 'krr' needs binary class labels; dataset {dataset!r} has {kind}; "
            f"valid datasets: {', '.join(ok)}"
        )
    return np.where(y == classes[1], 1.0, -1.0), classes.tolist()


def _has_liu_data(name: str) -> bool:
    from kernelbench.datasets import dataset_config
    from kernelbench.datasets.splits import recipes

    try:
        return "liu2020" in recipes(dataset_config(name))
    except KernelbenchError:
        return False


def _split(split_key: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
    """:func:`.common.split_cached` with labels -1/+1 (:func:`binary_labels`)."""
    Xtr, ytr, Xte, yte, prov = common.split_cached(*split_key)
    ytr, classes = binary_labels(ytr, json.loads(split_key[0])["name"])
    return Xtr, ytr, Xte, np.where(yte == classes[1], 1.0, -1.0), prov


@lru_cache(maxsize=4)
def _spectral_cached(split_key: tuple, points: int, seed: int, gamma: float) -> tuple:
    from kernelbench.kernels import exact_kernel

    X = common.split_cached(*split_key)[0]
    if points <= 0:
        return np.zeros((0, X.shape[1])), None, float("nan")
    name = json.loads(split_key[0])["name"]
    idx = np.sort(derive_rng(seed, "spectral", name).choice(len(X), min(points, len(X)), False))
    Xs = X[idx]
    Xs, K = common.read_only(Xs, exact_kernel("rbf", Xs, gamma=gamma))
    return Xs, K, spectral_norm(K)


@dataclass
class KRRSettings(ProtocolSettings):
    """Settings of ``krr`` (Liu et al. 2020, Table 3 and Fig. 1).

    ``reading`` (docs/liu2020.md): ``code`` is what the authors' public MATLAB code does
    and reproduces Table 3; ``paper`` is Algorithm 1 and Sec. 5 as printed. It sets the
    six settings of :data:`READINGS` that are null (row_scaling, sampler, shared_draw,
    center_labels, cv_folds, split_per_run); set one to override it. ``sigma`` and
    ``width``: the Gaussian kernel, sigma2 = exp(-|x-x'|^2 / sigma^2) (the paper's text)
    or 2sigma2 = exp(-|x-x'|^2 / (2 sigma^2)). ``lambda_times_n``: (Z^T Z + n lambda I)
    as in Eq. (8), or (Z^T Z + lambda I) as in the code (with n lambda every grid value
    over-regularises). ``lambdas``: the grid of the k-fold inner cross-validation
    (Sec. 5.1). ``chunk_rows``: rows mapped at once (memory O(k s^2 + chunk_rows s)).
    ``spectral_points``: Fig. 1(a)'s relative spectral error on this many random
    training rows (0: skip).
    """

    name: str = "krr"
    data: str | None = "liu2020"
    reading: str = "code"
    row_scaling: bool | None = None
    sampler: str | None = None
    shared_draw: bool | None = None
    center_labels: bool | None = None
    cv_folds: int | None = None
    split_per_run: bool | None = None
    sigma: float = 1.0
    width: str = "sigma2"
    lambda_times_n: bool = False
    lambdas: list[float] = field(default_factory=lambda: [0.05, 0.1, 0.5, 1.0])
    chunk_rows: int = 4096
    spectral_points: int = 1000
    runs: int | None = 10


class KRR(Protocol[KRRSettings]):
    """KRR test accuracy and feature time versus s = (s/d) d (Liu et al. 2020, Table 3)."""

    name = "krr"
    Settings = KRRSettings
    columns = (
        ("s", pa.int64()),
        ("train_rows", pa.int64()),
        ("test_rows", pa.int64()),
        ("accuracy_pct", pa.float64()),
        ("lambda_", pa.float64()),
        ("cv_accuracy_pct", pa.float64()),
        ("feature_seconds", pa.float64()),
        ("train_seconds", pa.float64()),
        ("predict_seconds", pa.float64()),
        ("peak_memory_mb", pa.float64()),
        ("rel_spec_error", pa.float64()),
    )
    budget = "d"  # the cell's n is s/d: D = s = n d frequencies

    def read_reference(self, table: pd.DataFrame) -> pd.DataFrame:
        """Liu et al.'s Table 3 (dataset, s_over_d, method, accuracy_pct_mean/std) as
        cells: dataset ids, kernel rbf, n = s/d, mean/std in percent, 10 runs."""
        import pandas as pd

        if "accuracy_pct_mean" not in table.columns:
            return table
        return pd.DataFrame(
            {
                "dataset": table["dataset"].map(lambda v: PAPER_DATASETS.get(v, str(v).lower())),
                "kernel": "rbf",
                "method": table["method"],
                "n": table["s_over_d"].astype(float),
                "mean": table["accuracy_pct_mean"].astype(float),
                "std": table["accuracy_pct_std"].astype(float),
                "runs": table["runs"] if "runs" in table else 10,
                "feature_time_mean": table.get("feature_time_s_mean"),
            }
        )

    # -- settings ------------------------------------------------------------------
    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Validate, fill what the cell leaves out from :class:`KRRSettings` and the
        reading's values for the settings left null (:data:`READINGS`): resolved once,
        when the cell is built."""
        from kernelbench.learners.ridge import check_lambdas
        from kernelbench.validation import check_choice, check_int

        out = super().check_settings(settings)
        reading = check_choice("reading", out["reading"], tuple(READINGS))
        for key, value in READINGS[reading].items():
            if out[key] is None:
                out[key] = value
        check_choice("width", out["width"], WIDTHS)
        check_choice("sampler", out["sampler"], SAMPLERS)
        if not out["sigma"] > 0:  # a float (OmegaConf)
            raise KernelbenchError(f"sigma must be a number > 0, got {out['sigma']!r}")
        check_lambdas(out["lambdas"])
        check_int("cv_folds", out["cv_folds"], 1)
        check_int("chunk_rows", out["chunk_rows"], 1)
        check_int("spectral_points", out["spectral_points"], 0)
        return out

    metrics = {
        "accuracy": Metric("accuracy_pct", "test accuracy (%)", short="acc"),
        "time": Metric("feature_seconds", "feature time (s)", short="feat_s"),
        "spec": Metric("rel_spec_error", r"$\|K - ZZ^\top\|_2 \,/\, \|K\|_2$", short="rel_spec"),
    }
    headline = "accuracy"
    figures = (
        Figure(
            "liu_table3",
            "Liu et al. 2020 Table 3: KRR accuracy and feature time, ours beside the paper's",
            "kernelbench.outputs.papers.liu2020:draw_table3",
            metrics=("accuracy",),
        ),
        Figure(
            "liu_fig1",
            "Liu et al. 2020 Fig. 1: spectral error, accuracy and feature time vs s/d",
            "kernelbench.outputs.papers.liu2020:draw_fig1",
            metrics=("spec", "accuracy", "time"),
        ),
    )

    def gamma(self, cell: Cell) -> float:
        """gamma of exp(-gamma |x - x'|^2): 1/sigma^2 (``sigma2``) or 1/(2 sigma^2)."""
        p = self._opts(cell)
        sigma = float(p.sigma)
        return 1.0 / (sigma**2 if p.width == "sigma2" else 2.0 * sigma**2)

    # -- measurement ---------------------------------------------------------------
    def skip(self, cell: Cell) -> str | None:
        """A kernel other than rbf; every map, with labels (lev_rff, slw_rff) too."""
        if cell.kernel["name"] != "rbf":
            return str(choices_error("kernel of protocol 'krr'", cell.kernel["name"], ["rbf"]))
        self.feature_map(cell, random_state=None)
        return None

    def price(self, cell: Cell) -> Work:
        """Per run: the train rows mapped for the fit and the CV pass (leverage-score maps,
        :data:`LEVERAGE`, once more), the test rows and the spectral check's points; the
        fold Grams (N F^2 flops), k L + 1 Cholesky factorisations of F x F (k folds, L
        lambdas; :data:`GRAM_SCORES` one more Gram and factorisation) and the spectral
        norm on ``spectral_points`` rows, whose exact kernel is computed once."""
        from kernelbench.cost import (
            SPECTRAL_STEPS,
            Work,
            data_shape,
            features,
            make_shapes,
            split_rows,
        )

        rows, train, d = data_shape(cell)
        N, M = split_rows(cell, rows, train)
        s = make_shapes(cell, N, M, d, rows * d, common.map_n(cell, d))
        R, F, opts = s.runs, features(cell, s), cell.settings
        P, L = float(opts.get("spectral_points", 0)), len(opts.get("lambdas") or [1.0])
        folds = int(opts.get("cv_folds") or 1) if L > 1 else 1
        lev = cell.method.get("name") in LEVERAGE  # one more pass over the train rows
        gram = cell.method.get("name") in GRAM_SCORES  # and its Gram and factorisation
        mapped = float(N + M)
        mapped += N * (2 if lev else 1) + P
        terms = {
            "gemm": R * ((1 + gram) * N * F * F + 2.0 * N * F * L + 2.0 * P * P * F),
            "chol": R * (folds * L * (folds > 1) + 1 + gram) * F**3 / 3,
            "spectral": R * 4.0 * SPECTRAL_STEPS * P * P,
        }
        once = {"exact": 2.0 * P * P * s.d + 4.0 * SPECTRAL_STEPS * P * P}
        return Work(s, terms, once, mapped=mapped, calls=3)

    def _split_key(self, cell: Cell, repeat: int | None = None) -> tuple:
        """The cache key of a split: the dataset with the reading's scaling, and the
        repetition when every run draws its own random half (``split_per_run``)."""
        from kernelbench.datasets.splits import recipes

        key, data = cell.data_key, cell.data_settings
        dataset = dict(cell.dataset)
        if self._opts(cell).row_scaling:
            dataset["splits"] = {**recipes(dataset), key: {**data, "scaling": "row_minmax"}}
        if not (self._opts(cell).split_per_run and data.get("test") == "half"):
            repeat = None
        seed = int(cell.seed)
        return (dumps(dataset), key, seed, dumps(cell.data), repeat)

    def prepare(self, cell: Cell) -> KRRData:
        split_key = self._split_key(cell)
        points = int(self._opts(cell).spectral_points)
        spectral = _spectral_cached(split_key, points, int(cell.seed), self.gamma(cell))
        return KRRData(*_split(split_key), *spectral)

    def run_split(self, cell: Cell, ctx: KRRData, run: int) -> KRRData:
        """The run's split: its own random half under ``split_per_run`` (the spectral
        subset stays the one of the seed's split), else the cell's."""
        split_key = self._split_key(cell, run)
        if split_key[-1] is None:
            return ctx
        return KRRData(*_split(split_key), ctx.X_spec, ctx.K_spec, ctx.spec_norm)

    def run_rng(self, cell: Cell, run: int) -> np.random.Generator:
        """The run's Generator; under ``shared_draw`` the maps of one draw family (rff,
        lev_rff, slw_rff) take the family's stream, so they draw the same W."""
        family = self._method_class(cell).draw_family
        if self._opts(cell).shared_draw and family:
            cell = replace(cell, method={**cell.method, "label": family})
        return common.run_rng(cell, run)

    @staticmethod
    def _method_class(cell: Cell) -> Any:
        from kernelbench.features import FEATURE_MAPS

        return FEATURE_MAPS.get(cell.method["name"])

    def feature_map(self, cell: Cell, random_state: Any, d: int | None = None) -> Any:
        """The cell's map, gamma from ``sigma``; maps with a ``mode`` (lev_rff, slw_rff)
        get the ``sampler`` unless the method's parameters set it."""
        cls = self._method_class(cell)
        if "mode" in cls._get_param_names() and "mode" not in cell.method["params"]:
            params = {**cell.method["params"], "mode": self._opts(cell).sampler}
            cell = replace(cell, method={**cell.method, "params": params})
        params = {**cell.kernel["params"], "gamma": self.gamma(cell)}
        return common.feature_map(cell, random_state, d, params)

    def cell_columns(self, cell: Cell, ctx: KRRData) -> dict[str, Any]:
        rows = {"train_rows": len(ctx.y_train), "test_rows": len(ctx.y_test)}
        return common.data_columns(ctx.X_train.shape[1], ctx.provenance, **rows)

    def learner(self, cell: Cell, run: int):
        """The KRR classifier of a run; its folds depend on (seed, dataset, run) only, so
        every method of a run is cross-validated on the same folds."""
        from kernelbench.learners.ridge import ChunkedRidge

        p = self._opts(cell)
        return ChunkedRidge(
            lambdas=p.lambdas,
            cv_folds=int(cast(int, p.cv_folds)),  # filled by the reading
            lambda_times_n=bool(p.lambda_times_n),
            center=bool(p.center_labels),
            chunk_rows=int(p.chunk_rows),
            random_state=derive_rng(cell.seed, "krr-cv", cell.dataset["name"], run),
        )

    def run(self, cell: Cell, ctx: KRRData, run: int) -> list[dict]:
        ctx = self.run_split(cell, ctx, run)
        fm = self.feature_map(cell, self.run_rng(cell, run), d=ctx.X_train.shape[1])
        krr = self.learner(cell, run)
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            _, row = common.fit_transform(fm, ctx.X_train, y=ctx.y_train)
            t1 = time.perf_counter()
            krr.fit(ctx.X_train, ctx.y_train, fm.transform)
            t2 = time.perf_counter()
            train_transform_s = krr.transform_seconds_
            acc = krr.score(ctx.X_test, ctx.y_test, fm.transform)
            t3 = time.perf_counter()
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            if not tracing:
                tracemalloc.stop()
        spec = float("nan")
        if ctx.K_spec is not None:
            spec = spectral_norm(ctx.K_spec - fm.approximate_kernel(ctx.X_spec)) / ctx.spec_norm
        transform_s = krr.transform_seconds_  # the train and the test rows
        best = krr.cv_accuracy_.max() * 100 if krr.cv_accuracy_.size else float("nan")
        row |= {
            "s": row["D"],
            "accuracy_pct": 100.0 * acc,
            "lambda_": float(krr.lambda_),
            "cv_accuracy_pct": float(best),
            "transform_seconds": transform_s,
            "feature_seconds": row["fit_seconds"] + transform_s,
            "train_seconds": (t2 - t1) - train_transform_s,
            "predict_seconds": (t3 - t2) - (transform_s - train_transform_s),
            "peak_memory_mb": peak / 2**20,
            "rel_spec_error": spec,
        }
        return [row]
