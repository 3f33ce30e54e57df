"""``check_feature_map``: what scikit-learn's ``check_estimator`` is to an estimator, for
a random feature map (docs/plugins.md, "Is my map right?").

A map declares the properties it claims (``RandomFeatureMap.claims``, the names of
:data:`kernelbench.features.base.PROPERTIES`), and the check tests each claimed one:

``unbiased``
    E[K_hat] = K on fixed data: 6 points in d = 5 (uniform on [0, 1]^5), the entries
    k(x_0, x_1), k(x_2, x_3), k(x_4, x_5) of every kernel the map fits, n = 15.25
    (D = 183, no whole number of blocks or rules of 5, 6, 8 or 12 projections, so a
    truncated last block is tested too; n = 60.25, D = 723, where the map is too noisy
    for :data:`MAX_DRAWS` draws at 15.25). Each of R independent seeds gives the relative
    errors e = k_hat / k - 1; per entry a t-test of mean(e) = 0, two-sided, Bonferroni
    over the m = 3 x (kernels) entries at the family-wise false-alarm rate
    :data:`ALPHA` = 0.001: a map that is unbiased fails with probability <= 0.001. R is
    set from :data:`PILOT` draws (Stein's two-stage rule) so that a relative bias of
    :data:`BIAS` = 2% in any one entry is detected with probability >= :data:`POWER` =
    0.99: R = ((z_{1 - ALPHA / 2m} + z_POWER) s / BIAS)^2, s the largest pilot standard
    deviation of e, at most :data:`MAX_DRAWS` (a map too noisy for that fails, saying
    so). A few seconds per map.
``exact_D``
    n_projections_ = D = round(2n(d + 1)) and n_outputs * D features, at n = 1, 2, 0.3,
    1.25, 15.25 and d = 3, 5, 8.
``seeded``
    Two fits with one seed give the same bits, a transform repeated the same bits, and
    another seed other features.
``dtype_shapes``
    float32 in, float32 out (close to the float64 features of the same seed), float64
    kept, N x (n_outputs D) finite features for d = 1, 2, 3, 17, 40, and D < d.
``batch_independent``
    After fit, transform(X[i:i+1]) has the bytes of row i of transform(X), N = 1100 rows
    (rows 0, 1, 7, 15-17, 63-64, 127-128, 255-256, 1023-1024, 1099: the edges of blocks
    of 16 to 1024 rows), and so do three slices and a permutation of X, in float64 and
    float32, d = 5 and 40 and D < d, for every kernel the map fits. (A map whose
    transform is a dense BLAS product claims it with ``batch_invariant=True`` only:
    :func:`kernelbench.transforms.row_products`.)
``sklearn``
    get_params lists the constructor's arguments, set_params takes them back, each has
    declared constraints (``_parameter_constraints``) and fit refuses a value of no
    valid type in one line, clone gives an unfitted copy with equal parameters, and a
    pickled fitted map transforms as the original does, bit for bit.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click
import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import PROPERTIES, RandomFeatureMap, n_projections
from kernelbench.kernels import KERNELS, get_kernel

#: Family-wise false-alarm rate of the unbiasedness test (per map).
ALPHA = 1e-3
#: The relative bias the unbiasedness test detects ...
BIAS = 0.02
#: ... with this probability (at least).
POWER = 0.99
#: Draws that set the number of draws R of the unbiasedness test.
PILOT = 100
#: The most draws the unbiasedness test makes per kernel.
MAX_DRAWS = 5000
#: The budgets of the unbiasedness test, the second where the first is too noisy:
#: D = 183 and 723 in d = 5 (no whole number of blocks of 5, 6, 8 or 12 rows).
UNBIASED_N = (15.25, 60.25)

STATUS_PASS, STATUS_FAIL, STATUS_UNCLAIMED = "PASS", "FAIL", "not claimed"


@dataclass(frozen=True)
class PropertyResult:
    """The outcome of one property: PASS, FAIL (with why) or not claimed."""

    name: str
    status: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status == STATUS_FAIL

    def line(self) -> str:
        """``<property> <status>: <detail>`` on one line."""
        text = f"{self.name:<18} {self.status}"
        return f"{text}: {self.detail}" if self.detail else text


class FeatureMapCheckError(AssertionError):
    """A claimed property failed; the message names each failed one."""


class _Failure(Exception):
    """A property does not hold (the message says how)."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise _Failure(message)


@dataclass(frozen=True)
class _Subject:
    """The map under test: its class and its own parameters."""

    cls: type[RandomFeatureMap]
    params: dict[str, Any]
    name: str

    def make(self, kernel: str, n: float, random_state: Any) -> RandomFeatureMap:
        return self.cls(kernel=kernel, n=n, random_state=random_state, **self.params)

    def fit(self, kernel: str, n: float, random_state: Any, X: np.ndarray) -> RandomFeatureMap:
        return self.make(kernel, n, random_state).fit(X, _labels(len(X)))

    def kernels(self) -> list[str]:
        """The kernels the map fits (a one-line refusal in fit: not supported)."""
        out = []
        X = _points(8, 3, seed=1)
        for kernel in KERNELS.names():
            try:
                self.fit(kernel, 1, 0, X)
            except KernelbenchError:
                continue
            out.append(kernel)
        return out


def _labels(N: int) -> np.ndarray:
    """Fixed +-1 labels (for the maps that fit with y; the others ignore them)."""
    return np.where(np.arange(N) % 3 == 0, -1.0, 1.0)


def _points(N: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 1.0, (N, d))


def resolve(cls_or_name: Any) -> _Subject:
    """The map to check: a registered id (``rff``), a method config (``orf_tallqr``: its
    class with the config's params), a RandomFeatureMap subclass or an instance (its
    class with its parameters)."""
    if isinstance(cls_or_name, RandomFeatureMap):
        params = cls_or_name.get_params(deep=False)
        for key in ("kernel", "n", "random_state"):
            params.pop(key, None)
        return _Subject(type(cls_or_name), params, type(cls_or_name).__name__)
    if isinstance(cls_or_name, type) and issubclass(cls_or_name, RandomFeatureMap):
        return _Subject(cls_or_name, {}, cls_or_name.__name__)
    name = str(cls_or_name)
    if name in FEATURE_MAPS:
        return _Subject(FEATURE_MAPS.get(name), {}, name)
    from kernelbench.config import group_options, load_group

    configs = group_options("method")
    if name in configs:
        cfg = load_group("method", name)
        return _Subject(FEATURE_MAPS.get(str(cfg["name"])), dict(cfg.get("params") or {}), name)
    raise choices_error("method", name, set(FEATURE_MAPS.names()) | set(configs))


# ------------------------------------------------------------------------ properties
def _unbiased(subject: _Subject, kernels: list[str]) -> str:
    X = _points(6, 5, seed=20261126)
    pairs = [(0, 1), (2, 3), (4, 5)]
    m = len(pairs) * len(kernels)
    crit = float(stats.norm.isf(ALPHA / (2 * m)))
    z_power = float(stats.norm.isf(1 - POWER))
    seeds = np.random.SeedSequence(38).spawn(MAX_DRAWS)
    worst = 0.0
    used = []
    budgets: set[float] = set()
    for kernel in kernels:
        K = get_kernel(kernel).exact(X, X)
        target = np.array([K[i, j] for i, j in pairs])

        for n in UNBIASED_N:  # a noisier map: four times the projections

            def draw(
                seed: np.random.SeedSequence,
                kernel: str = kernel,
                n: float = n,
                target: np.ndarray = target,
            ) -> np.ndarray:
                fm = subject.fit(kernel, n, np.random.default_rng(seed), X)
                Z = fm.transform(X)
                est = np.array([Z[i] @ Z[j] for i, j in pairs]) + fm.constant_
                return est / target - 1.0

            errors = [draw(s) for s in seeds[:PILOT]]
            sd = float(np.max(np.std(errors, axis=0, ddof=1)))
            R = max(PILOT, math.ceil(((crit + z_power) * sd / BIAS) ** 2))
            if R <= MAX_DRAWS:
                break
        _require(
            R <= MAX_DRAWS,
            f"{kernel}: too noisy to resolve a {BIAS:.0%} bias in {MAX_DRAWS} draws "
            f"(relative sd {sd:.3g} at n={n})",
        )
        errors += [draw(s) for s in seeds[PILOT:R]]
        e = np.asarray(errors)
        mean = e.mean(axis=0)
        se = e.std(axis=0, ddof=1) / math.sqrt(R)
        t = np.abs(mean) / np.where(se > 0, se, np.inf)
        t[(se == 0) & (mean != 0)] = np.inf
        for p in np.flatnonzero(t > crit):
            i, j = pairs[p]
            raise _Failure(
                f"{kernel}: E[k_hat(x{i}, x{j})] is off by {mean[p]:+.2%} +- {se[p]:.2%} "
                f"(|t| = {t[p]:.1f} > {crit:.2f}; {R} draws)"
            )
        worst = max(worst, float(np.max(np.abs(mean))))
        used.append(R)
        budgets.add(n)
    return (
        f"largest |mean relative error| {worst:.2%} over {m} entries "
        f"(n = {', '.join(map(str, sorted(budgets)))}, {min(used)}-{max(used)} draws; "
        f"alpha {ALPHA}, power {POWER:.0%} at {BIAS:.0%})"
    )


def _exact_D(subject: _Subject, kernels: list[str]) -> str:
    kernel = kernels[0]
    for d in (3, 5, 8):
        X = _points(12, d, seed=d)
        for n in (1, 2, 0.3, 1.25, UNBIASED_N[0]):
            fm = subject.fit(kernel, n, 0, X)
            D = n_projections(n, d)
            out = get_kernel(kernel).n_outputs * D
            _require(
                fm.n_projections_ == D,
                f"d={d}, n={n}: {fm.n_projections_} projections, D = round(2n(d + 1)) = {D}",
            )
            shape = fm.transform(X).shape
            _require(shape == (12, out), f"d={d}, n={n}: features {shape}, expected (12, {out})")
            _require(fm.n_features_out_ == out, f"d={d}, n={n}: n_features_out_ != {out}")
    return "n = 1, 2, 0.3, 1.25, 15.25 in d = 3, 5, 8"


def _seeded(subject: _Subject, kernels: list[str]) -> str:
    X = _points(12, 5, seed=3)
    for kernel in kernels:
        a = subject.fit(kernel, 1.25, 7, X)
        Za = a.transform(X)
        _require(np.array_equal(Za, a.transform(X)), f"{kernel}: transform is not pure")
        Zb = subject.fit(kernel, 1.25, 7, X).transform(X)
        _require(np.array_equal(Za, Zb), f"{kernel}: two fits with seed 7 differ")
        Zc = subject.fit(kernel, 1.25, 8, X).transform(X)
        _require(not np.allclose(Za, Zc), f"{kernel}: seeds 7 and 8 give the same features")
    return f"seeds 7, 7, 8 ({', '.join(kernels)})"


def _dtype_shapes(subject: _Subject, kernels: list[str]) -> str:
    for kernel in kernels:
        n_out = get_kernel(kernel).n_outputs
        for d, n in ((1, 1), (2, 1), (3, 0.5), (17, 0.1), (40, 0.2), (40, 1)):
            X = _points(9, d, seed=d)
            D = n_projections(n, d)
            Z = subject.fit(kernel, n, 1, X).transform(X)
            _require(Z.dtype == np.float64, f"{kernel}, d={d}: float64 in, {Z.dtype} out")
            _require(Z.shape == (9, n_out * D), f"{kernel}, d={d}, D={D}: features {Z.shape}")
            _require(bool(np.all(np.isfinite(Z))), f"{kernel}, d={d}: non-finite features")
            X32 = X.astype(np.float32)
            Z32 = subject.fit(kernel, n, 1, X32).transform(X32)
            _require(Z32.dtype == np.float32, f"{kernel}, d={d}: float32 in, {Z32.dtype} out")
            gap = float(np.max(np.abs(Z32 - Z), initial=0.0))
            _require(
                gap <= 1e-3 * max(1.0, float(np.max(np.abs(Z), initial=0.0))),
                f"{kernel}, d={d}: float32 features differ from float64 by {gap:.3g}",
            )
    return "float32 kept; d = 1, 2, 3, 17, 40; D < d at d = 17, 40"


#: Rows of the batch-independence check's batches: more than the largest block of
#: :func:`kernelbench.transforms.row_products` (1024), so a batch spans blocks.
BATCH_ROWS = 1100


def _batch_independent(subject: _Subject, kernels: list[str]) -> str:
    rng = np.random.default_rng(39)
    N = BATCH_ROWS
    places = (0, 1, 7, 15, 16, 17, 63, 64, 127, 128, 255, 256, 1023, 1024, N - 1)
    for kernel in kernels:
        for d, n in ((5, 2), (40, 2), (40, 0.3)):  # D = 24, 164, 25 (D < d)
            X64 = _points(N, d, seed=d + 1)
            fm = subject.fit(kernel, n, 5, X64[:60])
            for X in (X64, X64.astype(np.float32)):
                where = f"{kernel}, d={d}, n={n}, {X.dtype}"
                Z = fm.transform(X)
                for i in places:
                    _require(
                        _same_bits(fm.transform(X[i : i + 1])[0], Z[i]),
                        f"{where}: row {i} alone differs from row {i} of a {N}-row batch",
                    )
                for lo, hi in ((3, 40), (1000, N), (250, 270)):
                    _require(
                        _same_bits(fm.transform(X[lo:hi]), Z[lo:hi]),
                        f"{where}: rows {lo}..{hi - 1} differ from the same rows in the batch",
                    )
                perm = rng.permutation(N)
                _require(
                    _same_bits(fm.transform(X[perm]), Z[perm]),
                    f"{where}: a permuted batch gives other bits",
                )
    return (
        f"rows alone, slices, a permutation of {N} rows (d = 5, 40, D < d; float64, "
        f"float32; {', '.join(kernels)})"
    )


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """The same dtype, shape and bytes (NaNs and signed zeros included)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _same_params(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[k] is b[k] or bool(np.all(a[k] == b[k])) for k in a)


def _sklearn(subject: _Subject, kernels: list[str]) -> str:
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    fm = subject.make(kernels[0], 1.25, 4)
    params = fm.get_params()
    names = set(subject.cls._get_param_names())
    _require(set(params) == names, f"get_params gives {sorted(params)}, __init__ {sorted(names)}")
    fm.set_params(**params)
    _require(_same_params(fm.get_params(), params), "set_params(**get_params()) changed them")
    X = _points(12, 5, seed=4)
    _constraints(fm, names, X)
    fm.fit(X, _labels(len(X)))
    copy = clone(fm)
    _require(_same_params(copy.get_params(), params), "clone changed the parameters")
    try:
        copy.transform(X)
    except NotFittedError:
        pass
    else:
        raise _Failure("a clone of a fitted map transforms without fit")
    again = pickle.loads(pickle.dumps(fm))
    _require(
        np.array_equal(again.transform(X), fm.transform(X)), "unpickled map transforms otherwise"
    )
    return "get_params, set_params, constraints, clone, pickle"


def _constraints(fm: RandomFeatureMap, names: set[str], X: np.ndarray) -> None:
    """Every parameter has declared constraints (``_parameter_constraints``), and fit
    refuses a value of no valid type in one line (scikit-learn's check_param_validation)."""
    from sklearn.base import clone

    declared = set(fm._parameter_constraints)
    _require(
        declared == names,
        f"_parameter_constraints has {sorted(declared)}, __init__ {sorted(names)}",
    )
    bad = type("BadType", (), {})()
    for name in sorted(names):
        try:
            clone(fm).set_params(**{name: bad}).fit(X, _labels(len(X)))
        except KernelbenchError:
            continue
        except Exception as err:
            raise _Failure(f"{name}=BadType(): {type(err).__name__}, not one line") from None
        raise _Failure(f"{name}=BadType() is accepted: declare its constraints")


#: The test of each property of :data:`PROPERTIES`, in its order.
CHECKS: dict[str, Callable[[_Subject, list[str]], str]] = {
    "unbiased": _unbiased,
    "exact_D": _exact_D,
    "seeded": _seeded,
    "dtype_shapes": _dtype_shapes,
    "batch_independent": _batch_independent,
    "sklearn": _sklearn,
}
assert list(CHECKS) == list(PROPERTIES)


def check_feature_map(
    cls_or_name: Any, *, raise_on_failure: bool = True, properties: Any = None
) -> list[PropertyResult]:
    """Test every property the map claims (module docstring); one result per property
    of :data:`~kernelbench.features.base.PROPERTIES` (``properties``: only those).

    ``cls_or_name``: a registered id, a method config, a RandomFeatureMap subclass or an
    instance. With ``raise_on_failure`` a failed claim raises
    :class:`FeatureMapCheckError` naming each failed property.
    """
    subject = resolve(cls_or_name)
    wanted = list(PROPERTIES) if properties is None else list(properties)
    unknown = [p for p in wanted if p not in PROPERTIES]
    if unknown:
        raise choices_error("property", unknown[0], PROPERTIES)
    claims = subject.make("rbf", 1, None).claimed()
    bad = sorted(set(claims) - set(PROPERTIES))
    if bad:
        raise choices_error(f"property claimed by {subject.name}", bad[0], PROPERTIES)
    with threadpool_limits(limits=1):  # small matrices: threads only contend
        return _run(subject, wanted, claims, raise_on_failure)


def _run(
    subject: _Subject, wanted: list[str], claims: frozenset[str], raise_on_failure: bool
) -> list[PropertyResult]:
    kernels = subject.kernels()
    if not kernels:
        raise KernelbenchError(f"{subject.name} fits none of the kernels {KERNELS.names()}")
    results = []
    for name in wanted:
        if name not in claims:
            results.append(PropertyResult(name, STATUS_UNCLAIMED))
            continue
        try:
            detail = CHECKS[name](subject, kernels)
        except _Failure as err:
            results.append(PropertyResult(name, STATUS_FAIL, str(err)))
        except Exception as err:  # a map that raises fails the property, named
            results.append(PropertyResult(name, STATUS_FAIL, f"{type(err).__name__}: {err}"))
        else:
            results.append(PropertyResult(name, STATUS_PASS, detail))
    failed = [r for r in results if r.failed]
    if failed and raise_on_failure:
        lines = "\n".join(f"  {r.line()}" for r in failed)
        raise FeatureMapCheckError(
            f"{subject.name} fails {len(failed)} claimed propert"
            f"{'y' if len(failed) == 1 else 'ies'}: "
            f"{', '.join(r.name for r in failed)}\n{lines}"
        )
    return results


@click.command("check")
@click.argument("method")
@click.option(
    "--batch-invariant",
    is_flag=True,
    help="Check the map with batch_invariant=True (its BLAS products in fixed row blocks).",
)
def check(method: str, batch_invariant: bool) -> None:
    """Test the properties a feature map claims (unbiasedness, exactly D projections,
    seeding, dtypes and shapes, batch independence, scikit-learn conventions): one line
    per property, PASS, FAIL or not claimed; exit 1 if a claimed one fails.

    METHOD: a registered method (kernelbench list), a method config, or a plug-in's."""
    subject = resolve(method)
    target: Any = method
    if batch_invariant:
        target = subject.cls(**{**subject.params, "batch_invariant": True})
    results = check_feature_map(target, raise_on_failure=False)
    click.echo(f"{method} ({subject.cls.__module__}.{subject.cls.__name__})")
    for r in results:
        click.echo(f"  {r.line()}")
    failed = [r.name for r in results if r.failed]
    if failed:
        click.echo(f"{method}: {len(failed)} claimed properties fail: {', '.join(failed)}")
        click.get_current_context().exit(1)
