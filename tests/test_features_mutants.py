"""Feature maps: the properties the mutation run (docs/mutation.md) found unchecked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from kernelbench.features import FEATURE_MAPS, make_feature_map

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "method"

#: Where a map's own label differs from its figures' (the paper's legend says "Ours").
LEGEND = {"slw_rff": "Ours (SLW-RFF)"}


def _own_configs() -> list[tuple[str, dict]]:
    """(method, config) of each configs/method/<method>.yaml that is the method's own."""
    out = []
    for path in sorted(CONFIGS.glob("*.yaml")):
        cfg = yaml.safe_load(path.read_text())
        if cfg["name"] == cfg["label"] == path.stem:
            out.append((path.stem, cfg))
    return out


@pytest.mark.parametrize(("method", "cfg"), _own_configs(), ids=lambda v: str(v)[:20])
def test_a_maps_paper_label_is_its_figures_label(method, cfg):
    """The class's label is the one its config's rows carry into the figures."""
    cls = FEATURE_MAPS.get(method)
    assert cls.paper_label == LEGEND.get(method, cfg["paper_label"])


def test_the_rff_draw_family_is_rff_and_the_leverage_maps():
    """A shared draw gives rff, lev_rff and slw_rff the same W (Liu et al. 2020 compare
    them on one draw): the three, and only they, declare rff's family."""
    family = {m for m in FEATURE_MAPS.names() if FEATURE_MAPS.get(m).draw_family}
    assert family == {"rff", "lev_rff", "slw_rff"}
    assert {FEATURE_MAPS.get(m).draw_family for m in family} == {"rff"}


def _data(d: int, n_rows: int = 6, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n_rows, d))


# ---------------------------------------------------------------------- base.py
def test_every_property_has_its_check():
    """The properties a map may claim are those kernelbench.testing tests."""
    from kernelbench.features.base import PROPERTIES
    from kernelbench.testing import CHECKS

    assert list(CHECKS) == list(PROPERTIES)


def test_labels_and_data_dependence_are_declared_by_the_maps_that_need_them():
    """Only slw_rff needs labels (Liu et al. 2020, Eq. 15); the data-dependent track
    holds the maps drawn from their fitted rows (docs/leaderboard.md)."""
    names = FEATURE_MAPS.names()
    assert {m for m in names if FEATURE_MAPS.get(m).needs_labels} == {"slw_rff"}
    dependent = {m for m in names if FEATURE_MAPS.get(m).data_dependent}
    assert dependent == {"lev_rff", "slw_rff", "nystrom"}


@pytest.mark.parametrize("method", ["rff", "sorf", "sr33", "gq"])
def test_claims_are_a_subset_of_the_properties(method):
    from kernelbench.features.base import PROPERTIES

    claims = make_feature_map(method).claimed()
    assert "exact_D" in claims and set(claims) <= set(PROPERTIES)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"kernel": "laplace"}, r"kernel"),
        ({"n": -1}, r"^n must be a positive number, got -1$"),
        ({"gamma": -1.0}, r"^gamma must be > 0"),
        ({"random_state": "seven"}, r"^random_state must be None, an int"),
    ],
)
def test_the_protocols_check_refuses_bad_parameters_before_any_fit(params, message):
    """_validate_params is what a protocol's check calls before any compute."""
    from kernelbench.errors import KernelbenchError
    from kernelbench.features.rff import RFF

    with pytest.raises(KernelbenchError, match=message):
        RFF(**params)._validate_params()
    RFF(gamma=None, random_state=np.random.default_rng(0))._validate_params()


def test_defaults_are_the_gaussian_kernel_at_n_one_with_its_default_gamma():
    """RFF() is the rbf kernel with gamma = 1/d, n = 1: D = 2(d + 1) (Sec. 2.3)."""
    X = _data(4)
    fm = FEATURE_MAPS.get("rff")().fit(X)
    assert fm.kernel_.name == "rbf" and fm.n_projections_ == 10
    assert fm.input_scale_ == pytest.approx(np.sqrt(2 / 4), rel=1e-15)


def test_a_subclass_keeps_its_own_and_its_parents_constraints():
    from kernelbench.errors import KernelbenchError

    with pytest.raises(KernelbenchError, match="n_blocks"):
        make_feature_map("sorf", n_blocks=4).fit(_data(3))
    with pytest.raises(KernelbenchError, match=r"^n must be"):
        make_feature_map("sorf", n=0).fit(_data(3))


@pytest.mark.parametrize("gamma", [2.0, 0.5])
def test_projections_are_the_scaled_input_times_w(gamma):
    """X~ = sqrt(2 gamma) X for rbf: scale 2 at gamma = 2 and 1 at gamma = 1/2."""
    X = _data(5)
    fm = make_feature_map("rff", gamma=gamma, random_state=0).fit(X)
    scale = np.sqrt(2 * gamma)
    np.testing.assert_allclose(fm.projections(X), (scale * X) @ fm.W_.T, rtol=1e-13)


def test_a_fitted_map_refuses_rows_of_another_width():
    fm = make_feature_map("rff", random_state=0).fit(_data(5))
    with pytest.raises(ValueError, match="features"):
        fm.transform(_data(4))


def test_feature_names_are_cos_then_sin_for_rbf_and_one_per_projection_otherwise():
    X = _data(2)
    rbf = make_feature_map("rff", n=0.5, random_state=0).fit(X)
    assert list(rbf.get_feature_names_out()) == ["rff_cos0", "rff_cos1", "rff_cos2"] + [
        "rff_sin0",
        "rff_sin1",
        "rff_sin2",
    ]
    arc = make_feature_map("sorf", kernel="arccos1", n=0.5, random_state=0).fit(X)
    assert list(arc.get_feature_names_out()) == ["sorf0", "sorf1", "sorf2"]


def test_transformer_preserves_float32_and_float64_in_sklearns_check():
    from sklearn.utils.estimator_checks import check_transformer_preserve_dtypes

    check_transformer_preserve_dtypes("RFF", make_feature_map("rff", random_state=0))


@pytest.mark.parametrize("kernel", ["rbf", "arccos0", "arccos1"])
def test_approximate_kernel_adds_the_constant_of_the_node_at_zero(kernel):
    """k_hat = z(x) . z(y) + c f(0) a_0^2 (sr33's node at zero carries a_0^2)."""
    X, Y = _data(3, seed=1), _data(3, n_rows=4, seed=2)
    fm = make_feature_map("sr33", kernel=kernel, n=1, random_state=3).fit(X)
    kern = fm.kernel_
    assert fm.zero_weight_ != 0.0
    assert fm.constant_ == pytest.approx(kern.constant * kern.f0 * fm.zero_weight_, rel=1e-15)
    expect = fm.transform(X) @ fm.transform(Y).T + fm.constant_
    np.testing.assert_allclose(fm.approximate_kernel(X, Y), expect, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(fm.approximate_kernel(X), fm.approximate_kernel(X, X), rtol=0)


def test_a_map_that_cannot_draw_in_sample_space_says_so_naming_the_points():
    from kernelbench.errors import KernelbenchError

    whole = r"^SORF cannot draw 2 points in d=5 in sample space; use fit and transform$"
    with pytest.raises(KernelbenchError, match=whole):
        make_feature_map("sorf", random_state=0).fit_sample_space(_data(5, n_rows=2))
    with pytest.raises(KernelbenchError, match=r"^RFF cannot draw 6 points in d=5 "):
        make_feature_map("rff", random_state=0).fit_sample_space(_data(5, n_rows=6))


# ---------------------------------------------------------------------- rff.py, orf.py
@pytest.mark.parametrize("method", ["rff", "orf"])
@pytest.mark.parametrize("kernel", ["rbf", "arccos0"])
def test_sample_space_draws_keep_the_weight_space_weights(method, kernel):
    """Sample-space draws change how A~ W^T is drawn, not the estimator: equal weights
    1/D and no node at zero, as fit's."""
    A = _data(7, n_rows=3)
    fitted = make_feature_map(method, kernel=kernel, n=0.5, random_state=0).fit(A)
    fm = make_feature_map(method, kernel=kernel, n=0.5, random_state=0)
    P = fm.fit_sample_space(A)
    D = fitted.n_projections_
    assert P.shape == (3, D) and fm.n_projections_ == D
    np.testing.assert_array_equal(fm.weights_, np.full(D, 1.0 / D))
    np.testing.assert_array_equal(fm.weights_, fitted.weights_)
    assert fm.zero_weight_ == fitted.zero_weight_ == 0.0 and fm.constant_ == 0.0


# ---------------------------------------------------------------------- claims, sklearn
def test_the_biased_maps_do_not_claim_unbiasedness():
    """SORF is only nearly unbiased (Yu et al. 2016, Thm. 3), GQ's mean is the tensor
    Gauss-Hermite rule (Dao et al. 2017), Nystrom is no Monte Carlo estimator; every
    other map claims E[K_hat] = K, which check_feature_map then tests."""
    names = FEATURE_MAPS.names()
    biased = {m for m in names if "unbiased" not in make_feature_map(m).claimed()}
    assert biased == {"sorf", "gq", "nystrom"}


@pytest.mark.parametrize("method", ["rff", "sorf", "gq", "sr33"])
def test_maps_have_sklearns_identity_and_repr(method):
    """Estimators compare by identity and are hashable; repr lists the changed
    parameters only (scikit-learn's conventions, not a dataclass's)."""
    a, b = make_feature_map(method, n=2), make_feature_map(method, n=2)
    assert a != b and a == a and len({a, b}) == 2
    assert repr(a) == f"{type(a).__name__}(n=2)"


# ---------------------------------------------------------------------- sorf.py
@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_sorf_takes_one_to_three_hd_blocks(n_blocks):
    """Yu et al. 2016 use three HD blocks (the default); one and two are the configs
    sorf_hd1 and sorf_hd2."""
    fm = make_feature_map("sorf", n_blocks=n_blocks, random_state=0).fit(_data(5))
    assert fm.signs_.shape == (2, n_blocks, 8)
    assert make_feature_map("sorf").n_blocks == 3


@pytest.mark.parametrize("method", ["sorf", "gq"])
@pytest.mark.parametrize("n", [0.5, 1, 2.5])
def test_equal_weight_maps_give_each_projection_weight_one_over_d(method, n):
    """Monte Carlo weights a_j^2 = 1/D and no node at zero: k_hat(x, x) = 1 for rbf
    (cos^2 + sin^2 = 1 at every node)."""
    X = _data(5)
    fm = make_feature_map(method, n=n, random_state=0).fit(X)
    D = fm.n_projections_
    np.testing.assert_array_equal(fm.weights_, np.full(D, 1.0 / D))
    assert fm.zero_weight_ == 0.0 and fm.constant_ == 0.0
    np.testing.assert_allclose(np.diag(fm.approximate_kernel(X)), 1.0, rtol=1e-13)


# ---------------------------------------------------------------------- gq.py
def test_gq_default_is_two_nodes_plus_minus_one():
    """n_nodes = 2: the nodes +-1 with weights 1/2 (Munkhoeva et al.'s code)."""
    fm = make_feature_map("gq", random_state=0).fit(_data(6))
    assert set(np.unique(fm.W_)) == {-1.0, 1.0}


@pytest.mark.parametrize("n_nodes", [1, 100])
def test_gq_takes_one_to_a_hundred_nodes(n_nodes):
    from kernelbench.features.gq import gauss_hermite

    nodes, probs = gauss_hermite(n_nodes)
    assert len(nodes) == n_nodes and probs.sum() == pytest.approx(1.0, rel=1e-14)
    fm = make_feature_map("gq", n_nodes=n_nodes, random_state=0).fit(_data(3))
    assert set(np.unique(fm.W_)) <= set(nodes)


@pytest.mark.parametrize("n_nodes", [0, 101])
def test_gq_refuses_node_counts_outside_one_to_a_hundred(n_nodes):
    from kernelbench.errors import KernelbenchError

    with pytest.raises(KernelbenchError, match="n_nodes"):
        make_feature_map("gq", n_nodes=n_nodes).fit(_data(3))


def test_gauss_hermite_three_nodes_are_the_standard_normal_rule():
    """The 3-point rule for N(0, 1): nodes 0, +-sqrt(3), weights 2/3, 1/6, 1/6."""
    from kernelbench.features.gq import gauss_hermite

    nodes, probs = gauss_hermite(3)
    np.testing.assert_allclose(nodes, [-np.sqrt(3), 0, np.sqrt(3)], atol=1e-14)
    np.testing.assert_allclose(probs, [1 / 6, 2 / 3, 1 / 6], rtol=1e-13)


@pytest.mark.parametrize("method", ["rff", "sorf", "sr33"])
def test_integer_input_is_read_as_float64(method):
    """Integer rows are the same points as their float64 copy (FLOATS: others convert)."""
    Xi = np.arange(-6, 9).reshape(5, 3)
    fm = make_feature_map(method, random_state=0).fit(Xi)
    Z = fm.transform(Xi)
    assert Z.dtype == np.float64
    np.testing.assert_array_equal(Z, fm.transform(Xi.astype(np.float64)))
    assert make_feature_map(method, random_state=0).fit(Xi * 1.0).transform(Xi).dtype == np.float64


@pytest.mark.parametrize(("n", "d", "D"), [(0.2, 1, 1), (0.1, 1, 1), (0.25, 1, 1), (1, 1, 4)])
def test_the_smallest_budgets_give_one_projection(n, d, D):
    """D = max(1, round(2n(d + 1))): 0.8 and 1.0 round to 1, 0.4 to 0, raised to 1."""
    from kernelbench.features.base import n_projections

    assert n_projections(n, d) == D
    assert make_feature_map("rff", n=n, random_state=0).fit(_data(d)).n_projections_ == D


def test_a_map_for_the_gaussian_kernel_only_refuses_others_in_one_line():
    """Leverage scores are those of the Gaussian kernel's features (Liu et al. 2020)."""
    from kernelbench.errors import KernelbenchError

    X, y = _data(3, n_rows=8), np.sign(_data(1, n_rows=8)[:, 0])
    whole = r"^levrff needs the Gaussian kernel \(rbf\), got 'arccos0'$"
    with pytest.raises(KernelbenchError, match=whole):
        make_feature_map("lev_rff", kernel="arccos0", random_state=0).fit(X, y)
    assert make_feature_map("lev_rff", random_state=0).fit(X, y).n_projections_ == 8


def test_a_map_fitted_in_sample_space_refuses_to_project_in_one_line():
    from kernelbench.errors import KernelbenchError

    fm = make_feature_map("rff", random_state=0)
    fm.fit_sample_space(_data(7, n_rows=3))
    whole = (
        r"^this RFF was fitted by fit_sample_space: it holds no projections W for other "
        r"points; use fit$"
    )
    with pytest.raises(KernelbenchError, match=whole):
        fm.transform(_data(7, n_rows=3))


# ---------------------------------------------------------------------- slw_rff.py
def _labelled(n_rows: int = 10, d: int = 3, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, d))
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


@pytest.mark.parametrize("mode", ["resample", "reweight"])
def test_slw_scores_do_not_depend_on_the_row_chunks(mode, monkeypatch):
    """The alignment y^T [cos, sin] sums over every row chunk (memory O(chunk l))."""
    from kernelbench.features import lev_rff

    X, y = _labelled()
    whole = make_feature_map("slw_rff", mode=mode, random_state=1).fit(X, y).scores_
    monkeypatch.setattr(lev_rff, "SCORE_CHUNK_ROWS", 3)
    chunked = make_feature_map("slw_rff", mode=mode, random_state=1).fit(X, y).scores_
    np.testing.assert_allclose(chunked, whole, rtol=1e-12)


def test_slw_reweight_column_scores_are_each_columns_label_alignment():
    """reweight (the public code's SERLSRFF.m): (z_c^T y)^2 per column of
    Z = [cos(X~ W^T + b), sin(X~ W^T + b)], over s (Liu et al. 2020, Eq. 15)."""
    X, y = _labelled()
    fm = make_feature_map("slw_rff", mode="reweight", gamma=0.5, random_state=2).fit(X, y)
    s = fm.n_projections_
    P = X @ fm.W_.T + fm.phase_  # input scale sqrt(2 gamma) = 1
    want = np.concatenate([y @ np.cos(P), y @ np.sin(P)]) ** 2 / s
    np.testing.assert_allclose(fm.scores_, want, rtol=1e-12)


@pytest.mark.parametrize("method", ["rff", "orf", "sr33", "nystrom"])
def test_make_feature_maps_refusal_names_the_methods_own_parameters(method):
    """An unknown keyword is refused in one line naming the method's own parameters,
    not kernel, n and random_state: make_feature_map's own arguments, which a keyword
    of ``params`` can never be (rff's own: batch_invariant and gamma)."""
    from kernelbench.errors import KernelbenchError

    with pytest.raises(KernelbenchError) as err:
        make_feature_map(method, bogus=1)
    message = str(err.value)
    assert "\n" not in message and message.startswith("unknown parameter(s) bogus for method")
    valid = message.split("valid: ")[1].split(", ")
    assert "batch_invariant" in valid and not {"kernel", "n", "random_state"} & set(valid)
    if method == "rff":
        assert valid == ["batch_invariant", "gamma"]
