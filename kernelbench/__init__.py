"""kernelbench: random-feature kernel approximation, benchmarked.

>>> import numpy as np, kernelbench
>>> X = np.random.default_rng(0).uniform(size=(100, 8))
>>> fm = kernelbench.make_feature_map("sr33", kernel="rbf", n=2, random_state=0).fit(X)
>>> K_hat = fm.approximate_kernel(X)            # estimate of k(X, X)
>>> K = kernelbench.exact_kernel("rbf", X, X)
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kernelbench")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0+unknown"

__all__ = ["FEATURE_MAPS", "KERNELS", "__version__", "exact_kernel", "make_feature_map"]

#: The public names, imported on first use (PEP 562): ``import kernelbench`` (and so
#: every command's start-up) does not pay for scikit-learn, scipy and numba.
_LAZY = {
    "FEATURE_MAPS": "kernelbench.features",
    "make_feature_map": "kernelbench.features",
    "KERNELS": "kernelbench.kernels",
    "exact_kernel": "kernelbench.kernels",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kernelbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with the lazily loaded ones (``dir(kernelbench)``)."""
    return sorted({*globals(), *_LAZY})
