"""The base class of every random feature map (scikit-learn transformer conventions).

A map estimates k(x, y) = c E_{w ~ N(0, I)}[phi(w . x~) . phi(w . y~)]
(:mod:`kernelbench.kernels`) by k_hat(x, y) = c sum_j a_j^2 phi(w_j . x~) . phi(w_j . y~)
+ constant_, constant_ = c a_0^2 f(0) (non-zero only with a node at w = 0: ``sr33``);
``transform`` returns z(x) = sqrt(c) a_j phi(w_j . x~), so k_hat = z(x) . z(y) + constant_.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from kernelbench.errors import KernelbenchError
from kernelbench.kernels import get_kernel, resolve_gamma
from kernelbench.validation import check_bool, check_constraints, check_n, check_random_state

#: The input dtypes a map keeps (others are converted to float64).
FLOATS = [np.float64, np.float32]

#: The properties a map may claim (``RandomFeatureMap.claims``), each tested by
#: :func:`kernelbench.testing.check_feature_map`.
PROPERTIES: dict[str, str] = {
    "unbiased": "E[K_hat] = K on fixed data (a 2% relative bias is detected)",
    "exact_D": "exactly D = round(2n(d + 1)) projections at integer and fractional n",
    "seeded": "the same seed gives the same features, other seeds other draws",
    "dtype_shapes": "float32 stays float32, shapes, any d, D < d",
    "batch_independent": "after fit, a row's features are the same bits alone or in a batch",
    "sklearn": "clone, pickling, get_params/set_params, declared parameter constraints",
}


def n_projections(n: float, d: int) -> int:
    """D = 2 n (d + 1), rounded to the nearest integer (Munkhoeva et al. 2018, Sec. 2.3)."""
    return max(1, int(round(2.0 * n * (d + 1))))


def sample_factor(As: np.ndarray) -> np.ndarray:
    """R (m x m, float64) of the thin QR A~^T = Q R of m < d scaled rows A~.

    A~ W^T = R^T (W Q)^T depends on W only through W Q (D x m): sample-space draws
    draw it directly, O(d m^2 + m^2 D) instead of O(D d m) plus a D x d draw.
    """
    return np.linalg.qr(np.asarray(As, dtype=np.float64).T, mode="r")


def distinct_rows(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U, index): the distinct rows U of A in order of first occurrence, A == U[index].

    Sample-space draws factor the distinct points only: a repeated point makes the QR
    of A~^T rank deficient, and its reflector (set by rounding) would change a seed's
    numbers at O(1) between BLAS kernels (LEUKEMIA; docs/verification.md).
    """
    _, first, index = np.unique(A, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return A[first[order]], rank[np.ravel(index)]


@dataclass(eq=False, repr=False)
class RandomFeatureMap(TransformerMixin, BaseEstimator):
    """Base class: parameters as dataclass fields (the generated ``__init__`` is
    scikit-learn's), randomness in ``fit``, pure ``transform``.

    Subclasses implement :meth:`_draw` (store the random structure, return the
    quadrature weights a_j^2 per projection and the weight a_0^2 of the node at
    zero) and :meth:`_project` (return X~ W^T, shape N x D).

    Attributes set by ``fit``: ``n_features_in_``, ``n_projections_`` (D),
    ``n_features_out_``, ``weights_`` (a_j^2), ``zero_weight_`` (a_0^2), ``constant_``,
    ``input_scale_``.
    """

    #: Paper label used in figures (G, Gort, ROM, QMC, GQ, B).
    paper_label: ClassVar[str] = ""
    #: Maps of one family draw their first numbers alike from the same Generator (RFF's
    #: W first), so a protocol may give them one shared draw ("" = none).
    draw_family: ClassVar[str] = ""
    #: Whether ``fit`` needs the labels y (a supervised map; only a protocol that fits
    #: with labels, such as krr, can run it).
    needs_labels: ClassVar[bool] = False
    #: Whether ``fit`` draws the map from the data it is fitted on (Nystrom's landmarks,
    #: leverage-score resampling), so the map is not independent of the data; the
    #: leaderboard ranks such maps on their own track (docs/leaderboard.md).
    data_dependent: ClassVar[bool] = False
    #: The properties of :data:`PROPERTIES` the map claims, which
    #: :func:`kernelbench.testing.check_feature_map` tests (all, unless a map says
    #: otherwise; :meth:`claimed` may narrow them for some parameters).
    claims: ClassVar[frozenset[str]] = frozenset(PROPERTIES)
    #: Whether ``transform`` takes a dense BLAS product of the rows (X W^T), whose bits
    #: for a row OpenBLAS lets depend on the batch (its kernel, edge code and thread
    #: split follow the product's shape): such a map claims ``batch_independent`` only
    #: with ``batch_invariant=True`` (:func:`kernelbench.transforms.row_products`).
    blas_rows: ClassVar[bool] = False
    #: Each parameter's constraints, as scikit-learn's (None admits None): a map declares
    #: those of the parameters it adds; ``__init_subclass__`` merges its parents'.
    _parameter_constraints: ClassVar[dict[str, list]] = {
        "kernel": [lambda _, kernel: get_kernel(kernel)],
        "n": [lambda _, n: check_n(n)],
        "gamma": [None, lambda _, gamma: resolve_gamma(gamma, 1)],
        "random_state": [lambda _, seed: check_random_state(seed)],
        "batch_invariant": [check_bool],
    }

    kernel: str = "rbf"
    n: float = 1
    gamma: float | None = None
    random_state: Any = None
    #: Take every dense BLAS product of ``transform`` in fixed blocks of rows, so that a
    #: row's features are the same bits alone or in any batch (opt-in: it costs up to
    #: several times more on calls of a few rows; docs/performance.md).
    batch_invariant: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("_parameter_constraints", {})
        cls._parameter_constraints = {**super(cls, cls)._parameter_constraints, **own}

    def _validate_params(self) -> None:
        """One line unless the parameters meet their constraints (in fit, and in a
        protocol's check before any compute)."""
        check_constraints(self._parameter_constraints, self.get_params(deep=False))
        self._cross_check()

    def _cross_check(self) -> None:
        """Rules between parameters that :attr:`_parameter_constraints` cannot state."""

    def claimed(self) -> frozenset[str]:
        """The properties this map claims with its parameters (:attr:`claims`; without
        ``batch_invariant``, a map with :meth:`_blas_rows` does not claim
        ``batch_independent``)."""
        if self._blas_rows() and not self.batch_invariant:
            return self.claims - {"batch_independent"}
        return self.claims

    def _blas_rows(self) -> bool:
        """Whether this map's ``transform`` takes a dense BLAS product of the rows
        (:attr:`blas_rows`; a map whose product depends on a parameter overrides it)."""
        return self.blas_rows

    def _require_rbf(self, what: str) -> None:
        """One line unless the kernel is the Gaussian one, which ``what`` needs."""
        if get_kernel(self.kernel).name != "rbf":
            raise KernelbenchError(f"{what} needs the Gaussian kernel (rbf), got {self.kernel!r}")

    def _draw(self, rng: np.random.Generator, d: int, D: int) -> tuple[np.ndarray, float]:
        raise NotImplementedError

    def _project(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def fit(self, X: Any, y: Any = None) -> RandomFeatureMap:
        """Draw the random projections for inputs with X.shape[1] features."""
        X, rng, d, D = self._start_fit(X)
        self._fit_data = (X, y)  # what a data-dependent draw reads (lev_rff, adaptive qmc)
        try:
            self._finish_fit(D, *self._draw(rng, d, D))
        finally:
            del self._fit_data
        return self

    def _start_fit(self, X: Any) -> tuple[np.ndarray, np.random.Generator, int, int]:
        """Validate the parameters and X; (X, the Generator, d, D)."""
        self._validate_params()
        self.kernel_ = get_kernel(self.kernel)
        X = validate_data(self, X, dtype=FLOATS, reset=True)
        d = X.shape[1]
        self.input_scale_ = self.kernel_.input_scale(d, self.gamma)
        self.sample_space_ = False
        return X, check_random_state(self.random_state), d, n_projections(self.n, d)

    def _finish_fit(self, D: int, weights: np.ndarray, zero_weight: float) -> None:
        """Store the draw's weights: exactly D of them (equal budgets; a map that cannot
        honour a D refuses the n in one line)."""
        if np.shape(weights) != (D,):
            raise KernelbenchError(
                f"{type(self).__name__} drew {np.size(weights)} projections where n={self.n} "
                f"gives D={D}; a map uses exactly D = round(2n(d + 1)) or refuses the n"
            )
        kern = self.kernel_
        self.n_projections_ = int(D)
        self.weights_ = np.asarray(weights, dtype=np.float64)
        self.zero_weight_ = float(zero_weight)
        self.constant_ = float(kern.constant * kern.f0 * zero_weight)
        self.n_features_out_ = kern.n_outputs * self.n_projections_
        self._feature_scale = np.sqrt(kern.constant * self.weights_)

    def supports_sample_space(self, n_points: int, d: int) -> bool:
        """Whether :meth:`fit_sample_space` can draw the projections of ``n_points``
        points in d dimensions directly (in law equal to those of a fitted W)."""
        return False

    def fit_sample_space(self, A: Any) -> np.ndarray:
        """Fit the map's scalars and draw the projections A~ W^T (m x D) of the m < d rows
        of A only, without W, with the joint law of ``fit(A).projections(A)``; the map
        cannot transform other points afterwards (features of A: :meth:`features`)."""
        A, rng, d, D = self._start_fit(A)
        if not self.supports_sample_space(A.shape[0], d):
            raise KernelbenchError(
                f"{type(self).__name__} cannot draw {A.shape[0]} points in d={d} "
                "in sample space; use fit and transform"
            )
        # a repeated point has the projections of its first copy, under any W
        As = self._scaled(A)
        Au, index = distinct_rows(As)
        P, weights, zero_weight = self._draw_sample_space(rng, Au, D)
        if len(Au) < len(As):
            P = P[index]
        self._finish_fit(D, weights, zero_weight)
        self.sample_space_ = True
        return P.astype(A.dtype, copy=False)

    def _draw_sample_space(
        self, rng: np.random.Generator, As: np.ndarray, D: int
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """(A~ W^T drawn directly, the weights a_j^2, a_0^2) for scaled rows A~."""
        raise NotImplementedError

    def features(self, P: np.ndarray) -> np.ndarray:
        """z from projections P = X~ W^T: the kernel's phi, scaled (the path of
        :meth:`transform`; may overwrite P)."""
        return self.kernel_.features(P, self._feature_scale.astype(P.dtype))

    def projections(self, X: Any) -> np.ndarray:
        """The projections X~ W^T (N x D), X~ the kernel's scaled input."""
        check_is_fitted(self, "weights_")
        if self.sample_space_:
            raise KernelbenchError(
                f"this {type(self).__name__} was fitted by fit_sample_space: it holds no "
                "projections W for other points; use fit"
            )
        return self._project(self._scaled(self._rows(X)))

    def _rows(self, X: Any) -> np.ndarray:
        """``validate_data(self, X, dtype=FLOATS, reset=False)``. A 2-D float64 or float32
        ndarray of the fitted width with a finite sum (so every entry is finite) is what
        it returns unchanged, and passes without its checks of other kinds of input
        (about 45 us a call: a chunked pass calls this once per chunk); anything else,
        an error included, goes through it."""
        if (
            type(X) is np.ndarray
            and X.ndim == 2
            and X.dtype in FLOATS
            and 0 < X.shape[0]
            and X.shape[1] == self.n_features_in_
            and not hasattr(self, "feature_names_in_")
        ):
            with np.errstate(over="ignore", invalid="ignore"):  # inf or nan: not finite
                if np.isfinite(X.sum()):
                    return X
        return validate_data(self, X, dtype=FLOATS, reset=False)

    def _scaled(self, X: np.ndarray) -> np.ndarray:
        """X~ = s X (in the dtype of X)."""
        return X * X.dtype.type(self.input_scale_) if self.input_scale_ != 1.0 else X

    def transform(self, X: Any) -> np.ndarray:
        """Explicit features z(x) with k_hat(x, y) = z(x) . z(y) + constant_."""
        return self.features(self.projections(X))

    def approximate_kernel(self, X: Any, Y: Any = None) -> np.ndarray:
        """k_hat(X, Y) = z(X) z(Y)^T + constant_ (the estimate, constants included)."""
        Zx = self.transform(X)
        Zy = Zx if Y is None else self.transform(Y)
        K = Zx @ Zy.T
        if self.constant_ != 0.0:
            K += K.dtype.type(self.constant_)
        return K

    def weight_matrix(self) -> np.ndarray:
        """The dense D x d matrix W of projections (forms it: for tests and inspection)."""
        check_is_fitted(self, "weights_")
        return self._project(np.eye(self.n_features_in_)).T

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names ``<method><i>`` (and the cos/sin halves for the Gaussian kernel)."""
        check_is_fitted(self, "weights_")
        prefix = type(self).__name__.lower()
        D = self.n_projections_
        if self.kernel_.n_outputs == 2:
            names = [f"{prefix}_cos{i}" for i in range(D)] + [f"{prefix}_sin{i}" for i in range(D)]
        else:
            names = [f"{prefix}{i}" for i in range(D)]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
