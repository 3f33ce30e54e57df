"""The ground the tests need (tests/conftest.py): skipped on a laptop where it is
missing, a one-line failure under CI=true, also where KERNELBENCH_DATA names a folder
that is not there (.ci/run always sets it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import need_mirror


@pytest.fixture
def mirror_dir(tmp_path: Path) -> Path:
    (tmp_path / "MANIFEST.json").write_text("[]")
    return tmp_path


def test_a_mirror_with_its_files_is_returned(mirror_dir, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(mirror_dir))
    monkeypatch.setenv("CI", "true")
    assert need_mirror("MANIFEST.json") == mirror_dir.resolve()


@pytest.mark.parametrize(
    ("value", "files", "problem"),
    [
        (None, (), "KERNELBENCH_DATA is not set: no dataset mirror"),
        ("absent", (), "is not a folder: no dataset mirror"),
        (".", ("MANIFEST.json", "letter.npz"), "holds no letter.npz"),
    ],
    ids=["unset", "set-folder-absent", "file-missing"],
)
def test_missing_ground_fails_in_one_line_under_ci_and_skips_elsewhere(
    mirror_dir, monkeypatch, value, files, problem
):
    if value is None:
        monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    else:
        monkeypatch.setenv("KERNELBENCH_DATA", str(mirror_dir / value))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        need_mirror(*files)
    message = str(failed.value)
    assert problem in message and "under CI=true" in message and "\n" not in message
    assert not failed.value.pytrace  # one line, no traceback
    for ci in ("false", None):
        if ci is None:
            monkeypatch.delenv("CI")
        else:
            monkeypatch.setenv("CI", ci)
        with pytest.raises(pytest.skip.Exception, match=problem):
            need_mirror(*files)
