"""WideReflectors (kernelbench.transforms): the properties the mutation run
(docs/mutation.md) found unchecked by tests/test_transforms.py and
tests/test_transforms_mutants.py. Small inputs: the BLAS products only, no numba
kernels."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.transforms import HouseholderProduct, WideReflectors


def _blas_calls(monkeypatch) -> list[str]:
    """The names of the BLAS routines that ``kernelbench.transforms`` calls, in order."""
    from kernelbench import transforms

    calls: list[str] = []
    real = transforms.get_blas_funcs

    def spy(name, arrays=()):
        f = real(name, arrays)

        def call(*args, **kwargs):
            calls.append(name)
            return f(*args, **kwargs)

        return call

    monkeypatch.setattr(transforms, "get_blas_funcs", spy)
    return calls


#: (m, k): one panel of one reflector; one of 6; 256 and 1 (APPLY_PANEL merges the
#: drawn panels of 64: the last wide panel holds the 257th reflector alone).
SHAPES = [(5, 1), (9, 6), (260, 257)]


@pytest.mark.parametrize(("m", "k"), SHAPES)
@pytest.mark.parametrize("transpose", [False, True])
def test_gemm_only_maps_every_panel_by_two_plain_gemms(m, k, transpose, monkeypatch):
    """``gemm_only`` (batch_invariant's fixed row blocks): each panel Z - V (U Z) by plain
    GEMMs, never TRMM, whatever the rows: the update by BLAS ``gemm`` (accumulated in
    place), U Z by numpy's matmul (a GEMM for a block of rows), but by BLAS ``gemm`` for
    a one-reflector panel, where numpy's matmul would call GEMV; the result is X Q^T
    (X Q for Q^T)."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(m + k), m, k)
    Q = hp.matrix()
    W = WideReflectors.of(hp, transpose=transpose)
    assert [V.shape[1] for _, V, _ in W.panels] == ([256, 1] if k == 257 else [k])
    X = np.random.default_rng(1).standard_normal((64, m))
    calls = _blas_calls(monkeypatch)
    got = W.apply_rows(X, gemm_only=True)
    one_row = sum(len(U) == 1 for _, _, U in W.panels)
    assert calls == ["gemm"] * (len(W.panels) + one_row)
    np.testing.assert_allclose(got, X @ Q if transpose else X @ Q.T, rtol=0, atol=1e-12)


@pytest.mark.parametrize("panel", [{"panel": 1}, {}], ids=["panel_1", "default_panel"])
def test_wide_reflectors_hold_panels_of_256_reflectors(panel):
    """WideReflectors merges the drawn panels (1 or, by default, 64 reflectors wide) into
    panels of APPLY_PANEL = 256 reflectors (a d x d block's storage d^2 + 256 d), the
    last one shorter: 300 reflectors in 256 + 44; Q is unchanged."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(3), 300, 300, **panel)
    W = WideReflectors.of(hp)
    assert [(off, V.shape[1], U.shape) for off, V, U in W.panels] == [
        (0, 256, (256, 300)),
        (256, 44, (44, 44)),
    ]
    X = np.random.default_rng(4).standard_normal((3, 300))
    np.testing.assert_allclose(W.apply_rows(X), X @ hp.matrix().T, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("m", "k"), SHAPES)
def test_calls_of_up_to_256_rows_are_row_major_more_map_q_with_trmm(m, k, monkeypatch):
    """The documented crossover ROWS_IN_N_MAX = 256 (docs/performance.md): a call of 256
    rows is mapped row-major by numpy's matmul (no scipy BLAS call), C order; one of
    257 rows in F order, each panel of Q with its triangular top b x b blocks by TRMM
    (two per panel: U's upper triangle and V's unit lower one), the rest by GEMM where
    there are rows below them. Both are X Q^T."""
    hp = HouseholderProduct.gaussian(np.random.default_rng(m * k), m, k)
    W = WideReflectors.of(hp)
    X = np.random.default_rng(2).standard_normal((257, m))
    want = X @ hp.matrix().T
    calls = _blas_calls(monkeypatch)
    few = W.apply_rows(X[:256])
    assert calls == [] and few.flags.c_contiguous
    np.testing.assert_allclose(few, want[:256], rtol=0, atol=1e-12)
    many = W.apply_rows(X)
    assert many.flags.f_contiguous and not many.flags.c_contiguous
    assert calls.count("trmm") == 2 * len(W.panels)
    assert calls.count("gemm") == 2 * sum(m - off - V.shape[1] > 0 for off, V, _ in W.panels)
    np.testing.assert_allclose(many, want, rtol=0, atol=1e-12)
