"""The price of a map the cost model does not know (a plug-in), from a short probe.

:data:`kernelbench.cost.COEF` is calibrated on kernelbench's own maps; a plug-in's map
may be any number of times slower. For a method registered outside ``kernelbench``
(:func:`is_builtin`), :func:`probe` times one ``fit`` and ``transform`` of that map on
the cell's dimension d and projections D, on uniform points (CPU seconds, one BLAS
thread), at most about :data:`BUDGET_S` in all:

1. a warm-up at a few rows and at most :data:`SMALL_D` projections (imports, compiles),
   timed again: its time against the rff-shaped work it did gives the map's speed;
2. the probe proper: fit on ``rows`` points, then transform ``rows`` and ``rows / 8``
   points, at the cell's D, or at D / s where the step-1 speed says the full shapes
   would take more than :data:`TARGET_S`.

Both are extrapolated with the cost model's exponents for a map (docs/performance.md,
"The cost model"): a fit's work is linear in D (d D normals), a transform's in rows and
D (2 N d D flops, 2 N F elements), so the probe's fit and per-row times are multiplied
by s; a transform call costs ``call + row * rows`` (its two sizes give both). The
result is cached per machine in ``probes.json`` of the cache folder
(``$KERNELBENCH_CACHE``, default ``~/.cache/kernelbench``), keyed by the machine, the
map's class and its file's size and time (an edited plug-in is probed again), its
parameters, the kernel, d and D.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from kernelbench.cell import Cell

#: the most CPU seconds one probe takes (the estimate aims at a third of it)
BUDGET_S = 2.0
#: the aim of the probe proper (fit + two transforms), CPU seconds
TARGET_S = 0.5
#: projections of the warm-up (step 1)
SMALL_D = 256
#: rows of the probe proper (at most the rows the cell maps in one call)
PROBE_ROWS = 256
#: the file of the cached probes in the cache folder
CACHE_FILE = "probes.json"


@dataclass(frozen=True)
class Probe:
    """A map's measured speed at a cell's d and D (CPU seconds, one BLAS thread)."""

    method: str
    kernel: str
    d: int
    D: int
    fit: float  # one fit at the cell's d, D
    call: float  # one transform call, besides its rows
    row: float  # one transformed row at the cell's d, D
    scale: float  # s: measured at D / s, times extrapolated by s
    probed_at: str  # when it was measured (UTC, ISO)
    cached: bool = False  # read from the cache, not measured now

    def seconds(self, calls: float, rows: float) -> float:
        """One run's map time: a fit, ``calls`` transform calls of ``rows`` rows in all."""
        return self.fit + calls * self.call + rows * self.row

    def line(self) -> str:
        """What ``kernelbench estimate`` says about it."""
        how = f"cached {self.probed_at}" if self.cached else "probed now"
        scaled = f", measured at D/{self.scale:.0f} and scaled" if self.scale > 1 else ""
        return (
            f"{self.method} ({self.kernel}, d={self.d}, D={self.D}) is priced by a probe of "
            f"its map ({how}{scaled}): fit {self.fit:.3g} s, transform "
            f"{self.call:.2g} s a call + {self.row:.3g} s a row"
        )


def is_builtin(method: str) -> bool:
    """Whether ``method``'s map is one of kernelbench's (priced by the calibrated model)."""
    from kernelbench.features import FEATURE_MAPS

    return FEATURE_MAPS.get(method).__module__.startswith("kernelbench.")


def cache_path() -> Path:
    """``probes.json`` in the cache folder (``$KERNELBENCH_CACHE``, default
    ``~/.cache/kernelbench``, as the datasets' cache)."""
    from kernelbench.datasets.sources import Locations

    return Locations.resolve().cache / CACHE_FILE


def _load() -> dict[str, Any]:
    try:
        return json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}


def _store(key: str, probe: Probe) -> None:
    """Add ``probe`` to the cache (best effort: an unwritable folder is skipped)."""
    from kernelbench.results import atomic_write

    table = _load()
    table[key] = asdict(probe)
    text = json.dumps(table, indent=1, sort_keys=True).encode()
    with contextlib.suppress(OSError):  # a read-only cache folder: not cached
        atomic_write(cache_path(), lambda f: f.write(text))


def _key(cell: Cell, params: dict[str, Any], d: int, D: int) -> str:
    from kernelbench.features import FEATURE_MAPS

    cls = FEATURE_MAPS.get(str(cell.method["name"]))
    try:
        import inspect

        st = os.stat(inspect.getfile(cls))
        source = f"{st.st_size}:{st.st_mtime_ns}"
    except (OSError, TypeError):
        source = ""
    parts = {
        "machine": platform.node(),
        "map": f"{cls.__module__}.{cls.__qualname__}:{source}",
        "method": dict(cell.method.get("params") or {}),
        "kernel": [str(cell.kernel["name"]), params],
        "d": d,
        "D": D,
    }
    return json.dumps(parts, sort_keys=True, default=str)


def _timed(fn: Any) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _measure(cell: Cell, params: dict[str, Any], d: int, n: float, rows: int) -> tuple:
    """(fit, transform of ``rows``, transform of ``rows // 8``, D) CPU seconds."""
    import numpy as np

    from kernelbench.features import make_feature_map

    X = np.random.default_rng(0).uniform(0.0, 1.0, (rows, d))
    y = np.zeros(rows)  # a supervised map's labels (its speed, not its fit's quality)
    fm = make_feature_map(
        str(cell.method["name"]),
        kernel=str(cell.kernel["name"]),
        n=n,
        random_state=0,
        **params,
        **(cell.method.get("params") or {}),
    )
    fit = _timed(lambda: fm.fit(X, y))
    small = X[: max(1, rows // 8)]
    full = _timed(lambda: fm.transform(X))
    part = _timed(lambda: fm.transform(small))
    return fit, full, part, int(fm.n_projections_)


def probe(
    cell: Cell, d: int, D: int, n: float, rows: int, model: Callable[[int, int, int], float]
) -> Probe | None:
    """The speed of ``cell``'s map at dimension ``d`` and D projections (budget ``n``),
    for transform calls of up to ``rows`` rows: from the cache, else measured now; None
    where the map fails on the probe's uniform points (the model prices it then).
    ``model(rows, d, D)``: the cost model's seconds of rff's fit and one transform."""
    params = dict(cell.kernel.get("params") or {})
    if isinstance(params.get("gamma"), str):  # a bandwidth rule: its value is data's
        params["gamma"] = 1.0
    key = _key(cell, params, d, D)
    hit = _load().get(key)
    if hit is not None:
        try:
            return Probe(**{**hit, "cached": True})
        except TypeError:  # an older layout: probe again
            pass
    rows = max(2, min(int(rows), PROBE_ROWS))
    try:
        return _probe(cell, params, key, d, D, n, rows, model)
    except Exception:  # a plug-in's own code failed: the model prices it instead
        return None


def _probe(
    cell: Cell,
    params: dict[str, Any],
    key: str,
    d: int,
    D: int,
    n: float,
    rows: int,
    model: Callable[[int, int, int], float],
) -> Probe:
    """:func:`probe`'s measurement, stored in the cache under ``key``."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        s_small = max(1.0, D / SMALL_D)
        few = min(rows, 32)
        _measure(cell, params, d, n / s_small, few)  # imports, compiles
        warm = _measure(cell, params, d, n / s_small, few)
        speed = sum(warm[:2]) / max(model(few, d, warm[3]), 1e-9)
        full = speed * model(rows, d, D) * 1.25  # the fit and both transforms
        scale = max(1.0, full / TARGET_S)
        scale = min(scale, s_small)  # never below the warm-up's D
        fit, t_full, t_part, D_p = _measure(cell, params, d, n / scale, rows)
    s = D / max(D_p, 1)  # measured at D_p projections (whole blocks may round it)
    r_part = max(1, rows // 8)
    row = max(0.0, (t_full - t_part) / max(1, rows - r_part))
    call = max(0.0, t_part - row * r_part)
    result = Probe(
        method=str(cell.method["name"]),
        kernel=str(cell.kernel["name"]),
        d=d,
        D=D,
        fit=fit * s,
        call=call,
        row=row * s,
        scale=s,
        probed_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )
    _store(key, result)
    return result
