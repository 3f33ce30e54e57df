"""Plug-ins: kernelbench's own modules and another package's, found by entry points.

The plug-in packages are ``examples/toy_rff`` (a method) and ``examples/wine_data`` (a
dataset), docs/plugins.md's worked examples, built and installed by pip into a
temporary folder that the subprocesses running ``kernelbench`` see on PYTHONPATH.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from kernelbench.plugins import GROUP, entry_points
from kernelbench.results import read_results

ROOT = Path(__file__).resolve().parents[1]
#: The calls by which a module registers a plug-in.
REGISTERING = ("register", "add")


def _defines_protocol(node: ast.ClassDef) -> bool:
    """Whether a class statement defines a protocol with its ``name`` (registered so)."""
    bases = [b.value if isinstance(b, ast.Subscript) else b for b in node.bases]
    named = any(
        isinstance(st, ast.Assign) and any(getattr(t, "id", "") == "name" for t in st.targets)
        for st in node.body
    )
    return named and any(getattr(b, "id", "") == "Protocol" for b in bases)


def _registers(path: Path) -> bool:
    """Whether a module registers something at import time (a top-level ``X.register``/
    ``X.add`` call, decorator or statement, or a protocol class with its name)."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        calls = []
        if isinstance(node, ast.ClassDef) and _defines_protocol(node):
            return True
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
    assert "kernelbench.protocols.krr" in modules
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


EXAMPLES = (ROOT / "examples" / "toy_rff", ROOT / "examples" / "wine_data")


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example packages built and installed as a user installs them (``pip install
    --no-deps --target``) into a temporary folder, not into the test environment; the
    environment whose PYTHONPATH holds that folder (entry points are found through
    ``importlib.metadata``, which scans sys.path)."""
    site = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--target", str(site)]
        + [str(p) for p in EXAMPLES],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # no packaging warnings (config folders are packages, so nothing is left out)
    assert "would be ignored" not in proc.stdout + proc.stderr
    for data in (
        "toy_rff/configs/verify/toy_digits_reference.csv",
        "wine_data/configs/dataset/wine.yaml",
    ):
        assert (site / data).is_file(), data
    return _env_with(site)


def _env_with(*sites: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, sites), *filter(None, [env.get("PYTHONPATH")])])
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


def test_the_examples_are_not_installed_in_the_test_environment():
    """The end-to-end tests see the plug-ins only through their subprocess's PYTHONPATH."""
    names = {ep.name for ep in entry_points()}
    assert not names & {"toy_rff", "wine_data"}


def test_plugin_packages_run_shard_verify_and_baseline_like_builtins(plugin_env, tmp_path):
    """The examples, installed with pip: listed, their experiments run with the shard
    paths of default cells (no ``h=``), the plug-in verify config (its reference CSV
    shipped beside it) passes, and ``baseline`` aggregates the plug-in experiment."""
    env = plugin_env
    r = kernelbench(env, "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    methods = r.stdout.split("Kernels:")[0]  # the methods and their configs
    datasets = next(line for line in r.stdout.splitlines() if line.startswith("Datasets:"))
    assert "toy_rff" in methods and "wine" in datasets and "Broken" not in r.stdout
    # the plug-in's experiment and verify config, one line each, saying whose they are
    for head in ("Experiments: ", "Verify configs: "):
        block = r.stdout.split(f"\n{head}", 1)[1].split("\n\n")[0].split("\nVerify")[0]
        line = next(ln for ln in block.splitlines() if ln.split()[0] == "toy_digits")
        assert "[plug-in toy_rff] " in line, line

    out = tmp_path / "results" / "runs"
    r = kernelbench(env, "run", "experiment=toy_digits", f"output_dir={out}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shards = sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))
    assert shards == [
        f"toy_digits/digits/{k}/{m}/n=1.parquet"
        for k in ("arccos1", "rbf")
        for m in ("rff", "toy_rff")
    ]
    # a plug-in dataset: built-in methods on it are default cells too
    r = kernelbench(
        env, "run", "experiment=wine_kernels", "method=rff", "n=1", "runs=2",
        f"output_dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    grid = out / "wine_kernels"
    wine = sorted(str(p.relative_to(grid)) for p in grid.rglob("*.parquet"))
    assert wine == ["wine/arccos1/rff/n=1.parquet", "wine/rbf/rff/n=1.parquet"]
    rows = read_results(out, "wine_kernels")
    assert set(rows["data_source"]) == {"bundled"} and len(rows) == 4

    # the plug-in's verify config, by name: its grid and its reference CSV
    r = kernelbench(
        env, "verify", "--config", "toy_digits",
        "--out", str(tmp_path / "table.csv"),
        cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    table = pd.read_csv(tmp_path / "table.csv")
    assert sorted(table["method_label"]) == ["rff", "rff", "toy_rff", "toy_rff"]
    assert set(table["verdict"]) == {"reproduced"}
    # verify ran the same cells as `run` (draws depend on the cell, not the directory)
    ran = read_results(out, "toy_digits")
    toy = ran[(ran["method_label"] == "toy_rff") & (ran["kernel"] == "rbf")]["rel_fro_error"]
    mine = table[(table["method_label"] == "toy_rff") & (table["kernel"] == "rbf")]["mean"]
    assert mine.iloc[0] == pytest.approx(toy.mean(), rel=1e-12)

    # its baseline: beside the results (results/baseline), the headline metric per cell;
    # verify's shards (results/runs/verify-toy_digits-reduced) are the same runs, once
    r = kernelbench(env, "baseline", "toy_digits", str(out), "--no-figure", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    base = pd.read_csv(tmp_path / "results" / "baseline" / "toy_digits_baseline.csv")
    assert len(base) == 4 and set(base["runs"]) == {5}
    rbf = base[(base["method_label"] == "toy_rff") & (base["kernel"] == "rbf")]
    assert rbf["mean"].iloc[0] == pytest.approx(toy.mean(), rel=1e-12)


#: A plug-in protocol, as docs/plugins.md writes one: a class with its columns, metrics
#: and a figure, and no registration line.
MAX_ERROR = """
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kernelbench.protocols import Figure, Metric, Protocol, get_protocol
from kernelbench.protocols.common import feature_map, fit_transform, run_rng
from kernelbench.outputs.generic import FigureOutput, summarise
from kernelbench.settings import ProtocolSettings


@dataclass
class MaxErrorSettings(ProtocolSettings):
    name: str = "max_error"
    data: str | None = "kernel_approx"


class MaxError(Protocol[MaxErrorSettings]):
    name = "max_error"
    Settings = MaxErrorSettings
    columns = (("samples", pa.int64()), ("max_error", pa.float64()))
    metrics = {"max": Metric("max_error", "max |K - K_hat|", short="max")}
    headline = "max"
    figures = (Figure("max_table", "the largest entry error", "max_plugin:draw", ("max",)),)

    def skip(self, cell):
        if cell.kernel["name"] != "rbf":
            return f"protocol max_error needs kernel rbf, got {cell.kernel['name']!r}"
        return super().skip(cell)

    def run(self, cell, ctx, run):
        fm = feature_map(cell, run_rng(cell, run), d=ctx.X.shape[1])
        (Zx, Zy), row = fit_transform(fm, ctx.X, ctx.X, ctx.Y)
        E = ctx.K - (Zx @ Zy.T + fm.constant_)
        return [{**row, "max_error": float(np.abs(E).max())}]


def draw(df, out, options):
    out.mkdir(parents=True, exist_ok=True)
    summarise(get_protocol("max_error"), df).to_csv(out / "max_table.csv", index=False)
    return FigureOutput([out / "max_table.csv"])
"""


def test_a_plugin_protocol_is_one_class(tmp_path):
    """A protocol of a plug-in's: defined (registered by its name), run, refused in one
    line where its skip says so, summarised by its headline, drawn by its figure, and
    given a baseline; no output code of kernelbench's names it."""
    site = tmp_path / "site"
    configs = {
        "protocol/max_error.yaml": "defaults:\n  - max_error_settings\n  - _self_\n",
        "experiment/max_digits.yaml": (
            "# @package _global_\nexperiment: max_digits\nruns: 3\n"
            "defaults:\n  - override /protocol: max_error\n"
            "hydra:\n  sweeper:\n    params:\n      dataset: digits\n      method: rff\n"
            "      n: 1\n"
        ),
    }
    fake_plugin(site, "max_plugin", MAX_ERROR, configs)
    env = _env_with(site)
    out = tmp_path / "results" / "runs"
    r = kernelbench(env, "run", "experiment=max_digits", f"output_dir={out}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "digits rbf rff n=1: max " in r.stdout, r.stdout
    rows = read_results(out, "max_digits")
    assert len(rows) == 3 and (rows["max_error"] > 0).all() and set(rows["samples"]) == {300}

    r = kernelbench(
        env, "run", "experiment=max_digits", "kernel=arccos0", f"output_dir={out}", cwd=tmp_path
    )
    assert r.returncode == 2 and "needs kernel rbf, got 'arccos0'" in r.stderr
    assert "Traceback" not in r.stderr

    r = kernelbench(env, "plot", str(out), "--out", str(tmp_path / "figs"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = pd.read_csv(tmp_path / "figs" / "max_digits" / "max_table.csv")
    assert table["mean"].iloc[0] == pytest.approx(rows["max_error"].mean(), rel=1e-12)

    r = kernelbench(env, "baseline", "max_digits", str(out), "--no-figure", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    base = pd.read_csv(tmp_path / "results" / "baseline" / "max_digits_baseline.csv")
    assert base["mean"].iloc[0] == pytest.approx(rows["max_error"].mean(), rel=1e-12)

    # the site: a page of its experiment, its figure and its table, from the rows and the
    # protocol's declared headline alone (kernelbench.outputs.generic.headline_cells)
    html = tmp_path / "html"
    r = kernelbench(
        env, "report", "--html", str(html), "--results", str(out), "--only", "fig3", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    page = (html / "runs-0-max_digits.html").read_text()
    figure = re.search(r'<script type="application/json" class="kb-fig"[^>]*>(.*?)</script>', page)
    assert figure, "no figure on the experiment's page"
    ys = [y for trace in json.loads(figure.group(1))["data"] for y in trace.get("y") or ()]
    assert pytest.approx(rows["max_error"].mean(), rel=1e-12) in ys
    assert "max_error" in page and "max_digits" in (html / "index.html").read_text()
    assert list((html / "figures" / "runs-0-max_digits").glob("*.png"))


def test_an_unknown_method_names_the_plugin_one(plugin_env, tmp_path):
    r = kernelbench(plugin_env, "run", "method=nope", cwd=tmp_path)
    assert r.returncode == 2
    assert "toy_rff" in r.stderr and "Traceback" not in r.stderr


def fake_plugin(site: Path, name: str, source: str, configs: dict[str, str]) -> None:
    """A plug-in package ``name`` on ``site``: a module with ``source`` (after a
    CONFIG_DIR line) and config files (path under its configs/ -> text), with the
    ``.dist-info`` an installer writes."""
    pkg = site / name
    for rel, text in configs.items():
        (pkg / "configs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / "configs" / rel).write_text(text)
    (pkg / "configs").mkdir(parents=True, exist_ok=True)
    head = "from pathlib import Path\nCONFIG_DIR = Path(__file__).parent / 'configs'\n"
    (pkg / "__init__.py").write_text(head + source)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{name} = {name}\n")


UNKNOWN_PROTOCOL = (
    "# @package _global_\nexperiment: bad_grid\ndefaults:\n  - override /protocol: nope\n"
    "hydra:\n  sweeper:\n    params:\n      method: rff\n"
)


@pytest.mark.parametrize(
    ("source", "configs", "args", "says"),
    [
        ("raise ImportError('no module named shiny')\n", {}, ["run", "method=rff"],
         "plug-in broken_pkg = broken_pkg (from broken-pkg) failed to load: ImportError"),
        ("from kernelbench.features import FEATURE_MAPS\n"
         "from kernelbench.features.rff import RFF\n"
         "FEATURE_MAPS.add('yaml_less', type('YamlLess', (RFF,), {}))\n",
         {}, ["run", "method=yaml_less"],
         "method 'yaml_less' (module broken_pkg) is registered but has no config file "
         "method/yaml_less.yaml"),
        ("", {"experiment/bad_grid.yaml": UNKNOWN_PROTOCOL}, ["run", "experiment=bad_grid"],
         "experiment bad_grid (plug-in broken_pkg): unknown protocol 'nope'"),
        ("", {"verify/bad_check.yaml": "reference: r.csv\nprotocol: nope\n"},
         ["verify", "--config", "bad_check", "--no-run"], "(plug-in broken_pkg): unknown"),
    ],
    ids=["import-fails", "yaml-missing", "experiment-unknown-protocol", "verify-unknown-protocol"],
)  # fmt: skip
def test_a_broken_plugin_is_one_line_naming_it_and_listed_as_broken(
    tmp_path, source, configs, args, says
):
    site = tmp_path / "site"
    fake_plugin(site, "broken_pkg", source, configs)
    env = _env_with(site)
    r = kernelbench(env, *args, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert says in r.stderr, r.stderr
    r = kernelbench(env, "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Kernels:   rbf" in r.stdout and "    rff " in r.stdout  # the others are listed
    broken = r.stdout.split("Broken plug-ins:\n", 1)[1]
    assert "broken_pkg" in broken and len(broken.strip().splitlines()) == 1, r.stdout


#: calls of config_dir() allowed outside kernelbench/config.py: the root config file
#: (``config_dir() / "config.yaml"``) and Hydra's primary config directory (``str()``)
ROOT_CONFIG = "config.yaml"


def test_no_module_reads_a_config_group_beside_the_search_path():
    """Every config group (experiment, method, dataset, kernel, protocol, verify,
    hydra/launcher) is read through :mod:`kernelbench.config`'s lookups, which search
    kernelbench's configs and the plug-ins' CONFIG_DIRs alike: outside config.py,
    ``config_dir()`` only names the root config file or Hydra's config directory (never
    the source tree above it: shipped tables are package data, kernelbench.packaged), and
    no path is built from a literal ``configs`` folder."""
    bad = []
    for path in sorted((ROOT / "kernelbench").rglob("*.py")):
        if path.name == "config.py" and path.parent.name == "kernelbench":
            continue
        tree = ast.parse(path.read_text())
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                for side in (node.left, node.right):
                    if isinstance(side, ast.Constant) and side.value == "configs":
                        bad.append(f"{path.name}:{node.lineno} a path through 'configs'")
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "config_dir"):
                continue
            up = parents.get(node)
            root_file = (
                isinstance(up, ast.BinOp)
                and up.left is node
                and isinstance(up.right, ast.Constant)
                and up.right.value == ROOT_CONFIG
                and not isinstance(parents.get(up), ast.BinOp)
            )
            hydra_dir = isinstance(up, ast.Call) and getattr(up.func, "id", "") == "str"
            if not (root_file or hydra_dir):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, bad


def test_every_protocol_declares_what_it_reports():
    """A protocol is one registered object: its headline among its metrics, each metric a
    column of its shards, each figure's metrics among its metrics and its drawing
    function found; the figures' modules hold no second registry."""
    import kernelbench.outputs.generic
    from kernelbench.cell import cell_keys, shard_schema
    from kernelbench.protocols import PROTOCOLS

    assert {"kernel_approx", "krr", "downstream", "walltime"} <= set(PROTOCOLS)
    for name, proto in PROTOCOLS.items():
        assert proto.name == name
        assert proto.headline in proto.metrics, name
        columns = set(shard_schema(proto).names)
        assert {m.column for m in proto.metrics.values()} <= columns, name
        # a cell's keys are columns of its protocol's shards, so tables group by them
        assert set(cell_keys(proto)) <= columns, name
        assert proto.figures and len({f.name for f in proto.figures}) == len(proto.figures)
        for fig in proto.figures:
            assert set(fig.metrics) <= set(proto.metrics), (name, fig.name)
            assert callable(fig.load()), (name, fig.name)
    assert not hasattr(kernelbench.outputs.generic, "REPORTING")
    # the keys verify and the figures group by: a protocol's own keys before n, its
    # index (a row per iteration, say) after it
    assert cell_keys(PROTOCOLS.get("kernel_approx")) == ("dataset", "kernel", "method_label", "n")
    assert cell_keys(PROTOCOLS.get("downstream"))[-2:] == ("learner", "n")
    assert cell_keys(PROTOCOLS.get("qmc_adaptive"))[-2:] == ("n", "iteration")


#: The protocol contract's public names: what it declares (class attributes) ...
DECLARATIONS = {
    "name",
    "Settings",
    "columns",
    "keys",
    "index",
    "budget",
    "batch",
    "extendable",
    "data_runs",
    "metrics",
    "headline",
    "figures",
}
#: ... and its hooks.
HOOKS = {
    "check_settings",
    "skip",
    "prepare",
    "cell_columns",
    "run",
    "measure",
    "read_reference",
    "price",
}


def test_the_protocol_contract_is_its_public_names():
    """Protocol (the base class) and cell.Measurement (what the cell layer and the output
    side read) name the same members, all public: a built-in protocol overrides no
    private method of the base class."""
    from kernelbench.cell import Measurement
    from kernelbench.protocols import PROTOCOLS, Protocol

    def public(cls: type) -> set[str]:
        return {n for n in dir(cls) if not n.startswith("_")}

    assert public(Protocol) == public(Measurement) == DECLARATIONS | HOOKS
    private = {n for n in vars(Protocol) if n.startswith("_") and not n.startswith("__")}
    for name, proto in PROTOCOLS.items():
        overridden = {n for n in private if getattr(type(proto), n) is not getattr(Protocol, n)}
        assert not overridden, (name, overridden)


def test_a_protocol_is_registered_once_by_its_name():
    """Defining a subclass with a ``name`` registers it (and its settings); a second
    class of that name is refused; a subclass without its own name is not registered."""
    from hydra.core.config_store import ConfigStore

    from kernelbench.protocols import PROTOCOLS, Protocol
    from kernelbench.protocols.kernel_approx import KernelApprox

    n = len(PROTOCOLS)
    try:

        class Probe(KernelApprox):
            name = "probe_registration"

        assert isinstance(PROTOCOLS.get("probe_registration"), Probe)
        assert "probe_registration_settings.yaml" in ConfigStore.instance().repo["protocol"]
        with pytest.raises(ValueError, match="registered twice"):
            type("Again", (Protocol,), {"name": "probe_registration"})
        type("Unnamed", (KernelApprox,), {})
        assert len(PROTOCOLS) == n + 1
    finally:
        PROTOCOLS._items.pop("probe_registration", None)
