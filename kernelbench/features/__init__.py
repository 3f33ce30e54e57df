"""Random feature maps, one module per method, registered by id (rff, orf, sorf, qmc, gq,
sr33, sr11, sr13, lev_rff, slw_rff, nystrom, fastfood, signed_circulant; their papers and
labels: docs/methods.md)."""

from __future__ import annotations

from typing import Any

from kernelbench.features.base import RandomFeatureMap
from kernelbench.kernels import get_kernel
from kernelbench.registry import Registry
from kernelbench.validation import check_params

#: Feature maps by id; each module above registers its own (imported on the first query
#: by :mod:`kernelbench.builtin`, other packages' by their entry points).
FEATURE_MAPS: Registry[type[RandomFeatureMap]] = Registry("method")


def make_feature_map(
    method: str, kernel: str = "rbf", n: float = 1, random_state: Any = None, **params: Any
) -> RandomFeatureMap:
    """An unfitted feature map ``method`` for ``kernel`` with budget ``n``.

    ``params`` are the method's own parameters (and ``gamma`` for rbf); unknown
    names raise one line naming the valid ones.
    """
    cls = FEATURE_MAPS.get(method)
    get_kernel(kernel)
    valid = set(cls._get_param_names()) - {"kernel", "n", "random_state"}
    check_params(f"method {method!r}", params, valid)
    return cls(kernel=kernel, n=n, random_state=random_state, **params)


__all__ = ["FEATURE_MAPS", "RandomFeatureMap", "make_feature_map"]
