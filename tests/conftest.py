"""Ground the tests stand on: the dataset mirror (KERNELBENCH_DATA) and a browser.

Where it is missing a test is skipped on a laptop, and fails in one line under CI
(``CI=true``), where .ci/run provides it: a missing mirror must not pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def missing_ground(problem: str, fix: str) -> None:
    """Skip with ``problem``; under ``CI=true`` fail with it and ``fix`` instead, in one line."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{problem} under CI=true: {fix}", pytrace=False)
    pytest.skip(problem)


def need_mirror(*files: str) -> Path:
    """The dataset mirror (``KERNELBENCH_DATA``) holding ``files`` (names in it, such as
    ``letter.npz`` or ``MANIFEST.json``); :func:`missing_ground` where it is not set, is
    not a folder or lacks one of them."""
    value = os.environ.get("KERNELBENCH_DATA")
    fix = "set KERNELBENCH_DATA to the dataset mirror (kernelbench datasets fetch)"
    if not value:
        missing_ground("KERNELBENCH_DATA is not set: no dataset mirror", fix)
    path = Path(value).resolve()
    if not path.is_dir():
        missing_ground(f"KERNELBENCH_DATA={value} is not a folder: no dataset mirror", fix)
    lacking = [f for f in files if not (path / f).is_file()]
    if lacking:
        missing_ground(f"the dataset mirror {path} holds no {', '.join(lacking)}", fix)
    return path
