"""Variance of RFF and ORF Gaussian-kernel estimates (Yu et al. 2016) against simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import hyp0f1

from kernelbench import make_feature_map
from kernelbench.errors import KernelbenchError
from kernelbench.theory import (
    Z_SERIES,
    _pair_cosine_quadrature,
    orf_pair_covariance,
    orf_variance,
    orf_variance_exact,
    orf_variance_ratio,
    orf_variance_ratio_exact,
    rff_variance,
)

ZS = np.array([0.25, 0.5, 1.0, 1.5, 2.0, 3.0])


def simulate(method: str, d: int, D: int, runs: int, seed: int) -> np.ndarray:
    """k_hat(0, y_z) for ||y_z|| = z in ZS, from ``runs`` fits of kernelbench's own map.

    gamma = 1/2 is sigma = 1, so z = ||x - y|| / sigma. Returns runs x len(ZS).
    """
    X = np.zeros((1, d))
    Y = np.zeros((len(ZS), d))
    Y[:, 0] = ZS
    n = D / (2.0 * (d + 1))  # D = round(2 n (d + 1)) projections
    out = np.empty((runs, len(ZS)))
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(runs)):
        fm = make_feature_map(method, n=n, gamma=0.5, random_state=np.random.default_rng(child))
        fm.fit(X)
        assert fm.n_projections_ == D
        out[r] = fm.approximate_kernel(X, Y)[0]
    return out


def variance_and_se(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample variance and its standard error sqrt((m4 - var^2) / R) (delta method)."""
    centred = samples - samples.mean(axis=0)
    var = samples.var(axis=0, ddof=1)
    m4 = np.mean(centred**4, axis=0)
    return var, np.sqrt(np.maximum(m4 - var**2, 0.0) / len(samples))


@pytest.fixture(scope="module")
def sims() -> dict[tuple[str, int], np.ndarray]:
    return {
        ("rff", 16): simulate("rff", 16, 16, 4000, seed=1),
        ("orf", 16): simulate("orf", 16, 16, 4000, seed=2),
        ("orf2", 16): simulate("orf", 16, 32, 2000, seed=3),
    }


def test_rff_variance_is_lemma_1(sims):
    var, se = variance_and_se(sims[("rff", 16)])
    theory = rff_variance(ZS, 16)
    # independent checks at 6 distances, each within 4 standard errors (false alarm 4e-4)
    assert np.all(np.abs(var - theory) < 4 * se), (var, theory, se)
    mean = sims[("rff", 16)].mean(axis=0)
    np.testing.assert_allclose(mean, np.exp(-(ZS**2) / 2), atol=4 * np.sqrt(theory / 4000).max())


def test_exact_orf_ratio_matches_simulation(sims):
    """The ratio of two independent sample variances, within 4 of its standard errors.

    se(ratio) / ratio = sqrt((se_o / var_o)^2 + (se_r / var_r)^2) (delta method, the two
    simulations independent); the RFF denominator is the exact Lemma 1 variance, so only
    the ORF variance is estimated and the test has the full power of the ORF sample.
    """
    var_o, se_o = variance_and_se(sims[("orf", 16)])
    exact = orf_variance_exact(ZS, 16)
    assert np.all(np.abs(var_o - exact) < 4 * se_o), (var_o, exact, se_o)
    ratio = var_o / rff_variance(ZS, 16)
    ratio_se = se_o / rff_variance(ZS, 16)
    assert np.all(np.abs(ratio - orf_variance_ratio_exact(ZS, 16)) < 4 * ratio_se)
    # ... and with a simulated RFF variance in the denominator as well
    var_r, se_r = variance_and_se(sims[("rff", 16)])
    sim_ratio = var_o / var_r
    rel_se = np.hypot(se_o / var_o, se_r / var_r)
    assert np.all(np.abs(sim_ratio - orf_variance_ratio_exact(ZS, 16)) < 4 * rel_se * sim_ratio)


def test_stacked_blocks_halve_the_variance(sims):
    """D = 2d: two independent blocks (Lemma 3), the variance of one block over 2."""
    var, se = variance_and_se(sims[("orf2", 16)])
    exact = orf_variance_exact(ZS, 16, D=32)
    np.testing.assert_allclose(exact, orf_variance_exact(ZS, 16) / 2, rtol=1e-12)
    assert np.all(np.abs(var - exact) < 4 * se)
    np.testing.assert_allclose(orf_variance_ratio(ZS, 16, 32), orf_variance_ratio(ZS, 16, 16))


def test_yu_eq3_is_only_asymptotic_in_d(sims):
    """Eq. (3) drops an O(1/d) relative term: at d = 16 it misses the simulation at small z.

    At z = 0.5 Eq. (3) gives 0.067, the simulation and the exact value 0.150; the gap is
    many standard errors. The gap to the exact ratio shrinks like 1/d.
    """
    var_o, se_o = variance_and_se(sims[("orf", 16)])
    ratio = var_o / rff_variance(ZS, 16)
    ratio_se = se_o / rff_variance(ZS, 16)
    yu = orf_variance_ratio(ZS, 16)
    assert abs(ratio[1] - yu[1]) > 8 * ratio_se[1]
    gaps = [
        np.abs(orf_variance_ratio(ZS, d) - orf_variance_ratio_exact(ZS, d)).max()
        for d in (16, 64, 256)
    ]
    assert gaps[0] > 0.05
    assert gaps[1] < gaps[0] / 3 and gaps[2] < gaps[1] / 3
    # the main-term variance of Theorem 1 is Eq. (3) times Lemma 1
    np.testing.assert_allclose(
        orf_variance(ZS, 16), orf_variance_ratio(ZS, 16) * rff_variance(ZS, 16)
    )


def test_limits():
    for d in (2, 16, 100):
        assert orf_variance_ratio(0.0, d) == pytest.approx(1.0 / d)  # 1 - (d - 1)/d
        assert orf_variance_ratio_exact(0.0, d) == pytest.approx(3.0 / (d + 2))
        # continuous at the series cut-off z = 0.001
        assert orf_variance_ratio_exact(1.001e-3, d) == pytest.approx(3.0 / (d + 2), rel=1e-5)
        assert orf_variance_ratio_exact(8.0, d) == pytest.approx(1.0, abs=1e-9)
    assert orf_variance_ratio(1e-3, 16) == pytest.approx(orf_variance_ratio(0.0, 16), rel=1e-9)
    assert rff_variance(0.0, 10) == 0.0
    assert float(orf_variance_ratio_exact(1.0, 1)) == 1.0  # one row per block: no pairs


def test_series_and_quadrature_agree():
    """Two evaluations of the same expectation: the Taylor series (z <= Z_SERIES) and
    Gauss-Legendre quadrature, and (for d where it is finite) a Bessel-function integral:
    E cos(z t v_1) = E_t 0F1(; d/2; -(z t)^2 / 4), t ~ chi(2d)."""
    for d in (2, 5, 16, 64):
        for z in (1.0, 2.5, Z_SERIES):
            series = float(orf_pair_covariance(z, d))
            quad = _pair_cosine_quadrature(z, d) - np.exp(-z * z)
            # the series' rounding grows like eps * e^{z^2} (1e-11 at Z_SERIES), against a
            # single-feature variance of ~0.5
            assert series == pytest.approx(quad, abs=1e-10)
        for z in (Z_SERIES + 0.01, 5.0):

            def integrand(t, z=z, d=d):
                return hyp0f1(d / 2, -((z * t) ** 2) / 4) * stats.chi.pdf(t, 2 * d)

            centre = np.sqrt(2 * d)
            bessel = integrate.quad(integrand, max(0, centre - 15), centre + 15, limit=400)[0]
            assert float(orf_pair_covariance(z, d)) == pytest.approx(
                bessel - np.exp(-z * z), abs=1e-11
            )


def test_bad_input_is_one_line():
    with pytest.raises(KernelbenchError, match="z = ||x - y|| / sigma must be finite and >= 0"):
        rff_variance(-1.0, 4)
    with pytest.raises(KernelbenchError, match="D must be an integer >= 1"):
        orf_variance_ratio(1.0, 4, 0)
    with pytest.raises(KernelbenchError, match="d must be an integer >= 1"):
        orf_variance_ratio_exact(1.0, 2.5)
