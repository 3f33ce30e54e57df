"""``walltime``: the time of the explicit feature map (Munkhoeva et al. 2018, Fig. 3).

Per cell ``points`` random rows of the dataset's scaled train part (drawn once per
(seed, dataset, points); with replacement only when the train part has fewer rows),
BLAS on one thread. Per run a fresh map: ``fit_seconds`` (drawing it; a map with the
parameter ``map_rows``, orf, is told the rows it will map, ``points`` x (1 + ``repeats``)), then
``first_map_seconds`` (its first ``transform``: compilation, caches) and ``repeats``
timed ``transform`` calls, one row each (``map_seconds`` = ``transform_seconds``).
Reporting side: :mod:`kernelbench.outputs.papers.munkhoeva2018` (figure ``fig3``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kernelbench.protocols import Figure, Metric, Protocol
from kernelbench.protocols.common import (
    data_columns,
    feature_map,
    fit_transform,
    map_n,
    run_rng,
)
from kernelbench.seeding import derive_rng
from kernelbench.settings import ProtocolSettings
from kernelbench.validation import check_int

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work


@dataclass(frozen=True)
class Points:
    """The rows every run of a cell maps, and their provenance."""

    X: np.ndarray
    provenance: dict[str, Any]


@lru_cache(maxsize=4)
def _points_cached(dataset_json: str, seed: int, data_json: str, key: str, points: int) -> tuple:
    from kernelbench.datasets.splits import protocol_config, train_part

    dataset = json.loads(dataset_json)
    name = str(dataset["name"])
    part = train_part(name, protocol_config(dataset, key), json.loads(data_json))
    rng = derive_rng(seed, "walltime", name, points)
    replace = points > part.n_rows
    X = np.ascontiguousarray(part.rows(rng.choice(part.n_rows, size=points, replace=replace)))
    X.setflags(write=False)
    ds = part.dataset
    deviation = ds.deviation or ""
    if replace:
        note = f"{points} points drawn with replacement from {part.n_rows} train rows"
        deviation = f"{deviation}; {note}" if deviation else note
    return X, {"data_source": ds.source, "data_deviation": deviation or None}


@dataclass
class WalltimeSettings(ProtocolSettings):
    """Settings of ``walltime`` (Munkhoeva et al. 2018, Fig. 3): ``points`` random rows
    of the scaled train part that are mapped (10 in the paper), ``repeats`` timed
    transform calls per drawn map after its first (warm-up) call, and ``runs`` maps
    drawn per cell (each with its timed fit)."""

    name: str = "walltime"
    data: str | None = "kernel_approx"
    points: int = 10
    repeats: int = 50
    runs: int | None = 1


class Walltime(Protocol[WalltimeSettings]):
    """Fit and map time of a feature map on a few points (Fig. 3), one thread."""

    name = "walltime"
    Settings = WalltimeSettings
    columns = (
        ("points", pa.int64()),
        ("repetition", pa.int64()),
        ("map_seconds", pa.float64()),
        ("first_map_seconds", pa.float64()),
    )
    keys = ("points",)
    extendable = False  # timings of one session are not stitched to another's
    data_runs = False  # the data settings' runs count Fig. 1's error runs
    metrics = {
        "map": Metric("map_seconds", "map time (s)", short="map_s"),
        "fit": Metric("fit_seconds", "fit (draw) time (s)", short="fit_s"),
        "first": Metric("first_map_seconds", "first map call (s)", short="first_s"),
    }
    headline = "map"
    figures = (
        Figure(
            "fig3",
            "Munkhoeva Fig. 3: map (or fit) time vs d, log-log, median and interquartile band",
            "kernelbench.outputs.papers.munkhoeva2018:draw_fig3",
            metrics=("map", "fit", "first"),
        ),
    )

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        out = super().check_settings(settings)
        out["points"] = check_int("points", out["points"], 1)
        out["repeats"] = check_int("repeats", out["repeats"], 1)
        return out

    def price(self, cell: Cell) -> Work:
        """The ``points`` rows mapped 1 + repeats times per run (the first call and the
        timed repeats), nothing else."""
        from kernelbench.cost import Work, data_shape, make_shapes

        rows, _, d = data_shape(cell)
        opts = self._opts(cell)
        s = make_shapes(cell, int(opts.points), 0, d, rows * d, map_n(cell, d))
        calls = 1 + int(opts.repeats)
        return Work(s, mapped=float(s.N + s.N_test) * calls, calls=calls)

    def prepare(self, cell: Cell) -> Points:
        X, prov = _points_cached(*cell.pair_key, int(self._opts(cell).points))
        return Points(X, prov)

    def cell_columns(self, cell: Cell, ctx: Points) -> dict[str, Any]:
        return data_columns(ctx.X.shape[1], ctx.provenance)

    def measure(self, cell: Cell, ctx: Points, runs: Sequence[int]) -> list[dict]:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return super().measure(cell, ctx, runs)

    def run(self, cell: Cell, ctx: Points, run: int) -> list[dict]:
        X = ctx.X
        fm = feature_map(cell, run_rng(cell, run), d=X.shape[1])
        repeats = int(self._opts(cell).repeats)
        if fm.get_params().get("map_rows", False) is None:
            # a map that chooses its path by the rows it will transform (orf) is told
            # them: the points, 1 + repeats times
            fm.set_params(map_rows=len(X) * (1 + repeats))
        _, info = fit_transform(fm, X, X)
        common = {"run": run, **info, "first_map_seconds": info["transform_seconds"]}
        rows = []
        for rep in range(repeats):
            t0 = time.perf_counter()
            fm.transform(X)
            seconds = time.perf_counter() - t0
            rows.append(
                {**common, "repetition": rep, "map_seconds": seconds, "transform_seconds": seconds}
            )
        return rows
