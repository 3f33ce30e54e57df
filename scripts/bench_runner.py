"""Wall time of a grid through ``kernelbench run``: sequential vs joblib workers.

    KERNELBENCH_DATA=/path/to/mirror python scripts/bench_runner.py            # reduced Fig. 1
    python scripts/bench_runner.py --experiment quick --jobs 2 4
    python scripts/bench_runner.py --runs 5 --extra dataset=letter            # a smaller slice

Each configuration runs the whole grid into a fresh temporary ``output_dir`` (no
resume), in one invocation of this script, so the ratios compare like with like.
The results of every configuration are checked to be identical to the sequential
run's (error columns), as the runner promises.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ERRORS = ["dataset", "kernel", "method_label", "n", "run", "D", "rel_fro_error", "rel_spec_error"]


def run_grid(args: list[str], out: Path, jobs: int) -> float:
    cmd = [sys.executable, "-m", "kernelbench.cli", "run", *args, f"output_dir={out}"]
    if jobs > 1:
        cmd += ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={jobs}"]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"kernelbench run failed (exit {proc.returncode}): {' '.join(cmd)}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiment", default="fig1_reduced", help="configs/experiment/<name>")
    parser.add_argument("--jobs", type=int, nargs="+", default=[2], help="joblib worker counts")
    parser.add_argument("--runs", type=int, default=None, help="override the grid's runs")
    parser.add_argument("--extra", nargs="*", default=[], help="more Hydra overrides")
    ns = parser.parse_args()

    from kernelbench.results import read_results
    from kernelbench.runner import plan

    args = [f"experiment={ns.experiment}", *ns.extra]
    if ns.runs is not None:
        args.append(f"runs={ns.runs}")
    _, _, cells = plan(args, True)
    print(
        f"grid: experiment={ns.experiment} {' '.join(args[1:])} ({cells} cells); "
        f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}; "
        f"KERNELBENCH_DATA={os.environ.get('KERNELBENCH_DATA')}"
    )
    walls: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
        ref = None
        for jobs in [1, *ns.jobs]:
            out = Path(tmp) / f"jobs{jobs}"
            walls[jobs] = run_grid(args, out, jobs)
            df = read_results(out)
            same = ""
            if ref is None:
                ref = df[ERRORS]
            else:
                same = ", rows identical" if df[ERRORS].equals(ref) else ", ROWS DIFFER"
            label = "sequential" if jobs == 1 else f"joblib n_jobs={jobs}"
            print(f"{label:>18}: {walls[jobs]:7.1f} s wall ({len(df)} rows{same})")
    for jobs in ns.jobs:
        print(f"speed-up with {jobs} workers: {walls[1] / walls[jobs]:.2f}x")


if __name__ == "__main__":
    main()
