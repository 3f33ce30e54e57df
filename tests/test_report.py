"""``kernelbench report`` writes REPRODUCTION.md from the committed tables: regenerating
it reproduces the committed file exactly (a change of a baseline or of a section's code
must come with the regenerated report)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kernelbench.outputs.report import SECTIONS, report

ROOT = Path(__file__).resolve().parents[1]


def test_report_regenerates_the_committed_reproduction_md(tmp_path):
    out = tmp_path / "REPRODUCTION.md"
    result = CliRunner().invoke(report, ["--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == (ROOT / "REPRODUCTION.md").read_text()
    assert all(key in result.output for key in SECTIONS)


def test_report_rejects_an_unknown_section(tmp_path):
    result = CliRunner().invoke(report, ["--only", "nope", "--out", str(tmp_path / "r.md")])
    assert result.exit_code == 2 and "fig1" in result.output
    assert not (tmp_path / "r.md").exists()
