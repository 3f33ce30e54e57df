"""Plug-ins: kernelbench's own modules and another package's, found by entry points.

The plug-in package is ``examples/toy_rff`` (the README's worked example), installed
for the test as an installer would: its module on a path entry next to a
``.dist-info`` whose ``entry_points.txt`` comes from its ``pyproject.toml``.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernelbench.plugins import GROUP, entry_points
from kernelbench.results import read_results

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "toy_rff"
#: The calls by which a module registers a plug-in.
REGISTERING = ("register", "add")


def _registers(path: Path) -> bool:
    """Whether a module registers something at import time (a top-level ``X.register``/
    ``X.add`` call, decorator or statement)."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        calls = []
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
        elif isinstance(node, ast.Expr | ast.Assign) and isinstance(node.value, ast.Call):
            calls = [node.value]
        for call in calls:
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in REGISTERING:
                return True
    return False


def test_every_registering_module_is_found_by_the_one_builtin_entry_point():
    """kernelbench has one entry point, ``kernelbench.builtin``, whose import (``pkgutil``
    over its plug-in packages) imports every module that registers something: a new
    module in one of those packages needs no list entry anywhere."""
    modules = {
        "kernelbench." + ".".join(p.relative_to(ROOT / "kernelbench").with_suffix("").parts)
        for p in (ROOT / "kernelbench").rglob("*.py")
        if _registers(p)
    }
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared[GROUP] == {"kernelbench": "kernelbench.builtin"}
    # the installed metadata is the pyproject's (reinstall after changing it)
    installed = {ep.value for ep in entry_points() if ep.value.startswith("kernelbench.")}
    assert installed == {"kernelbench.builtin"}
    code = (
        "import sys\n"
        "from kernelbench.plugins import load\n"
        "load()\n"
        "print(' '.join(m for m in sys.modules if m.startswith('kernelbench.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(proc.stdout.split())
    assert modules <= loaded, sorted(modules - loaded)


def test_registries_hold_every_builtin_plugin():
    from kernelbench.datasets import DATASETS
    from kernelbench.features import FEATURE_MAPS
    from kernelbench.learners import LEARNERS
    from kernelbench.protocols import PROTOCOLS

    assert {"rff", "sr33", "lev_rff"} <= set(FEATURE_MAPS)
    assert {"digits", "census", "powerplant"} <= set(DATASETS)
    assert {"kernel_approx", "krr", "walltime"} <= set(PROTOCOLS)
    assert set(LEARNERS) == {"linear", "svm_precomputed"}


def install_example(site: Path) -> dict[str, str]:
    """Put examples/toy_rff on ``site`` with its dist-info; the environment that sees it."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    shutil.copytree(EXAMPLE / "toy_rff", site / "toy_rff")
    info = site / f"toy_rff-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    eps = project["entry-points"][GROUP]
    lines = [f"[{GROUP}]", *(f"{k} = {v}" for k, v in eps.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def kernelbench(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kernelbench.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_plugin_package_method_runs_through_run_and_verify(tmp_path):
    env = install_example(tmp_path / "site")
    out = tmp_path / "runs"
    r = kernelbench(
        env, "run", "method=toy_rff", "dataset=digits", "runs=2", f"output_dir={out}", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    rows = read_results(out)
    assert list(rows["method"]) == ["toy_rff", "toy_rff"]
    assert list(rows["run"]) == [0, 1]
    assert np.all((rows["rel_fro_error"] > 0) & (rows["rel_fro_error"] < 1))

    # a verify config of one's own, with its reference table beside it: the plug-in's
    # experiment file (found on the config search path) is the grid. The reference is
    # the run above, so verify, which runs the cell again under the grid's experiment
    # name, must reproduce it exactly (draws depend on the cell, not the experiment).
    pd.DataFrame(
        {
            "dataset": ["digits"],
            "kernel": ["rbf"],
            "method": ["toy_rff"],
            "n": [1],
            "runs": [2],
            "mean": [rows["rel_fro_error"].mean()],
            "std": [rows["rel_fro_error"].std()],
        }
    ).to_csv(tmp_path / "toy_reference.csv", index=False)
    (tmp_path / "toy.yaml").write_text(
        "reference: toy_reference.csv\nprotocol: kernel_approx\nmetric: fro\n"
        "grids:\n  tiny: [toy_digits]\n"
    )
    r = kernelbench(
        env,
        "verify",
        "--config",
        str(tmp_path / "toy.yaml"),
        "--grid",
        "tiny",
        "--runs",
        "2",
        "--results",
        str(tmp_path / "verify"),
        "--no-baseline",
        "--out",
        str(tmp_path / "table.csv"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    table = pd.read_csv(tmp_path / "table.csv")
    toy = table[(table["method_label"] == "toy_rff") & (table["kernel"] == "rbf")]
    assert len(toy) == 1 and toy["verdict"].iloc[0] == "reproduced"
    assert toy["mean"].iloc[0] == pytest.approx(rows["rel_fro_error"].mean(), rel=1e-12)
    # the experiment's rff cells ran beside it, with no reference of their own
    assert set(table["method_label"]) == {"rff", "toy_rff"}


def test_an_unknown_method_names_the_plugin_one(tmp_path):
    env = install_example(tmp_path / "site")
    r = kernelbench(env, "run", "method=nope", cwd=tmp_path)
    assert r.returncode == 2
    assert "toy_rff" in r.stderr and "Traceback" not in r.stderr


def test_every_protocol_has_its_reporting_side():
    """Measurement and reporting are two plug-ins of one name: each protocol has a
    Reporting with its headline among its metrics and its default figures among its
    figures, and the reporting side holds no measurement member."""
    from kernelbench.protocols import PROTOCOLS
    from kernelbench.reporting import REPORTING

    assert set(REPORTING) == set(PROTOCOLS)
    for name, rep in REPORTING.items():
        assert rep.name == name
        assert rep.headline in rep.metrics
        assert set(rep.default_figures) <= set(rep.figures)
        assert rep.cell_keys == tuple(PROTOCOLS.get(name).cell_keys)
        for member in ("figures", "default_figures", "reference_cells", "budget_label"):
            assert not hasattr(PROTOCOLS.get(name), member), (name, member)
        assert not hasattr(rep, "measure") and not hasattr(rep, "prepare")
