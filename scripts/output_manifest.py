"""The md5 of every output kernelbench writes, before and after a change of its code.

It shows that the change leaves them byte-identical: the committed baselines (and the
packaged copy), the reference tables, REPRODUCTION.md, what ``kernelbench report``,
``baseline --redraw`` and ``plot`` write, and the site of ``report --html`` (every file;
``index.html`` with its environment block, the commit, versions and machine, cut out and
hashed apart).

    python scripts/output_manifest.py --runs DIR --out manifest.json
    python scripts/output_manifest.py --runs DIR --compare manifest.json

``--runs DIR`` holds small result sets, one folder per protocol (made once, the first
time, by the small cells of ``tests/test_rows_unchanged.py``); keep it between the two
runs so both draw the same shards. PDF and SVG carry no date (SOURCE_DATE_EPOCH=0) and
SVG ids are salted alike (``svg.hashsalt``, else random). ``--only plot`` (a prefix of the
groups' names) redoes only those groups.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The environment table of the site's index page (commit, versions, machine).
ENVIRONMENT = re.compile(r'<table class="kb-table env" id="environment">.*?</table>', re.S)
#: The small result sets: the golden cells' protocols that need no dataset mirror.
PROTOCOLS = ("kernel_approx", "pair_mse", "qmc_discrepancy", "variance_ratio", "walltime")


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """relative path -> md5 of every file under ``root`` (index.html: environment cut)."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        if path.name == "index.html":
            text = data.decode()
            env = ENVIRONMENT.search(text)
            out[f"{rel} (environment)"] = md5(env.group(0).encode()) if env else "none"
            data = ENVIRONMENT.sub("", text).encode()
        out[rel] = md5(data)
    return out


def kb(*args: str, cwd: Path) -> None:
    cmd = [sys.executable, "-m", "kernelbench.cli", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)}: exit {proc.returncode}\n{proc.stderr[-3000:]}")


def make_runs(runs: Path) -> None:
    """One folder of shards per protocol of :data:`PROTOCOLS`, from the golden cells."""
    code = "import json; from tests.test_rows_unchanged import CELLS; print(json.dumps(CELLS))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    CELLS = json.loads(out.stdout)  # the golden cells, read in the source tree
    for name in PROTOCOLS:
        if not (runs / name).is_dir():
            kb("run", *CELLS[name], f"output_dir={runs / name}", cwd=ROOT)


def manifest(runs: Path, only: str = "") -> dict[str, dict[str, str]]:
    from kernelbench.packaged import baseline_dir

    out: dict[str, dict[str, str]] = {
        "results/baseline": tree(ROOT / "results" / "baseline"),
        "packaged baseline": tree(Path(str(baseline_dir()))),
        "results/reference": tree(ROOT / "results" / "reference"),
        "REPRODUCTION.md": {"REPRODUCTION.md": md5((ROOT / "REPRODUCTION.md").read_bytes())},
    }
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if "kernelbench report".startswith(only):
            kb("report", "--out", str(t / "REPRODUCTION.md"), cwd=ROOT)
            out["kernelbench report"] = {
                "REPRODUCTION.md": md5((t / "REPRODUCTION.md").read_bytes())
            }
        if "baseline --redraw".startswith(only):
            shutil.copytree(ROOT / "results" / "baseline", t / "redraw")
            for png in (t / "redraw").glob("*.png"):
                png.unlink()
            kb("baseline", "--redraw", "--out", str(t / "redraw"), cwd=ROOT)
            out["baseline --redraw"] = tree(t / "redraw")
        for name in sorted(
            p.name for p in runs.iterdir() if p.is_dir() and "plot".startswith(only)
        ):
            for flag in ((), ("--reference",)):
                dest = t / "plot" / "-".join([name, *flag])
                kb(
                    "plot",
                    str(runs / name),
                    "--out",
                    str(dest),
                    "--format",
                    "png,pdf,svg",
                    *flag,
                    cwd=ROOT,
                )
                out[f"plot {name} {' '.join(flag)}".strip()] = tree(dest)
        if "report --html".startswith(only):
            kb("report", "--html", str(t / "site"), cwd=ROOT)
            out["report --html"] = tree(t / "site")
            kb("report", "--html", str(t / "site_runs"), "--results", str(runs), cwd=ROOT)
            out["report --html --results"] = tree(t / "site_runs")
    return out


def compare(before: dict, after: dict) -> int:
    same = differ = 0
    for group in sorted(set(before) | set(after)):
        b, a = before.get(group, {}), after.get(group, {})
        for key in sorted(set(b) | set(a)):
            if b.get(key) == a.get(key):
                same += 1
            else:
                differ += 1
                print(f"differs: {group}: {key}: {b.get(key)} -> {a.get(key)}")
    print(f"{same} identical, {differ} different")
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--only", default="", help="only the groups whose name starts so")
    args = parser.parse_args()
    rc = Path(tempfile.mkdtemp()) / "matplotlibrc"
    rc.write_text("svg.hashsalt: kernelbench\n")
    os.environ.update(SOURCE_DATE_EPOCH="0", MPLBACKEND="Agg", MATPLOTLIBRC=str(rc))
    args.runs.mkdir(parents=True, exist_ok=True)
    make_runs(args.runs)
    found = manifest(args.runs.resolve(), args.only)
    if args.out:
        args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    if args.compare:
        before = json.loads(args.compare.read_text())
        if args.only:
            before = {k: v for k, v in before.items() if k.startswith(args.only) or k in found}
        sys.exit(1 if compare(before, found) else 0)


if __name__ == "__main__":
    main()
