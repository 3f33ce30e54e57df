"""Structured transforms: orthogonality and fast == dense."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from kernelbench.transforms import (
    Butterfly,
    butterfly_factor_matrix,
    butterfly_plan,
    fwht_rows,
    haar_orthogonal,
    next_pow2,
    simplex_rows,
    simplex_vertices,
)

DIMS = [1, 2, 3, 5, 16, 100, 784]


def dense_simplex(d: int) -> np.ndarray:
    """Regular simplex written out entry by entry (independent of simplex_rows)."""
    V = np.zeros((d, d + 1))
    for j in range(d + 1):
        for i in range(d):
            c = np.sqrt((d + 1.0) / ((d - i) * d * (d - i + 1.0)))
            if i < j:
                V[i, j] = -c
            elif i == j:
                V[i, j] = (d - i) * c
    return V


@pytest.mark.parametrize("d", DIMS)
def test_haar_is_orthogonal(d):
    Q = haar_orthogonal(np.random.default_rng(d), d)
    np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-10)
    np.testing.assert_allclose(Q @ Q.T, np.eye(d), atol=1e-10)


def test_haar_sign_correction_gives_uniform_diagonal():
    # Without the sign correction numpy's QR has a biased diagonal: E[Q_11] != 0.
    rng = np.random.default_rng(0)
    diag = np.array([haar_orthogonal(rng, 3)[0, 0] for _ in range(4000)])
    assert abs(diag.mean()) < 4 * diag.std() / np.sqrt(diag.size)


@pytest.mark.parametrize("d", DIMS)
def test_butterfly_orthogonal_and_fast_equals_dense(d):
    rng = np.random.default_rng(d)
    B = Butterfly(d, 3, rng)
    Q_fast = B.matrix()
    np.testing.assert_allclose(Q_fast.T @ Q_fast, np.eye(d), atol=1e-10)
    # Dense product of Givens factors and permutation matrices, built independently.
    Q = np.eye(d)
    for k in range(3):
        Bk = butterfly_factor_matrix(d, B.cos[k], B.sin[k])
        Pk = np.eye(d)[:, B.perms[k]]
        Q = Q @ Bk @ Pk
    np.testing.assert_allclose(Q_fast, Q, atol=1e-12)
    X = rng.standard_normal((9, d))
    np.testing.assert_allclose(B.rotate_rows(X), X @ Q, atol=1e-12)
    np.testing.assert_allclose(B.rotate_rows(X.astype(np.float32)), X @ Q, atol=1e-4)
    assert B.rotate_rows(X.astype(np.float32)).dtype == np.float32


def test_butterfly_matches_paper_example_d4():
    """Munkhoeva et al. (2018), Sec. 2.4: the explicit 4 x 4 butterfly."""
    th = np.array([0.3, 1.1, 2.5])  # node 0 = top (theta_2), 1 = left (theta_1), 2 = right
    c, s = np.cos(th), np.sin(th)
    c1, s1, c2, s2, c3, s3 = c[1], s[1], c[0], s[0], c[2], s[2]
    paper = np.array(
        [
            [c1 * c2, -s1 * c2, -c1 * s2, s1 * s2],
            [s1 * c2, c1 * c2, -s1 * s2, -c1 * s2],
            [c3 * s2, -s3 * s2, c3 * c2, -s3 * c2],
            [s3 * s2, c3 * s2, s3 * c2, c3 * c2],
        ]
    )
    np.testing.assert_allclose(butterfly_factor_matrix(4, c, s), paper, atol=1e-15)


@pytest.mark.parametrize("d", [2, 3, 7, 16, 100, 784, 7129])
def test_butterfly_plan_has_d_minus_1_angles_and_log_depth(d):
    off, d1, d2, ptr = butterfly_plan(d)
    assert len(off) == d - 1  # one angle per internal node of the tree
    assert len(ptr) - 1 == int(np.ceil(np.log2(d)))
    assert d2[0] == d // 2 and d1[0] == (d + 1) // 2
    for lv in range(len(ptr) - 1):  # the pairs of a level are disjoint
        idx = np.concatenate(
            [
                np.r_[o : o + b]
                for q, o in enumerate(off[ptr[lv] : ptr[lv + 1]], ptr[lv])
                for b in (d2[q],)
            ]
            + [
                np.r_[o + d1[q] : o + d1[q] + d2[q]]
                for q, o in enumerate(off[ptr[lv] : ptr[lv + 1]], ptr[lv])
            ]
        )
        assert len(np.unique(idx)) == len(idx)


@pytest.mark.parametrize("m", [1, 2, 4, 16, 128, 1024])
def test_fwht_equals_dense_hadamard_and_is_orthogonal(m):
    rng = np.random.default_rng(m)
    X = rng.standard_normal((5, m))
    H = scipy.linalg.hadamard(m) / np.sqrt(m)
    np.testing.assert_allclose(fwht_rows(X), X @ H.T, atol=1e-12)
    Hf = fwht_rows(np.eye(m))
    np.testing.assert_allclose(Hf @ Hf.T, np.eye(m), atol=1e-10)


def test_fwht_rejects_non_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        fwht_rows(np.ones((2, 6)))


def test_next_pow2():
    assert [next_pow2(d) for d in (1, 2, 3, 4, 5, 784, 1024, 7129)] == [
        1,
        2,
        4,
        4,
        8,
        1024,
        1024,
        8192,
    ]


@pytest.mark.parametrize("d", DIMS)
def test_simplex_properties_and_fast_product(d):
    V = simplex_vertices(d)
    np.testing.assert_allclose(V, dense_simplex(d), atol=1e-14)
    G = V.T @ V
    np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-12)
    off = G[~np.eye(d + 1, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / d, atol=1e-12)
    np.testing.assert_allclose(V.sum(axis=1), 0.0, atol=1e-12)
    # tight frame: V V^T = (d + 1) / d I (what makes the (3,3) rule exact on quadratics)
    np.testing.assert_allclose(V @ V.T, (d + 1) / d * np.eye(d), atol=1e-10)
    U = np.random.default_rng(d).standard_normal((11, d))
    np.testing.assert_allclose(simplex_rows(U), U @ dense_simplex(d), atol=1e-12)
