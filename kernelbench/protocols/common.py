"""What protocols share to measure a cell: its runs' Generators and feature maps, the
kernel parameters (bandwidth rules resolved) and the sample pair of Munkhoeva et al.
2018, Fig. 1 with its exact kernel. Functions of a :class:`kernelbench.cell.Cell`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from kernelbench.errors import KernelbenchError
from kernelbench.results import dumps
from kernelbench.seeding import derive_rng

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Shapes
    from kernelbench.features import RandomFeatureMap

#: Most rows over which a bandwidth rule averages (the neighbours are all rows).
BANDWIDTH_QUERIES = 1000
#: Values of the ``budget`` setting (where a protocol allows it): what the cell's n
#: counts, ``n`` (Munkhoeva et al.: D = 2 n (d + 1)) or ``s`` (Yang et al. 2014: s = D).
BUDGETS: tuple[str, ...] = ("n", "s")


@lru_cache(maxsize=16)
def _bandwidth_gamma(dataset_json: str, seed: int, data_json: str, key: str, rule: str) -> float:
    from kernelbench.bandwidth import nn_sigma, parse_rule
    from kernelbench.datasets import train_part
    from kernelbench.datasets.splits import recipes

    dataset = json.loads(dataset_json)
    name = str(dataset["name"])
    X = train_part(name, recipes(dataset)[key], json.loads(data_json)).scaled()
    rng = derive_rng(seed, "bandwidth", name)
    k = parse_rule(rule)
    return nn_sigma(X, k=k, n_queries=min(BANDWIDTH_QUERIES, len(X)), random_state=rng).gamma


def read_only(*arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays C-contiguous and read-only: cached, every run of a cell shares them."""
    out = [np.ascontiguousarray(a) for a in arrays]
    for a in out:
        a.setflags(write=False)
    return out


@lru_cache(maxsize=4)
def kernel_approx_pair_cached(dataset_json: str, seed: int, data_json: str, key: str) -> tuple:
    """X, Y (read-only, C-contiguous float64) and the provenance of
    :func:`kernelbench.datasets.kernel_approx_pair`, cached per :attr:`Cell.pair_key`."""
    from kernelbench.datasets import kernel_approx_pair

    X, Y, prov = kernel_approx_pair(json.loads(dataset_json), seed, json.loads(data_json), key)
    return (*read_only(X, Y), dict(prov))


@lru_cache(maxsize=2)
def split_cached(
    dataset_json: str, key: str, seed: int, data_json: str, repeat: int | None = None
) -> tuple:
    """X_train, y_train, X_test, y_test (read-only, C-contiguous) and the provenance of
    :func:`kernelbench.datasets.protocol_split`, cached per split."""
    from kernelbench.datasets import protocol_split

    s = protocol_split(json.loads(dataset_json), key, seed, json.loads(data_json), repeat=repeat)
    return (*read_only(s.X_train, s.y_train, s.X_test, s.y_test), dict(s.provenance))


@lru_cache(maxsize=8)
def exact_kernel_cached(pair_key: tuple, kernel: str, kparams_json: str) -> tuple:
    """The read-only K = k(X, Y) of the pair ``pair_key``, its Frobenius and spectral norm."""
    from kernelbench.kernels import exact_kernel
    from kernelbench.metrics import spectral_norm

    X, Y, _ = kernel_approx_pair_cached(*pair_key)
    (K,) = read_only(exact_kernel(kernel, X, Y, **json.loads(kparams_json)))
    return K, float(np.linalg.norm(K)), spectral_norm(K)


@dataclass(frozen=True)
class Pair:
    """What every run of a cell on a sample pair shares (:func:`exact_pair`)."""

    X: np.ndarray
    Y: np.ndarray
    K: np.ndarray
    fro_K: float
    spec_K: float
    provenance: dict[str, Any]

    def columns(self) -> dict[str, Any]:
        """The cell columns: :func:`data_columns` and samples."""
        return data_columns(self.X.shape[1], self.provenance, samples=int(self.X.shape[0]))


def data_columns(d: int, provenance: Mapping[str, Any], **more: Any) -> dict[str, Any]:
    """The cell columns of a cell's data: d, its source and deviation note, and ``more``."""
    source, deviation = provenance.get("data_source"), provenance.get("data_deviation")
    return {"d": int(d), "data_source": source, "data_deviation": deviation, **more}


def exact_pair(cell: Cell) -> Pair:
    """The cell's samples X, Y and their exact kernel, cached per process; one line if
    the kernel is zero (relative errors undefined)."""
    X, Y, prov = kernel_approx_pair_cached(*cell.pair_key)
    params = dumps(kernel_params(cell))
    K, fro_K, spec_K = exact_kernel_cached(cell.pair_key, cell.kernel["name"], params)
    if fro_K == 0.0 or spec_K == 0.0:
        raise KernelbenchError(
            f"the exact kernel of {cell.dataset['name']!r} is zero; errors are undefined"
        )
    return Pair(X, Y, K, fro_K, spec_K, prov)


def pair_shapes(cell: Cell, pad: Callable[[int], int] | None = None) -> Shapes:
    """The :class:`~kernelbench.cost.Shapes` of the cell's sample pair (:func:`exact_pair`):
    two subsets of ``samples`` rows of its train part, d its columns (``pad``: the d the
    map sees instead, e.g. zero-padded), D from :func:`map_n` at that d."""
    from kernelbench.cost import data_shape, make_shapes, sample_rows

    rows, train, d = data_shape(cell)
    d = pad(d) if pad is not None else d
    N = sample_rows(cell, train)
    return make_shapes(cell, N, N, d, rows * d, map_n(cell, d))


def run_rng(cell: Cell, run: int) -> np.random.Generator:
    """Run ``run``'s Generator, from (seed, dataset, kernel, method label, n, run): a run
    draws the same map whatever the order, worker or protocol."""
    names = (cell.dataset["name"], cell.kernel["name"], cell.method["label"])
    return derive_rng(cell.seed, *names, cell.n, run)


def map_n(cell: Cell, d: int) -> float:
    """The feature map's n for the cell's budget (the ``budget`` setting, else the
    protocol's ``budget``): ``n``, the identity (D = 2 n (d + 1)); ``s`` (Yang et
    al. 2014, Tables 1-2: s = D points), n = s / (2 (d + 1)); ``d`` (D = n d)."""
    budget = getattr(cell.options, "budget", cell.protocol.budget)
    if budget == "s":
        return float(cell.n) / (2.0 * (d + 1))
    if budget == "d":
        return cell.n * d / (2.0 * (d + 1))
    return cell.n


def kernel_params(cell: Cell) -> dict[str, Any]:
    """The kernel parameters, a ``gamma`` rule ``nn<k>`` resolved (Yu et al. 2016, Sec. 3:
    sigma = the mean distance to the k-th nearest neighbour, gamma = 1 / (2 sigma^2)) on
    the cell's scaled train part, over :data:`BANDWIDTH_QUERIES` rows at most; cached."""
    params = dict(cell.kernel["params"])
    if isinstance(params.get("gamma"), str):
        params["gamma"] = _bandwidth_gamma(*cell.pair_key, params["gamma"])
    return params


def feature_map(
    cell: Cell, random_state: Any, d: int | None = None, params: dict | None = None
) -> RandomFeatureMap:
    """An unfitted map of the cell's method: n from :func:`map_n` for dimension ``d``
    (else the cell's), ``params`` the kernel's (default :func:`kernel_params`)."""
    from kernelbench.features import make_feature_map

    return make_feature_map(
        cell.method["name"],
        kernel=cell.kernel["name"],
        n=cell.n if d is None else map_n(cell, d),
        random_state=random_state,
        **(kernel_params(cell) if params is None else params),
        **cell.method["params"],
    )


def sizes(fm: RandomFeatureMap) -> dict[str, int]:
    """The row's D and n_features of the fitted map ``fm``."""
    return {"D": int(fm.n_projections_), "n_features": int(fm.n_features_out_)}


def fit_transform(
    fm: RandomFeatureMap, X: np.ndarray, *parts: np.ndarray, y: np.ndarray | None = None
) -> tuple[list[np.ndarray], dict[str, Any]]:
    """``fm`` fitted on X (with labels ``y``), then ``parts`` mapped: their features, and
    the row's :func:`sizes`, fit_seconds and transform_seconds."""
    t0 = time.perf_counter()
    fm.fit(X, y)
    t1 = time.perf_counter()
    Z = [fm.transform(part) for part in parts]
    t2 = time.perf_counter()
    return Z, {**sizes(fm), "fit_seconds": t1 - t0, "transform_seconds": t2 - t1}


def check_map(cell: Cell, params: dict | None = None) -> RandomFeatureMap:
    """The cell's method and kernel validated before any data is loaded (a ``gamma``
    rule is parsed, resolved later by :func:`kernel_params`): the unfitted map."""
    from kernelbench.bandwidth import parse_rule

    params = dict(cell.kernel["params"] if params is None else params)
    if isinstance(params.get("gamma"), str):
        parse_rule(params["gamma"])
        params["gamma"] = 1.0  # stands for the data's value while checking the map
    fm = feature_map(cell, None, params=params)
    fm._validate_params()
    return fm
