"""Start-up of the command line: wall time of --help and argument errors, and what they import.

    python scripts/bench_startup.py                              # this tree
    python scripts/bench_startup.py --before /path/to/other/python --rounds 7

Runs ``python -m kernelbench.cli ARGS`` for each ARGS below (``--rounds`` times,
interleaved with ``--before``'s interpreter when given, e.g. a virtual environment of an
earlier commit), prints the median and best wall seconds and their ratio, then the
number of modules ``python -X importtime -m kernelbench.cli --help`` loads, its
top-level cumulative import time and which heavy libraries are among them. Timings on a
shared machine are noisy; only ratios within one run are compared (docs/performance.md,
"Start-up").
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    ["--help"],
    ["--version"],
    ["nope"],
    ["plot", "--bogus"],
    ["verify", "--help"],
    ["run", "--bogus"],
    ["run", "method=nope"],
]
HEAVY = ("sklearn", "hydra", "numba", "scipy", "pandas", "numpy")
#: Where the commands run: not a checkout, whose kernelbench/ ``-m`` would import first.
CWD = tempfile.gettempdir()


def wall(python: str, args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([python, "-m", "kernelbench.cli", *args], capture_output=True, cwd=CWD)
    return time.perf_counter() - t0


def imports(python: str) -> str:
    """Modules, top-level cumulative import seconds and heavy libraries of ``--help``."""
    p = subprocess.run(
        [python, "-X", "importtime", "-m", "kernelbench.cli", "--help"],
        capture_output=True,
        text=True,
        cwd=CWD,
    )
    rows = [line for line in p.stderr.splitlines() if re.match(r"import time:\s+\d", line)]
    top = [line for line in rows if re.match(r"import time:\s+\d+ \|\s+\d+ \| \S", line)]
    cumulative = sum(int(line.split("|")[1]) for line in top) / 1e6
    names = {line.split("|")[2].strip() for line in rows}
    heavy = [m for m in HEAVY if m in names]
    return f"{len(rows)} modules, top-level cumulative {cumulative:.2f} s, heavy: {heavy}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=None, help="interpreter of the tree to compare")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    pythons = {"after": sys.executable}
    if args.before:
        pythons = {"before": args.before, **pythons}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for cmd in COMMANDS:
            for name, python in pythons.items():
                times.setdefault((" ".join(cmd), name), []).append(wall(python, cmd))
    print(f"{'command':22s}" + "".join(f" {name + ' med':>11s}" for name in pythons), end="")
    print("  ratio  (best)" if args.before else "  (best)")
    for cmd in COMMANDS:
        c = " ".join(cmd)
        med = {n: statistics.median(times[(c, n)]) for n in pythons}
        best = " / ".join(f"{min(times[(c, n)]):.2f}" for n in pythons)
        ratio = f"  {med['before'] / med['after']:5.1f}x" if args.before else ""
        print(f"{c:22s}" + "".join(f" {v:11.2f}" for v in med.values()) + f"{ratio}  ({best})")
    for name, python in pythons.items():
        print(f"importtime --help, {name}: {imports(python)}")


if __name__ == "__main__":
    main()
