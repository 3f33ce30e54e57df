"""``qmc_discrepancy``: box discrepancy beside the Gram error (Yang et al. 2014, Fig. 3).

Data as in ``kernel_approx`` (the dataset's ``protocols.<data>`` settings). Per run a
fresh feature map with Gaussian frequencies (rff, qmc) is fitted on X, and the rows hold
the box discrepancy of its frequencies and its Gram errors:

    discrepancy    = pi^d / prod b_j D(S)^2 (Theorem 9: the mean squared integration
                     error of e^{-i u.w} over u in the box []b), b_j = box_scale
                     (max_i x_ij - min_i x_ij) in the map's frequency units (X's
                     bounding box; Fig. 3 uses []b on cpu and []b/2 on census)
    rel_fro_error  = ||K - K_hat||_F / ||K||_F
    rel_spec_error = ||K - K_hat||_2 / ||K||_2

Figure ``yang_discrepancy``: both against n, one row of panels per dataset.
Drawn and compared by its reporting side, :mod:`kernelbench.outputs.papers.yang2014`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kernelbench.metrics import spectral_norm
from kernelbench.protocols import REL_FRO, REL_SPEC, Figure, Metric, Protocol
from kernelbench.protocols.common import Pair, feature_map, fit_transform, pair_shapes, run_rng
from kernelbench.settings import ProtocolSettings

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.cost import Work


@dataclass
class QMCDiscrepancySettings(ProtocolSettings):
    """Settings of ``qmc_discrepancy`` (Yang et al. 2014, Fig. 3): the data recipe of
    Munkhoeva et al.'s Fig. 1; the box []b is ``box_scale`` times X's bounding box
    (Fig. 3: 1 on cpu, 1/2 on census)."""

    name: str = "qmc_discrepancy"
    data: str | None = "kernel_approx"
    box_scale: float = 1.0


class QMCDiscrepancy(Protocol[QMCDiscrepancySettings]):
    """Box discrepancy of the frequencies and the Gram errors per run (Yang Fig. 3)."""

    name = "qmc_discrepancy"
    Settings = QMCDiscrepancySettings
    columns = (
        ("samples", pa.int64()),
        ("box_scale", pa.float64()),
        ("discrepancy", pa.float64()),
        ("rel_fro_error", pa.float64()),
        ("rel_spec_error", pa.float64()),
    )
    metrics = {
        "discrepancy": Metric("discrepancy", r"$\pi^d D(S)^2 / \prod_j b_j$", short="disc"),
        "fro": REL_FRO,
        "spec": REL_SPEC,
    }
    headline = "discrepancy"
    figures = (
        Figure(
            "yang_discrepancy",
            "Yang Fig. 3: box discrepancy and Gram error against n",
            "kernelbench.outputs.papers.yang2014:draw_yang_discrepancy",
            metrics=("discrepancy", "fro", "spec"),
        ),
    )

    def skip(self, cell: Cell) -> str | None:
        if cell.kernel["name"] != "rbf" or cell.method["name"] not in ("rff", "qmc"):
            return (
                "protocol qmc_discrepancy needs kernel rbf and a method with Gaussian "
                f"frequencies (rff, qmc), got {cell.kernel['name']!r}, "
                f"{cell.method.get('label') or cell.method['name']!r}"
            )
        if cell.method.get("params", {}).get("sequence") == "adaptive":
            return "protocol qmc_discrepancy: use qmc_adaptive for adaptive QMC"
        return super().skip(cell)

    def price(self, cell: Cell) -> Work:
        """The sample pair's work (the default) and per run the box discrepancy of the D
        frequencies (:func:`kernelbench.qmc.mean_squared_error`, Theorem 9): a sinc per
        pair and dimension, D (D - 1) / 2 pairs of d."""
        from kernelbench.cost import pair_work, sinc_pairs

        s = pair_shapes(cell)
        work = pair_work(cell, s)
        return replace(work, terms={**work.terms, "sinc": s.runs * sinc_pairs(s)})

    def cell_columns(self, cell: Cell, ctx: Pair) -> dict[str, Any]:
        return {**ctx.columns(), "box_scale": float(self._opts(cell).box_scale)}

    def run(self, cell: Cell, ctx: Pair, run: int) -> list[dict]:
        from kernelbench.kernels import get_kernel
        from kernelbench.qmc import mean_squared_error

        d = ctx.X.shape[1]
        fm = feature_map(cell, run_rng(cell, run), d=d)
        (Zx, Zy), row = fit_transform(fm, ctx.X, ctx.X, ctx.Y)
        span = float(self._opts(cell).box_scale) * np.ptp(ctx.X, axis=0)
        box = span * get_kernel(fm.kernel).input_scale(d, fm.gamma)
        active = np.flatnonzero(box > 0)
        E = ctx.K - Zx @ Zy.T
        return [
            {
                **row,
                "discrepancy": mean_squared_error(fm.W_[:, active], box[active], 1.0),
                "rel_fro_error": float(np.linalg.norm(E)) / ctx.fro_K,
                "rel_spec_error": spectral_norm(E) / ctx.spec_K,
            }
        ]
