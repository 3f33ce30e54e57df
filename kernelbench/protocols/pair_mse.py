"""``pair_mse``: kernel approximation MSE over pairs against D (Yu et al. 2016, Fig. 4).

The sample pair X, Y of ``kernel_approx``, zero-padded to d' = the next power of two
(Yu et al., Sec. 5; padding changes no distance). The cell's n is D/d': D = n d'.
sigma from ``kernel.params.gamma`` (``nn50``: Yu et al.'s mean distance to the 50th
nearest neighbour, :func:`.common.kernel_params`). Per run a fresh map fitted on X:

    mse           = mean over the pairs (x_i, y_j) of (k(x_i, y_j) - k_hat(x_i, y_j))^2
    rel_fro_error = ||K - K_hat||_F / ||K||_F

Reporting side: :mod:`kernelbench.outputs.papers.yu2016` (``yu_mse``: Figs. 4, 5(c)).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kernelbench.protocols import REL_FRO, Figure, Metric, Protocol
from kernelbench.protocols.common import (
    data_columns,
    feature_map,
    fit_transform,
    kernel_approx_pair_cached,
    kernel_params,
    pair_shapes,
    read_only,
    run_rng,
)
from kernelbench.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work


def next_pow2(d: int) -> int:
    """The smallest power of two >= d."""
    return 1 << max(0, int(d) - 1).bit_length()


@dataclass(frozen=True)
class PaddedPair:
    """X, Y zero-padded to a power of two, the exact kernel and its provenance."""

    X: np.ndarray
    Y: np.ndarray
    K: np.ndarray
    fro_K: float
    gamma: float
    d_data: int
    provenance: dict[str, Any]


@lru_cache(maxsize=4)
def _padded_pair(dataset_json: str, seed: int, data_json: str, key: str) -> tuple:
    X, Y, prov = kernel_approx_pair_cached(dataset_json, seed, data_json, key)
    d = X.shape[1]
    pad = next_pow2(d) - d
    X = np.pad(X, ((0, 0), (0, pad)))
    Y = np.pad(Y, ((0, 0), (0, pad)))
    return (*read_only(X, Y), d, dict(prov))


@dataclass
class PairMSESettings(ProtocolSettings):
    """Settings of ``pair_mse`` (Yu et al. 2016, Figs. 4 and 5(c)): the data recipe
    of Munkhoeva et al.'s Fig. 1 (scaled train part, two random subsets of ``samples``
    rows)."""

    name: str = "pair_mse"
    data: str | None = "kernel_approx"


class PairMSE(Protocol[PairMSESettings]):
    """MSE of the kernel value over pairs, against D/d (Yu et al. 2016, Figs. 4 and 5(c))."""

    name = "pair_mse"
    Settings = PairMSESettings
    columns = (
        ("samples", pa.int64()),
        ("d_data", pa.int64()),
        ("sigma", pa.float64()),
        ("mse", pa.float64()),
        ("rel_fro_error", pa.float64()),
    )
    budget = "d"  # D = n d' projections
    metrics = {"mse": Metric("mse", "MSE over pairs", short="mse"), "fro": REL_FRO}
    headline = "mse"
    figures = (
        Figure(
            "yu_mse",
            "Yu Fig. 4 / 5(c): kernel MSE over pairs against D/d (one panel per dataset)",
            "kernelbench.outputs.papers.yu2016:draw_yu_mse",
            metrics=("mse", "fro"),
        ),
    )

    def skip(self, cell: Cell) -> str | None:
        if cell.kernel["name"] != "rbf":
            return (
                f"protocol pair_mse needs kernel rbf (the Gaussian kernel of Yu et al.), "
                f"got {cell.kernel['name']!r}"
            )
        return super().skip(cell)

    def price(self, cell: Cell) -> Work:
        """The sample pair's work (the default) at d zero-padded to a power of two."""
        from kernelbench.cost import pair_work

        return pair_work(cell, pair_shapes(cell, pad=next_pow2))

    def prepare(self, cell: Cell) -> PaddedPair:
        from kernelbench.kernels import exact_kernel

        X, Y, d_data, prov = _padded_pair(*cell.pair_key)
        params = kernel_params(cell)
        gamma = params.get("gamma")
        gamma = 1.0 / X.shape[1] if gamma is None else float(gamma)
        K = exact_kernel("rbf", X, Y, gamma=gamma)
        return PaddedPair(X, Y, K, float(np.linalg.norm(K)), gamma, d_data, prov)

    def cell_columns(self, cell: Cell, ctx: PaddedPair) -> dict[str, Any]:
        sigma = float(np.sqrt(1.0 / (2.0 * ctx.gamma)))
        more = {"d_data": ctx.d_data, "samples": int(ctx.X.shape[0]), "sigma": sigma}
        return data_columns(ctx.X.shape[1], ctx.provenance, **more)

    def run(self, cell: Cell, ctx: PaddedPair, run: int) -> list[dict]:
        params = {**cell.kernel["params"], "gamma": ctx.gamma}  # resolved in prepare
        fm = feature_map(cell, run_rng(cell, run), d=ctx.X.shape[1], params=params)
        (Zx, Zy), row = fit_transform(fm, ctx.X, ctx.X, ctx.Y)
        E = Zx @ Zy.T
        if fm.constant_ != 0.0:
            E += fm.constant_
        E -= ctx.K
        mse = float(np.mean(E * E))
        return [{**row, "mse": mse, "rel_fro_error": float(np.linalg.norm(E)) / ctx.fro_K}]
