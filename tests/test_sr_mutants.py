"""Spherical-radial maps (sr11, sr13, sr33): the properties the mutation run
(docs/mutation.md) found unchecked. Each is one fit, no averages over many draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kernelbench.errors import KernelbenchError
from kernelbench.features import make_feature_map

#: A KS test at this level on one fixed draw: a correct law fails it with this chance.
KS_ALPHA = 1e-4


def _fit(method, d=6, n=100, **params):
    X = np.random.default_rng(0).standard_normal((4, d))
    return make_feature_map(method, n=n, random_state=1, **params).fit(X)


@pytest.mark.parametrize(("method", "extra"), [("sr11", 0), ("sr13", 0), ("sr33", 2)])
def test_radii_have_the_chi_law_of_their_rule(method, extra):
    """Genz & Monahan's radial rules: radius chi(d) for degree 1 (sr11, sr13; nodes then
    N(0, I) in law), chi(d + 2) for sr33's degree 3 (Munkhoeva et al. 2018, Eq. 5)."""
    d = 6
    radii = _fit(method, d=d).radii_.ravel()
    assert radii.size >= 1000
    for df in (d + extra - 1, d + extra, d + extra + 1):
        p = stats.kstest(radii, stats.chi(df).cdf).pvalue
        assert (p > KS_ALPHA) == (df == d + extra), (df, p)


def test_per_rule_radii_share_one_chi_radius_per_rule():
    """radius='per_rule': every node of a rule gets its rule's one radius; the rules'
    radii are independent chi(d + 2) draws."""
    d = 6
    radii = _fit("sr33", d=d, n=400, radius="per_rule").radii_
    assert radii.shape == (800, 7)  # D = 2n(d + 1) = 5600 nodes, 7 per rule
    np.testing.assert_array_equal(radii, np.repeat(radii[:, :1], 7, axis=1))
    assert stats.kstest(radii[:, 0], stats.chi(d + 2).cdf).pvalue > KS_ALPHA


def test_sr33_node_weights_sum_to_one_in_mean():
    """E[d / rho^2] = 1 for rho ~ chi(d + 2), so the node weights sum to 1 and the node at
    zero weighs 0 in expectation (the rule is unbiased). Over t = 1000 whole rules of
    d + 1 nodes, a_0^2 = mean_k (1 - sum_j d / ((d + 1) rho_kj^2)) has standard deviation
    sqrt(2 / ((d - 2)(d + 1)) / t) (Var(d / chi^2_{d+2}) = 2 / (d - 2))."""
    d = 5
    fm = _fit("sr33", d=d, n=500)
    t = len(fm.rotations_)
    assert t == 1000 and fm.weights_.size == 1000 * (d + 1)
    sd = math.sqrt(2.0 / ((d - 2) * (d + 1)) / t)
    assert abs(fm.zero_weight_) < 5 * sd
    assert fm.weights_.sum() + fm.zero_weight_ == pytest.approx(1.0, abs=1e-12)
    # rbf: c f(0) = 1, so the constant of k_hat is the zero node's weight itself
    assert fm.constant_ == fm.zero_weight_


@pytest.mark.parametrize("method", ["sr11", "sr13"])
def test_degree_one_rules_weigh_every_node_equally_and_have_no_node_at_zero(method):
    """sr11 and sr13 are RFF and ORF in law (Props. 2.1, 2.2): weights 1 / D, no constant."""
    for n in (1, 0.3):
        fm = _fit(method, n=n)
        D = fm.weights_.size
        np.testing.assert_array_equal(fm.weights_, np.full(D, 1.0 / D))
        assert fm.zero_weight_ == 0.0 and fm.constant_ == 0.0


@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
def test_reflections_by_default_only_for_odd_kernels(kernel):
    """An even kernel (rbf) needs no reflected nodes; the arc-cosine kernels get each
    node and its reflection -w, at half the weight each, whole rules first."""
    d = 4
    X = np.random.default_rng(2).standard_normal((5, d))
    for reflections in (None, True, False):
        fm = make_feature_map(
            "sr33", kernel=kernel, n=2, random_state=0, reflections=reflections
        ).fit(X)
        refl = (kernel != "rbf") if reflections is None else reflections
        assert fm.reflections_ is refl
        p = d + 1
        P = fm.projections(X)
        w = fm.weights_
        if refl:
            np.testing.assert_array_equal(P[:, p : 2 * p], -P[:, :p])
            np.testing.assert_array_equal(w[p : 2 * p], w[:p])
        else:  # p distinct simplex directions per rule, no -w among them
            assert not np.allclose(P[:, p : 2 * p], -P[:, :p])
        assert w.sum() + fm.zero_weight_ == pytest.approx(1.0, abs=1e-12)


def test_sr33_with_reflections_weighs_a_pair_as_one_unreflected_node():
    """Reflecting a rule halves each node's weight: the pair's weights sum to the node's
    weight d / ((d + 1) rho^2) / t of the unreflected rule on the same draws."""
    d = 4
    X = np.random.default_rng(2).standard_normal((5, d))
    fm = make_feature_map("sr33", n=2, random_state=0, reflections=True).fit(X)
    t, p = len(fm.rotations_), d + 1
    expected = d / ((d + 1) * fm.radii_**2) / t
    w = fm.weights_.reshape(t, 2, p)
    np.testing.assert_allclose(w[:, 0] + w[:, 1], expected, rtol=1e-14)
    zero = np.mean(1.0 - (d / ((d + 1) * fm.radii_**2)).sum(axis=1))
    assert fm.zero_weight_ == pytest.approx(zero, rel=1e-12, abs=1e-15)


def test_one_butterfly_is_a_valid_rotation_and_none_is_refused():
    X = np.random.default_rng(0).standard_normal((3, 8))
    fm = make_feature_map("sr33", n=1, n_butterflies=1, random_state=0).fit(X)
    assert fm.transform(X).shape[0] == 3
    with pytest.raises((KernelbenchError, ValueError), match="n_butterflies"):
        make_feature_map("sr33", n=1, n_butterflies=0, random_state=0).fit(X)


@pytest.mark.parametrize("method", ["sr11", "sr13", "sr33"])
def test_haar_rotations_in_fixed_row_blocks_give_the_same_features(method):
    """batch_invariant=True takes the dense rotation's product in fixed row blocks: the
    same features up to rounding, and each row's bits do not depend on its batch."""
    X = np.random.default_rng(4).standard_normal((9, 7))
    kw = {"n": 1.5, "rotation": "haar", "random_state": 3}
    Z = make_feature_map(method, **kw).fit(X).transform(X)
    fm = make_feature_map(method, batch_invariant=True, **kw).fit(X)
    Zb = fm.transform(X)
    np.testing.assert_allclose(Zb, Z, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(fm.transform(X[3:4]), Zb[3:4])


@pytest.mark.parametrize("n", [0.3, 1.25])
def test_sr33_at_fractional_n_weighs_each_node_d_over_rho_squared_d(n):
    """At fractional n the last rule is truncated to D = round(2n(d + 1)) nodes: each node
    weighs d / (rho_j^2 D) and the node at zero 1 - their sum (Munkhoeva et al. 2018,
    Eq. 5 node by node), so k_hat(x, x) = 1 = k(x, x) for rbf."""
    d = 5
    X = np.random.default_rng(0).standard_normal((3, d))
    fm = make_feature_map("sr33", n=n, random_state=2).fit(X)
    D = round(2 * n * (d + 1))
    assert fm.weights_.size == D and D % (d + 1) != 0
    expected = (d / (fm.radii_**2 * D)).ravel()[:D]
    np.testing.assert_allclose(fm.weights_, expected, rtol=1e-14)
    assert fm.zero_weight_ == pytest.approx(1.0 - expected.sum(), abs=1e-14)
    np.testing.assert_allclose(np.diag(fm.approximate_kernel(X, X)), 1.0, atol=1e-12)


def test_the_default_rotation_is_three_butterfly_factors_as_in_the_published_code():
    """The code published with Munkhoeva et al. (2018) rotates by (B P)^3: sr33's
    default Q is a product of three butterfly-permutation factors, one set per rule."""
    fm = _fit("sr33", d=8, n=2)
    assert {rot.n_factors for rot in fm.rotations_} == {3}
    assert len({id(rot) for rot in fm.rotations_}) == len(fm.rotations_) > 1


@pytest.mark.parametrize(
    ("method", "rotation", "claims"),
    [
        ("sr33", "butterfly", True),
        ("sr13", "butterfly", True),
        ("sr33", "haar", False),
        ("sr13", "haar", False),
        ("sr11", "butterfly", False),
        ("sr11", "haar", False),
    ],
)
def test_only_butterfly_rules_claim_batch_independence_without_fixed_blocks(
    method, rotation, claims
):
    """A Haar rotation, and sr11's one direction per rule, go through a BLAS product whose
    rounding can follow the batch's row count: such a map claims ``batch_independent``
    only with ``batch_invariant=True``. The butterflies' own kernel maps row by row, so
    they claim it always, and a row alone gets the bits it gets inside a batch."""
    X = np.random.default_rng(5).standard_normal((7, 8))
    fm = make_feature_map(method, n=1, rotation=rotation, random_state=0).fit(X)
    assert ("batch_independent" in fm.claimed()) is claims
    fixed = make_feature_map(method, n=1, rotation=rotation, random_state=0, batch_invariant=True)
    assert "batch_independent" in fixed.fit(X).claimed()
    if claims:
        Z = fm.transform(X)
        for i in range(len(X)):
            np.testing.assert_array_equal(fm.transform(X[i : i + 1]), Z[i : i + 1])


def test_haar_rotations_are_dense_orthogonal_matrices_and_butterflies_are_not():
    """rotation='haar' draws each rule's Q as a dense d x d orthogonal matrix (QR of a
    Gaussian matrix with sign correction); the default keeps the O(d log d) butterflies."""
    d = 8
    haar = _fit("sr33", d=d, n=2, rotation="haar").rotations_
    assert all(isinstance(Q, np.ndarray) and Q.shape == (d, d) for Q in haar)
    for Q in haar:
        np.testing.assert_allclose(Q.T @ Q, np.eye(d), atol=1e-13)
    assert not any(isinstance(Q, np.ndarray) for Q in _fit("sr33", d=d, n=2).rotations_)


def test_sr11_draws_one_uniform_direction_per_node():
    """SR(1,1) (Prop. 2.1): each node is rho q with its own q uniform on the sphere, one
    node per rule. At d = 2 the angles of the q are uniform on [0, 2 pi) (KS test), no
    two q are equal, and none is a coordinate axis (each has probability 0)."""
    d = 2
    fm = _fit("sr11", d=d, n=400)
    Q = np.hstack(fm.rotations_)  # d x t unit vectors
    assert fm.nodes_per_rule_ == 1 and Q.shape == (d, fm.weights_.size)
    np.testing.assert_allclose(np.linalg.norm(Q, axis=0), 1.0, rtol=1e-14)
    angles = np.mod(np.arctan2(Q[1], Q[0]), 2 * np.pi)
    assert stats.kstest(angles, stats.uniform(0, 2 * np.pi).cdf).pvalue > KS_ALPHA
    assert np.unique(Q, axis=1).shape[1] == Q.shape[1]
    assert np.all(Q != 0)


@pytest.mark.parametrize(
    ("param", "value", "names"),
    [
        ("rotation", "givens", ["butterfly", "haar"]),
        ("radius", "shared", ["per_point", "per_rule"]),
        ("reflections", "yes", ["reflections"]),
    ],
)
def test_bad_rule_parameters_are_refused_in_one_line_naming_the_choices(param, value, names):
    """rotation, radius and reflections are validated before any draw: a value outside
    the choices is refused (one line, naming them), never read as the default."""
    X = np.random.default_rng(0).standard_normal((3, 4))
    with pytest.raises(KernelbenchError) as err:
        make_feature_map("sr33", n=1, random_state=0, **{param: value}).fit(X)
    msg = str(err.value)
    assert "\n" not in msg and param in msg and all(n in msg for n in names), msg
