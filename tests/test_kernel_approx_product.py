"""kernel_approx's ``product=float32``: only the K_hat GEMM in float32 (issue: speed).

The shift of the errors is bounded against verify's tolerance: on LETTER and USPS, every
kernel, rff and sr33 (whose f(0) constant is folded in float64), the float32 product moves
each run's relative errors by at most 2e-5 relative... and the default (float64) cell keeps
its settings and config hash (no ``product`` key)."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.cell import build_cell
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_cell
from kernelbench.protocols import get_protocol
from tests.conftest import need_mirror


def test_default_product_keeps_the_settings_and_hash() -> None:
    cell = build_cell(make_cell("rff", dataset="digits", n=1, runs=2))
    assert "product" not in cell.settings
    explicit = make_cell("rff", dataset="digits", n=1, runs=2)
    explicit["protocol"]["product"] = "float64"
    assert build_cell(explicit).config_hash == build_cell(cell).config_hash
    with pytest.raises(KernelbenchError, match="invalid product 'float16'"):
        get_protocol("kernel_approx").check_settings(
            {"name": "kernel_approx", "product": "float16"}
        )


@pytest.mark.parametrize("dataset", ["letter", "usps"])
@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
@pytest.mark.parametrize("method", ["rff", "sr33"])
def test_float32_product_shifts_errors_far_inside_the_tolerance(dataset, kernel, method):
    """|err32 - err64| / err64 <= 2e-5 per run. verify's tolerance on these cells is a few
    standard errors of the mean over 500 runs, >= 1e-3 of the mean (docs/verification.md):
    the shift is at least 50 times smaller."""
    need_mirror(f"{dataset}.npz")
    cells = {}
    for product in ("float64", "float32"):
        cell = make_cell(method, kernel=kernel, dataset=dataset, n=2, runs=4)
        cell["protocol"]["product"] = product
        cells[product] = run_cell(cell)
    for col in ("rel_fro_error", "rel_spec_error"):
        a = cells["float64"][col].to_numpy()
        b = cells["float32"][col].to_numpy()
        assert not np.array_equal(a, b)  # the float32 GEMM does change the last digits
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=0)


def test_the_plan_prices_a_float32_product_at_sgemms_rate() -> None:
    """product=float32 moves K_hat's flops from COEF's ``gemm`` to ``gemm32`` (the same
    count), so the plan line prices the option below the default."""
    from kernelbench import cost

    cells = {}
    for product in ("float64", "float32"):
        cell = make_cell("rff", dataset="usps", n=3, runs=10)
        cell["protocol"]["product"] = product
        cells[product] = build_cell(cell)
    w64, w32 = (cells[p].protocol.price(cells[p]) for p in ("float64", "float32"))
    assert "gemm32" not in w64.terms and "gemm" not in w32.terms
    assert w32.terms["gemm32"] == w64.terms["gemm"] > 0
    assert w32.terms["spectral"] == w64.terms["spectral"]
    assert cost.COEF["gemm32"] < cost.COEF["gemm"]
    c64, c32 = (cost.price([cells[p]])[0] for p in ("float64", "float32"))
    saved = (cost.COEF["gemm"] - cost.COEF["gemm32"]) * w64.terms["gemm"]
    assert c64.seconds - c32.seconds == pytest.approx(saved, rel=1e-9)
