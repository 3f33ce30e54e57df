"""``variance_ratio``: Var(method) / Var(RFF) against z = ||x - y|| / sigma (Yu 2016, Fig. 2).

Synthetic pairs at controlled distances, no data file: the Gaussian kernel with
sigma = 1 (kernelbench's gamma = 1/2), input dimension ``d`` (a protocol setting,
swept by ``protocol.d=...``) and D = ``n`` d projections (``n`` is D/d here; Fig. 2
uses D = d). Per run a fresh map; for each z of the grid
``z_step, 2 z_step, ..., z_max`` and each of ``pairs`` directions u (uniform on the
sphere, drawn from a Generator of (seed, d, run, "pairs"), the same for every
method) the pair (0, z u): every map here is shift invariant for the Gaussian
kernel (the estimate is a function of x - y), and the structured ones (sorf, sr33)
are not rotation invariant, so the directions are averaged over. A row per (run, z):

    sq_error = mean over the pairs of (k_hat - e^{-z^2/2})^2
    ratio    = sq_error / Var K_RFF(z, D),   Var K_RFF = (1 - e^{-z^2})^2 / (2D)  (Lemma 1)

The mean of ``ratio`` over runs estimates Var(method)/Var(RFF) for an unbiased map
(the MSE ratio otherwise), with a t-interval over runs; rff itself must give 1.

Figure ``yu_variance``: the ratio against z, one panel per d, with Yu et al.'s
Eq. (3) and the exact ratio of :mod:`kernelbench.theory` as dashed curves.
Drawn and compared by its reporting side, :mod:`kernelbench.outputs.papers.yu2016`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import Figure, Metric, Protocol
from kernelbench.protocols.common import feature_map, fit_transform, map_n, run_rng
from kernelbench.seeding import derive_rng
from kernelbench.settings import ProtocolSettings
from kernelbench.validation import check_int

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work

#: sigma = 1: kernelbench's exp(-gamma ||x - y||^2) with gamma = 1 / (2 sigma^2).
GAMMA = 0.5


@dataclass(frozen=True)
class Grid:
    """The z grid and the input dimension of a cell."""

    d: int
    z: np.ndarray
    pairs: int


@dataclass
class VarianceRatioSettings(ProtocolSettings):
    """Settings of ``variance_ratio`` (Yu et al. 2016, Fig. 2): input dimension ``d``
    (sweep it: ``protocol.d=16,64``), the z grid z_step, 2 z_step, ..., z_max,
    ``pairs`` directions u per z and run, and the runs when neither the cell nor the
    dataset sets them."""

    name: str = "variance_ratio"
    data: str | None = "variance_ratio"
    d: int = 16
    z_max: float = 4.0
    z_step: float = 0.25
    pairs: int = 8
    runs: int | None = 1000


class VarianceRatio(Protocol[VarianceRatioSettings]):
    """Empirical Var(method)/Var(RFF) for pairs at distance z sigma (Yu et al. 2016, Fig. 2)."""

    name = "variance_ratio"
    Settings = VarianceRatioSettings
    columns = (
        ("z", pa.float64()),
        ("pairs", pa.int64()),
        ("k_exact", pa.float64()),
        ("k_hat_mean", pa.float64()),
        ("sq_error", pa.float64()),
        ("ratio", pa.float64()),
    )
    keys = ("d",)
    index = ("z",)
    budget = "d"  # D = n d projections
    batch = 50
    metrics = {
        "ratio": Metric("ratio", r"MSE / Var$_{\mathrm{RFF}}$", short="ratio"),
        "mse": Metric("sq_error", "MSE of the kernel value", short="mse"),
    }
    headline = "ratio"
    figures = (
        Figure(
            "yu_variance",
            "Yu Fig. 2: Var(method)/Var(RFF) against z = ||x - y|| / sigma, one panel per d",
            "kernelbench.outputs.papers.yu2016:draw_yu_variance",
            metrics=("ratio", "mse"),
        ),
    )

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        out = super().check_settings(settings)
        check_int("protocol.d", out.get("d"), 1)
        check_int("protocol.pairs", out.get("pairs"), 1)
        for key in ("z_max", "z_step"):  # floats (OmegaConf): > 0 left to check
            if not out[key] > 0:
                raise KernelbenchError(f"protocol.{key} must be a number > 0, got {out[key]!r}")
        if out["z_step"] > out["z_max"]:
            raise KernelbenchError("protocol.z_step must be <= protocol.z_max")
        return out

    def skip(self, cell: Cell) -> str | None:
        if cell.kernel["name"] != "rbf":
            return (
                f"protocol variance_ratio needs kernel rbf (the Gaussian kernel of Yu et al.), "
                f"got {cell.kernel['name']!r}"
            )
        return self._check_map(cell, {**cell.kernel["params"], "gamma": GAMMA})

    def price(self, cell: Cell) -> Work:
        """Synthetic pairs, no data file: ``pairs`` directions per z at the settings' d,
        each run maps the points of every z; nothing else is counted."""
        from kernelbench.cost import Work, make_shapes

        opts = self._opts(cell)
        d = int(opts.d)
        points = int(opts.pairs) * int(float(opts.z_max) / float(opts.z_step))
        return Work(make_shapes(cell, points, points, d, 0, map_n(cell, d)))

    def prepare(self, cell: Cell) -> Grid:
        s = self._opts(cell)
        step, top = float(s.z_step), float(s.z_max)
        z = step * np.arange(1, int(np.floor(top / step + 1e-9)) + 1)
        return Grid(int(s.d), z, int(s.pairs))

    def cell_columns(self, cell: Cell, ctx: Grid) -> dict[str, Any]:
        return {
            "d": ctx.d,
            "data_source": "synthetic: pairs (0, z u), u uniform on the sphere",
            "data_deviation": None,
        }

    def directions(self, cell: Cell, ctx: Grid, run: int) -> np.ndarray:
        """(len(z), pairs, d) unit vectors of run ``run`` (the same for every method)."""
        rng = derive_rng(cell.seed, "pairs", ctx.d, run)
        U = rng.standard_normal((len(ctx.z), ctx.pairs, ctx.d))
        return U / np.linalg.norm(U, axis=2, keepdims=True)

    def run(self, cell: Cell, ctx: Grid, run: int) -> list[dict]:
        from kernelbench.theory import rff_variance

        k_exact = np.exp(-(ctx.z**2) / 2.0)
        fm = feature_map(cell, run_rng(cell, run), ctx.d, {**cell.kernel["params"], "gamma": GAMMA})
        deltas = self.directions(cell, ctx, run) * ctx.z[:, None, None]
        zero = np.zeros((1, ctx.d))
        (z0, zd), common = fit_transform(fm, zero, zero, deltas.reshape(-1, ctx.d))
        k_hat = (zd @ z0[0] + fm.constant_).reshape(len(ctx.z), ctx.pairs)
        sq = ((k_hat - k_exact[:, None]) ** 2).mean(axis=1)
        var_rff = rff_variance(ctx.z, common["D"])
        return [
            {
                **common,
                "run": run,
                "z": float(z),
                "pairs": ctx.pairs,
                "k_exact": float(k_exact[i]),
                "k_hat_mean": float(k_hat[i].mean()),
                "sq_error": float(sq[i]),
                "ratio": float(sq[i] / var_rff[i]),
            }
            for i, z in enumerate(ctx.z)
        ]
