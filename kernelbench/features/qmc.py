"""Quasi-Monte Carlo feature maps (Yang, Sindhwani, Avron & Mahoney 2014).

Rows w_j = Phi^{-1}(u_j) of low-discrepancy points u_j in [0, 1]^d (their Algorithm 1),
equal weights 1/D. Each ``sequence`` (Sec. 6.1, Fig. 2) has its ``generator``s and
``randomize`` options (``OPTIONS``, the first of each the default; their sources:
docs/qmc.md); ``adaptive`` starts from halton and moves the points to minimise the box
discrepancy (Sec. 5, :mod:`kernelbench.qmc`). For halton, adaptive and sobol,
``randomize=None`` follows ``scramble``. Every randomisation draws from the run's
Generator (qmcpy gets one seed drawn from it).
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc as _qmc
from sklearn.utils.validation import check_is_fitted

from kernelbench.errors import KernelbenchError
from kernelbench.features import FEATURE_MAPS
from kernelbench.features.rff import DenseFeatureMap
from kernelbench.validation import Interval, StrOptions, check_bool, check_choice, check_int

SEQUENCES = ("halton", "sobol", "lattice", "digital_net", "adaptive")
_HALTON = (("halton",), ("owen", "rr2", "none"))
#: sequence -> (its generators, its randomisations); the first of each is the default.
OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "halton": _HALTON,
    "adaptive": _HALTON,
    "sobol": (("scipy_joe_kuo",), ("lms_ds", "none")),
    "lattice": (("kuo_cbc", "korobov"), ("shift",)),
    "digital_net": (("joe_kuo", "joe_kuo_order2"), ("lms_ds", "ds")),
}
#: Largest dimension each generator supports (None: no limit).
MAX_DIM = {
    "halton": None,
    "scipy_joe_kuo": 21201,
    "kuo_cbc": 9125,
    "korobov": None,
    "joe_kuo": 21201,
    "joe_kuo_order2": 10600,
}
#: Most points each qmcpy generator's file holds (its ``n_limit``; qmcpy draws a power of
#: two, the first 2^ceil(log2 N) points).
MAX_POINTS = {"kuo_cbc": 2**20, "joe_kuo": 2**32, "joe_kuo_order2": 2**32}


# --------------------------------------------------------------------- Halton
def first_primes(count: int) -> np.ndarray:
    """The first ``count`` primes (the Halton bases), by a sieve of Eratosthenes."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    n = max(15, count)
    limit = int(n * (math.log(n) + math.log(math.log(n)))) + 3  # > p_n for n >= 6
    sieve = np.ones(limit + 1, dtype=bool)
    sieve[:2] = False
    for p in range(2, int(limit**0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = False
    return np.flatnonzero(sieve)[:count].astype(np.int64)


def n_digits(base: int) -> int:
    """Digits permuted per radical inverse: ceil(54 / log2(base)) - 1 (scipy; Owen 2017),
    the smallest k with base^-k <= 2^-54 (later digits do not change a double)."""
    return math.ceil(54.0 / math.log2(base)) - 1


#: Radical inverses by the compiled kernels (False: numpy's digit loop, for comparisons;
#: the same bits either way).
USE_COMPILED = True


def _digit_table(
    base: int, digit_perms: Sequence[np.ndarray], last: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """perm_j[a] base^-(j+1) for every position j, as one float64 array, the start and
    length of each position's entries, and how many positions hold digits of indices up
    to ``last`` (the rest read their entry 0 only).

    The scales are those of the digit loop (1 / base, then / base per position) and each
    entry is the one rounded product the loop adds, so a kernel that adds the entries in
    the order of the positions repeats the loop's sums bit for bit."""
    parts: list[np.ndarray] = []
    scale = 1.0 / base
    power = 1
    used = 0
    for perm in digit_perms:
        if power <= last:
            parts.append(np.asarray(perm) * scale)
            power *= base
            used += 1
        else:  # every index has digit 0 here
            parts.append(np.asarray([perm[0] * scale], dtype=np.float64))
        scale /= base
    lengths = np.array([len(part) for part in parts], dtype=np.int64)
    offsets = np.zeros(len(parts), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    table = np.concatenate(parts).astype(np.float64, copy=False) if parts else np.zeros(0)
    return table, offsets, lengths, used


@numba.njit(cache=True, nogil=True)
def _radical_inverse_of_index(
    out, index, base, table, offsets, lengths, used
):  # pragma: no cover - compiled
    """out[i] = the digit loop's sum for index[i], digits by floor division (numpy's and
    Python's, negative indices included); -1 if a digit has no permutation entry."""
    for i in range(index.shape[0]):
        q = index[i]
        acc = 0.0
        for j in range(used):
            a = q % base
            if a >= lengths[j]:
                return -1
            acc += table[offsets[j] + a]
            q //= base
        for j in range(used, offsets.shape[0]):
            acc += table[offsets[j]]
        out[i] = acc
    return 0


@numba.njit(cache=True, nogil=True)
def _halton_rows(out, row0, start, bases, counts, entries, offsets):  # pragma: no cover - compiled
    """Rows row0 + r of ``out``: base ``bases[r]``'s radical inverses of start + i, the
    digit loop's sums bit for bit, position by position over all points (position j's
    digit is constant on runs of base^j consecutive indices: no division per point).

    Row r reads ``entries[offsets[r]:]``: each used position's permutation entries (the
    min(base, last // base^j + 1) digits that occur), then one entry per remaining
    position (digit 0); each entry times its scale is rounded before it is added."""
    n = out.shape[1]
    last = start + n - 1
    table = np.empty(max(1, bases.max()))
    for r in range(bases.shape[0]):
        base = bases[r]
        row = out[row0 + r]
        row[:] = 0.0
        e = offsets[r]
        scale = 1.0 / base
        power = 1
        for _ in range(counts[r]):
            if power > last:  # digit 0 at every index
                v = float(entries[e]) * scale
                e += 1
                for i in range(n):
                    row[i] += v
            else:
                length = min(base, last // power + 1)
                for a in range(length):
                    table[a] = float(entries[e + a]) * scale
                e += length
                a = (start // power) % base
                i = 0
                if power == 1:  # cycles through the digits from a
                    while i < n:
                        m = min(base - a, n - i)
                        for t in range(m):
                            row[i + t] += table[a + t]
                        i += m
                        a = 0
                else:  # runs of ``power`` equal digits, the first one shorter
                    stop = min(n, power - start % power)
                    while i < n:
                        v = table[a]
                        for t in range(i, stop):
                            row[t] += v
                        i = stop
                        stop = min(n, i + power)
                        a = a + 1 if a + 1 < base else 0
                power *= base
            scale /= base


def scrambled_radical_inverse(
    index: np.ndarray, base: int, digit_perms: Sequence[np.ndarray]
) -> np.ndarray:
    """sum_j perm_j[a_j(i)] base^-(j+1), a_j(i) the j-th base-``base`` digit of i.

    ``digit_perms[j]`` needs an entry for every digit value at position j. With scipy's
    full permutations this is scipy's scrambled van der Corput, bit for bit. Summed in
    the order of the positions (compiled: :func:`_digit_table`, the same bits as
    numpy's digit loop, ``USE_COMPILED = False``).
    """
    index = np.asarray(index, dtype=np.int64)
    last = int(index.max()) if index.size else 0
    if not USE_COMPILED:
        return _radical_inverse_numpy(index, base, digit_perms, last)
    table, offsets, lengths, used = _digit_table(base, digit_perms, last)
    out = np.zeros(index.size)
    flat = np.ascontiguousarray(index).reshape(-1)
    if _radical_inverse_of_index(out, flat, base, table, offsets, lengths, used) < 0:
        raise IndexError(f"a base-{base} digit has no entry in its digit permutation")
    return out.reshape(index.shape)


def _radical_inverse_numpy(
    index: np.ndarray, base: int, digit_perms: Sequence[np.ndarray], last: int
) -> np.ndarray:
    """:func:`scrambled_radical_inverse` by numpy, one digit position at a time."""
    out = np.zeros(index.shape)
    scale = 1.0 / base
    power = 1
    for perm in digit_perms:
        if power <= last:
            digits = index % base if power == 1 else (index // power) % base
            out += np.asarray(perm)[digits] * scale
            power *= base
        else:  # every index has digit 0 here
            out += perm[0] * scale
        scale /= base
    return out


def halton_points(
    n_points: int, d: int, rng: np.random.Generator, scramble: bool = True
) -> np.ndarray:
    """N points of the (randomised) Halton sequence in [0, 1)^d.

    Scrambled (Owen 2017, Alg. 1, scipy's law): an independent random permutation of
    the digits per dimension and digit position, points i = 0..N-1; only the entries
    read are drawn (an ordered sample without replacement), O(N d + sum_k min(N, p_k))
    instead of O(sum_k p_k n_digits(p_k)). Unscrambled: points i = 1..N. The draws are
    made dimension by dimension in the order above; the sums by :func:`_halton_rows`,
    the bits of :func:`scrambled_radical_inverse`, with no division per point.
    """
    start = 0 if scramble else 1
    last = start + n_points - 1
    out = np.empty((d, n_points))
    bases = first_primes(d)
    index = None if USE_COMPILED else np.arange(start, start + n_points, dtype=np.int64)
    block: list[np.ndarray] = []  # the permutation entries of rows row0..k
    row0 = held = 0
    for k, p in enumerate(bases.tolist()):
        count = n_digits(p)
        perms: list[np.ndarray] = []
        power = 1
        while len(perms) < count and power <= last:
            used = min(p, last // power + 1)
            perms.append(rng.choice(p, size=used, replace=False) if scramble else np.arange(used))
            power *= p
        tail = count - len(perms)  # positions that only ever hold digit 0
        zeros = np.zeros(tail, np.int64)
        if tail and scramble:
            zeros = rng.integers(0, p, size=tail)
        if index is not None:  # numpy's digit loop
            out[k] = _radical_inverse_numpy(index, p, perms + list(zeros[:, None]), last)
            continue
        block.append(np.concatenate([*perms, zeros]))
        held += len(block[-1])
        if k + 1 == d or held >= _BLOCK_ENTRIES:
            rows = bases[row0 : k + 1]
            counts = np.array([n_digits(q) for q in rows.tolist()], dtype=np.int64)
            offsets = np.cumsum([0] + [len(entries) for entries in block[:-1]])
            _halton_rows(out, row0, start, rows, counts, np.concatenate(block), offsets)
            block, row0, held = [], k + 1, 0
    return out.T


#: Permutation entries drawn before :func:`halton_points` computes their rows (bounds
#: its memory at 8 MiB for any d and N).
_BLOCK_ENTRIES = 1 << 20


# ------------------------------------------------------------- Halton RR2
def rr2_permutation(base: int) -> np.ndarray:
    """The reverse-radix-2 digit permutation of ``base`` (Kocis & Whiten 1997, RR2).

    0..2^k - 1 (2^k >= base) bit-reversed, those below ``base`` kept: base 5 -> (0, 4,
    2, 1, 3); MATLAB's ``scramble(haltonset(d), 'RR2')`` applies it to every digit.
    """
    k = max(1, (int(base) - 1).bit_length())
    codes = np.arange(1 << k, dtype=np.int64)
    rev = np.zeros_like(codes)
    for bit in range(k):
        rev |= ((codes >> bit) & 1) << (k - 1 - bit)
    return rev[rev < base]


def halton_rr2_points(n_points: int, d: int, skip: int = 0, leap: int = 0) -> np.ndarray:
    """Points of the RR2-scrambled Halton sequence (deterministic).

    Indices skip + j (leap + 1), as MATLAB's ``haltonset(d, 'Skip', skip, 'Leap',
    leap)``; with ``skip = 0`` they start at 1 (index 0 is the origin, Phi^-1 = -inf).
    """
    index = skip + np.arange(n_points, dtype=np.int64) * (leap + 1) + (skip == 0)
    out = np.empty((d, n_points))
    for k, p in enumerate(first_primes(d).tolist()):
        perm = rr2_permutation(p)
        out[k] = scrambled_radical_inverse(index, p, [perm] * n_digits(p))
    return out.T


# ------------------------------------------------- lattice and digital net
#: qmcpy's generators (files it ships; docs/qmc.md): name -> (class, arguments).
QMCPY_GENERATORS: dict[str, tuple[str, dict[str, Any]]] = {
    "kuo_cbc": ("Lattice", {"generating_vector": "kuo.lattice-33002-1024-1048576.9125.txt"}),
    "joe_kuo": ("DigitalNetB2", {"generating_matrices": "joe_kuo.6.21201.txt"}),
    "joe_kuo_order2": (
        "DigitalNetB2",
        {"generating_matrices": "joe_kuo.6.21201.txt", "alpha": 2},
    ),
}
#: Randomisations of qmcpy's lattice and nets: our name -> qmcpy's ``randomize``.
QMCPY_RANDOMIZE = {"shift": "SHIFT", "lms_ds": "LMS DS", "ds": "DS"}


def qmcpy_points(generator: str, randomize: str, n_points: int, d: int, seed: int) -> np.ndarray:
    """The first N points of a randomised qmcpy lattice or digital net in [0, 1)^d: the
    first of 2^ceil(log2 N) (qmcpy's radical-inverse order needs a power of two)."""
    import qmcpy

    cls, kwargs = QMCPY_GENERATORS[generator]
    from qmcpy.util.exceptions_warnings import ParameterWarning

    with warnings.catch_warnings():
        # qmcpy's notes on its generating matrices (t-bit truncation, interlacing for
        # alpha = 2): expected for the files above; any other warning is shown
        for note in ("Truncating ints in generating matrix", "Digital interlacing"):
            warnings.filterwarnings("ignore", message=note, category=ParameterWarning)
        dist = getattr(qmcpy, cls)(d, seed=seed, randomize=QMCPY_RANDOMIZE[randomize], **kwargs)
        total = 1 << max(0, int(n_points - 1).bit_length())
        pts = np.asarray(dist.gen_samples(total, warn=False), dtype=np.float64)
    return np.ascontiguousarray(pts[:n_points])


def korobov_points(n_points: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Legacy: randomly shifted rank-1 Korobov lattice {i z / N + Delta}, z = (1, a, a^2,
    ...) mod N, a the integer coprime to N nearest N / golden ratio (docs/qmc.md)."""
    a = max(1, int(round(n_points * (np.sqrt(5.0) - 1.0) / 2.0)))
    while np.gcd(a, n_points) != 1:
        a += 1
    z = np.ones(d, dtype=np.int64)
    for k in range(1, d):
        z[k] = (z[k - 1] * a) % n_points
    i = np.arange(n_points, dtype=np.int64)[:, None]
    base = ((i * z[None, :]) % n_points) / n_points
    return np.mod(base + rng.random(d)[None, :], 1.0)


def resolve_options(
    sequence: str, generator: str | None, randomize: str | None, scramble: bool
) -> tuple[str, str]:
    """(generator, randomisation) of a sequence, None -> its default (``OPTIONS``)."""
    generators, randomizations = OPTIONS[sequence]
    gen = check_choice("generator", generators[0] if generator is None else generator, generators)
    if randomize is None:
        follows_scramble = sequence in ("halton", "adaptive", "sobol")
        rnd = randomizations[0] if scramble or not follows_scramble else "none"
    else:
        rnd = randomize
    rnd = check_choice("randomize", rnd, randomizations)
    return gen, rnd


def qmc_points(
    sequence: str,
    n_points: int,
    d: int,
    scramble: bool,
    rng: np.random.Generator,
    generator: str | None = None,
    randomize: str | None = None,
    skip: int = 0,
    leap: int = 0,
) -> np.ndarray:
    """N points in [0, 1)^d of a (randomised) low-discrepancy sequence (``adaptive``:
    its ``halton`` start); ``skip`` and ``leap`` apply to the RR2 Halton set."""
    gen, rnd = resolve_options(sequence, generator, randomize, scramble)
    limit = MAX_DIM[gen]
    if limit is not None and d > limit:
        raise KernelbenchError(
            f"qmc generator {gen!r} supports at most {limit} dimensions, got d={d}; "
            f"use sequence=halton or a generator without a limit"
        )
    most = MAX_POINTS.get(gen)
    if most is not None and n_points > most:
        raise KernelbenchError(
            f"qmc generator {gen!r} holds at most {most} points, got N={n_points} "
            f"projections; use sequence=halton or sobol, or fewer projections (n)"
        )
    if sequence in ("halton", "adaptive"):
        if rnd == "rr2":
            return halton_rr2_points(n_points, d, skip, leap)
        return halton_points(n_points, d, rng, rnd == "owen")
    if gen == "korobov":
        return korobov_points(n_points, d, rng)
    if gen in QMCPY_GENERATORS:
        return qmcpy_points(gen, rnd, n_points, d, int(rng.integers(0, 2**63 - 1)))
    scramble = rnd == "lms_ds"
    engine = _qmc.Sobol(d, scramble=scramble, rng=rng)
    skip = 0 if scramble else 1  # the unscrambled sequence starts at the origin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Sobol' balance for non powers of 2
        pts = engine.random(n_points + skip)
    return pts[skip:]


@FEATURE_MAPS.register("qmc")
@dataclass(eq=False, repr=False)
class QMC(DenseFeatureMap):
    """Rows w_j = Phi^{-1}(u_j), u_j low-discrepancy points in [0, 1]^d (Yang et al. 2014).

    Unbiased under a random randomisation (``rr2`` and ``none`` are deterministic).
    ``sequence="adaptive"`` (rbf only) sets the box b_j = box_scale (max_i x_ij - min_i
    x_ij) times the input scale (Sec. 4; Table 2: box_scale 1 and 1/4, Fig. 3: 1/2;
    zero-range features left out), then moves the Halton frequencies by at most
    ``max_cg_iter`` nonlinear-CG iterations on the box discrepancy, stopping when one
    gains less than ``tol`` relatively (:func:`kernelbench.qmc.adaptive_points`;
    O(max_cg_iter s^2 d)). Its attributes: ``box_``, ``discrepancy_trace_`` (Theorem 9's
    error per iteration, [0] = start), ``n_cg_iter_``, and with ``keep_iterates``
    ``iterates_`` ((n_cg_iter_ + 1) D d floats) for :meth:`at_iteration`.
    """

    paper_label = "QMC"
    _parameter_constraints = {
        "sequence": [StrOptions(SEQUENCES)],
        "scramble": [check_bool],
        "generator": [],  # and randomize: the sequence's (OPTIONS), in _cross_check
        "randomize": [],
        "box_scale": [Interval(float, 0, strict=True)],
        "max_cg_iter": [Interval(int, 0)],
        "tol": [Interval(float, 0)],
        "keep_iterates": [check_bool],
        "skip": [Interval(int, 0)],
        "leap": [Interval(int, 0)],
    }

    sequence: str = "halton"
    scramble: bool = True
    generator: str | None = None
    randomize: str | None = None
    box_scale: float = 1.0
    max_cg_iter: int = 20
    tol: float = 0.0
    keep_iterates: bool = False
    skip: int = 0
    leap: int = 0

    def _cross_check(self) -> None:
        _, rnd = resolve_options(self.sequence, self.generator, self.randomize, self.scramble)
        if (self.skip or self.leap) and rnd != "rr2":
            raise KernelbenchError(
                f"skip and leap apply to the RR2 Halton set (randomize=rr2, MATLAB's "
                f"haltonset), got randomize={rnd!r}"
            )
        if self.sequence == "adaptive":
            self._require_rbf("sequence='adaptive'")

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        args = (bool(self.scramble), rng, self.generator, self.randomize)
        U = qmc_points(self.sequence, D, d, *args, int(self.skip), int(self.leap))
        eps = np.finfo(np.float64).eps  # u in [eps, 1 - eps]: the origin maps to -8.1, not -inf
        W = ndtri(np.clip(np.asarray(U, dtype=np.float64), eps, 1.0 - eps))
        if self.sequence == "adaptive":
            W = self._adapt(W, d)
        self.W_ = W
        return np.full(D, 1.0 / D), 0.0

    def _adapt(self, W: np.ndarray, d: int) -> np.ndarray:
        from kernelbench.qmc import adaptive_points

        X = self._fit_data[0]
        span = np.ptp(X, axis=0).astype(np.float64) if len(X) else np.zeros(d)
        box = float(self.box_scale) * span * self.input_scale_
        active = np.flatnonzero(box > 0)
        self.box_ = box
        if active.size == 0:  # u = 0 only: f_0 = 1 is integrated exactly
            self.discrepancy_trace_ = np.zeros(1)
            self.n_cg_iter_ = 0
            if self.keep_iterates:
                self.iterates_ = [W.copy()]
            return W
        keep = bool(self.keep_iterates)
        result = adaptive_points(
            W[:, active], box[active], 1.0, self.max_cg_iter, float(self.tol), keep
        )
        self.discrepancy_trace_ = result.trace
        self.n_cg_iter_ = result.n_iter
        if keep:
            self.iterates_ = [_with_columns(W, active, points) for points in result.iterates]
        W[:, active] = result.points
        return W

    def at_iteration(self, iteration: int) -> QMC:
        """A fitted copy with the frequencies after ``iteration`` CG iterations (0: the
        start; needs ``sequence="adaptive", keep_iterates=True``)."""
        check_is_fitted(self, "weights_")
        if not hasattr(self, "iterates_"):
            raise KernelbenchError("at_iteration needs sequence='adaptive' and keep_iterates=True")
        iteration = check_int("iteration", iteration, 0, self.n_cg_iter_)
        other = copy.copy(self)
        other.W_ = self.iterates_[iteration]
        return other


def _with_columns(W: np.ndarray, columns: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A copy of W with ``columns`` set to ``values``."""
    out = W.copy()
    out[:, columns] = values
    return out
