"""Stochastic spherical-radial quadrature features (Munkhoeva et al. 2018).

The Gaussian integral is split into a radial and a spherical part (Eq. 4) and
approximated by averaging stochastic spherical-radial (SR) rules of Genz &
Monahan (1998):

* ``sr11`` - degree (1, 1): one random direction, radius chi(d). Equal in
  distribution to RFF for even kernels (Prop. 2.1).
* ``sr13`` - degree (1, 3): the rotated basis Q e_i, radii chi(d). Equal in
  distribution to ORF (Prop. 2.2).
* ``sr33`` - degree (3, 3) (Eq. 5, with one radius per vertex): the rotated
  vertices of a regular simplex, radii rho_j ~ chi(d + 2), and a node at zero,

      SR(f) = (1 - sum_j d / ((d+1) rho_j^2)) f(0)
              + d/(d+1) sum_j [f(rho_j Q v_j) + f(-rho_j Q v_j)] / (2 rho_j^2).

For even kernels (rbf) f(w) = f(-w), so the reflected nodes are redundant: as
in the published experiments, 2n rotations without reflections are used,
keeping D = 2n(d + 1). Every rule-based map uses exactly the D = round(2n(d + 1))
projections of rff (:func:`kernelbench.features.base.n_projections`) at any n: whole
rules, the last one truncated to the nodes that fit. The f(0) term enters k_hat as
the additive constant ``constant_`` = c f(0) a_0^2; it can be negative for a single rule, in
which case no real explicit feature carries it (an explicit map would append
the column sqrt(constant_) when it is >= 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelbench.features import FEATURE_MAPS
from kernelbench.features.base import RandomFeatureMap
from kernelbench.transforms import (
    Butterfly,
    chi_norms,
    haar_orthogonal,
    row_products,
    simplex_into,
)
from kernelbench.validation import Interval, StrOptions, check_bool

ROTATIONS = ("butterfly", "haar")
RADII = ("per_point", "per_rule")


@dataclass(eq=False, repr=False)
class _SphericalRadial(RandomFeatureMap):
    """Shared machinery of the SR rules: rotations, radii, reflections, weights."""

    #: nodes per rule on the sphere (before reflection), as a function of d
    _radial_degree = 1
    _parameter_constraints = {
        "rotation": [StrOptions(ROTATIONS)],
        "n_butterflies": [Interval(int, 1)],
        "reflections": [None, check_bool],
        "radius": [StrOptions(RADII)],
    }

    rotation: str = "butterfly"
    n_butterflies: int = 3
    reflections: bool | None = None
    radius: str = "per_point"

    # -- parameters ---------------------------------------------------------
    def _blas_rows(self) -> bool:
        """Haar rotations are dense d x d products (a BLAS GEMM), sr11's one direction a
        product too; butterflies are not."""
        return self.rotation == "haar"

    def _nodes_per_rule(self, d: int) -> int:
        raise NotImplementedError

    # -- random structure ---------------------------------------------------
    def _draw_rotation(self, rng: np.random.Generator, d: int) -> Any:
        if self.rotation == "haar":
            return haar_orthogonal(rng, d)
        return Butterfly(d, int(self.n_butterflies), rng)

    def _rotate(self, X: np.ndarray, rot: Any, out: np.ndarray) -> np.ndarray:
        """X @ Q: the coordinates Q^T x of every row in the rotated frame."""
        if isinstance(rot, Butterfly):
            return rot.rotate_rows(X, out=out)
        if self.batch_invariant:  # in fixed row blocks: a row's bits whatever its batch
            return row_products(X, rot.T)
        if rot.shape[1] != X.shape[1]:  # sr11: one direction per rule
            return X @ rot.astype(X.dtype, copy=False)
        return np.matmul(X, rot.astype(X.dtype, copy=False), out=out)

    def _draw_radii(self, rng: np.random.Generator, t: int, p: int, d: int) -> np.ndarray:
        df = d + 2 if self._radial_degree == 3 else d
        if self.radius == "per_rule":
            return np.repeat(chi_norms(rng, df, (t, 1)), p, axis=1)
        return chi_norms(rng, df, (t, p))

    def _draw_rules(self, rng: np.random.Generator, d: int, D: int) -> tuple[int, int]:
        """Draw the t = ceil(D / per_rule) rules' rotations and radii; (t, per_rule)."""
        p = self._nodes_per_rule(d)
        refl = self.reflections  # None: for odd kernels only
        self.reflections_ = not self.kernel_.even if refl is None else bool(refl)
        per_rule = p * (2 if self.reflections_ else 1)
        t = -(-D // per_rule)  # whole rules, the last one truncated to D nodes
        self.nodes_per_rule_ = p
        self.rotations_ = [self._draw_rotation(rng, d) for _ in range(t)]
        self.radii_ = self._draw_radii(rng, t, p, d)
        return t, per_rule

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        """Radial degree 1 (sr11, sr13): equal weights, each node marginally N(0, I); the
        last rule may be truncated to hit D = 2n(d + 1), equal weights keep it unbiased."""
        self._draw_rules(rng, d, D)
        return np.full(D, 1.0 / D), 0.0

    def _project(self, X: np.ndarray) -> np.ndarray:
        N, d = X.shape
        p = self.nodes_per_rule_
        refl = self.reflections_
        block = p * (2 if refl else 1)
        out = np.empty((N, len(self.rotations_) * block), dtype=X.dtype)
        X = np.ascontiguousarray(X)
        U = np.empty_like(X)
        for k, rot in enumerate(self.rotations_):
            self._rule_into(X, rot, U, out, k * block, self.radii_[k], refl)
        return out[:, : self.n_projections_]

    def _rule_into(self, X, rot, U, out, lo, radii, refl) -> None:
        """One rule's scaled (and reflected) node projections of X into out[:, lo:] (U:
        scratch for X @ Q)."""
        U = self._rotate(X, rot, U)
        p = self.nodes_per_rule_
        S = U[:, :p] * radii.astype(U.dtype)[None, :]
        out[:, lo : lo + p] = S
        if refl:
            np.negative(S, out=out[:, lo + p : lo + 2 * p])


@FEATURE_MAPS.register("sr11")
class SR11(_SphericalRadial):
    """SR rule of degree (1, 1): nodes +-rho Q e_1, rho ~ chi(d) (Prop. 2.1: = RFF).

    Q e_1 is a uniformly random unit vector for Haar Q; it is drawn directly
    (normalised Gaussian), so ``rotation`` does not apply to this rule.
    """

    paper_label = "SR11"

    def _blas_rows(self) -> bool:
        """One direction per rule: X q is a BLAS product whatever ``rotation`` says."""
        return True

    def _nodes_per_rule(self, d: int) -> int:
        return 1

    def _draw_rotation(self, rng: np.random.Generator, d: int) -> np.ndarray:
        g = rng.standard_normal(d)
        norm = np.linalg.norm(g)
        return (g / norm if norm > 0 else np.eye(d)[0])[:, None]


@FEATURE_MAPS.register("sr13")
class SR13(_SphericalRadial):
    """SR rule of degree (1, 3): nodes +-rho_i Q e_i, rho_i ~ chi(d) (Prop. 2.2: = ORF)."""

    paper_label = "SR13"

    def _nodes_per_rule(self, d: int) -> int:
        return d


@FEATURE_MAPS.register("sr33")
class SR33(_SphericalRadial):
    """SR rule of degree (3, 3) on the rotated regular simplex (Munkhoeva et al. 2018, Eq. 5).

    D = round(2n(d + 1)) nodes, as for every map: t = ceil(D / p) rules of p = d + 1
    nodes without reflections (even kernels) or p = 2(d + 1) with them, the last
    rule truncated to its first D - (t - 1) p nodes (its vertices, then their
    reflections), as the authors' code keeps D = 2n(d + 1) at fractional n.

    Weights: every node w_j = rho_j Q v_j alone is an unbiased rule,
    (1 - d / rho_j^2) f(0) + (d / rho_j^2) f(w_j), for Q v_j uniform on the sphere
    and rho_j ~ chi(d + 2) (E[d / rho^2] = 1, and d rho^-2 chi_{d+2} = chi_d in law:
    Eq. (5) node by node), and Eq. (6) is the mean of its nodes' rules. So the D
    nodes get the weight d / (rho_j^2 D) each and the node at zero
    1 - mean_j d / rho_j^2, which keeps E[k_hat] = k for any D. For whole rules
    (integer n; n = 1/2, 3/2, ... without reflections) this is Eq. (6): node
    weights d / ((d + 1) rho_j^2) / t (halved with reflections), zero weight
    mean_k (1 - sum_j d / ((d + 1) rho_kj^2)), entering as ``constant_``. A
    truncated rule's nodes keep their weights; only the whole rules' share of the
    sum falls from 1 to (t - 1) p / D (its truncated nodes carry the rest).
    ``rotation``: products of ``n_butterflies`` random butterflies with random
    permutations (default, O(d log d)), or a dense Haar matrix.
    """

    paper_label = "B"
    _radial_degree = 3

    def _nodes_per_rule(self, d: int) -> int:
        return d + 1

    def _rule_into(self, X, rot, U, out, lo, radii, refl) -> None:
        if isinstance(rot, Butterfly):  # rotation and simplex in one pass, the same bits
            rot.simplex_into(X, out, lo, radii, refl)
        else:
            simplex_into(self._rotate(X, rot, U), out, lo, radii, refl)

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        t, per_rule = self._draw_rules(rng, d, D)
        w = d / ((d + 1.0) * self.radii_**2)  # t x p spherical-radial weights
        whole = D == t * per_rule
        if whole:  # Eq. (6), the mean of t rules
            zero_weight = float(np.mean(1.0 - w.sum(axis=1)))
        w = w / (D / per_rule)  # d / (rho_j^2 D): t for whole rules
        if self.reflections_:
            w = np.concatenate([w, w], axis=1) / 2.0
        w = w.ravel()[:D]
        if not whole:  # the node rules' mean: 1 - mean_j d / rho_j^2 over the D nodes
            zero_weight = 1.0 - float(w.sum())
        return w, zero_weight
