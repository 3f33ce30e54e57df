"""``kernel_approx``: Gram-matrix approximation error (Munkhoeva et al. 2018, Fig. 1).

Two random subsets X, Y of the dataset's scaled train part (drawn once per (seed,
dataset)), the exact cross-kernel K = k(X, Y), and per run a fresh map fitted on X:

    rel_fro_error  = ||K - K_hat||_F / ||K||_F
    rel_spec_error = ||K - K_hat||_2 / ||K||_2,     K_hat = z(X) z(Y)^T + constant_.

Settings ``product`` and ``draws``: :class:`KernelApproxSettings`. Reporting side:
:mod:`kernelbench.outputs.papers.munkhoeva2018` (figure ``fig1``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kernelbench.metrics import spectral_norm
from kernelbench.protocols import REL_FRO, REL_SPEC, Figure, Protocol
from kernelbench.protocols.common import (
    Pair,
    feature_map,
    fit_transform,
    pair_shapes,
    run_rng,
    sizes,
)
from kernelbench.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work

#: Precision of the K_hat product (the ``product`` setting); the first is the default.
PRODUCTS = ("float64", "float32")
#: How a run draws its projections (the ``draws`` setting); the first is the default.
DRAWS = ("sample_space", "weights")
#: At most this many runs per batch, and their K_hat stack at most this many bytes.
BATCH_RUNS = 16
BATCH_BYTES = 64 * 2**20
#: Features of one run (z(X) and z(Y)) above this size are multiplied run by run: the
#: stacking copies cost more than the per-call overhead they save (docs/performance.md).
BATCH_Z_BYTES = 2**20


@dataclass
class KernelApproxSettings(ProtocolSettings):
    """Settings of ``kernel_approx`` (Munkhoeva et al. 2018, Fig. 1).

    ``data``: the dataset's data recipe (train part, scaling, ``samples`` per subset X
    and Y, default runs). ``product``: the precision of the GEMM z(X) z(Y)^T, float64
    or float32 (1.6-2.2x faster; features, the f(0) constant and the errors stay
    float64; the shift is bounded by tests/test_kernel_approx_product.py). ``draws``:
    ``sample_space`` draws the projections of the 2N points [X; Y] directly where
    2N < d and the map supports it (rff, orf: same law, other numbers;
    tests/test_sample_space.py), else the map draws W; ``weights``: always W. Column
    ``draws`` says which draw made a row. Defaults are left out of a cell's hash.
    """

    name: str = "kernel_approx"
    data: str | None = "kernel_approx"
    product: str = PRODUCTS[0]
    draws: str = DRAWS[0]


class KernelApprox(Protocol[KernelApproxSettings]):
    """Relative Frobenius and spectral errors of K_hat on two random subsets (Fig. 1)."""

    name = "kernel_approx"
    Settings = KernelApproxSettings
    columns = (
        ("samples", pa.int64()),
        ("rel_fro_error", pa.float64()),
        ("rel_spec_error", pa.float64()),
        ("draws", pa.string()),  # the draw that produced the row: weights or sample_space
    )
    batch = BATCH_RUNS
    metrics = {"fro": REL_FRO, "spec": REL_SPEC}
    headline = "fro"
    figures = (
        Figure(
            "fig1",
            "Munkhoeva Fig. 1: kernel approximation error vs n (kernels x datasets)",
            "kernelbench.outputs.papers.munkhoeva2018:draw_fig1",
            metrics=("fro", "spec"),
        ),
    )

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        from kernelbench.validation import check_choice

        out = super().check_settings(settings)
        for key, choices in (("product", PRODUCTS), ("draws", DRAWS)):
            if key in out:
                check_choice(key, out[key], choices)
                if out[key] == choices[0]:  # the default: settings and hash without it
                    del out[key]
        return out

    def _sample_space(self, cell: Cell, fm: Any, n_points: int, d: int) -> bool:
        """Whether the cell's runs draw in sample space (``draws`` and the map allow it)."""
        draws = self._opts(cell).draws
        return draws == "sample_space" and fm.supports_sample_space(n_points, d)

    def price(self, cell: Cell) -> Work:
        """The sample pair's work (the default), its runs batched where one run's
        features are at most ``BATCH_Z_BYTES``, drawn in sample space where the map and
        ``draws`` allow it at 2N points, K_hat at SGEMM's price with ``product=float32``."""
        from kernelbench.cost import F64, pair_work

        s = pair_shapes(cell)
        batch = 1
        if F64 * 2 * s.N * s.F <= BATCH_Z_BYTES:  # features of a batch held at once
            batch = min(batch_runs(cell), int(cell.runs))
        fm = feature_map(cell, None, d=s.d)
        ss = self._sample_space(cell, fm, 2 * s.N, s.d)
        gemm = "gemm32" if self._opts(cell).product == "float32" else "gemm"
        return pair_work(cell, replace(s, batch=batch, sample_space=ss), gemm=gemm)

    def measure(self, cell: Cell, ctx: Pair, runs: Sequence[int]) -> list[dict]:
        """The rows of ``runs``, in groups of :func:`batch_runs` (:meth:`_group`)."""
        step = batch_runs(cell)
        runs = list(runs)
        return [
            row
            for i in range(0, len(runs), step)
            for row in self._group(cell, ctx, runs[i : i + step])
        ]

    def _group(self, cell: Cell, ctx: Pair, runs: Sequence[int]) -> list[dict]:
        """The runs' maps one by one, their estimates K_hat = z(X) z(Y)^T in one stacked
        product when the features are small (``np.matmul`` over the group: the same
        GEMM per run, so the rows are those of runs one by one), then the errors run by
        run. Memory: at most ``BATCH_BYTES`` of K_hat per group, and the features of one
        run when they are larger than ``BATCH_Z_BYTES`` (that run's row is computed
        before the next run is mapped)."""
        f32 = self._opts(cell).product == "float32"
        rows: list[dict | None] = []
        kept: list[tuple[int, tuple]] = []  # (row index, mapped run) of small features
        big = False
        for r in runs:
            m = self._map_run(cell, ctx, r)
            if m[2].nbytes + m[3].nbytes > BATCH_Z_BYTES:
                big = True
                rows.append(self._errors(ctx, m, _product(m[2], m[3], f32)))
                del m  # its features go before the next run's are made
            else:
                kept.append((len(rows), m))
                rows.append(None)
        shapes = {m[2].shape for _, m in kept}
        if big or len(kept) <= 1 or len(shapes) != 1:
            for i, m in kept:
                rows[i] = self._errors(ctx, m, _product(m[2], m[3], f32))
        else:
            Zx = np.stack([m[2] for _, m in kept])
            K_hats = _product(Zx, np.stack([m[3] for _, m in kept]), f32)
            for (i, m), K_hat in zip(kept, K_hats, strict=True):
                rows[i] = self._errors(ctx, m, K_hat)
        return rows  # type: ignore[return-value]

    def _map_run(self, cell: Cell, ctx: Pair, run: int) -> tuple:
        """(the map's row values, its constant, z(X), z(Y)) of run ``run``. The fitted map
        itself is dropped here, so a batch holds only features (a map's weights can take GBs:
        orf_tallqr on LEUKEMIA at n = 5 stores 71300 x 7129 reflector entries)."""
        fm = feature_map(cell, run_rng(cell, run), d=ctx.X.shape[1])
        if not self._sample_space(cell, fm, len(ctx.X) + len(ctx.Y), ctx.X.shape[1]):
            (Zx, Zy), info = fit_transform(fm, ctx.X, ctx.X, ctx.Y)
            return {"draws": "weights", **info}, float(fm.constant_), Zx, Zy
        t0 = time.perf_counter()  # the projections of [X; Y] alone: fit is their draw
        P = fm.fit_sample_space(np.concatenate([ctx.X, ctx.Y]))
        t1 = time.perf_counter()
        Z = fm.features(P)
        seconds = {"fit_seconds": t1 - t0, "transform_seconds": time.perf_counter() - t1}
        info = {"draws": DRAWS[0], **sizes(fm), **seconds}
        return info, float(fm.constant_), Z[: len(ctx.X)], Z[len(ctx.X) :]

    @staticmethod
    def _errors(ctx: Pair, mapped: tuple, K_hat: np.ndarray) -> dict:
        """The row of a run from its map and its z(X) z(Y)^T (modified in place)."""
        info, constant = mapped[:2]
        if constant != 0.0:
            K_hat += K_hat.dtype.type(constant)
        E = np.subtract(ctx.K, K_hat, out=K_hat)  # K_hat's buffer: no fresh pages per run
        rel_fro = float(np.linalg.norm(E)) / ctx.fro_K
        return {**info, "rel_fro_error": rel_fro, "rel_spec_error": spectral_norm(E) / ctx.spec_K}


def batch_runs(cell: Cell) -> int:
    """Runs whose K_hat are stacked in one product: at most ``BATCH_RUNS`` and
    ``BATCH_BYTES``."""
    samples = cell.data_settings.get("samples") or 1
    return int(max(1, min(BATCH_RUNS, BATCH_BYTES // (8 * int(samples) ** 2))))


#: The last K_hat buffer, per thread: a run's K_hat and error matrix are written into
#: it. Fresh arrays of a few MiB are new pages from the system on every run (glibc's
#: mmap threshold), and touching them cost more than the GEMM itself on small-d
#: datasets (Powerplant: docs/performance.md).
_WORKSPACE = threading.local()


def _workspace(shape: tuple[int, ...]) -> np.ndarray:
    """A float64 array of ``shape`` in this thread's buffer (grown when too small)."""
    size = math.prod(shape)
    buf = getattr(_WORKSPACE, "buf", None)
    if buf is None or buf.size < size:
        buf = _WORKSPACE.buf = np.empty(size)
    return buf[:size].reshape(shape)


def _product(Zx: np.ndarray, Zy: np.ndarray, float32: bool) -> np.ndarray:
    """z(X) z(Y)^T (stacked: one per run), in float64, or as a float32 GEMM returned in
    float64 (the constant is added afterwards, in float64). The float64 product is
    written into the thread's workspace, valid until the next call: the same GEMM, so
    the same bits."""
    Zt = np.swapaxes(Zy, -1, -2)
    if float32:
        return np.matmul(Zx.astype(np.float32), Zt.astype(np.float32)).astype(np.float64)
    return np.matmul(Zx, Zt, out=_workspace((*Zx.shape[:-1], Zy.shape[-2])))
