"""Wall time of a grid through ``kernelbench run``: sequential vs joblib workers.

    KERNELBENCH_DATA=/path/to/mirror python scripts/bench_runner.py            # reduced Fig. 1
    python scripts/bench_runner.py --experiment quick --jobs 2 4
    python scripts/bench_runner.py --runs 5 --extra dataset=letter            # a smaller slice
    python scripts/bench_runner.py --full [--probe-runs 3] [--jobs 2]          # whole Fig. 1
    python scripts/bench_runner.py --full --measure DIR [--jobs 2]            # ... end to end

``--full`` projects the wall time of the whole Fig. 1 protocol at the paper's run counts
(6 datasets x 3 kernels x n = 1..5, the grids of ``experiment=fig1`` and
``fig1_noqmc``; 500 runs for Powerplant, LETTER and USPS, 100 MNIST, 50 CIFAR-100,
10 LEUKEMIA) from measured
per-run costs: for every (dataset, kernel, method) it times ``--probe-runs`` runs at
n = 3 (the mean of n = 1..5; the cost of a run is close to linear in n) in this
process with one BLAS thread (CPU seconds of the process, so that other jobs' load
does not count), after one untimed warm-up run, through the protocol's
own batched ``measure``. A cell's projected time is its runs x that cost plus the
measured per-cell overhead (data and exact kernel are cached per worker process);
the cells are then scheduled longest first on ``--jobs`` workers (the makespan is
printed, not just the sum / jobs). It is a projection, labelled as such: it assumes
the workers do not slow each other down (2 workers on 2 cores).

``--full --measure DIR`` runs the whole protocol instead (``experiment=fig1`` and
``experiment=fig1_noqmc`` into DIR with ``--jobs`` joblib workers; a rerun resumes) and
prints the wall time of each launch and their sum; their output goes to DIR/run.log,
which ``scripts/fig1_floor.py DIR --log DIR/run.log`` compares with the float64 floor.

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


def run_grid(args: list[str], out: Path, jobs: int, log: Path | None = None) -> float:
    cmd = [sys.executable, "-m", "kernelbench.cli", "run", *args, f"output_dir={out}"]
    if jobs > 1:
        cmd += ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={jobs}"]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as fh:
            fh.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"kernelbench run failed (exit {proc.returncode}): {' '.join(cmd)}")
    return wall


#: The experiment files of the whole Fig. 1 grid (configs/experiment/): rff, orf,
#: orf_tallqr, sorf and sr33 everywhere, qmc and gq where the paper ran them (fig1_noqmc:
#: CIFAR-100 and LEUKEMIA). The grid itself is read from them (:func:`full_grid`).
FULL_EXPERIMENTS = ["fig1", "fig1_noqmc"]


def full_grid() -> list[tuple[list[str], list[str], list[str], list[str]]]:
    """(datasets, methods, kernels, n values) of each of :data:`FULL_EXPERIMENTS`."""
    from kernelbench.config import experiment_sweep

    out = []
    for name in FULL_EXPERIMENTS:
        sweep = experiment_sweep(name)[1]
        out.append((sweep["dataset"], sweep["method"], sweep["kernel"], sweep["n"]))
    return out


def probe(
    dataset: str, kernel: str, method: str, runs: int, draws: str | None = None
) -> tuple[float, float, int]:
    """(CPU seconds per run at n = 3, per-cell overhead in seconds, the cell's paper
    runs); ``draws``: the kernel_approx setting (default: the protocol's)."""
    from threadpoolctl import threadpool_limits

    from kernelbench.cell import build_cell
    from kernelbench.experiment import make_cell
    from kernelbench.protocols import get_protocol

    config = make_cell(method, kernel, dataset, 3, runs=None)
    if draws is not None:
        config["protocol"]["draws"] = draws
    cell = build_cell(config)
    proto = get_protocol(cell)
    clock = time.process_time  # CPU seconds: other jobs' load does not count
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = clock()
        assert proto.skip(cell) is None
        ctx = proto.prepare(cell)  # cached after the first cell of a dataset
        overhead = clock() - t0
        proto.measure(cell, ctx, [cell.runs])  # warm-up: compilation, caches
        step = max(1, proto.batch)
        t0 = clock()
        for lo in range(0, runs, step):
            proto.measure(cell, ctx, range(lo, min(runs, lo + step)))
        per_run = (clock() - t0) / runs
    return per_run, overhead, int(cell.runs)


def makespan(times: list[float], jobs: int) -> float:
    """Longest-processing-time-first schedule of ``times`` on ``jobs`` workers."""
    loads = [0.0] * jobs
    for t in sorted(times, reverse=True):
        loads[loads.index(min(loads))] += t
    return max(loads)


def full(
    probe_runs: int,
    jobs: int,
    datasets: list[str] | None,
    methods: list[str] | None = None,
    draws: str | None = None,
) -> None:
    print(
        "PROJECTION of the whole Fig. 1 at the paper's run counts, from per-run costs "
        f"measured now ({probe_runs} runs per dataset x kernel x method at n = 3, one BLAS "
        f"thread); {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at start"
    )
    only_methods = methods
    cells: list[float] = []
    per_dataset: dict[str, float] = {}
    for names, methods, kernels, ns in full_grid():
        for ds in names:
            if datasets and ds not in datasets:
                continue
            total = 0.0
            for method in methods:
                if only_methods and method not in only_methods:
                    continue
                line = []
                for kernel in kernels:
                    per_run, overhead, runs = probe(ds, kernel, method, probe_runs, draws)
                    for _ in ns:  # n = 1..5 around the n = 3 probe
                        cells.append(runs * per_run + overhead)
                    total += len(ns) * (runs * per_run + overhead)
                    line.append(f"{kernel} {per_run * 1e3:8.1f}")
                print(f"  {ds:10s} {method:10s} ms/run at n=3: {'  '.join(line)}  ({runs} runs)")
            per_dataset[ds] = total
            print(f"{ds}: {total / 3600:.2f} CPU-hours projected")
    span = makespan(cells, jobs)
    print(f"\n{'dataset':10s} {'projected CPU-hours':>20s}")
    for ds, total in per_dataset.items():
        print(f"{ds:10s} {total / 3600:20.3f}")
    print(
        f"{'total':10s} {sum(per_dataset.values()) / 3600:20.3f}\n"
        f"PROJECTED wall time with {jobs} workers (longest first over {len(cells)} cells): "
        f"{span / 60:.1f} min (goal: <= 30 min)"
    )


def measure_full(out: Path, jobs: int, extra: list[str]) -> None:
    """Run the whole Fig. 1 protocol into ``out`` and print the wall time of each launch
    (``extra``: Hydra overrides for both launches, e.g. ``runs=2`` for a smoke test)."""
    print(
        f"the whole Fig. 1 {' '.join(extra)}, end to end, {jobs} workers, into {out} "
        f"(resumes); {os.cpu_count()} CPUs"
    )
    total = 0.0
    for experiment in FULL_EXPERIMENTS:
        wall = run_grid([f"experiment={experiment}", *extra], out, jobs, log=out / "run.log")
        total += wall
        print(f"  experiment={experiment}: {wall:8.1f} s wall")
    print(
        f"MEASURED wall time with {jobs} workers: {total:.0f} s = {total / 60:.1f} min "
        f"(goal: <= 30 min); floor: python scripts/fig1_floor.py {out} --log {out / 'run.log'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiment", default="fig1_reduced", help="configs/experiment/<name>")
    parser.add_argument("--jobs", type=int, nargs="+", default=[2], help="joblib worker counts")
    parser.add_argument("--runs", type=int, default=None, help="override the grid's runs")
    parser.add_argument("--extra", nargs="*", default=[], help="more Hydra overrides")
    parser.add_argument("--full", action="store_true", help="project the whole Fig. 1")
    parser.add_argument("--probe-runs", type=int, default=3, help="timed runs per probe")
    parser.add_argument("--datasets", nargs="*", default=None, help="--full: only these")
    parser.add_argument("--methods", nargs="*", default=None, help="--full: only these")
    parser.add_argument("--measure", type=Path, default=None, help="--full: run it into DIR")
    parser.add_argument("--draws", default=None, help="--full: kernel_approx's draws setting")
    ns = parser.parse_args()
    if ns.full and ns.measure is not None:
        measure_full(ns.measure, ns.jobs[0], ns.extra)
        return
    if ns.full:
        full(ns.probe_runs, ns.jobs[0], ns.datasets, ns.methods, ns.draws)
        return

    from kernelbench.launch import plan
    from kernelbench.results import read_results

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
