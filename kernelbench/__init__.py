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

from kernelbench.features import FEATURE_MAPS, make_feature_map  # noqa: E402
from kernelbench.kernels import KERNELS, exact_kernel  # noqa: E402

__all__ = ["FEATURE_MAPS", "KERNELS", "__version__", "exact_kernel", "make_feature_map"]
