"""protocol=krr (Liu et al. 2020, Table 3) and its chunked KRR learner."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Ridge

from kernelbench.cell import build_cell
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import make_cell, run_cell
from kernelbench.learners.ridge import ChunkedRidge
from kernelbench.protocols import figure_of, get_protocol, reference_cells
from tests.conftest import need_mirror


def _features(n: int = 157, s: int = 9, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, s))
    y = np.where(Z[:, 0] + 0.5 * rng.standard_normal(n) > 0.2, 1.0, -1.0)
    return Z, y


@pytest.mark.parametrize("chunk", [1, 7, 50, 10_000])
@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("times_n", [False, True])
def test_chunked_ridge_equals_sklearn(chunk: int, center: bool, times_n: bool) -> None:
    """(Z^T Z + lambda' I) beta = Z^T (y - c): scikit-learn's Ridge on the same features."""
    Z, y = _features()
    lam = 0.3
    m = ChunkedRidge(lam, cv_folds=1, lambda_times_n=times_n, center=center, chunk_rows=chunk)
    m.fit(Z, y)
    alpha = lam * len(y) if times_n else lam
    mean = y.mean() if center else 0.0
    ref = Ridge(alpha=alpha, fit_intercept=False, solver="cholesky").fit(Z, y - mean)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(m.decision_function(Z), ref.predict(Z) + mean, atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(5, 90),
    s=st.integers(1, 12),
    chunk=st.integers(1, 100),
    lam=st.floats(1e-3, 10.0),
    seed=st.integers(0, 2**16),
)
def test_chunked_ridge_equals_sklearn_for_any_chunk(n, s, chunk, lam, seed) -> None:
    Z, y = _features(n=n, s=s, seed=seed)
    m = ChunkedRidge(lam, cv_folds=1, chunk_rows=chunk).fit(Z, y)
    ref = Ridge(alpha=lam * n, fit_intercept=False, solver="cholesky").fit(Z, y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-8)


def test_chunked_ridge_through_a_transform() -> None:
    """transform is applied per chunk; the result equals fitting the full features."""
    X, y = _features(s=3)
    W = np.random.default_rng(1).standard_normal((3, 8))
    full = ChunkedRidge(0.1, cv_folds=1).fit(np.cos(X @ W), y)
    chunked = ChunkedRidge(0.1, cv_folds=1, chunk_rows=13).fit(X, y, lambda A: np.cos(A @ W))
    np.testing.assert_allclose(chunked.coef_, full.coef_, atol=1e-10)
    assert chunked.accumulator_bytes_ == 8 * 8 * 8  # one s x s float64 matrix (s = 8)


def test_cv_picks_from_the_grid_deterministically() -> None:
    Z, y = _features()
    grid = [0.001, 0.05, 0.5, 5.0]
    fits = [ChunkedRidge(grid, cv_folds=5, random_state=7).fit(Z, y) for _ in range(2)]
    assert fits[0].lambda_ in grid
    assert fits[0].lambda_ == fits[1].lambda_
    np.testing.assert_array_equal(fits[0].cv_accuracy_, fits[1].cv_accuracy_)
    # the chosen value is the best held-out accuracy (ties: the later grid value)
    best = max(range(4), key=lambda i: (fits[0].cv_accuracy_[i], i))
    assert fits[0].lambda_ == grid[best]


def test_cv_accuracy_matches_a_direct_computation() -> None:
    """Pooled held-out accuracy of each grid value, recomputed with sklearn per fold."""
    Z, y = _features(n=60)
    grid = [0.01, 1.0]
    m = ChunkedRidge(grid, cv_folds=3, random_state=3, chunk_rows=11).fit(Z, y)
    folds = np.random.default_rng(3).permutation(60) % 3
    for i, lam in enumerate(grid):
        correct = 0
        for j in range(3):
            tr = folds != j
            r = Ridge(alpha=lam * tr.sum(), fit_intercept=False).fit(Z[tr], y[tr])
            correct += np.sum(np.where(r.predict(Z[~tr]) >= 0, 1, -1) == y[~tr])
        assert m.cv_accuracy_[i] == pytest.approx(correct / 60)


def test_ridge_errors_are_one_line() -> None:
    Z, y = _features()
    with pytest.raises(KernelbenchError, match="lambdas"):
        ChunkedRidge([], cv_folds=1).fit(Z, y)
    with pytest.raises(KernelbenchError, match="lambdas"):
        ChunkedRidge([0.1, -1], cv_folds=1).fit(Z, y)
    with pytest.raises(KernelbenchError, match="cv_folds"):
        ChunkedRidge([0.1, 1.0], cv_folds=0).fit(Z, y)
    with pytest.raises(KernelbenchError, match="rows"):
        ChunkedRidge(0.1, cv_folds=1).fit(Z, y[:5])


# ---------------------------------------------------------------------- protocol


def test_budget_gamma_and_settings() -> None:
    proto = get_protocol("krr")
    cell = make_cell("rff", dataset="eeg", n=4, protocol="krr")
    assert proto.gamma(build_cell(cell)) == 1.0  # exp(-|x - x'|^2 / sigma^2), sigma = 1
    cell["protocol"]["width"] = "2sigma2"
    assert proto.gamma(build_cell(cell)) == 0.5
    fm = proto.feature_map(build_cell(cell), 0, d=14)
    assert fm.fit(np.zeros((3, 14))).n_projections_ == 4 * 14  # s = (s/d) d
    with pytest.raises(KernelbenchError, match="valid choices: sigma2, 2sigma2"):
        proto.check_settings({**cell["protocol"], "width": "sigma"})
    with pytest.raises(KernelbenchError, match="unknown setting"):
        proto.check_settings({**cell["protocol"], "folds": 3})
    # krr has one learner (the KRR classifier): a learner setting names the valid ones
    with pytest.raises(KernelbenchError, match=r"unknown setting\(s\) learner .*valid: .*lambdas"):
        proto.check_settings({**cell["protocol"], "learner": "svm_precomputed"})


def test_kernel_other_than_rbf_is_one_line() -> None:
    cell = make_cell("rff", kernel="arccos0", dataset="eeg", n=1, protocol="krr", runs=1)
    with pytest.raises(KernelbenchError, match="valid choices: rbf"):
        run_cell(cell)


def test_non_binary_labels_are_one_line() -> None:
    """A multi-class (or regression) dataset under krr names the valid datasets."""
    cell = make_cell("rff", dataset="digits", n=1, protocol="krr", runs=1)
    cell["dataset"]["splits"]["liu2020"] = {"test": "half", "scaling": "minmax"}
    with pytest.raises(KernelbenchError, match=r"binary class labels.*valid datasets: .*eeg"):
        run_cell(cell)


def test_dataset_without_liu_settings_is_one_line() -> None:
    cell = make_cell("rff", dataset="digits", n=1, protocol="krr", runs=1)
    with pytest.raises(KernelbenchError, match="no data settings for protocol 'krr'"):
        run_cell(cell)


@pytest.fixture(scope="module")
def eeg_rows():
    need_mirror("eeg.npz")
    cell = make_cell("slw_rff", dataset="eeg", n=1, runs=2, protocol="krr")
    cell["protocol"].update(spectral_points=200, cv_folds=3)
    return cell, run_cell(cell)


def test_eeg_rows(eeg_rows) -> None:
    cell, df = eeg_rows
    assert (df["s"] == 14).all() and (df["n_features"] == 28).all()
    assert (df["train_rows"] == 7490).all() and (df["test_rows"] == 7490).all()
    assert df["lambda_"].isin([0.05, 0.1, 0.5, 1.0]).all()
    assert ((df["accuracy_pct"] > 0) & (df["accuracy_pct"] <= 100)).all()
    assert (df["rel_spec_error"] >= 0).all() and (df["peak_memory_mb"] > 0).all()
    np.testing.assert_allclose(
        df["feature_seconds"], df["fit_seconds"] + df["transform_seconds"], rtol=1e-12
    )
    again = run_cell(cell)  # bit-identical rerun
    np.testing.assert_array_equal(again["accuracy_pct"], df["accuracy_pct"])
    np.testing.assert_array_equal(again["rel_spec_error"], df["rel_spec_error"])


def test_reference_cells_read_table3() -> None:
    from kernelbench.reference import load_reference

    ref = reference_cells(get_protocol("krr"), "t", load_reference("liu2020_table3_krr_accuracy"))
    row = ref[(ref["dataset"] == "codrna") & (ref["method"] == "slw_rff") & (ref["n"] == 4)]
    assert row[["mean", "std", "runs"]].values.tolist() == [[92.83, 0.33, 10]]
    assert set(ref["dataset"]) == {"eeg", "codrna"} and set(ref["kernel"]) == {"rbf"}


def test_figures_from_results(eeg_rows, tmp_path) -> None:
    """liu_table3 puts ours beside the paper's cell; liu_fig1 draws its three panels."""
    from kernelbench.outputs.generic import FigureOptions
    from kernelbench.outputs.render import finish

    _, df = eeg_rows
    rff = run_cell(make_cell("rff", dataset="eeg", n=1, runs=2, protocol="krr"))
    import pandas as pd

    both = pd.concat([df, rff], ignore_index=True)
    table3 = figure_of(get_protocol("krr"), "liu_table3").load()
    out = table3(both, tmp_path, FigureOptions(formats=("png",)))
    table = pd.read_csv(tmp_path / "liu_table3.csv")
    row = table[table["method"] == "slw_rff"].iloc[0]
    assert row["paper_acc_mean"] == 68.62 and row["s"] == 14
    assert row["acc_mean"] == pytest.approx(df["accuracy_pct"].mean())
    assert row["time_vs_rff"] == pytest.approx(
        df["feature_seconds"].mean() / rff["feature_seconds"].mean()
    )
    assert (tmp_path / "liu_table3.md").is_file() and out.written
    assert not any("blank paper" in note for note in out.notes)
    # a dataset the paper's Table 3 has no row for: its paper columns are blank, and why
    other = table3(
        both.assign(dataset="magic04"), tmp_path / "magic04", FigureOptions(formats=("png",))
    )
    assert (
        "blank paper_* columns: the paper's Table 3 has rows for cod-RNA, EEG and methods "
        "lev_rff, qmc, rff, slw_rff only; our other datasets and methods have no published "
        "number to compare with"
    ) in other.notes
    assert "blank paper_* columns" in (tmp_path / "magic04" / "liu_table3.md").read_text()
    fig1 = figure_of(get_protocol("krr"), "liu_fig1").load()
    finish(fig1(both, tmp_path, FigureOptions(formats=("png",))))
    assert (tmp_path / "liu_fig1.png").stat().st_size > 0
