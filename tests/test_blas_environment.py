"""Nothing the tests, CI, scripts, configs or the package run picks the BLAS kernel.

OpenBLAS chooses its kernel (Haswell, SkylakeX, Sandybridge, ...) from the processor,
unless OPENBLAS_CORETYPE says otherwise; OPENBLAS_L2_SIZE changes its blocking. Some
machines set them for their processor's sake. A test, ``.ci/run``, a script or a
launcher config that set or unset them would hide a cross-machine difference that the
golden rows must survive (tests/test_rows_unchanged.py), or break such a machine. So
they are never assigned there: a second kernel is checked by hand, from the shell
(docs/verification.md, "Golden rows across machines").

This test scans those files: in Python every string literal but docstrings (a key of
``os.environ`` or of an ``env`` mapping, an argument of ``setenv``/``pop``, a
``NAME=value`` argument) and every keyword argument; elsewhere (shell, YAML) every line
outside comments.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The variables (spelled in two parts, so that this file holds no literal of them).
NAMES = tuple("OPENBLAS_" + suffix for suffix in ("CORETYPE", "L2_SIZE"))
#: What is scanned: every file under these folders, and these files.
FOLDERS = ("kernelbench", "tests", "scripts", "configs", ".ci")
SUFFIXES = {".py", ".sh", ".yaml", ".yml", ".toml", ".cfg", ".ini", ""}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def python_uses(source: str) -> list[int]:
    """Lines of ``source`` (Python) whose code names one of :data:`NAMES`."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if any(name in node.value for name in NAMES):
                lines.append(node.lineno)
        elif isinstance(node, ast.keyword) and node.arg in NAMES:
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Name) and node.id in NAMES:
            lines.append(node.lineno)
    return sorted(set(lines))


def text_uses(source: str) -> list[int]:
    """Lines of ``source`` (shell, YAML, ...) that name one of :data:`NAMES` outside a
    ``#`` comment."""
    pattern = re.compile("|".join(NAMES))
    return [
        i for i, line in enumerate(source.splitlines(), 1) if pattern.search(line.split("#", 1)[0])
    ]


def scanned_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    return files


def test_no_file_run_by_tests_or_ci_sets_the_blas_kernel():
    files = scanned_files()
    assert ROOT / ".ci" / "run" in files and Path(__file__) in files
    found = []
    for path in files:
        text = path.read_text(errors="replace")
        uses = python_uses(text) if path.suffix == ".py" else text_uses(text)
        found += [f"{path.relative_to(ROOT)}:{line}" for line in uses]
    assert not found, (
        f"{', '.join(NAMES)} set in {found}: never in tests, CI, scripts or configs "
        "(docs/verification.md, 'Golden rows across machines')"
    )


@pytest.mark.parametrize(
    "code",
    [
        'os.environ["{name}"] = "Haswell"',
        'monkeypatch.setenv("{name}", "Haswell")',
        'os.environ.pop("{name}", None)',
        'subprocess.run(args, env=dict(os.environ, {name}="Haswell"))',
        'subprocess.run(args, env={{**os.environ, "{name}": "Haswell"}})',
        'subprocess.run(["env", "{name}=Haswell", "pytest"])',
    ],
)
@pytest.mark.parametrize("name", NAMES)
def test_the_scan_finds_python_assignments(code, name):
    assert python_uses(code.format(name=name)) == [1]


@pytest.mark.parametrize(
    "line",
    ["export {name}=Haswell", "{name}=Haswell pytest -q", "unset {name}", "  - export {name}=1"],
)
@pytest.mark.parametrize("name", NAMES)
def test_the_scan_finds_shell_and_yaml_assignments(line, name):
    assert text_uses("set -e\n" + line.format(name=name)) == [2]


def test_the_scan_leaves_documentation_alone():
    name = NAMES[0]
    code = f'"""Check by hand: {name}=Haswell pytest."""\n# {name}=Haswell\nx = 1\n'
    assert python_uses(code) == []
    assert text_uses(f"# {name}=Haswell pytest\necho done\n") == []
