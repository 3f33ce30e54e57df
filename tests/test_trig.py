"""The vectorised cos/sin features (kernelbench.trig) against numpy's libm values."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench import trig
from kernelbench.experiment import make_cell, run_cell
from kernelbench.trig import scaled_cos_sin, scaled_cos_sin_split
from tests.conftest import need_mirror

ULP = np.finfo(np.float64).eps


def _numpy_features(P: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.hstack([np.cos(P) * scale, np.sin(P) * scale])


@pytest.mark.parametrize("spread", [1e-3, 1.0, 10.0, 300.0, 5e4])
def test_values_agree_with_numpy_to_a_few_ulp(spread):
    rng = np.random.default_rng(1)
    P = rng.standard_normal((37, 211)) * spread
    scale = rng.uniform(0.5, 2.0, 211)
    Z = scaled_cos_sin(P, scale)
    ref = _numpy_features(P, scale)
    # |cos|, |sin| <= 1: an error of 2 ulp of 1 (glibc and fdlibm are both < 1 ulp)
    assert np.max(np.abs(Z - ref) / np.tile(scale, 2)) <= 2 * ULP


def test_near_multiples_of_half_pi_keep_relative_accuracy():
    """The three-part reduction keeps the small values at the zeros of cos and sin."""
    k = np.arange(-2000, 2001, dtype=np.float64)
    P = (k[:, None] * (np.pi / 2) + np.array([-1e-9, 0.0, 1e-9, 1e-6])[None, :]).reshape(1, -1)
    P = np.repeat(P, 2, axis=0)
    Z = scaled_cos_sin(P, np.ones(P.shape[1]))
    ref = _numpy_features(P, np.ones(P.shape[1]))
    assert np.max(np.abs(Z - ref) / np.maximum(np.abs(ref), 1e-300)) <= 1e-12
    assert np.max(np.abs(Z - ref)) <= 2 * ULP


def test_large_and_nonfinite_entries_take_numpy_one_by_one_and_float32_all():
    """An entry beyond MAX_ABS (or NaN) gets numpy's value; the other entries of its row
    and batch keep the compiled kernel's: which routine computes an entry never depends
    on the other rows (a row alone is the same bits as in the batch)."""
    rng = np.random.default_rng(2)
    scale = rng.uniform(0.5, 2.0, 100)
    plain = rng.standard_normal((50, 100))
    # 1e15: far outside the Cody-Waite reduction's range, where the compiled kernel's
    # value is wrong (a fix-up that never ran would show); inf: numpy's NaN
    far = (((3, 7), 2 * trig.MAX_ABS), ((0, 0), np.nan), ((5, 9), 1e15), ((7, 1), -np.inf))
    for where, value in far:
        P = plain.copy()
        P[where] = value
        Z, ref = scaled_cos_sin(P, scale), _numpy_features(P, scale)
        r, c = where
        np.testing.assert_array_equal(Z[r, [c, 100 + c]], ref[r, [c, 100 + c]])
        keep = np.ones(200, dtype=bool)
        keep[[c, 100 + c]] = False
        np.testing.assert_array_equal(Z[:, keep], scaled_cos_sin(plain, scale)[:, keep])
        for i in (r, r + 1, 49):
            np.testing.assert_array_equal(scaled_cos_sin(P[i : i + 1], scale)[0], Z[i])
    assert not np.array_equal(scaled_cos_sin(plain, scale), _numpy_features(plain, scale))
    P32 = rng.standard_normal((80, 100)).astype(np.float32)
    Z32 = scaled_cos_sin(P32, scale.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_array_equal(Z32, _numpy_features(P32, scale.astype(np.float32)))


def test_non_contiguous_projections():
    rng = np.random.default_rng(3)
    P = rng.standard_normal((200, 120))[:, ::2]
    scale = rng.uniform(0.5, 2.0, 60)
    np.testing.assert_allclose(
        scaled_cos_sin(P, scale), _numpy_features(P, scale), rtol=0, atol=4 * ULP
    )


def _numpy_split(P: np.ndarray, scale: np.ndarray) -> np.ndarray:
    D = P.shape[1] // 2
    return np.hstack([np.cos(P[:, :D]) * scale[:D], np.sin(P[:, D:]) * scale[D:]])


@pytest.mark.parametrize("spread", [1e-3, 1.0, 300.0, 5e4])
def test_split_columns_agree_with_numpy_to_a_few_ulp(spread):
    """cos of the left half, sin of the right half, each column its own scale."""
    rng = np.random.default_rng(3)
    P = rng.standard_normal((41, 2 * 150)) * spread
    scale = rng.uniform(0.5, 2.0, 300)
    Z = scaled_cos_sin_split(P, scale)
    assert np.max(np.abs(Z - _numpy_split(P, scale)) / scale) <= 2 * ULP
    np.testing.assert_allclose(Z[:, :150], scaled_cos_sin(P[:, :150], scale[:150])[:, :150])


def test_split_columns_fall_back_to_numpy_and_reject_odd_widths():
    rng = np.random.default_rng(4)
    scale = rng.uniform(0.5, 2.0, 200)
    big = rng.standard_normal((40, 200))
    big[1, 2] = -2 * trig.MAX_ABS
    big[3, 150] = 1e15  # in the sin half, where the compiled value is wrong
    Z, ref = scaled_cos_sin_split(big, scale), _numpy_split(big, scale)
    np.testing.assert_array_equal(Z[1, 2], ref[1, 2])  # the far entries: numpy's bits
    np.testing.assert_array_equal(Z[3, 150], ref[3, 150])
    np.testing.assert_array_equal(Z[1:2], scaled_cos_sin_split(big[1:2], scale))
    np.testing.assert_allclose(Z, ref, rtol=0, atol=4 * ULP)
    P32 = rng.standard_normal((60, 200)).astype(np.float32)
    Z32 = scaled_cos_sin_split(P32, scale.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_array_equal(Z32, _numpy_split(P32, scale.astype(np.float32)))
    with pytest.raises(ValueError, match="even"):
        scaled_cos_sin_split(np.zeros((2, 3)), np.ones(3))


# --------------------------------------------------- one Gaussian cell of each protocol
def _krr_cell():
    need_mirror("eeg.npz")
    cell = make_cell("slw_rff", dataset="eeg", n=1, runs=2, protocol="krr")
    cell["protocol"].update(spectral_points=200, cv_folds=3)
    return cell


def _cells():
    def kernel_approx():
        cell = make_cell("sr33", dataset="digits", n=2, runs=3)
        cell["dataset"]["splits"]["kernel_approx"]["samples"] = 100
        return cell

    def pair_mse():
        cell = make_cell("orf", dataset="digits", protocol="pair_mse", runs=2, n=2)
        cell["dataset"]["splits"]["kernel_approx"]["samples"] = 60
        return cell

    def qmc_adaptive():
        cell = make_cell("qmc_adaptive", dataset="digits", protocol="qmc_adaptive", runs=2)
        cell["method"]["params"]["max_cg_iter"] = 6
        cell["dataset"]["splits"]["kernel_approx"]["samples"] = 80
        return cell

    def variance_ratio():
        cell = make_cell("orf", dataset="gaussian_pairs", protocol="variance_ratio", runs=20)
        cell["protocol"].update({"d": 16, "z_step": 0.5, "z_max": 2.0})
        return cell

    def downstream():
        cell = make_cell("rff", protocol="downstream", dataset="digits", runs=2)
        cell["dataset"]["splits"]["downstream"]["train_rows"] = 400
        return cell

    return {
        "kernel_approx": kernel_approx,
        "krr": _krr_cell,
        "pair_mse": pair_mse,
        "qmc_adaptive": qmc_adaptive,
        "variance_ratio": variance_ratio,
        "downstream": downstream,
    }


@pytest.mark.parametrize("protocol", list(_cells()))
def test_protocol_rows_change_at_rounding_level_only(protocol, monkeypatch):
    """A Gaussian cell of every protocol (walltime stores timings only): the vectorised
    cos/sin (every size) against numpy's (every size), relative change <= 1e-12."""
    from kernelbench.protocols import get_protocol

    cell = _cells()[protocol]()
    monkeypatch.setattr(trig, "USE_COMPILED", True)
    fast = run_cell(cell)
    monkeypatch.setattr(trig, "USE_COMPILED", False)
    slow = run_cell(cell)
    columns = [m.column for m in get_protocol(protocol).metrics.values()]
    columns = [c for c in columns if "seconds" not in c]
    assert columns
    for c in columns:
        a, b = fast[c].to_numpy(float), slow[c].to_numpy(float)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=f"{protocol}: {c}")
