"""``qmc_adaptive``: Gram errors over the iterations of adaptive QMC (Yang et al. 2014, Fig. 4).

Data as in ``kernel_approx`` (the dataset's ``protocols.<data>`` settings: two
independent random subsets X, Y of the scaled train part, drawn once per (seed,
dataset)) and the exact Gaussian cross-kernel K = k(X, Y). Per run a fresh
``qmc`` map with ``sequence=adaptive`` is fitted on X (the box []b from X's
bounding box, Sec. 4; Halton start, scrambled or RR2; nonlinear CG on the box
discrepancy, :func:`kernelbench.qmc.adaptive_points`), keeping the frequencies
of every iteration. One row per (run, iteration t = 0..n_cg_iter, 0 = Halton):

    discrepancy    = pi^d / prod b_j D(S_t)^2, Theorem 9's mean squared integration
                     error over the box (the normalised box discrepancy up to 2^d)
    max_sq_error   = max_ij (K - K_hat_t)_ij^2
    mean_sq_error  = mean_ij (K - K_hat_t)_ij^2
    rel_spec_error = ||K - K_hat_t||_2 / ||K||_2   (the "norm of the error")

Figure ``yang_adaptive``: the four metrics against the iteration (Fig. 4(a)-(c):
box []b and []b/2 via ``box_scale``).
Drawn and compared by its reporting side, :mod:`kernelbench.outputs.papers.yang2014`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from kernelbench.metrics import spectral_norm
from kernelbench.protocols import REL_SPEC, Figure, Metric, Protocol
from kernelbench.protocols.common import Pair, feature_map, fit_transform, pair_shapes, run_rng
from kernelbench.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work


#: Evaluations of the discrepancy and its gradient per nonlinear-CG iteration (scipy's
#: line search), for the price: 5.7-9.2 measured on digits, LETTER and Powerplant.
CG_EVALS = 8


@dataclass
class QMCAdaptiveSettings(ProtocolSettings):
    """Settings of ``qmc_adaptive`` (Yang et al. 2014, Fig. 4): the data recipe of
    Munkhoeva et al.'s Fig. 1 (scaled train part, two random subsets of ``samples``
    rows)."""

    name: str = "qmc_adaptive"
    data: str | None = "kernel_approx"


class QMCAdaptive(Protocol[QMCAdaptiveSettings]):
    """Discrepancy and Gram errors per CG iteration of adaptive QMC (Yang et al. 2014, Fig. 4)."""

    name = "qmc_adaptive"
    Settings = QMCAdaptiveSettings
    columns = (
        ("samples", pa.int64()),
        ("iteration", pa.int64()),
        ("discrepancy", pa.float64()),
        ("max_sq_error", pa.float64()),
        ("mean_sq_error", pa.float64()),
        ("rel_spec_error", pa.float64()),
    )
    index = ("iteration",)
    metrics = {
        "discrepancy": Metric("discrepancy", r"$\pi^d D(S)^2 / \prod_j b_j$", short="disc"),
        "max": Metric("max_sq_error", "max squared error", short="max_sq"),
        "mean": Metric("mean_sq_error", "mean squared error", short="mean_sq"),
        "norm": REL_SPEC,
    }
    headline = "norm"
    figures = (
        Figure(
            "yang_adaptive",
            "Yang Fig. 4: discrepancy, max/mean squared and norm errors over CG iterations",
            "kernelbench.outputs.papers.yang2014:draw_yang_adaptive",
            metrics=("discrepancy", "max", "mean", "norm"),
        ),
    )

    def skip(self, cell: Cell) -> str | None:
        method = cell.method
        if method["name"] != "qmc" or (method.get("params") or {}).get("sequence") != "adaptive":
            return (
                "protocol qmc_adaptive needs method qmc with sequence=adaptive "
                f"(e.g. method=qmc_adaptive), got {method.get('label') or method['name']!r}"
            )
        return super().skip(cell)

    def price(self, cell: Cell) -> Work:
        """Per run: the nonlinear CG on the box discrepancy, ``max_cg_iter`` iterations
        of about :data:`CG_EVALS` evaluations of it and its gradient (D (D - 1) / 2 pairs
        of d sincs each, Proposition 11); then, for the start and each iteration, the map
        of X and Y, K_hat and its error's spectral norm (the sample pair's work,
        max_cg_iter + 1 times)."""
        from kernelbench.cost import pair_work, sinc_pairs

        s = pair_shapes(cell)
        iters = int(feature_map(cell, None, d=s.d).max_cg_iter)
        work = pair_work(cell, s, passes=iters + 1)
        sinc = s.runs * (CG_EVALS * iters + 1) * sinc_pairs(s)
        return replace(work, terms={**work.terms, "sinc": sinc})

    def run(self, cell: Cell, ctx: Pair, run: int) -> list[dict]:
        fm = feature_map(cell, run_rng(cell, run), d=ctx.X.shape[1])
        fm.set_params(keep_iterates=True)
        _, common = fit_transform(fm, ctx.X)
        rows = []
        for it in range(fm.n_cg_iter_ + 1):
            at = fm.at_iteration(it)
            t0 = time.perf_counter()
            Zx, Zy = at.transform(ctx.X), at.transform(ctx.Y)
            seconds = time.perf_counter() - t0
            E = Zx @ Zy.T
            E -= ctx.K
            sq = E * E
            rows.append(
                {
                    **common,
                    "run": run,
                    "iteration": it,
                    "discrepancy": float(fm.discrepancy_trace_[it]),
                    "max_sq_error": float(sq.max()),
                    "mean_sq_error": float(sq.mean()),
                    "rel_spec_error": spectral_norm(E) / ctx.spec_K,
                    "transform_seconds": seconds,
                }
            )
        return rows
