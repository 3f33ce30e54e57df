"""Nystroem features (kernelbench.features.nystrom) against scikit-learn's ``Nystroem``
on the same landmarks, the budget rule and the protocol path."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem as SkNystroem

from kernelbench.features import make_feature_map
from kernelbench.features.base import n_projections
from kernelbench.kernels import exact_kernel


def _data(seed: int = 0, N: int = 120, d: int = 6) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, d))


def _sk_kernel(kernel: str):
    """Our exact kernel as scikit-learn's per-pair callable."""
    return lambda a, b: float(exact_kernel(kernel, a[None, :], b[None, :])[0, 0])


@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
def test_matches_sklearn_on_the_same_landmarks(kernel):
    """K_hat = k(X, L) K_LL^+ k(L, Y) equals scikit-learn's on our landmarks: a
    well-conditioned K_LL (distinct Gaussian points), so its 1e-12 floor and our
    rank cut-off coincide; the difference is rounding (1e-9 relative)."""
    X, Y = _data(0), _data(1)
    fm = make_feature_map("nystrom", kernel=kernel, n=1, random_state=3).fit(X)
    m = fm.n_features_out_
    assert m == min(len(X), (2 if kernel == "rbf" else 1) * n_projections(1, X.shape[1]))
    assert fm.rank_ == m
    L = X[fm.landmark_indices_]
    if kernel == "rbf":
        sk = SkNystroem(kernel="rbf", gamma=1.0 / X.shape[1], n_components=m, random_state=0)
    else:
        sk = SkNystroem(kernel=_sk_kernel(kernel), n_components=m, random_state=0)
    sk.fit(L)  # every row a landmark: the same set, another order (K_hat is invariant)
    ours = fm.approximate_kernel(X, Y)
    theirs = sk.transform(X) @ sk.transform(Y).T
    assert np.max(np.abs(ours - theirs)) <= 1e-9 * np.max(np.abs(theirs))


def test_all_rows_landmarks_interpolate():
    """m >= N: every fitted row is a landmark and K_hat(X, Y) = K(X, Y) to rounding."""
    X, Y = _data(0, N=30, d=40), _data(1, N=30, d=40)
    fm = make_feature_map("nystrom", kernel="rbf", n=1, random_state=0).fit(X)
    assert fm.n_features_out_ == 30 and fm.n_projections_ == n_projections(1, 40)
    K = exact_kernel("rbf", X, Y)
    assert np.linalg.norm(fm.approximate_kernel(X, Y) - K) <= 1e-8 * np.linalg.norm(K)


def test_error_falls_with_the_budget():
    """More landmarks, smaller error: the mean relative Frobenius error over 20 draws
    at n = 2 is below that at n = 0.5 (d = 4: 10 vs 40 landmarks of 300 rows)."""
    X, Y = _data(0, N=300, d=4), _data(1, N=300, d=4)
    K = exact_kernel("rbf", X, Y)

    def err(n: float, seed: int) -> float:
        fm = make_feature_map("nystrom", kernel="rbf", n=n, random_state=seed).fit(X)
        return np.linalg.norm(fm.approximate_kernel(X, Y) - K) / np.linalg.norm(K)

    small = [err(0.5, s) for s in range(20)]
    large = [err(2, s) for s in range(20)]
    assert np.mean(large) < np.mean(small)


def test_rank_deficient_landmarks_are_cut():
    """Repeated rows make K_LL singular: the rank cut-off keeps K_hat finite and
    exact instead of amplifying rounding by 1e6 (n = 5, d = 5: 60 landmarks, every
    row, 10 distinct)."""
    X = np.repeat(_data(0, N=10, d=5), 6, axis=0)
    fm = make_feature_map("nystrom", kernel="arccos1", n=5, random_state=0).fit(X)
    assert fm.n_features_out_ == 60 and fm.rank_ <= 10
    K_hat = fm.approximate_kernel(X)
    K = exact_kernel("arccos1", X)
    assert np.all(np.isfinite(K_hat))
    assert np.linalg.norm(K_hat - K) <= 1e-8 * np.linalg.norm(K)


def test_reproducible_and_dtype():
    X = _data(2)
    a = make_feature_map("nystrom", n=1, random_state=5).fit(X).transform(X)
    b = make_feature_map("nystrom", n=1, random_state=5).fit(X).transform(X)
    assert np.array_equal(a, b)
    other = make_feature_map("nystrom", n=1, random_state=6).fit(X).transform(X)
    assert not np.array_equal(a, other)  # the seed is what fixes them, not a constant
    z32 = make_feature_map("nystrom", n=1, random_state=5).fit(X.astype(np.float32))
    assert z32.transform(X.astype(np.float32)).dtype == np.float32


def test_kernel_approx_run(tmp_path):
    """The protocol path: one digits cell through ``kernelbench run``."""
    import subprocess
    import sys

    import pandas as pd

    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelbench.cli",
            "run",
            "method=nystrom",
            "runs=2",
            "dataset.splits.kernel_approx.samples=100",
            f"output_dir={out}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (shard,) = out.rglob("*.parquet")
    assert "/nystrom/" in shard.as_posix()
    df = pd.read_parquet(shard)
    assert len(df) == 2 and (df["n_features"] == 100).all()
    assert (df["rel_fro_error"] < 1e-6).all()  # 100 landmarks of 100 rows: exact on X
