"""The Yu et al. 2016 and Yang et al. 2014 protocols: variance_ratio, pair_mse, qmc_adaptive,
and the nn50 bandwidth rule through the runner."""

from __future__ import annotations

import numpy as np
import pytest

from kernelbench.bandwidth import nn_sigma
from kernelbench.cell import shard_schema
from kernelbench.datasets import train_part
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_cell, run_grid
from kernelbench.kernels import exact_kernel
from kernelbench.outputs.plot import make_plots
from kernelbench.protocols import get_protocol
from kernelbench.protocols.common import BANDWIDTH_QUERIES, feature_map, run_rng
from kernelbench.protocols.pair_mse import next_pow2
from kernelbench.seeding import derive_rng
from kernelbench.theory import orf_variance_ratio_exact


# ------------------------------------------------------------------ variance_ratio
def ratio_cell(method: str, d: int = 16, runs: int = 400, **protocol) -> dict:
    cell = make_cell(method, dataset="gaussian_pairs", protocol="variance_ratio", runs=runs)
    cell["protocol"].update({"d": d, "z_step": 0.5, "z_max": 2.0, **protocol})
    return cell


@pytest.fixture(scope="module")
def ratios():
    return {m: run_cell(ratio_cell(m)) for m in ("rff", "orf")}


def mean_and_se(df, column="ratio"):
    g = df.groupby("z")[column]
    return g.mean(), g.std(ddof=1) / np.sqrt(g.count())


def test_rff_ratio_is_one_and_orf_matches_theory(ratios):
    """rff: the exact Lemma 1 variance; orf: the exact ratio, each within 4 standard errors
    at 4 distances (false alarm < 3e-4 each); orf is distinguishable from 1 at z <= 1.5."""
    mean, se = mean_and_se(ratios["rff"])
    assert np.all(np.abs(mean - 1.0) < 4 * se), (mean, se)
    mean, se = mean_and_se(ratios["orf"])
    z = mean.index.to_numpy()
    exact = orf_variance_ratio_exact(z, 16)
    assert np.all(np.abs(mean.to_numpy() - exact) < 4 * se.to_numpy()), (mean, exact, se)
    small = z <= 1.5
    assert np.all(1.0 - mean.to_numpy()[small] > 4 * se.to_numpy()[small])


def test_variance_ratio_rows_and_determinism(ratios):
    df = ratios["orf"]
    assert len(df) == 400 * 4 and set(df["z"]) == {0.5, 1.0, 1.5, 2.0}
    assert (df["D"] == 16).all() and (df["d"] == 16).all()
    np.testing.assert_allclose(df["k_exact"], np.exp(-(df["z"] ** 2) / 2))
    again = run_cell(ratio_cell("orf", runs=3))
    np.testing.assert_array_equal(again["ratio"], df[df["run"] < 3]["ratio"])
    # D = 2d: two projections per dimension
    two = run_cell({**ratio_cell("rff", runs=2), "n": 2})
    assert (two["D"] == 32).all()


def test_variance_ratio_bad_settings_are_one_line():
    with pytest.raises(KernelbenchError, match="needs kernel rbf"):
        run_cell(make_cell("rff", "arccos0", "gaussian_pairs", protocol="variance_ratio", runs=1))
    with pytest.raises(KernelbenchError, match="protocol.z_step must be a number > 0"):
        run_cell(ratio_cell("rff", runs=1, z_step=0))
    with pytest.raises(KernelbenchError, match="unknown setting"):
        run_cell(ratio_cell("rff", runs=1, sigma=2))


# ------------------------------------------------------------------------ pair_mse
def test_next_pow2():
    assert [next_pow2(d) for d in (1, 2, 3, 16, 17, 784, 3072)] == [1, 2, 4, 16, 32, 1024, 4096]


def test_pair_mse_pads_uses_nn50_and_measures_the_pair_mse():
    cell = make_cell("orf", dataset="digits", protocol="pair_mse", runs=2, n=2)
    cell["kernel"]["params"]["gamma"] = "nn50"
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = 60
    df = run_cell(cell)
    assert (df["d"] == 64).all() and (df["D"] == 128).all()  # digits: d = 64 already
    # sigma: Yu's rule on the scaled train part, 1000 seeded queries, all rows neighbours
    X = train_part("digits", cell["dataset"]["splits"]["kernel_approx"]).scaled()
    rng = derive_rng(0, "bandwidth", "digits")
    ref = nn_sigma(X, 50, n_queries=min(BANDWIDTH_QUERIES, len(X)), random_state=rng)
    assert df["sigma"].iloc[0] == pytest.approx(ref.sigma, rel=1e-12)
    # the MSE is the mean over all pairs of the squared kernel error, recomputed here
    proto = get_protocol("pair_mse")
    from kernelbench.cell import build_cell

    resolved = build_cell(cell)
    ctx = proto.prepare(resolved)
    params = {**resolved.kernel["params"], "gamma": ctx.gamma}
    fm = feature_map(resolved, run_rng(resolved, 1), d=64, params=params).fit(ctx.X)
    K = exact_kernel("rbf", ctx.X, ctx.Y, gamma=ref.gamma)
    mse = np.mean((K - fm.approximate_kernel(ctx.X, ctx.Y)) ** 2)
    assert df["mse"].iloc[1] == pytest.approx(mse, rel=1e-10)


def test_pair_mse_zero_pads_to_a_power_of_two(monkeypatch):
    import kernelbench.datasets as datasets
    from kernelbench.protocols import common, pair_mse

    rng = np.random.default_rng(0)
    X, Y = rng.random((30, 5)), rng.random((30, 5))
    monkeypatch.setattr(datasets, "kernel_approx_pair", lambda *a: (X, Y, {"d": 5}))
    common.kernel_approx_pair_cached.cache_clear()
    pair_mse._padded_pair.cache_clear()
    try:
        cell = make_cell("sorf", dataset="digits", protocol="pair_mse", runs=1, n=1)
        cell["kernel"]["params"]["gamma"] = 0.5
        df = run_cell(cell)
    finally:
        common.kernel_approx_pair_cached.cache_clear()
        pair_mse._padded_pair.cache_clear()
    assert df["d"].iloc[0] == 8 and df["d_data"].iloc[0] == 5 and df["D"].iloc[0] == 8
    # padding changes no distance: the exact kernel is that of the unpadded data
    ctx_K = exact_kernel("rbf", X, Y, gamma=0.5)
    assert df["rel_fro_error"].iloc[0] == pytest.approx(
        np.sqrt(df["mse"].iloc[0] * X.shape[0] * Y.shape[0]) / np.linalg.norm(ctx_K)
    )


# ------------------------------------------------------------------- nn50 via the CLI
def test_nn50_through_kernelbench_run(tmp_path):
    """``kernel.params.gamma=nn50`` end to end (a subprocess, as a user runs it)."""
    import subprocess
    import sys

    def kb(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "kernelbench.cli", "run", "method=rff", "runs=2", *args]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)

    small = "dataset.splits.kernel_approx.samples=60"
    ok = kb("kernel.params.gamma=nn50", small, f"output_dir={tmp_path / 'runs'}")
    assert ok.returncode == 0, ok.stderr
    # the line names what differs: gamma, and a hash part for samples=60
    assert ok.stdout.startswith("digits rbf rff gamma=nn50 h=") and " n=1: rel_fro" in ok.stdout
    bad = kb("kernel.params.gamma=knn5", small)
    assert bad.returncode != 0
    assert "invalid bandwidth rule 'knn5'; valid: a positive number or nn<k>" in bad.stderr
    assert "Traceback" not in bad.stderr


# -------------------------------------------------------------------- qmc_adaptive
@pytest.fixture(scope="module")
def adaptive():
    cell = make_cell("qmc_adaptive", dataset="digits", protocol="qmc_adaptive", runs=2, n=0.5)
    cell["method"]["params"]["max_cg_iter"] = 6
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = 80
    return run_cell(cell)


def test_qmc_adaptive_rows_per_iteration(adaptive):
    df = adaptive
    assert set(df["run"]) == {0, 1}
    for _, g in df.groupby("run"):
        assert list(g["iteration"]) == list(range(len(g))) and len(g) >= 2
        disc = g["discrepancy"].to_numpy()
        assert disc[-1] < disc[0]  # CG lowers the box discrepancy
        assert np.all(g["max_sq_error"] >= g["mean_sq_error"])
    assert (df["D"] == 65).all()  # D = 2 n (d + 1), n = 1/2, d = 64


def test_qmc_adaptive_needs_the_adaptive_map():
    with pytest.raises(KernelbenchError, match="needs method qmc with sequence=adaptive"):
        run_cell(make_cell("qmc", dataset="digits", protocol="qmc_adaptive", runs=1))


# ------------------------------------------------------------------------ figures
def test_figures_are_drawn(tmp_path, ratios, adaptive):
    grid = run_grid(
        ["rff", "sorf_hd1"], datasets=["digits"], ns=[1, 2], runs=2, protocol="pair_mse",
        experiment="yu_test", output_dir=tmp_path / "runs",
    )  # fmt: skip
    assert set(grid["method_label"]) == {"rff", "sorf_hd1"}
    from kernelbench.results import write_shard

    for name, df in (("ratio", ratios["orf"]), ("adaptive", adaptive)):
        schema = shard_schema(get_protocol(str(df["protocol"].iloc[0])))
        write_shard(df, tmp_path / "runs" / name / "x.parquet", schema)
    report = make_plots(tmp_path / "runs", tmp_path / "fig", formats=["png"])
    names = {p.name for paths in report.written.values() for p in paths}
    assert {"yu_mse_mse.png", "yu_variance_ratio.png", "yang_adaptive.png"} <= names


# ----------------------------------------------------------------- qmc_discrepancy
def discrepancy_cell(method: str, **data) -> dict:
    cell = make_cell(method, dataset="digits", protocol="qmc_discrepancy", runs=3, n=2)
    cell["dataset"]["splits"]["kernel_approx"].update({"samples": 120, **data})
    return cell


def test_qmc_discrepancy_rows_and_qmc_below_mc():
    """Yang Fig. 3 on digits (d = 64, s = 260): Theorem 9's error over the bounding box
    is the mean of the per-u errors; RQMC points sit below MC's, whose run-to-run spread
    is ~15% (3 runs), by more than a factor 2 here."""
    rows = {m: run_cell(discrepancy_cell(m)) for m in ("rff", "qmc_digital_net", "qmc_lattice")}
    for df in rows.values():
        assert len(df) == 3 and (df["box_scale"] == 1.0).all() and (df["D"] == 260).all()
        assert (df["discrepancy"] > 0).all() and (df["rel_spec_error"] > 0).all()
    mc = rows["rff"]["discrepancy"].mean()
    assert rows["qmc_digital_net"]["discrepancy"].mean() < 0.5 * mc
    assert rows["qmc_lattice"]["discrepancy"].mean() < 0.5 * mc
    # a smaller box: the central part (Fig. 3, census) - the same points, another number
    half = discrepancy_cell("rff")
    half["protocol"]["box_scale"] = 0.5
    other = run_cell(half)
    assert (other["box_scale"] == 0.5).all()
    np.testing.assert_array_equal(other["rel_spec_error"], rows["rff"]["rel_spec_error"])
    assert not np.allclose(other["discrepancy"], rows["rff"]["discrepancy"])
    with pytest.raises(KernelbenchError, match="needs kernel rbf and a method with Gaussian"):
        run_cell(make_cell("sorf", dataset="digits", protocol="qmc_discrepancy", runs=1))


def test_yang_data_options_pca_and_one_subset():
    """same_subset: K = k(X, X); pca: k centred principal coordinates (Yang Sec. 6.1)."""
    from kernelbench.datasets import kernel_approx_pair
    from kernelbench.datasets.splits import pca_axes

    cfg = make_cell("rff", dataset="digits")["dataset"]
    cfg["splits"]["kernel_approx"].update({"samples": 100, "same_subset": True, "pca": 10})
    X, Y, prov = kernel_approx_pair(cfg, seed=0)
    assert X.shape == (100, 10) and np.array_equal(X, Y)
    assert prov["pca"] == 10 and prov["same_subset"] is True
    part = train_part("digits", cfg["splits"]["kernel_approx"]).scaled()
    mean, axes = pca_axes(part, 10)
    np.testing.assert_allclose(axes.T @ axes, np.eye(10), atol=1e-12)
    variances = ((part - mean) @ axes).var(axis=0)
    assert np.all(np.diff(variances) <= 1e-12)  # decreasing explained variance
    # the top-10 subspace is the SVD's (signs aside)
    _, _, vt = np.linalg.svd(part - mean, full_matrices=False)
    np.testing.assert_allclose(np.abs(vt[:10] @ axes), np.eye(10), atol=1e-8)
    with pytest.raises(KernelbenchError, match="pca=65 but the data have d=64"):
        pca_axes(part, 65)
