"""The cell's path type-checks: mypy over kernelbench/cell.py, experiment.py and
protocols/ (``[tool.mypy]`` in pyproject.toml), so a misspelt Cell attribute or
setting is an error before anything runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_passes_on_the_cell_path():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--no-incremental"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
