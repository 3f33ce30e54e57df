"""Measure the CI-sized commands and rewrite their run-time table, so it cannot go stale.

    KERNELBENCH_DATA=/path/to/mirror python scripts/run_times.py            # every row
    python scripts/run_times.py --rows quick liu     # only these rows, the others kept
    python scripts/run_times.py --dry-run             # print the table, leave the file

Each row runs its command once into a fresh temporary results directory (no resume) and
records the cells it ran (shards written), the wall time, the CPU time of the command
and its children, and the machine (cores, CPU model) and its load average before and
after (os.getloadavg): on a shared machine the wall time is only an upper bound, and the
load says by how much. The table lives in docs/performance.md ("Run times of the paper
grids") between the markers ``<!-- run_times:begin -->`` and ``<!-- run_times:end -->``;
rows not measured in this invocation keep their text.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- run_times:begin -->", "<!-- run_times:end -->"

#: row id -> (grid, command as shown; RESULTS is the fresh directory)
ROWS = {
    "quick": ("quick (digits, 5 runs)", "kernelbench run output_dir=RESULTS"),
    "verify": (
        "Munkhoeva Fig. 1, CI check",
        "kernelbench verify --grid reduced --jobs 2 --results RESULTS",
    ),
    "liu": (
        "Liu Table 3, CI check (the code's reading)",
        "kernelbench verify --config liu2020_table3 --grid reduced --jobs 2 --results RESULTS",
    ),
    "liu_paper": (
        "Liu Table 3, CI check (the paper's text)",
        "kernelbench verify --config liu2020_table3_paper --grid reduced --jobs 2 "
        "--results RESULTS",
    ),
}
HEADER = [
    "| grid | command | cells | wall time | CPU time | load (1 min) before, after |",
    "|---|---|---|---|---|---|",
]


def measure(row: str, log: Path | None = None) -> str:
    """Run a row's command in a fresh directory; its Markdown table row (its output
    to ``log/<row>.out`` when given)."""
    grid, shown = ROWS[row]
    exe = ROOT / ".venv" / "bin" / "kernelbench"
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        argv = shown.replace("RESULTS", str(results)).split()
        argv[0] = str(exe) if exe.is_file() else argv[0]
        before_load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        after_load = os.getloadavg()[0]
        if log is not None:
            log.mkdir(parents=True, exist_ok=True)
            (log / f"{row}.out").write_text(proc.stdout + proc.stderr)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{shown}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
        cells = sum(1 for _ in results.rglob("*.parquet"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    verdict = f" ({last.split(':')[0]})" if last.startswith(("PASS", "FAIL")) else ""
    command = shown.replace(" --results RESULTS", "").replace(" output_dir=RESULTS", "")
    return (
        f"| {grid} | `{command}` | {cells} | {_duration(wall)}{verdict} | {_duration(cpu)} | "
        f"{before_load:.1f}, {after_load:.1f} on {os.cpu_count()} cores ({_cpu_model()}) |"
    )


def _cpu_model() -> str:
    """The CPU's model name (Linux), else the machine's architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{int(s // 60)} min {s % 60:.0f} s"


def table(rows: dict[str, str]) -> str:
    return "\n".join([*HEADER, *rows.values()])


def current_rows(text: str) -> dict[str, str]:
    """The rows of the table now, by row id (matched on the grid column)."""
    m = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    found = {}
    for line in (m.group(1).splitlines() if m else [])[2:]:
        for row, (grid, _) in ROWS.items():
            if line.startswith(f"| {grid} |"):
                found[row] = line
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", choices=list(ROWS), default=list(ROWS))
    parser.add_argument("--dry-run", action="store_true", help="Print the table only.")
    parser.add_argument("--log", type=Path, default=None, help="Keep each command's output here.")
    ns = parser.parse_args()
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} markers")
    rows = current_rows(text)
    for row in ns.rows:
        rows[row] = measure(row, ns.log)
        print(rows[row], flush=True)
    ordered = {r: rows[r] for r in ROWS if r in rows}
    new = table(ordered)
    if ns.dry_run:
        print(new)
        return
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{new}\n{END}{tail}")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
