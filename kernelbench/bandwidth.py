"""Data-driven Gaussian-kernel bandwidths: the nearest-neighbour rule of Yu et al. 2016.

Yu et al. 2016, Sec. 3 (Fig. 2(c)): "set sigma to be the average distance of
50th-nearest neighbors in a dataset"; over which points is not said: :func:`nn_sigma`
averages over every row of X (or ``n_queries`` drawn rows), the neighbours being the
other rows, and gamma = 1 / (2 sigma^2). :func:`resolve_gamma_rule` reads a config
value (a number, or a rule such as ``kernel.params.gamma=nn50``).
"""

from __future__ import annotations

import numbers
import re
from typing import Any, NamedTuple

import numpy as np

from kernelbench.errors import KernelbenchError
from kernelbench.kernels import resolve_gamma, sq_distances, sq_norms
from kernelbench.validation import check_int, check_random_state

#: Bytes of the distance block (query rows x all rows, float64) held at once.
BLOCK_BYTES = 64 * 2**20

_RULE = re.compile(r"^nn(\d+)$")


class Bandwidth(NamedTuple):
    """A Gaussian bandwidth: sigma and gamma = 1 / (2 sigma^2) (unpacks as a tuple)."""

    sigma: float
    gamma: float


def kth_neighbour_distances(
    X: np.ndarray, k: int, queries: np.ndarray | None = None, block_bytes: int = BLOCK_BYTES
) -> np.ndarray:
    """Distance from each query row of X (all rows when None) to its k-th nearest other
    row (duplicates count), in blocks of query rows: memory O(block_bytes + N d);
    another block size may round differently (1e-15)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise KernelbenchError(f"X must be a finite 2-D array, got shape {np.shape(X)}")
    n = X.shape[0]
    k = check_int("k", k, 1, max(1, n - 1))
    if n < k + 1:
        raise KernelbenchError(f"the k={k}-th nearest neighbour needs at least {k + 1} rows")
    rows = np.arange(n) if queries is None else np.asarray(queries, dtype=np.int64)
    sq = sq_norms(X)
    block = max(1, int(block_bytes // (8 * n)))
    out = np.empty(len(rows))
    for start in range(0, len(rows), block):
        idx = rows[start : start + block]
        d2 = sq_distances(X[idx], X, sq[idx], sq)
        d2[np.arange(len(idx)), idx] = np.inf  # not its own neighbour
        # the k-th smallest of the others is at position k - 1
        out[start : start + len(idx)] = np.partition(d2, k - 1, axis=1)[:, k - 1]
    return np.sqrt(out)


def nn_sigma(
    X: Any,
    k: int = 50,
    n_queries: int | None = None,
    random_state: Any = None,
    block_bytes: int = BLOCK_BYTES,
) -> Bandwidth:
    """sigma = mean distance to the k-th nearest neighbour (Yu et al. 2016, Sec. 3), over
    all rows of X or ``n_queries`` rows drawn by ``random_state`` (then required).
    O(n_queries N d) time: 2.8e12 flops for all of MNIST."""
    X = np.asarray(X, dtype=np.float64)
    queries = None
    if n_queries is not None:
        n_rows = X.shape[0] if X.ndim == 2 else 0
        n_queries = check_int("n_queries", n_queries, 1, max(1, n_rows))
        if random_state is None:
            raise KernelbenchError("n_queries needs a random_state (a seed or a Generator)")
        rng = check_random_state(random_state)
        queries = np.sort(rng.choice(n_rows, size=n_queries, replace=False))
    dist = kth_neighbour_distances(X, k, queries, block_bytes)
    sigma = float(np.mean(dist))
    if not sigma > 0:
        raise KernelbenchError(
            f"the mean {k}-th nearest-neighbour distance is {sigma}: too many duplicate rows"
        )
    return Bandwidth(sigma=sigma, gamma=1.0 / (2.0 * sigma * sigma))


def parse_rule(value: str) -> int:
    """k of a nearest-neighbour rule name ``"nn<k>"`` (``"nn50"`` -> 50)."""
    match = _RULE.match(value) if isinstance(value, str) else None
    if match is None or int(match.group(1)) < 1:
        raise KernelbenchError(
            f"invalid bandwidth rule {value!r}; valid: a positive number or nn<k> (e.g. nn50)"
        )
    return int(match.group(1))


def resolve_gamma_rule(
    value: Any,
    X: Any,
    n_queries: int | None = None,
    random_state: Any = None,
) -> float | None:
    """gamma from a config value: None and numbers pass through, ``"nn<k>"`` is computed
    on X (the train part) by :func:`nn_sigma`."""
    if value is None:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return resolve_gamma(value, 1)
    k = parse_rule(value)
    return nn_sigma(X, k=k, n_queries=n_queries, random_state=random_state).gamma
