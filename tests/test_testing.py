"""check_feature_map and ``kernelbench check``: every built-in map passes for what it
claims, and each property's test fails on a map broken in that property."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

from kernelbench import FEATURE_MAPS
from kernelbench.features.base import PROPERTIES
from kernelbench.features.rff import RFF
from kernelbench.features.sorf import SORF
from kernelbench.testing import FeatureMapCheckError, check_feature_map


def _cli(*args: str) -> int:
    from kernelbench.cli import main

    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@contextmanager
def registered(name, cls):
    """``cls`` registered as method ``name`` for the duration (then removed)."""
    FEATURE_MAPS.add(name, cls)
    try:
        yield
    finally:
        FEATURE_MAPS._items.pop(name)


@pytest.mark.parametrize("method", FEATURE_MAPS.names())
def test_every_builtin_map_passes_what_it_claims(method):
    results = check_feature_map(method)  # raises on a failed claim
    assert [r.name for r in results] == list(PROPERTIES)
    claimed = {r.name for r in results if r.status == "PASS"}
    assert claimed == FEATURE_MAPS.get(method)().claimed()


def test_builtins_declare_what_they_do_not_claim():
    """gq is biased by design, sorf only nearly unbiased, nystrom data-dependent; the
    structured ones claim everything, and every map claims batch independence."""
    claims = {name: FEATURE_MAPS.get(name)().claimed() for name in FEATURE_MAPS.names()}
    assert "unbiased" not in claims["gq"] | claims["sorf"] | claims["nystrom"]
    assert "exact_D" not in claims["nystrom"]
    assert all("batch_independent" in c for c in claims.values())
    for name in ("fastfood", "signed_circulant", "sr33", "sr13", "rff", "orf", "sr11"):
        assert claims[name] == set(PROPERTIES)
    assert "unbiased" not in FEATURE_MAPS.get("orf")(construction="tall_qr").claimed()
    assert "batch_independent" in FEATURE_MAPS.get("sr33")(rotation="haar").claimed()


class BiasedRFF(RFF):
    """RFF whose weights are 2% too large: E[K_hat] = 1.02 K."""

    def _draw(self, rng, d, D):
        w, zero = super()._draw(rng, d, D)
        return 1.02 * w, zero


def test_a_two_percent_bias_fails_naming_unbiased():
    with pytest.raises(FeatureMapCheckError, match="fails 1 claimed property: unbiased") as err:
        check_feature_map(BiasedRFF)
    import re

    off, se = map(float, re.search(r"off by \+([\d.]+)% \+- ([\d.]+)%", str(err.value)).groups())
    assert abs(off - 2.0) < 4 * se  # the bias it reports is the 2% put in
    # the unbiased original passes the same test
    assert check_feature_map(RFF, properties=["unbiased"])[0].status == "PASS"


class GlobalSeedRFF(RFF):
    def _draw(self, rng, d, D):
        return super()._draw(np.random.default_rng(), d, D)


class Float64RFF(RFF):
    def transform(self, X):
        return super().transform(X).astype(np.float64)


class ShortRFF(RFF):
    """Draws D - 1 rows and pads with a zero row: D weights, D - 1 projections' worth."""

    def transform(self, X):
        return super().transform(X)[:, 1:]


class UnpicklableRFF(RFF):
    def __reduce__(self):
        raise TypeError("cannot pickle")


class SortedSORF(SORF):
    """Features of a row depend on the batch: each is shifted by the batch's mean."""

    def _project(self, X):
        P = super()._project(X)
        return P - P.mean(axis=0) * 1e-9


@pytest.mark.parametrize(
    ("cls", "prop"),
    [
        (SortedSORF, "batch_independent"),
        (GlobalSeedRFF, "seeded"),
        (Float64RFF, "dtype_shapes"),
        (ShortRFF, "exact_D"),
        (UnpicklableRFF, "sklearn"),
    ],
)
def test_each_property_fails_on_a_map_broken_in_it(cls, prop):
    (result,) = check_feature_map(cls, raise_on_failure=False, properties=[prop])
    assert result.status == "FAIL", result
    # the unbroken parent passes
    assert check_feature_map(cls.__mro__[1], properties=[prop])[0].status != "FAIL"
    with pytest.raises(FeatureMapCheckError, match=prop):
        check_feature_map(cls, properties=[prop])


def test_a_method_config_or_instance_is_checked_with_its_params():
    r = check_feature_map("orf_tallqr", properties=["unbiased", "exact_D"])
    assert [x.status for x in r] == ["not claimed", "PASS"]
    r = check_feature_map(FEATURE_MAPS.get("orf")(construction="tall_qr"), properties=["unbiased"])
    assert r[0].status == "not claimed"


def test_cli_check_prints_one_line_per_property(capsys):
    assert _cli("check", "fastfood") == 0
    out = capsys.readouterr().out.splitlines()
    lines = [line.strip() for line in out[1:]]
    assert [line.split()[0] for line in lines] == list(PROPERTIES)
    assert all(line.split()[1].rstrip(":") == "PASS" for line in lines)
    assert _cli("check", "gq") == 0
    assert "unbiased           not claimed" in capsys.readouterr().out


def test_cli_check_exits_1_naming_the_failed_property(capsys):
    with registered("biased_rff_check", BiasedRFF):
        assert _cli("check", "biased_rff_check") == 1
    out = capsys.readouterr().out
    assert "unbiased           FAIL" in out
    assert "1 claimed properties fail: unbiased" in out.splitlines()[-1]


def test_cli_check_unknown_method_is_one_line_exit_2(capsys):
    assert _cli("check", "nope") == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "unknown method 'nope'" in err and "fastfood" in err and "orf_tallqr" in err


#: Every map, and the parameters that take another product path: the Haar rotations,
#: tall-QR orf, orf's panels (W not formed), lev_rff's re-weighted columns.
BATCH_SUBJECTS = [
    *FEATURE_MAPS.names(),
    "orf_tallqr",
    "sr33_haar",
    FEATURE_MAPS.get("sr13")(rotation="haar"),
    FEATURE_MAPS.get("orf")(dense_limit_mb=0),
    FEATURE_MAPS.get("orf")(construction="tall_qr", dense_limit_mb=0),
    FEATURE_MAPS.get("lev_rff")(mode="reweight"),
    FEATURE_MAPS.get("slw_rff")(mode="reweight"),
]


@pytest.mark.parametrize("method", BATCH_SUBJECTS, ids=repr)
def test_every_map_is_batch_independent(method):
    """Every map claims it and has it: a row's features are the same bits alone and in
    any batch (the BLAS products in fixed row blocks, kernelbench.transforms.row_products;
    a map broken in it fails: test_each_property_fails_on_a_map_broken_in_it)."""
    from kernelbench.testing import _batch_independent, resolve

    subject = resolve(method)
    assert "batch_independent" in subject.make("rbf", 1, None).claimed()
    _batch_independent(subject, subject.kernels())


@pytest.mark.parametrize("construction", ["stacked", "tall_qr"])
def test_orf_wide_panels_are_batch_independent(construction):
    """orf fitted on enough rows applies its panels merged wide (WideReflectors) and a
    short last block through its formed rows: a row's bits alone and in the batch."""
    from kernelbench.features import orf

    X = np.random.default_rng(3).standard_normal((orf.WIDE_FIT_ROWS + 44, 40))
    fm = FEATURE_MAPS.get("orf")(
        n=1.1, random_state=2, construction=construction, dense_limit_mb=0
    ).fit(X)
    assert fm.W_ is None and isinstance(fm.blocks_[0][0], orf.WideReflectors)
    Z = fm.transform(X)
    for i in (0, 5, 131, len(X) - 1):
        np.testing.assert_array_equal(fm.transform(X[i : i + 1])[0], Z[i])
    np.testing.assert_array_equal(fm.transform(X[::-1]), Z[::-1])
