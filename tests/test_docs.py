"""README.md and the docs it links: README fits a screen and keeps the test command CI
runs; every experiment and verify config (configs/, and the example plug-ins') has its
command in README or a doc it links;
every relative link and anchor of those pages resolves; every script of scripts/ is
listed in docs/performance.md, and every script named anywhere exists or is listed
there as removed."""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

from kernelbench.outputs.site import slug

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PERFORMANCE = ROOT / "docs" / "performance.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def linked_docs(start: Path = README) -> list[Path]:
    """``start`` and every Markdown file of the repository reachable from it by relative
    links, in the order found."""
    seen, queue = [start], deque([start])
    while queue:
        page = queue.popleft()
        for href in LINK.findall(page.read_text()):
            path = href.partition("#")[0]
            if not path or re.match(r"^[a-z]+:", path) or not path.endswith(".md"):
                continue
            target = (page.parent / path).resolve()
            if target.is_file() and target.is_relative_to(ROOT) and target not in seen:
                seen.append(target)
                queue.append(target)
    return seen


def anchors(page: Path) -> set[str]:
    """The GitHub anchors of a Markdown file's headings (outside code blocks) and its
    HTML anchors (``<a id="...">``)."""
    text = page.read_text()
    found, fenced = set(re.findall(r'<a (?:id|name)="([^"]+)"', text)), False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"^#{1,6} (.*)$", line)):
            found.add(slug(m[1].replace("`", "").replace("*", "")))
    return found


def dead_links(pages: list[Path], root: Path = ROOT) -> list[str]:
    """Every relative link of ``pages`` whose file is missing, or whose anchor is no
    heading of the Markdown file it points to (named relative to ``root``)."""
    dead = []
    for page in pages:
        for href in LINK.findall(page.read_text()):
            if re.match(r"^[a-z]+:", href):
                continue
            path, _, frag = href.partition("#")
            target = (page.parent / path).resolve() if path else page
            name = f"{page.relative_to(root)}: {href}"
            if not target.exists():
                dead.append(name)
            elif frag and target.suffix == ".md" and frag not in anchors(target):
                dead.append(f"{name} (no heading {frag!r})")
    return dead


def commands_missing(text: str, experiments: list[str], verify: list[str]) -> list[str]:
    """The experiments with no ``kernelbench run|estimate ... experiment=NAME`` line and
    the verify configs with no ``kernelbench verify ... --config NAME`` line in ``text``."""
    lines = text.splitlines()

    def has(pattern: str) -> bool:
        return any(re.search(pattern, line) for line in lines)

    return [
        *(f"experiment {e}" for e in experiments
          if not has(rf"kernelbench (run|estimate)\b.*\bexperiment={re.escape(e)}(?![\w])")),
        *(f"verify config {v}" for v in verify
          if not has(rf"kernelbench verify\b.*--config {re.escape(v)}(?![\w])")),
    ]  # fmt: skip


def test_readme_fits_a_screen_and_keeps_ci_s_test_command():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; at most 150"
    first = README.read_text().split("```bash", 1)[1].split("```", 1)[0]
    assert "kernelbench run" in first and "pytest -q -n 2" in first
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r'"\$VENV/bin/python" -m pytest -q -n 2\n', ci)


def test_every_experiment_and_verify_config_has_its_command_in_the_docs():
    pages = linked_docs()
    assert ROOT / "docs" / "papers" / "munkhoeva2018.md" in pages
    text = "\n".join(p.read_text() for p in pages)
    configs = [ROOT / "configs", *ROOT.glob("examples/*/*/configs")]  # and the plug-ins'
    experiments = sorted(p.stem for c in configs for p in c.glob("experiment/*.yaml"))
    from kernelbench.outputs.papers import VERIFY  # the papers' own, declared in code

    verify = sorted({*VERIFY, *(p.stem for c in configs for p in c.glob("verify/*.yaml"))})
    assert {"quick", "toy_digits", "wine_kernels"} <= set(experiments) and len(verify) >= 4
    assert commands_missing(text, experiments, verify) == []
    # the check fails on a missing command: drop the lines of one experiment and config
    drop = ("experiment=yu2016_fig4_cifar", "--config liu2020_table3_paper")
    gone = "\n".join(line for line in text.splitlines() if not any(d in line for d in drop))
    assert commands_missing(gone, experiments, verify) == [
        "experiment yu2016_fig4_cifar",
        "verify config liu2020_table3_paper",
    ]


def test_every_link_of_readme_and_its_docs_resolves(tmp_path):
    pages = linked_docs()
    assert len(pages) >= 15
    assert dead_links(pages) == []
    # the checker fails on a missing file and a missing heading
    page = tmp_path / "a.md"
    page.write_text("# A `b` title\n[x](b.md) [y](a.md#nope) [z](#a-b-title) [w](a.md)\n")
    assert dead_links([page], tmp_path) == ["a.md: b.md", "a.md: a.md#nope (no heading 'nope')"]


def listed_scripts() -> tuple[set[str], set[str]]:
    """The scripts docs/performance.md lists under "The scripts", and those its table
    "Removed scripts" names."""
    text = PERFORMANCE.read_text()
    part = text.split("\n## The scripts\n", 1)[1]
    kept, removed = part.split("\n### Removed scripts\n", 1)
    return (
        set(re.findall(r"^- `(\w+\.py)`", kept, re.M)),
        set(re.findall(r"^\| `(\w+\.py)` \|", removed, re.M)),
    )


def test_every_script_is_listed_once_in_performance_md():
    kept, removed = listed_scripts()
    assert kept == {p.name for p in (ROOT / "scripts").glob("*.py")}
    assert not kept & removed and removed


def test_every_script_named_exists_or_is_listed_as_removed():
    _, removed = listed_scripts()
    files = [
        README,
        *ROOT.glob("docs/**/*.md"),
        *ROOT.glob("results/**/*.md"),
        ROOT / "REPRODUCTION.md",
        *ROOT.glob("kernelbench/**/*.py"),
        *ROOT.glob("kernelbench/**/*.md"),
        *ROOT.glob("tests/*.py"),
        *ROOT.glob("scripts/*.py"),
        *ROOT.glob("configs/**/*.yaml"),
        *ROOT.glob(".ci/*"),
    ]
    named = {
        (f.relative_to(ROOT).as_posix(), name)
        for f in files
        if f.is_file()
        for name in re.findall(r"scripts/([a-z][a-z0-9_]*\.py)", f.read_text())
    }
    assert len(named) > 20
    missing = sorted(
        f"{where}: scripts/{name}"
        for where, name in named
        if not (ROOT / "scripts" / name).is_file() and name not in removed
    )
    assert missing == []


def layer_table(text: str) -> dict[str, int]:
    """The modules of docs/architecture.md's layer table, each with its stated layer."""
    table = {}
    for m in re.finditer(r"^\| (\d) \| ([^|]*) \|", text, re.M):
        for name in re.findall(r"`([\w.]+)`", m[2]):
            table[name] = int(m[1])
    return table


def test_the_layer_table_of_architecture_md_is_the_layering_test_s():
    from test_architecture import LAYERS

    text = (ROOT / "docs" / "architecture.md").read_text()
    expected = {k: v for k, v in LAYERS.items() if k != "__init__"}
    assert layer_table(text) == expected
    # a module left out of the table, or put in another layer, fails
    assert "`cost`, " in text and layer_table(text.replace("`cost`, ", "")) != expected
    moved = text.replace("| 4 | `experiment`, `verify`, ", "| 4 | `experiment`, ").replace(
        "| 5 | `launch`, ", "| 5 | `verify`, `launch`, "
    )
    assert moved != text and layer_table(moved) != expected
