"""The two readings of Liu et al. 2020's Table 3 setup (docs/liu2020.md): the public
MATLAB code's (``reading=code``: per-row scaling, re-weighted columns, shared draw,
centred labels, 3 folds, a fresh split per run) and the paper's (``reading=paper``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from kernelbench.cell import build_cell
from kernelbench.datasets.splits import Scaler, row_minmax
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_cell
from kernelbench.features import make_feature_map
from kernelbench.protocols import get_protocol
from kernelbench.protocols.krr import READINGS
from tests.conftest import need_mirror

METHODS = ("lev_rff", "slw_rff")


@pytest.fixture
def needs_mirror() -> None:
    need_mirror("eeg.npz", "codrna.npz")


def _data(n: int = 60, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5, 1.0, -1.0)
    return X, y


def _matlab_map(X, y, Xt, W, b, method: str, ridge: float = 0.05):
    """A line-by-line transcription of SERLSRFF.m / leverageRFF.m (d x n layout)."""
    D = W.shape[1]
    n = X.shape[1]

    def feats(WW, A):
        return np.sqrt(1 / D) * np.vstack(
            [np.cos(WW[:, :D].T @ A + b[:, None]), np.sin(WW[:, D:].T @ A + b[:, None])]
        )

    Z = np.sqrt(1 / D) * np.vstack([np.cos(W.T @ X + b[:, None]), np.sin(W.T @ X + b[:, None])])
    if method == "slw_rff":
        M = (Z @ y) ** 2
    else:
        ZTZ = Z @ Z.T
        M = np.diag(ZTZ @ np.linalg.inv(ZTZ + n * ridge * np.eye(2 * D)))
    q = M / M.sum()
    wgt = np.sqrt(1 / q)
    order = np.argsort(wgt, kind="stable")
    WW = np.hstack([W, W])[:, order]
    return (wgt[order][:, None] * feats(WW, X)).T, (wgt[order][:, None] * feats(WW, Xt)).T


@pytest.mark.parametrize("method", METHODS)
def test_reweight_is_the_public_code(method: str) -> None:
    X, y = _data()
    Xt = _data(n=17, seed=1)[0]
    gamma = 0.7
    fm = make_feature_map(method, n=1.5, gamma=gamma, mode="reweight", random_state=3).fit(X, y)
    D = fm.n_projections_
    rng = np.random.default_rng(3)  # the map's own stream: W, then the phase b
    W = rng.standard_normal((D, X.shape[1])) * np.sqrt(2 * gamma)
    b = rng.uniform(0.0, 2.0 * np.pi, D)
    Ztr, Zte = _matlab_map(X.T, y, Xt.T, W.T, b, method)
    np.testing.assert_allclose(fm.transform(X), Ztr, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fm.transform(Xt), Zte, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fm.approximate_kernel(Xt), Zte @ Zte.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_reweight_spans_the_rff_columns_of_the_same_draw(method: str) -> None:
    """Same span as RFF on the same W (each frequency keeps two columns of two phases):
    the projection of either feature matrix on the other's column space is exact."""
    X, y = _data(n=200, d=4)
    rff = make_feature_map("rff", n=1, random_state=11).fit(X)
    rw = make_feature_map(method, n=1, mode="reweight", random_state=11).fit(X, y)
    np.testing.assert_array_equal(rw.W_, rff.W_)  # the draw RFF makes
    A, B = rff.transform(X), rw.transform(X)
    assert A.shape == B.shape and np.linalg.matrix_rank(A) == A.shape[1]
    for P, Q in ((A, B), (B, A)):
        coef = np.linalg.lstsq(P, Q, rcond=None)[0]
        assert np.linalg.norm(P @ coef - Q) <= 1e-9 * np.linalg.norm(Q)
    # ... but not the same map: the columns are re-weighted (no unbiased estimate)
    assert not np.allclose(rw.approximate_kernel(X), rff.approximate_kernel(X), rtol=0.1)


def test_reweight_weights_follow_the_scores() -> None:
    X, y = _data()
    fm = make_feature_map("slw_rff", n=2, mode="reweight", random_state=0).fit(X, y)
    D = fm.n_projections_
    q = fm.scores_ / fm.scores_.sum()
    np.testing.assert_allclose(fm.column_scale_**2, 1 / (D * q[fm.indices_]), rtol=1e-12)
    assert np.all(np.diff(fm.column_scale_) >= 0)  # ascending weight, MATLAB's sort
    np.testing.assert_array_equal(fm.column_W_, fm.W_[fm.indices_ % D])
    assert fm.transform(X).shape == (len(X), 2 * D)
    f32 = make_feature_map("slw_rff", n=2, mode="reweight", random_state=0)
    assert f32.fit(X.astype(np.float32), y).transform(X.astype(np.float32)).dtype == np.float32


def test_mode_errors_are_one_line() -> None:
    X, y = _data()
    with pytest.raises(KernelbenchError, match="invalid mode 'sample'; valid choices: resample"):
        make_feature_map("slw_rff", n=1, mode="sample").fit(X, y)
    with pytest.raises(KernelbenchError, match="presample must be 1 with mode 'reweight'"):
        make_feature_map("lev_rff", n=1, mode="reweight", presample=2).fit(X, y)


def test_row_minmax_scales_each_sample() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 6)) * rng.uniform(1, 1e5, size=(50, 1))
    X[3] = 7.0  # a constant row goes to the lower bound, as mapminmax does
    Z = row_minmax(X)
    keep = np.arange(50) != 3
    np.testing.assert_allclose(Z[keep].min(axis=1), -1.0)
    np.testing.assert_allclose(Z[keep].max(axis=1), 1.0)
    np.testing.assert_array_equal(Z[3], -1.0)
    # invariant to a positive affine change of a row: the outlier squash goes away
    np.testing.assert_allclose(row_minmax(5 * X + 3)[keep], Z[keep], atol=1e-12)
    np.testing.assert_array_equal(Scaler("row_minmax", X[:5])(X), Z)


def test_readings_fill_the_settings_left_null() -> None:
    proto = get_protocol("krr")
    for reading, values in READINGS.items():
        cell = build_cell(make_cell("rff", dataset="eeg", n=1, protocol="krr", runs=1))
        settings = {**cell.settings, "reading": reading, **dict.fromkeys(values)}
        out = proto.check_settings(settings)
        assert {k: out[k] for k in values} == values
    # an explicit value wins over the reading's
    out = proto.check_settings({**settings, "reading": "code", "cv_folds": 7})
    assert out["cv_folds"] == 7 and out["sampler"] == "reweight"
    # what the cell leaves out comes from configs/protocol/krr.yaml, not from code
    out = proto.check_settings({"name": "krr"})
    assert out["reading"] == "code" and out["lambda_times_n"] is False
    with pytest.raises(KernelbenchError, match="invalid reading 'matlab'; valid choices: code"):
        proto.check_settings({"name": "krr", "reading": "matlab"})
    with pytest.raises(KernelbenchError, match="invalid sampler 'multinomial'; valid choices: rew"):
        proto.check_settings({"name": "krr", "sampler": "multinomial"})


def test_the_learner_reads_the_resolved_settings() -> None:
    cell = build_cell(make_cell("rff", dataset="eeg", n=1, protocol="krr", runs=1))
    krr = get_protocol("krr").learner(cell, 0)
    assert (krr.cv_folds, krr.center, krr.lambda_times_n) == (3, True, False)


def test_shared_draw_gives_the_rff_family_one_stream() -> None:
    proto = get_protocol("krr")
    cells = {m: build_cell(make_cell(m, dataset="eeg", n=2, protocol="krr")) for m in METHODS}
    rff = build_cell(make_cell("rff", dataset="eeg", n=2, protocol="krr"))
    a = proto.run_rng(rff, 4).standard_normal(5)
    for cell in cells.values():
        np.testing.assert_array_equal(proto.run_rng(cell, 4).standard_normal(5), a)
        cell = dataclasses.replace(cell, settings={**cell.settings, "shared_draw": False})
        assert not np.array_equal(proto.run_rng(cell, 4).standard_normal(5), a)
    orf = build_cell(make_cell("orf", dataset="eeg", n=2, protocol="krr"))
    assert not np.array_equal(proto.run_rng(orf, 4).standard_normal(5), a)


@pytest.mark.parametrize(("reading", "mode"), [("code", "reweight"), ("paper", "resample")])
def test_sampler_reaches_the_map(reading: str, mode: str) -> None:
    cell = make_cell("slw_rff", dataset="eeg", n=1, protocol="krr")
    cell["protocol"]["reading"] = reading
    cell = build_cell(cell)
    assert get_protocol("krr").feature_map(cell, 0, d=14).mode == mode
    params = {**cell.method["params"], "mode": "resample"}  # the method's own setting wins
    cell = dataclasses.replace(cell, method={**cell.method, "params": params})
    assert get_protocol("krr").feature_map(cell, 0, d=14).mode == "resample"


@pytest.mark.usefixtures("needs_mirror")
def test_code_reading_splits_every_run_and_scales_rows() -> None:
    proto = get_protocol("krr")
    cell = build_cell(make_cell("rff", dataset="eeg", n=1, protocol="krr", runs=2))
    ctx = proto.prepare(cell)
    a, b = proto.run_split(cell, ctx, 0), proto.run_split(cell, ctx, 1)
    assert len(a.y_train) == len(b.y_train) == 7490
    assert not np.array_equal(a.X_train, b.X_train)
    for part in (a.X_train, a.X_test):
        np.testing.assert_allclose(part.min(axis=1), -1.0)
        np.testing.assert_allclose(part.max(axis=1), 1.0)
    cod = build_cell(make_cell("rff", dataset="codrna", n=1, protocol="krr", runs=1))
    ctx = proto.prepare(cod)
    assert proto.run_split(cod, ctx, 3) is ctx  # a given partition is not re-split


@pytest.mark.usefixtures("needs_mirror")
def test_paper_reading_rows_are_the_former_protocol() -> None:
    """reading=paper keeps the behaviour before the readings existed: its EEG rff cell
    equals the committed paper-reading baseline (10 runs, 6 significant digits)."""
    from pathlib import Path

    base = Path(__file__).resolve().parents[1] / "results/baseline"
    table = pd.read_csv(base / "liu2020_table3_paper_baseline.csv")
    row = table[(table["dataset"] == "eeg") & (table["method_label"] == "rff")]
    row = row[row["n"] == 1].iloc[0]
    cell = make_cell("rff", dataset="eeg", n=1, protocol="krr", runs=10)
    cell["protocol"]["reading"] = "paper"
    df = run_cell(cell)
    assert df["accuracy_pct"].mean() == pytest.approx(row["mean"], rel=1e-5)
    assert df["accuracy_pct"].std() == pytest.approx(row["std"], rel=1e-5)


def test_qmc_fixed_is_one_point_set_for_every_run() -> None:
    """Liu et al.'s QMC (configs/method/qmc_fixed.yaml): the RR2 Halton set with MATLAB's
    Skip 1000 and Leap 700, drawn without randomness, so every run maps alike."""
    from kernelbench.config import load_group

    params = load_group("method", "qmc_fixed")["params"]
    X = _data(n=30, d=5)[0]
    maps = [make_feature_map("qmc", n=2, random_state=r, **params).fit(X) for r in (0, 1)]
    np.testing.assert_array_equal(maps[0].transform(X), maps[1].transform(X))
    plain = make_feature_map("qmc", n=2, random_state=0, randomize="rr2").fit(X)
    assert not np.array_equal(plain.W_, maps[0].W_)  # skip and leap move the points
    with pytest.raises(KernelbenchError, match="skip and leap apply to the RR2 Halton set"):
        make_feature_map("qmc", n=1, skip=10).fit(X)
