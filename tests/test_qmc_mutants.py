"""The QMC map's options, names and messages (kernelbench/features/qmc.py; docs/qmc.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import qmc as scipy_qmc

import kernelbench.features.qmc as qmc_module
from kernelbench import make_feature_map
from kernelbench.errors import KernelbenchError
from kernelbench.features.qmc import (
    first_primes,
    halton_points,
    halton_rr2_points,
    qmc_points,
    qmcpy_points,
    scrambled_radical_inverse,
)


def small_data(n: int = 12, d: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (n, d))


@pytest.mark.parametrize("sequence", ["halton", "sobol", "lattice", "digital_net", "adaptive"])
def test_every_published_sequence_fits_with_its_defaults(sequence):
    """docs/qmc.md's five sequences are accepted by name and give finite rows."""
    X = small_data()
    fm = make_feature_map("qmc", kernel="rbf", n=1, sequence=sequence, random_state=0).fit(X)
    assert fm.W_.shape[1] == 3 and np.all(np.isfinite(fm.W_))


@pytest.mark.filterwarnings("ignore:The balance properties")
def test_unscrambled_halton_and_sobol_are_the_plain_sequences():
    """scramble=False (randomize None) is randomize='none': scipy's plain Halton from
    index 1 and plain Sobol' without its origin; the same with randomize='none' named."""
    rng = np.random.default_rng(0)
    halton = qmc_points("halton", 8, 3, False, rng)
    np.testing.assert_array_equal(halton, scipy_qmc.Halton(3, scramble=False).random(9)[1:])
    named = qmc_points("halton", 8, 3, True, rng, randomize="none")
    np.testing.assert_array_equal(named, halton)
    sobol = qmc_points("sobol", 8, 3, False, rng)
    np.testing.assert_array_equal(sobol, scipy_qmc.Sobol(3, scramble=False).random(9)[1:])
    np.testing.assert_array_equal(qmc_points("sobol", 8, 3, True, rng, randomize="none"), sobol)


@pytest.mark.filterwarnings("ignore:The balance properties")
def test_scrambled_defaults_are_owen_halton_and_lms_ds_sobol():
    """scramble=True: halton's default is Owen's scrambling (halton_points of the same
    Generator), sobol's is scipy's LMS + digital shift (its default): named or not."""
    got = qmc_points("halton", 8, 3, True, np.random.default_rng(5))
    np.testing.assert_array_equal(got, halton_points(8, 3, np.random.default_rng(5)))
    named = qmc_points("halton", 8, 3, True, np.random.default_rng(5), randomize="owen")
    np.testing.assert_array_equal(named, got)
    ref = scipy_qmc.Sobol(3, scramble=True, rng=np.random.default_rng(5)).random(8)
    sobol = qmc_points("sobol", 8, 3, True, np.random.default_rng(5))
    np.testing.assert_array_equal(sobol, ref)
    named = qmc_points("sobol", 8, 3, True, np.random.default_rng(5), randomize="lms_ds")
    np.testing.assert_array_equal(named, ref)


def test_at_iteration_names_its_argument_and_range():
    X = small_data()
    fm = make_feature_map(
        "qmc", kernel="rbf", n=1, sequence="adaptive", max_cg_iter=2, keep_iterates=True
    ).fit(X)
    with pytest.raises(KernelbenchError, match=r"^iteration must be an integer in 0\.\."):
        fm.at_iteration(fm.n_cg_iter_ + 1)


def test_at_iteration_without_iterates_is_refused_in_one_line():
    X = small_data()
    fm = make_feature_map("qmc", kernel="rbf", n=1, sequence="adaptive", max_cg_iter=1).fit(X)
    msg = "^at_iteration needs sequence='adaptive' and keep_iterates=True$"
    with pytest.raises(KernelbenchError, match=msg):
        fm.at_iteration(0)


@pytest.mark.parametrize(
    ("sequence", "generator", "limit"),
    [
        ("sobol", "scipy_joe_kuo", 21201),
        ("lattice", "kuo_cbc", 9125),
        ("digital_net", "joe_kuo", 21201),
        ("digital_net", "joe_kuo_order2", 10600),
    ],
)
def test_a_generator_refuses_more_dimensions_than_its_file_holds(sequence, generator, limit):
    """docs/qmc.md's dimension limits: one past is refused in one line naming the limit."""
    rng = np.random.default_rng(0)
    msg = f"^qmc generator '{generator}' supports at most {limit} dimensions, got d={limit + 1};"
    with pytest.raises(KernelbenchError, match=msg):
        qmc_points(sequence, 2, limit + 1, True, rng, generator=generator)


@pytest.mark.parametrize(
    ("sequence", "generator"),
    [("lattice", "kuo_cbc"), ("digital_net", "joe_kuo"), ("digital_net", "joe_kuo_order2")],
)
def test_a_qmcpy_generator_refuses_more_points_than_its_file_holds(
    sequence, generator, monkeypatch
):
    """MAX_POINTS is qmcpy's own n_limit of the generator's file; one point past it is
    refused in one line before qmcpy is called (qmcpy would fail asking for the next
    power of two)."""
    import qmcpy

    cls, kwargs = qmc_module.QMCPY_GENERATORS[generator]
    randomize = qmc_module.QMCPY_RANDOMIZE[qmc_module.OPTIONS[sequence][1][0]]
    dist = getattr(qmcpy, cls)(2, seed=0, randomize=randomize, **kwargs)
    most = qmc_module.MAX_POINTS[generator]
    assert dist.n_limit == most

    def never(*args, **kwargs):
        raise AssertionError("qmcpy called")

    monkeypatch.setattr(qmc_module, "qmcpy_points", never)
    msg = (
        f"^qmc generator '{generator}' holds at most {most} points, got N={most + 1} "
        r"projections; use sequence=halton or sobol, or fewer projections \(n\)$"
    )
    with pytest.raises(KernelbenchError, match=msg):
        qmc_points(sequence, most + 1, 2, True, np.random.default_rng(0), generator=generator)


def test_sobol_takes_every_dimension_of_its_file():
    pts = qmc_points("sobol", 2, 21201, True, np.random.default_rng(0))
    assert pts.shape == (2, 21201) and np.all((pts >= 0) & (pts < 1))


def test_adaptive_on_constant_data_keeps_its_one_iterate():
    """No box (every feature constant): no CG step, iterate 0 is the Halton start."""
    X = np.ones((5, 3))
    fm = make_feature_map(
        "qmc", kernel="rbf", n=1, sequence="adaptive", keep_iterates=True, random_state=0
    ).fit(X)
    halton = make_feature_map("qmc", kernel="rbf", n=1, random_state=0).fit(X)
    assert fm.n_cg_iter_ == 0
    np.testing.assert_array_equal(fm.at_iteration(0).W_, halton.W_)


def test_the_adaptive_box_is_in_frequency_units():
    """b_j = box_scale x range_j x the input scale sqrt(2 gamma) (Sec. 4): gamma = 2
    doubles the box of gamma = 1/2."""
    X = small_data()
    fm = make_feature_map(
        "qmc", kernel="rbf", n=1, gamma=2.0, sequence="adaptive", max_cg_iter=1, random_state=0
    ).fit(X)
    assert fm.input_scale_ == pytest.approx(2.0)
    np.testing.assert_allclose(fm.box_, 2.0 * np.ptp(X, axis=0), rtol=1e-15)


def test_korobov_is_a_shifted_rank_1_lattice():
    """{i z / N + Delta} mod 1, z = (1, a, a^2 mod N): N = 10, a = 7 (6 = round(10 / golden
    ratio) shares a factor with 10); a uniform shift from the Generator."""
    n, d = 10, 3
    pts = qmc_points("lattice", n, d, True, np.random.default_rng(1), generator="korobov")
    shift = np.random.default_rng(1).random(d)
    z = np.array([1, 7, 9])
    expected = np.mod((np.arange(n)[:, None] * z) % n / n + shift, 1.0)
    np.testing.assert_allclose(pts, expected, rtol=0, atol=1e-15)
    other = qmc_points("lattice", n, d, True, np.random.default_rng(2), generator="korobov")
    assert not np.allclose(other, pts)


def test_first_primes_of_no_count_and_of_one():
    assert first_primes(0).tolist() == [] and first_primes(-3).tolist() == []
    assert first_primes(1).tolist() == [2] and first_primes(2).tolist() == [2, 3]
    pts = halton_points(5, 1, np.random.default_rng(0), scramble=False)
    np.testing.assert_array_equal(pts[:, 0], [0.5, 0.25, 0.75, 0.125, 0.625])


def test_the_extreme_points_map_to_symmetric_finite_frequencies(monkeypatch):
    """u is clipped to [eps, 1 - eps] before Phi^-1: the origin and the largest double
    below 1 (an Owen-scrambled base-2 digit string of 53 ones) give -+Phi^-1(1 - eps)."""
    extreme = np.array([[0.0, 1.0 - 2.0**-53], [1.0 - 2.0**-53, 0.0]])

    def points(sequence, n_points, d, *args):
        return np.tile(extreme, (n_points, 1))[:n_points]

    monkeypatch.setattr(qmc_module, "qmc_points", points)
    fm = make_feature_map("qmc", kernel="rbf", n=1, random_state=0).fit(small_data(d=2))
    top = -ndtri(np.finfo(np.float64).eps)
    D = len(fm.W_)
    np.testing.assert_array_equal(fm.W_, np.tile([[-top, top], [top, -top]], (D, 1))[:D])
    np.testing.assert_allclose(fm.weights_, np.full(D, 1.0 / D), rtol=1e-15)


def test_adaptive_with_another_kernel_is_refused_naming_the_option():
    msg = r"^sequence='adaptive' needs the Gaussian kernel \(rbf\), got 'arccos1'$"
    with pytest.raises(KernelbenchError, match=msg):
        make_feature_map("qmc", kernel="arccos1", sequence="adaptive").fit(small_data())


@pytest.mark.parametrize("option", [{"skip": 1}, {"leap": 2}])
def test_skip_and_leap_outside_rr2_are_refused_in_one_line(option):
    msg = (
        r"^skip and leap apply to the RR2 Halton set \(randomize=rr2, MATLAB's haltonset\), "
        r"got randomize='owen'$"
    )
    with pytest.raises(KernelbenchError, match=msg):
        make_feature_map("qmc", kernel="rbf", **option).fit(small_data())
    rr2 = make_feature_map("qmc", kernel="rbf", randomize="rr2", **option).fit(small_data())
    assert np.all(np.isfinite(rr2.W_))


def test_first_primes_is_a_prefix_of_the_primes_for_every_small_count():
    """Every count from 1 to 120 (the sieve's limit and its last sieving prime move with
    it; e.g. count 16 sieves up to 63, where 7 must strike out 49)."""
    primes = [k for k in range(2, 700) if all(k % q for q in range(2, int(k**0.5) + 1))]
    for count in range(1, 121):
        assert first_primes(count).tolist() == primes[:count], count


def test_adaptive_defaults_run_twenty_cg_iterations_while_they_gain():
    """Defaults max_cg_iter = 20, tol = 0: on 12 points in 3-D the box discrepancy falls at
    each of the 20 iterations (a positive tol, e.g. 1, would stop after the first)."""
    fm = make_feature_map("qmc", kernel="rbf", n=1, sequence="adaptive", random_state=0)
    fm.fit(small_data())
    assert fm.n_cg_iter_ == 20 and len(fm.discrepancy_trace_) == 21
    assert np.all(np.diff(fm.discrepancy_trace_) < 0)


@pytest.mark.parametrize("base", [2, 3, 5, 7])
def test_radical_inverse_up_to_an_index_that_is_a_power_of_the_base(base):
    """The last index base^k has its only nonzero digit at position k: that digit is
    permuted too (scipy's scrambled van der Corput, bit for bit; and unscrambled)."""
    from scipy.stats._qmc import _van_der_corput_permutations, van_der_corput

    for k in (1, 2, 3):
        n = base**k + 1
        perms = _van_der_corput_permutations(base, rng=np.random.default_rng(base + k))
        got = scrambled_radical_inverse(np.arange(n), base, list(perms))
        expected = van_der_corput(n, base, scramble=True, permutations=perms)
        np.testing.assert_array_equal(got, expected)
        plain = halton_points(n - 1, 1, np.random.default_rng(0), scramble=False)
        if base == 2:
            np.testing.assert_array_equal(plain[:, 0], van_der_corput(n, 2)[1:])


@pytest.mark.parametrize("name", ["skip", "leap"])
def test_a_negative_skip_or_leap_is_refused_in_one_line(name):
    with pytest.raises(KernelbenchError, match=rf"^{name} must be an integer >= 0, got -1$"):
        make_feature_map("qmc", kernel="rbf", randomize="rr2", **{name: -1}).fit(small_data())


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"max_cg_iter": -1}, "max_cg_iter must be an integer >= 0, got -1"),
        ({"tol": -1.0}, "tol must be a number >= 0"),
        ({"keep_iterates": "yes"}, "keep_iterates"),
        ({"scramble": "yes"}, "scramble"),
    ],
)
def test_the_adaptive_options_are_checked_for_every_sequence(option, message):
    """Bad input is refused before any compute, also where the option is not used."""
    with pytest.raises(KernelbenchError, match=f"^{message}"):
        make_feature_map("qmc", kernel="rbf", **option).fit(small_data())


# ------------------------------------------------ RR2 Halton, lattices and nets
def test_rr2_halton_without_skip_starts_after_the_origin():
    """skip = 0 starts at index 1 (the origin maps to Phi^-1 = -inf), so it is MATLAB's
    Skip 1; leap = 1 takes every other index. RR2 in base 2 is the identity, in base 3
    (0, 2, 1): index 1 -> (1/2, 2/3), 2 -> (1/4, 1/3), 3 = 10_3 -> (3/4, 2/9), 5 = 12_3
    -> (5/8, 1/3 + 2/9)."""
    first = [[1 / 2, 2 / 3], [1 / 4, 1 / 3], [3 / 4, 2 / 9]]
    np.testing.assert_allclose(halton_rr2_points(3, 2), first, rtol=1e-15)
    np.testing.assert_array_equal(halton_rr2_points(3, 2, skip=1), halton_rr2_points(3, 2))
    odd = [[1 / 2, 2 / 3], [3 / 4, 2 / 9], [5 / 8, 5 / 9]]
    np.testing.assert_allclose(halton_rr2_points(3, 2, leap=1), odd, rtol=1e-15)


@pytest.mark.parametrize(("n", "a"), [(13, 8), (21, 13), (34, 21), (55, 34)])
def test_korobov_of_a_fibonacci_number_is_the_fibonacci_lattice(n, a):
    """N = F_m: the integer nearest N / golden ratio is F_(m-1) (coprime to F_m), so
    z = (1, F_(m-1), F_(m-1)^2 mod F_m = +-1 (Cassini)), the Fibonacci lattice, shifted."""
    d = 3
    pts = qmc_points("lattice", n, d, True, np.random.default_rng(n), generator="korobov")
    shift = np.random.default_rng(n).random(d)
    z = np.array([1, a, (a * a) % n])
    assert z[2] in (1, n - 1)
    expected = np.mod((np.arange(n)[:, None] * z) % n / n + shift, 1.0)
    np.testing.assert_allclose(pts, expected, rtol=0, atol=1e-15)


def test_the_cbc_lattice_takes_all_2_to_the_20_points_of_its_file():
    """docs/qmc.md: kuo_cbc has N <= 2^20. N = 2^20 is the whole lattice: each coordinate
    (z_j odd, coprime to 2^20) is the grid i / 2^20 shifted mod 1."""
    n = 2**20
    pts = qmc_points("lattice", n, 2, True, np.random.default_rng(0))
    assert pts.shape == (n, 2)
    for column in pts.T:
        steps = np.diff(np.sort(column)) * n
        np.testing.assert_allclose(steps, 1.0, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("sequence", "generator", "randomize"),
    [
        ("lattice", "kuo_cbc", "shift"),
        ("digital_net", "joe_kuo", "lms_ds"),
        ("digital_net", "joe_kuo_order2", "ds"),
    ],
)
def test_a_qmcpy_sequence_takes_one_63_bit_seed_from_the_runs_generator(
    sequence, generator, randomize
):
    """The rows of qmc_lattice and qmc_digital_net: qmcpy's points with the one seed
    integers(0, 2^63 - 1) of the run's Generator, and nothing else drawn from it."""
    for seed in range(4):
        rng, ref = np.random.default_rng(seed), np.random.default_rng(seed)
        got = qmc_points(sequence, 5, 3, True, rng, generator=generator, randomize=randomize)
        expected = qmcpy_points(generator, randomize, 5, 3, int(ref.integers(0, 2**63 - 1)))
        np.testing.assert_array_equal(got, expected)
        assert rng.random() == ref.random()


def test_qmcpys_interlacing_note_is_silenced_too(monkeypatch):
    """The order-2 net's interlacing note (qmcpy's ParameterWarning) is expected: hidden."""
    import warnings

    import qmcpy
    from qmcpy.util.exceptions_warnings import ParameterWarning

    real = qmcpy.DigitalNetB2
    note = (
        "Digital interlacing is often performed on matrices with the number of columns "
        "(m_max = 32) equal to the number of bits in each int (64), but this is not the case."
    )

    def noisy(*args, **kwargs):
        warnings.warn(note, ParameterWarning, stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(qmcpy, "DigitalNetB2", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        qmcpy_points("joe_kuo_order2", "ds", 4, 3, 11)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            {"sequence": "lattice", "generator": "nx"},
            "invalid generator 'nx'; valid choices: kuo_cbc, korobov",
        ),
        (
            {"sequence": "digital_net", "randomize": "nus"},
            "invalid randomize 'nus'; valid choices: lms_ds, ds",
        ),
        ({"randomize": "shift"}, "invalid randomize 'shift'; valid choices: owen, rr2, none"),
    ],
)
def test_an_option_outside_the_sequences_is_refused_naming_it(option, message):
    """One line naming the option, the value and the sequence's choices (OPTIONS)."""
    with pytest.raises(KernelbenchError, match=f"^{message}$"):
        make_feature_map("qmc", kernel="rbf", **option).fit(small_data())


def test_a_dimension_limit_refusal_names_the_way_out():
    msg = (
        r"^qmc generator 'kuo_cbc' supports at most 9125 dimensions, got d=9126; "
        r"use sequence=halton or a generator without a limit$"
    )
    with pytest.raises(KernelbenchError, match=msg):
        qmc_points("lattice", 2, 9126, True, np.random.default_rng(0))


def test_unscrambled_adaptive_starts_from_the_plain_halton_points():
    """adaptive follows scramble as halton does: scramble=False is randomize='none'."""
    rng = np.random.default_rng(0)
    plain = scipy_qmc.Halton(3, scramble=False).random(9)[1:]
    np.testing.assert_array_equal(qmc_points("adaptive", 8, 3, False, rng), plain)


def test_qmc_has_sklearns_identity_and_repr():
    """Estimators compare by identity and are hashable; repr lists the changed
    parameters only (scikit-learn's conventions, not a dataclass's)."""
    a, b = make_feature_map("qmc", n=2), make_feature_map("qmc", n=2)
    assert a != b and a == a and len({a, b}) == 2
    assert repr(a) == "QMC(n=2)"
