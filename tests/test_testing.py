"""check_feature_map and ``kernelbench check``: every built-in map passes for what it
claims, and each property's test fails on a map broken in that property."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

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
    """gq is biased by design, sorf only nearly unbiased, nystrom data-dependent, the
    BLAS-product maps batch-independent with batch_invariant only; the structured ones
    claim everything, and with batch_invariant every map claims batch independence."""
    claims = {name: FEATURE_MAPS.get(name)().claimed() for name in FEATURE_MAPS.names()}
    assert "unbiased" not in claims["gq"] | claims["sorf"] | claims["nystrom"]
    assert "exact_D" not in claims["nystrom"]
    for name in ("rff", "orf", "qmc", "gq", "lev_rff", "slw_rff", "nystrom", "sr11"):
        assert "batch_independent" not in claims[name]
    for name in ("fastfood", "signed_circulant", "sr33", "sr13"):
        assert claims[name] == set(PROPERTIES)
    assert "unbiased" not in FEATURE_MAPS.get("orf")(construction="tall_qr").claimed()
    assert "batch_independent" not in FEATURE_MAPS.get("sr33")(rotation="haar").claimed()
    for name in FEATURE_MAPS.names():
        invariant = FEATURE_MAPS.get(name)(batch_invariant=True).claimed()
        assert invariant == claims[name] | {"batch_independent"}, name
    assert FEATURE_MAPS.get("sr33")(rotation="haar", batch_invariant=True).claimed() == set(
        PROPERTIES
    )


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


@dataclass(eq=False, repr=False)
class UndeclaredSORF(SORF):
    """A parameter of its own without declared constraints."""

    scale: float = 1.0


class UncheckedSORF(SORF):
    """n_blocks declared without a constraint: n_blocks=BadType() reaches the draw."""

    _parameter_constraints = {"n_blocks": []}


@pytest.mark.parametrize(
    ("cls", "prop"),
    [
        (UndeclaredSORF, "sklearn"),
        (UncheckedSORF, "sklearn"),
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
    # the unbroken parent passes or does not claim it (RFF: batch_independent)
    assert check_feature_map(cls.__mro__[1], properties=[prop])[0].status != "FAIL"
    with pytest.raises(FeatureMapCheckError, match=prop):
        check_feature_map(cls, properties=[prop])


def test_the_sklearn_check_names_an_undeclared_or_unchecked_parameter():
    (undeclared,) = check_feature_map(
        UndeclaredSORF, raise_on_failure=False, properties=["sklearn"]
    )
    assert "_parameter_constraints has" in undeclared.detail and "'scale'" in undeclared.detail
    (unchecked,) = check_feature_map(UncheckedSORF, raise_on_failure=False, properties=["sklearn"])
    assert unchecked.detail.startswith("n_blocks=BadType(): TypeError"), unchecked.detail


def test_a_method_config_or_instance_is_checked_with_its_params():
    r = check_feature_map("orf_tallqr", properties=["unbiased", "exact_D"])
    assert [x.status for x in r] == ["not claimed", "PASS"]
    r = check_feature_map(
        FEATURE_MAPS.get("sr33")(rotation="haar"), properties=["batch_independent"]
    )
    assert r[0].status == "not claimed"
    r = check_feature_map(
        FEATURE_MAPS.get("sr33")(rotation="haar", batch_invariant=True),
        properties=["batch_independent"],
    )
    assert r[0].status == "PASS"


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


#: Every map and config with batch_invariant=True, and the parameters that take another
#: product path: the Haar rotations, orf's panels (W not formed; the short last block's
#: formed rows at d = 40, n = 2), tall-QR orf both ways, lev_rff's re-weighted columns.
BATCH_SUBJECTS = [
    *FEATURE_MAPS.names(),
    "orf_tallqr",
    "qmc_adaptive",
    ("sr33", {"rotation": "haar"}),
    ("sr13", {"rotation": "haar"}),
    ("orf", {"dense_limit_mb": 0}),
    ("orf", {"construction": "tall_qr", "dense_limit_mb": 0}),
    ("lev_rff", {"mode": "reweight"}),
    ("slw_rff", {"mode": "reweight"}),
]


@pytest.mark.parametrize("method", BATCH_SUBJECTS, ids=str)
def test_every_map_is_batch_independent_with_batch_invariant(method):
    """Every map claims it with batch_invariant=True and has it: a row's features are
    the same bytes alone and in batches of 1100 rows, at the edges of the blocks of
    kernelbench.transforms.row_products, float64 and float32, D < d (a map broken in it
    fails: test_each_property_fails_on_a_map_broken_in_it)."""
    from kernelbench.testing import resolve

    name, params = method if isinstance(method, tuple) else (method, {})
    subject = resolve(name)
    fm = subject.cls(**{**subject.params, **params, "batch_invariant": True})
    (result,) = check_feature_map(fm, properties=["batch_independent"])
    assert result.status == "PASS", result


@pytest.mark.parametrize("method", ["rff", "orf", "nystrom", "sr11"])
def test_breaking_the_blocked_product_fails_the_check(method, monkeypatch):
    """row_products and row_blocks with a block that follows the call (all rows in one
    product): the dense maps' batch independence is no longer what they claim."""
    from kernelbench import transforms
    from kernelbench.features import nystrom, orf, rff

    def one_block(X, columns, width, block):
        Xb = np.asarray(X, dtype=np.float64)
        return columns(Xb)[:, : len(X)].T.astype(X.dtype)

    def one_product(X, W, block=None):
        return (X.astype(np.float64) @ np.asarray(W, dtype=np.float64).T).astype(X.dtype)

    for module in (transforms, orf, nystrom):
        monkeypatch.setattr(module, "row_blocks", one_block, raising=False)
    for module in (transforms, rff, orf):
        monkeypatch.setattr(module, "row_products", one_product, raising=False)
    from kernelbench.features import sr

    monkeypatch.setattr(sr, "row_products", one_product)
    fm = FEATURE_MAPS.get(method)(batch_invariant=True)
    (result,) = check_feature_map(fm, raise_on_failure=False, properties=["batch_independent"])
    assert result.status == "FAIL", result


def test_cli_check_batch_invariant_checks_the_blocked_products(capsys):
    assert _cli("check", "sr11", "--batch-invariant") == 0
    out = capsys.readouterr().out
    assert "batch_independent  PASS" in out
    assert _cli("check", "sr11") == 0
    assert "batch_independent  not claimed" in capsys.readouterr().out
