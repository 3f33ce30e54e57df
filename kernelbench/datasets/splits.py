"""Data recipes ("splits") of a dataset for the protocols: the ``splits:`` entries of
``configs/dataset/<name>.yaml`` (:func:`recipes`), where every constant lives.

``kernel_approx``
    Munkhoeva et al. 2018, Fig. 1: two independent random subsets X, Y (``samples``
    rows each, without replacement) of the scaled train part, drawn from (seed,
    dataset) only. Yang et al. 2014, Sec. 6.1: ``same_subset: true`` (Y = X), ``pca:
    k`` (the top k principal axes of the centred part), ``part: test``.
``downstream`` / ``liu2020``
    A train/test split (``test``: ``rest`` after the train part, ``given`` test file,
    ``half`` random halves), scaled with parameters fitted on the train part
    (``scale_on: train``) or all rows (``all``).

Scalings: ``max`` (by the global maximum), ``standardize_max`` (standardise columns,
then ``max``), ``minmax`` (columns to [0, 1]), ``row_minmax`` (rows to [-1, 1]: MATLAB's
``mapminmax`` on an n x d matrix, as Liu et al. 2020's code does) and ``none``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from kernelbench.datasets.sources import Locations, load_dataset
from kernelbench.datasets.spec import Dataset
from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.seeding import derive_rng

SCALINGS = ("max", "standardize_max", "minmax", "row_minmax", "none")
PARTS = ("train", "test")
TEST_PARTS = ("rest", "given", "half")


def dataset_config(name: str) -> dict[str, Any]:
    """The dict of ``dataset/<name>.yaml`` on the config search path (kernelbench's
    ``configs/`` and the plug-ins' ``CONFIG_DIR``)."""
    from kernelbench.config import load_group

    return load_group("dataset", name)


def recipes(dataset_cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """A dataset entry's data recipes, one per data key (``splits``)."""
    return dataset_cfg.get("splits") or {}


def protocol_config(dataset_cfg: Mapping[str, Any], protocol: str) -> Mapping[str, Any]:
    """``dataset_cfg["splits"][protocol]``, or one line naming the recipes defined."""
    protocols = recipes(dataset_cfg)
    if protocol not in protocols:
        raise choices_error(
            f"protocol for dataset {dataset_cfg.get('name')!r}", protocol, protocols
        )
    return protocols[protocol]


class Scaler:
    """A scaling fitted once on a whole part: applied to some rows, it gives exactly those
    rows of the scaled part."""

    def __init__(self, kind: str, fit_rows: np.ndarray) -> None:
        if kind not in SCALINGS:
            raise choices_error("scaling", kind, SCALINGS)
        self.kind = kind
        self.shift: np.ndarray | float = 0.0
        self.scale: np.ndarray | float = 1.0
        if kind == "max":
            self.scale = float(np.max(fit_rows))
            self._check(self.scale)
        elif kind == "standardize_max":
            mean = np.mean(fit_rows, axis=0, dtype=np.float64)
            std = np.std(fit_rows, axis=0, dtype=np.float64)
            std[std == 0] = 1.0
            # the maximum of (x - mean) / std is reached at each column's maximum
            z_max = float(np.max((np.max(fit_rows, axis=0).astype(np.float64) - mean) / std))
            self.shift, self.scale = mean, std * z_max
            self._check(z_max)
        elif kind == "minmax":
            lo = np.min(fit_rows, axis=0).astype(np.float64)
            span = np.max(fit_rows, axis=0).astype(np.float64) - lo
            span[span == 0] = 1.0
            self.shift, self.scale = lo, span

    def _check(self, value: object) -> None:
        if not float(value) > 0:  # type: ignore[arg-type]
            raise KernelbenchError(f"cannot scale by the maximum: it is {value} (not positive)")

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The scaled ``rows`` as float64."""
        if self.kind == "row_minmax":
            return row_minmax(rows)
        return (np.asarray(rows, dtype=np.float64) - self.shift) / self.scale


def row_minmax(rows: np.ndarray) -> np.ndarray:
    """Each row to [-1, 1]: 2 (x - min) / (max - min) - 1 (MATLAB ``mapminmax`` on the
    rows); a constant row maps to -1, as mapminmax maps it to its lower bound."""
    X = np.asarray(rows, dtype=np.float64)
    lo = X.min(axis=1, keepdims=True)
    span = X.max(axis=1, keepdims=True) - lo
    span[span == 0] = np.inf
    return 2.0 * (X - lo) / span - 1.0


@dataclass
class TrainPart:
    """The unscaled train part of a dataset and the scaler fitted on it."""

    dataset: Dataset
    raw: np.ndarray
    y: np.ndarray
    scaler: Scaler

    @property
    def n_rows(self) -> int:
        return len(self.raw)

    def rows(self, index: np.ndarray) -> np.ndarray:
        """Scaled rows ``index`` of the train part (float64)."""
        return self.scaler(self.raw[index])

    def scaled(self) -> np.ndarray:
        """The whole scaled train part (float64)."""
        return self.scaler(self.raw)


def _test_file(ds: Dataset, why: str) -> tuple[np.ndarray, np.ndarray]:
    if ds.X_test is None or ds.y_test is None:
        raise KernelbenchError(f"dataset {ds.name!r} has no test file ({why})")
    return ds.X_test, ds.y_test


def _rows(ds: Dataset, concat_test: bool) -> tuple[np.ndarray, np.ndarray]:
    if not concat_test:
        return ds.X, ds.y
    X_test, y_test = _test_file(ds, "concat_test")
    return np.concatenate([ds.X, X_test]), np.concatenate([ds.y, y_test])


def _source(data_cfg: Mapping[str, Any] | None) -> tuple[str | None, str, bool]:
    """(mirror, cache, download) of a ``data`` config node (null: the environment)."""
    data_cfg = data_cfg or {}
    locs = Locations.resolve(data_cfg.get("mirror"), data_cfg.get("cache"))
    mirror = str(locs.mirror) if locs.mirror else None
    return mirror, str(locs.cache), bool(data_cfg.get("download", False))


def _first(n: int, rows: int | None, name: str) -> int:
    if rows is None:
        return n
    if not 0 < int(rows) <= n:
        raise KernelbenchError(f"dataset {name!r}: train_rows={rows} but only {n} rows are there")
    return int(rows)


@lru_cache(maxsize=8)
def _train_part(
    name: str,
    mirror: str | None,
    cache: str,
    download: bool,
    part: str,
    train_rows: int | None,
    concat_test: bool,
    scaling: str,
) -> TrainPart:
    if part not in PARTS:
        raise choices_error("part", part, PARTS)
    ds = load_dataset(name, mirror=mirror, cache=cache, download=download)
    X, y = _test_file(ds, "part: test") if part == "test" else _rows(ds, concat_test)
    n = _first(len(X), train_rows, name)
    raw, y = X[:n], y[:n]
    return TrainPart(dataset=ds, raw=raw, y=y, scaler=Scaler(scaling, raw))


def train_part(
    name: str, proto: Mapping[str, Any], data_cfg: Mapping[str, Any] | None = None
) -> TrainPart:
    """The train part of ``name`` under protocol settings ``proto``, cached per process."""
    return _train_part(
        name,
        *_source(data_cfg),
        str(proto.get("part", "train")),
        proto.get("train_rows"),
        bool(proto.get("concat_test", False)),
        str(proto.get("scaling", "none")),
    )


def clear_cache() -> None:
    """Forget the train parts loaded so far in this process."""
    _train_part.cache_clear()


def _provenance(ds: Dataset, **extra: Any) -> dict[str, Any]:
    return {
        "dataset": ds.name,
        "data_source": ds.source,
        "data_path": ds.path,
        "data_sha256": ds.sha256,
        "data_deviation": ds.deviation,
        "d": int(ds.X.shape[1]),
        **extra,
    }


def kernel_approx_pair(
    dataset_cfg: Mapping[str, Any],
    seed: int,
    data_cfg: Mapping[str, Any] | None = None,
    protocol: str = "kernel_approx",
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The two independent subsets X, Y (float64) of the Fig. 1 protocol and their
    provenance; drawn from (seed, dataset) only, so every method of a grid sees them."""
    name = str(dataset_cfg["name"])
    proto = protocol_config(dataset_cfg, protocol)
    part = train_part(name, proto, data_cfg)
    samples = int(proto["samples"])
    if not 0 < samples <= part.n_rows:
        raise KernelbenchError(
            f"dataset {name!r}: samples={samples} but the train part has {part.n_rows} rows"
        )
    rng = derive_rng(seed, "data", name)
    ix = rng.choice(part.n_rows, size=samples, replace=False)
    same = bool(proto.get("same_subset", False))
    iy = ix if same else rng.choice(part.n_rows, size=samples, replace=False)
    extra: dict[str, Any] = {}
    if same:
        extra["same_subset"] = True
    X, Y = part.rows(ix), part.rows(iy)
    k = proto.get("pca")
    if k is not None:
        mean, axes = pca_axes(part.scaled(), int(k), name)
        X = (X - mean) @ axes
        Y = X if same else (Y - mean) @ axes
        extra["pca"] = int(k)
    prov = _provenance(
        part.dataset,
        samples=samples,
        train_rows=part.n_rows,
        scaling=part.scaler.kind,
        **extra,
    )
    return X, Y, prov


def pca_axes(rows: np.ndarray, k: int, name: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(mean, d x k principal axes) of ``rows`` (Yang et al. 2014, Sec. 6.1: "250
    dimensions after PCA"): eigh of the covariance, each axis signed so that its
    largest-magnitude entry is positive (QMC maps are not invariant to sign flips)."""
    d = rows.shape[1]
    if not 0 < k <= d:
        raise KernelbenchError(f"dataset {name!r}: pca={k} but the data have d={d} features")
    mean = rows.mean(axis=0)
    centred = rows - mean
    _, vecs = np.linalg.eigh(centred.T @ centred)
    axes = vecs[:, ::-1][:, :k]
    signs = np.sign(axes[np.abs(axes).argmax(axis=0), np.arange(k)])
    return mean, np.ascontiguousarray(axes * signs)


@dataclass
class Split:
    """A scaled train/test split (float64 features) and its provenance."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    provenance: dict[str, Any]


def protocol_split(
    dataset_cfg: Mapping[str, Any],
    protocol: str,
    seed: int = 0,
    data_cfg: Mapping[str, Any] | None = None,
    repeat: int | None = None,
) -> Split:
    """The train/test split of a ``downstream`` or ``liu2020`` protocol (``half``: drawn
    from (seed, dataset) and ``repeat`` when given, a fresh half per repetition)."""
    name = str(dataset_cfg["name"])
    proto = protocol_config(dataset_cfg, protocol)
    ds = load_dataset(name, *_source(data_cfg))
    X, y = _rows(ds, bool(proto.get("concat_test", False)))
    test = str(proto.get("test", "rest"))
    if test == "rest":
        n = _first(len(X), proto.get("train_rows"), name)
        Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    elif test == "given":
        Xte, yte = _test_file(ds, f"protocol {protocol!r}")
        n = _first(len(X), proto.get("train_rows"), name)
        Xtr, ytr = X[:n], y[:n]
    elif test == "half":
        key = ("split", name) if repeat is None else ("split", name, int(repeat))
        perm = derive_rng(seed, *key).permutation(len(X))
        tr, te = np.sort(perm[: len(X) // 2]), np.sort(perm[len(X) // 2 :])
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    else:
        raise choices_error("test part", test, TEST_PARTS)
    if len(Xte) == 0:
        raise KernelbenchError(f"dataset {name!r}: protocol {protocol!r} leaves no test rows")
    scale_on = str(proto.get("scale_on", "train"))
    if scale_on not in ("train", "all"):
        raise choices_error("scale_on", scale_on, ["train", "all"])
    fit = Xtr if scale_on == "train" else np.concatenate([Xtr, Xte])
    scaler = Scaler(str(proto.get("scaling", "none")), fit)
    prov = _provenance(
        ds,
        protocol=protocol,
        train_rows=len(Xtr),
        test_rows=len(Xte),
        scaling=scaler.kind,
        split=test,
    )
    return Split(scaler(Xtr), ytr, scaler(Xte), yte, prov)
