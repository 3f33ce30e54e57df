"""One sr33 rule's butterfly rotation against the memory floor of its rows (a copy).

    python scripts/bench_butterfly_floor.py            # d = 3072, 1000 rows
    python scripts/bench_butterfly_floor.py --dim 784 --rows 5000
    python scripts/bench_butterfly_floor.py --against main   # also main's kernels

A :class:`kernelbench.transforms.Butterfly` of 3 factors (one sr33 rule's rotation) maps
the rows into a preallocated output; the floor is ``np.copyto`` of the same rows (each
read and written once). CPU seconds, one BLAS thread, best of repeats, interleaved.

``--against REV``: the kernels of ``kernelbench/transforms.py`` at git revision REV,
loaded in the same process, timed interleaved with this tree's: the rotation, sorf's HD
blocks (2 stacks of 3, d' = next power of two) and the rff, sr33 and sorf maps (n = 1,
Gaussian, fitted on the rows) with REV's kernels routed in; printed as before / after,
with rff / sr33 and rff / sorf, and whether the outputs are equal bit for bit.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.timing import best_time
from kernelbench.transforms import Butterfly, hd_blocks_rows, next_pow2, rademacher


def _transforms_at(rev: str):
    """kernelbench/transforms.py of git revision ``rev``, imported as its own module."""
    root = Path(__file__).resolve().parents[1]
    src = subprocess.run(
        ["git", "show", f"{rev}:kernelbench/transforms.py"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "transforms_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("transforms_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best CPU time of each function, timed round-robin."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t0)
    return best


def against(rev: str, X: np.ndarray, repeats: int) -> None:
    from kernelbench import make_feature_map
    from kernelbench.features import sorf as sorf_module
    from kernelbench.features.sr import SR33

    old = _transforms_at(rev)
    d = X.shape[1]
    B = Butterfly(d, 3, np.random.default_rng(1))
    out_old, out_new = np.empty_like(X), np.empty_like(X)
    m = next_pow2(d)
    signs = rademacher(np.random.default_rng(2), (2, 3, m))
    D = 2 * (d + 1)
    maps = {k: make_feature_map(k, n=1, random_state=0).fit(X) for k in ("rff", "sr33", "sorf")}
    fused = SR33._rule_into

    def sr33_before():
        SR33._rule_into = lambda self, X, rot, U, out, lo, radii, refl: old.Butterfly.simplex_into(
            rot, X, out, lo, radii, refl
        )
        try:
            return maps["sr33"].transform(X)
        finally:
            SR33._rule_into = fused

    def sorf_before():
        sorf_module.hd_blocks_rows = old.hd_blocks_rows
        try:
            return maps["sorf"].transform(X)
        finally:
            sorf_module.hd_blocks_rows = hd_blocks_rows

    fns = {
        "rotation before": lambda: old.Butterfly.rotate_rows(B, X, out=out_old),
        "rotation after": lambda: B.rotate_rows(X, out=out_new),
        "copy": lambda: np.copyto(out_new, X),
        "hd before": lambda: old.hd_blocks_rows(X, signs, D),
        "hd after": lambda: hd_blocks_rows(X, signs, D),
        "rff map": lambda: maps["rff"].transform(X),
        "sr33 before": sr33_before,
        "sr33 after": lambda: maps["sr33"].transform(X),
        "sorf before": sorf_before,
        "sorf after": lambda: maps["sorf"].transform(X),
    }
    same = {
        "rotation": np.array_equal(fns["rotation before"](), fns["rotation after"]()),
        "hd": np.array_equal(fns["hd before"](), fns["hd after"]()),
        "sr33": np.array_equal(sr33_before(), maps["sr33"].transform(X)),
        "sorf": np.array_equal(sorf_before(), maps["sorf"].transform(X)),
    }
    print(f"equal bit for bit ({rev} vs this tree): {same}", flush=True)
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(3):
            t = _interleaved(fns, repeats)
            rb, ra, c = t["rotation before"], t["rotation after"], t["copy"]
            print(
                f"rotation {rb:.4f} -> {ra:.4f} s (copy {c:.4f}: {rb / c:.1f}x -> {ra / c:.1f}x)"
                f"  hd {t['hd before']:.4f} -> {t['hd after']:.4f} s"
                f"  rff {t['rff map']:.4f} s"
                f"  sr33 {t['sr33 before']:.4f} -> {t['sr33 after']:.4f} s"
                f"  (rff/sr33 {t['rff map'] / t['sr33 before']:.2f} -> "
                f"{t['rff map'] / t['sr33 after']:.2f})"
                f"  sorf {t['sorf before']:.4f} -> {t['sorf after']:.4f} s"
                f"  (rff/sorf {t['rff map'] / t['sorf before']:.2f} -> "
                f"{t['rff map'] / t['sorf after']:.2f})",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dim", type=int, default=3072)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--against", metavar="REV", help="also time the kernels of this revision")
    a = ap.parse_args()
    X = np.random.default_rng(0).uniform(0, 1, (a.rows, a.dim))
    if a.against:
        against(a.against, X, a.repeats)
        return
    B = Butterfly(a.dim, 3, np.random.default_rng(1))
    out = np.empty_like(X)
    B.rotate_rows(X[:4], out=out[:4])  # compile
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(3):
            rot = best_time(lambda: B.rotate_rows(X, out=out), a.repeats, clock=time.process_time)
            copy = best_time(lambda: np.copyto(out, X), a.repeats, clock=time.process_time)
            print(f"rotation {rot:.4f} s  copy {copy:.4f} s  rotation / copy {rot / copy:.1f}")


if __name__ == "__main__":
    main()
