"""Random feature maps, one module per method, registered by id.

========= ======= =====================================================
id        label   construction
========= ======= =====================================================
rff       G       i.i.d. Gaussian rows (Rahimi & Recht 2007)
orf       Gort    orthogonal random features (Yu et al. 2016)
sorf      ROM     structured HD blocks with the fast Hadamard transform
qmc       QMC     scrambled low-discrepancy points (Yang et al. 2014)
gq        GQ      subsampled Gauss-Hermite grid (Dao et al. 2017)
sr33      B       spherical-radial rule of degree (3,3) (Munkhoeva 2018)
sr11      SR11    spherical-radial (1,1) (= rff, Prop. 2.1)
sr13      SR13    spherical-radial (1,3) (= orf, Prop. 2.2)
lev_rff   -       RFF re-sampled by ridge leverage scores (Liu et al. 2020)
slw_rff   -       surrogate leverage weighted RFF (Liu et al. 2020, Alg. 1)
nystrom   -       Nystroem, uniform landmarks (a reference row no paper has)
========= ======= =====================================================
"""

from __future__ import annotations

from typing import Any

from kernelbench.errors import KernelbenchError
from kernelbench.features.base import RandomFeatureMap
from kernelbench.kernels import get_kernel
from kernelbench.registry import Registry

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
    valid = set(cls._get_param_names())
    bad = sorted(set(params) - valid)
    if bad:
        raise KernelbenchError(
            f"unknown parameter(s) {', '.join(bad)} for method {method!r}; "
            f"valid: {', '.join(sorted(valid - {'kernel', 'n', 'random_state'}))}"
        )
    return cls(kernel=kernel, n=n, random_state=random_state, **params)


__all__ = ["FEATURE_MAPS", "RandomFeatureMap", "make_feature_map"]
