"""The package's layers: a module imports only from its own layer or the ones below.

Every ``import kernelbench...`` / ``from kernelbench... import`` in the source, including
those inside functions, is checked against :data:`LAYERS`. A new module must be placed
in a layer here, so the layering is a decision, not an accident.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kernelbench"

#: Layer of each module (dotted name under kernelbench; a package entry covers its
#: submodules). Lower numbers are more basic.
LAYERS: dict[str, int] = {
    "errors": 0,
    "registry": 0,
    "seeding": 0,
    "config": 0,
    "settings": 0,
    "plugins": 0,
    "validation": 0,
    "packaged": 0,
    "kernels": 1,
    "transforms": 1,
    "blocks": 1,
    "testing": 3,
    "trig": 1,
    "metrics": 1,
    "stats": 1,
    "results": 1,
    "progress": 1,
    "reference": 1,
    "bandwidth": 1,
    "theory": 1,
    "qmc": 1,
    "timing": 1,
    "features": 2,
    "datasets": 2,
    "learners": 2,
    "protocols": 3,
    "builtin": 3,
    "cell": 3,
    "cost": 3,
    "probe": 3,
    "experiment": 4,
    "verify": 4,
    "launch": 5,
    "slurm": 5,
    "estimate": 5,
    # the output side, one package split by layer (docs/architecture.md): what every
    # output shares (styles, figure specs, tables, verdict words, report sections) ...
    "outputs": 1,
    # ... outputs of any experiment from its rows, and the papers' declarations (figure
    # specs, claims, verify configs: read by verify, a layer above) ...
    "outputs.generic": 3,
    "outputs.papers": 3,
    # ... the renderers and the leaderboard's statistics ...
    "outputs.render": 4,
    "outputs.plotly_render": 4,
    "outputs.leaderboard": 4,
    # ... the site and the commands
    "outputs.site": 5,
    "outputs.site_board": 5,
    "outputs.plot": 5,
    "outputs.baseline": 5,
    "outputs.report": 5,
    "cli": 6,
    "__init__": 6,
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    return ".".join(rel.parts)


def layer(name: str) -> int:
    """The layer of a dotted module name (``features.base`` -> features' layer)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in LAYERS:
            return LAYERS[key]
    raise KeyError(name)


def imports(path: Path) -> list[str]:
    """The kernelbench modules a file imports (anywhere in it)."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "kernelbench":
                out += [alias.name for alias in node.names]
            elif node.module.startswith("kernelbench."):
                out.append(node.module.removeprefix("kernelbench."))
        elif isinstance(node, ast.Import):
            out += [
                a.name.removeprefix("kernelbench.")
                for a in node.names
                if a.name.startswith("kernelbench.")
            ]
    return out


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "configs" not in p.parts)


def test_every_module_has_a_layer():
    missing = [module_name(p) for p in SOURCES if not _has_layer(module_name(p))]
    assert not missing, f"place these modules in LAYERS: {missing}"


def _has_layer(name: str) -> bool:
    try:
        layer(name)
    except KeyError:
        return False
    return True


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_name(p))
def test_no_upward_imports(path: Path):
    name = module_name(path)
    if name.endswith("__init__") and name != "__init__":
        name = name.removesuffix(".__init__")
    own = layer(name)
    upward = [m for m in imports(path) if _has_layer(m) and layer(m) > own]
    assert not upward, f"{name} (layer {own}) imports from higher layers: {upward}"


def test_the_check_catches_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from kernelbench.experiment import run_cell\n")
    assert imports(bad) == ["experiment"]
    assert layer("experiment") > layer("features.base")


def module_graph(sources: list[Path] = SOURCES, root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the kernelbench modules it imports (anywhere, functions and
    ``TYPE_CHECKING`` blocks included). A package is its ``__init__``; ``from pkg import
    sub`` is an arrow to ``pkg`` and, where ``sub`` is a module, to ``pkg.sub``."""

    def dotted(path: Path) -> str:
        return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")

    names = {dotted(p) for p in sources}
    graph: dict[str, set[str]] = {}
    for path in sources:
        name = dotted(path)
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "kernelbench" or node.module.startswith("kernelbench."):
                    base = node.module.removeprefix("kernelbench").lstrip(".")
                    targets.append(base)
                    prefix = f"{base}." if base else ""
                    targets += [f"{prefix}{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets += [
                    a.name.removeprefix("kernelbench.")
                    for a in node.names
                    if a.name.startswith("kernelbench.")
                ]
            out |= {t for t in targets if t in names and t != name}
        graph[name] = out
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    found = cycles(module_graph())
    assert not found, f"import cycles (imports inside functions count): {found}"


def test_the_cycle_check_catches_a_cycle(tmp_path):
    pkg = tmp_path / "kernelbench"
    pkg.mkdir()
    (pkg / "a.py").write_text("from kernelbench.b import x\n")
    (pkg / "b.py").write_text("def f():\n    from kernelbench import c\n")
    (pkg / "c.py").write_text("if TYPE_CHECKING:\n    import kernelbench.a\n")
    (pkg / "d.py").write_text("import kernelbench.a\n")
    graph = module_graph(sorted(pkg.glob("*.py")), pkg)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def _protocol_names() -> set[str]:
    from kernelbench.protocols import PROTOCOLS

    return set(PROTOCOLS.names())


def name_branches(path: Path, names: set[str]) -> list[str]:
    """Comparisons (``==``, ``!=``, ``in``, ``match``) against a protocol's name literal."""

    def literal(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(literal(e) for e in node.elts)
        return False

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(
            literal(n) for n in (node.left, *node.comparators)
        ):
            found.append(f"{path.name}:{node.lineno}")
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            if literal(node.pattern.value):
                found.append(f"{path.name}:{node.lineno}")
    return found


def test_the_runner_verify_and_cli_never_branch_on_a_protocol_name():
    """What differs between protocols is the protocol's (or its reporting side's) hook."""
    names = _protocol_names()
    paths = [
        PACKAGE / "experiment.py",
        PACKAGE / "cli.py",
        *sorted((PACKAGE / "verify").glob("*.py")),
    ]
    found = [hit for p in paths for hit in name_branches(p, names)]
    assert not found, f"branches on a protocol's name: {found}"


def protocol_literals(path: Path, names: set[str]) -> list[str]:
    """String constants equal to a protocol's name (``file:line``)."""
    return [
        f"{path.name}:{node.lineno}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]


def test_the_plan_names_no_protocol():
    """A cell's price is its protocol's ``price`` hook: cost.py and estimate.py neither
    branch on a protocol's name nor hold one (a plug-in protocol is priced as built-ins are)."""
    names = _protocol_names()
    paths = [PACKAGE / "cost.py", PACKAGE / "estimate.py"]
    found = [hit for p in paths for hit in name_branches(p, names) + protocol_literals(p, names)]
    assert not found, f"protocol names in the plan: {found}"


def test_the_name_branch_check_catches_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(p):\n    if p.name == 'krr':\n        return 1\n    return p in ('walltime',)\n"
    )
    assert name_branches(bad, {"krr", "walltime"}) == ["bad.py:2", "bad.py:4"]
    assert protocol_literals(bad, {"krr", "walltime"}) == ["bad.py:2", "bad.py:4"]


DOC = PACKAGE.parent / "docs" / "architecture.md"
STEP = re.compile(r"\[kernelbench/([\w/]+\.py)\] (\d)\s*$")


def diagram_steps() -> list[tuple[str, int]]:
    """The (module, stated layer) of each step of the cell's path in docs/architecture.md."""
    text = DOC.read_text()
    block = text.split("## One `kernelbench run`", 1)[1].split("```")[1]
    return [(m.group(1), int(m.group(2))) for m in map(STEP.search, block.splitlines()) if m]


def test_the_cell_path_diagram_names_real_modules_and_states_its_climbs():
    steps = diagram_steps()
    assert len(steps) >= 10
    for path, stated in steps:
        assert (PACKAGE / path).is_file(), f"docs/architecture.md names {path}: no such module"
        name = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        assert layer(name) == stated, f"{path} is in layer {layer(name)}, the doc says {stated}"
    layers = [stated for _, stated in steps]
    climbs = sum(b > a for a, b in zip(layers, layers[1:], strict=False))
    claimed = re.search(r"\*\*Climbs back up: (\d+)\*\*", DOC.read_text())
    assert claimed and int(claimed.group(1)) == climbs <= 5


#: The output side's declarations: what a figure, a table, a claim, a verdict and its rules
#: are, and each paper's (docs/architecture.md, "From a row to a PNG, a web page and a
#: verdict").
DECLARATIONS = (
    "outputs",
    "outputs.style",
    "outputs.spec",
    "outputs.tables",
    "outputs.verdicts",
    "outputs.sections",
    "outputs.generic",
    "outputs.papers",
    "outputs.papers.munkhoeva2018",
    "outputs.papers.liu2020",
    "outputs.papers.yu2016",
    "outputs.papers.yang2014",
)
RENDERERS = ("outputs.render", "outputs.plotly_render", "outputs.site", "outputs.site_board")


def reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for m in graph.get(todo.pop(), ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def third_party(path: Path) -> set[str]:
    """The top-level names of the non-kernelbench modules a file imports (anywhere)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
    return out


def leaks(graph: dict[str, set[str]], name: str) -> set[str]:
    """The modules of verify and the renderers that ``name`` reaches."""
    return {m for m in reach(graph, name) if m.split(".")[0] == "verify" or m in RENDERERS}


def test_the_declarations_import_neither_verify_nor_a_renderer():
    graph = module_graph()
    for name in DECLARATIONS:
        assert name in graph, f"no module {name}"
        found = leaks(graph, name)
        assert not found, f"{name} reaches {sorted(found)}"
        path = PACKAGE.joinpath(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        drawn = third_party(path) & {"matplotlib", "plotly"}
        assert not drawn, f"{name} imports {sorted(drawn)}"


def test_verify_reads_the_papers_declarations_and_the_check_catches_the_reverse():
    """The arrow runs one way: verify's loader reads each paper's ``VERIFY`` (its record in
    ``outputs.verdicts``); a paper's module importing verify, directly or through another
    module, is caught by the layer table and by :func:`leaks`."""
    graph = module_graph()
    assert {"outputs.papers", "outputs.verdicts"} <= reach(graph, "verify.config")
    assert layer("outputs.papers.liu2020") < layer("verify.config")
    bad = {k: set(v) for k, v in graph.items()}
    bad["outputs.style"] = bad["outputs.style"] | {"verify.compare"}
    assert leaks(bad, "outputs.papers.munkhoeva2018") >= {"verify.compare", "verify.config"}


def test_verify_reaches_no_renderer():
    graph = module_graph()
    for name in (m for m in graph if m.split(".")[0] == "verify"):
        found = reach(graph, name) & set(RENDERERS)
        assert not found, f"{name} reaches {sorted(found)}"
    for path in sorted((PACKAGE / "verify").glob("*.py")):
        assert not third_party(path) & {"matplotlib", "plotly"}, path.name


def test_reach_follows_imports_through_other_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}}
    assert reach(graph, "a") == {"b", "c"} and reach(graph, "c") == set()
