"""The ``kernelbench`` command line: one row of :data:`COMMANDS` per subcommand, whose
module is imported only when it runs or shows its help (docs/performance.md, "Start-up").
"""

from __future__ import annotations

import importlib
import sys
from itertools import dropwhile, takewhile
from typing import Any

import click

from kernelbench import __version__

#: name -> (module, attribute of its click command, one-line help shown by ``--help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": (
        "kernelbench.launch",
        "run",
        "Run a grid of cells (Hydra overrides, sweeps and launchers).",
    ),
    "estimate": (
        "kernelbench.launch",
        "estimate",
        "Price a run (cells, runs, time, peak memory); run nothing.",
    ),
    "plot": (
        "kernelbench.outputs.plot",
        "plot",
        "Draw the papers' figures and tables from results.",
    ),
    "verify": (
        "kernelbench.verify.command",
        "verify",
        "Check a paper's grid cell by cell against its numbers.",
    ),
    "report": (
        "kernelbench.outputs.report",
        "report",
        "Write REPRODUCTION.md from the committed results.",
    ),
    "baseline": (
        "kernelbench.outputs.baseline",
        "baseline",
        "Write an experiment's baseline table and figures (beside its results).",
    ),
    "leaderboard": (
        "kernelbench.outputs.leaderboard",
        "leaderboard",
        "Rank a method against the published ones on the leaderboard's grids.",
    ),
    "datasets": (
        "kernelbench.datasets.cli",
        "datasets",
        "List, fetch and describe the benchmark datasets.",
    ),
    "check": (
        "kernelbench.testing",
        "check",
        "Test the properties a feature map claims (unbiased, D, seeds, dtypes, ...).",
    ),
    "list": (
        "kernelbench.cli",
        "list_cmd",
        "List the registered methods, kernels, datasets and more.",
    ),
}


def catalogue() -> str:
    """The registered names of every plug-in kind (imports the plug-in modules), then
    the broken plug-ins, one line each (:func:`problems`)."""
    from kernelbench.plugins import tolerant

    with tolerant():
        from kernelbench.datasets import DATASETS
        from kernelbench.features import FEATURE_MAPS
        from kernelbench.kernels import KERNELS
        from kernelbench.learners import LEARNERS
        from kernelbench.protocols import PROTOCOLS
        from kernelbench.verify.config import declared

        own = {name: cfg.about for name, cfg in declared().items()}
        text = (
            f"{method_catalogue(FEATURE_MAPS)}\n\n"
            f"Kernels:   {', '.join(KERNELS.names())}\n\n"
            f"Datasets:  {', '.join(DATASETS.names())}\n\n"
            f"Protocols: {', '.join(sorted(PROTOCOLS.names()))}\n\n"
            f"Learners:  {', '.join(sorted(LEARNERS.names()))}\n\n"
            f"{config_catalogue('experiment', 'Experiments', 'kernelbench run experiment=')}\n\n"
            f"{config_catalogue('verify', 'Verify configs', 'kernelbench verify --config ', own)}"
        )
        broken = problems()
    if broken:
        text += "\n\nBroken plug-ins:\n" + "\n".join(f"  {line}" for line in broken)
    return text


def problems() -> list[str]:
    """What makes an installed plug-in unusable, one line each: an entry point that fails
    to import, a CONFIG_DIR that is no directory, a registered method, kernel, dataset or
    protocol without its YAML file, and an experiment or verify config of a plug-in that
    ``run`` or ``verify`` would refuse (e.g. naming an unknown protocol), with their
    message."""
    import tempfile

    from kernelbench.config import config_dirs, group_files, is_builtin
    from kernelbench.errors import KernelbenchError
    from kernelbench.launch import GROUP_REGISTRIES, plan, unconfigured
    from kernelbench.plugins import tolerant
    from kernelbench.verify.config import load_config

    with tolerant() as broken:
        config_dirs()  # records a CONFIG_DIR that is no directory
        lines = [f"{name}: {message}" for name, message in broken.items()]
        for group in GROUP_REGISTRIES:
            for name, where in unconfigured(group).items():
                if not where.startswith("kernelbench."):
                    lines.append(
                        f"{where}: {group} {name!r} is registered but has no config file "
                        f"{group}/{name}.yaml in its CONFIG_DIR"
                    )
        out = f"output_dir={tempfile.gettempdir()}"
        checks = {
            # an experiment as `run` checks it (output_dir: somewhere writable, not here)
            "experiment": lambda p: plan([f"experiment={p.stem}", out], False),
            "verify": load_config,
        }
        for group, check in checks.items():
            for path in (p for p in group_files(group) if not is_builtin(p)):
                try:
                    check(path)
                except KernelbenchError as err:
                    lines.append(str(err))
    return lines


#: The end of a sentence: a period before a capital, not after an abbreviation.
_SENTENCE_END = r"(?<!\bal)(?<!\bSec)(?<!\bEq)(?<!\bProp)(?<!\bFig)(?<!i\.i\.d)\.\s+(?=[A-Z])"


def _first_sentence(text: str, width: int = 80) -> str:
    """The first sentence of ``text`` on one line, at most ``width`` characters."""
    import re

    line = re.split(_SENTENCE_END, " ".join(text.split()), maxsplit=1)[0].rstrip(".")
    line = line or "(no description)"
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def _config_note(path: Any, cfg: dict[str, Any]) -> str:
    """One line on a method config: its leading comment, else its paper label and params."""
    text = [raw for raw in path.read_text().splitlines() if not raw.startswith("# @package")]
    lines = dropwhile(lambda raw: not raw.startswith("#"), text)  # Hydra's directive left out
    comment = [raw.lstrip("# ") for raw in takewhile(lambda raw: raw.startswith("#"), lines)]
    if comment:
        return _first_sentence(" ".join(comment))
    params = ", ".join(f"{k}={v}" for k, v in (cfg.get("params") or {}).items())
    label = cfg.get("paper_label") or ""
    return "; ".join(p for p in (f"the papers' {label}" if label else "", params) if p)


def config_catalogue(
    group: str, title: str, use: str, declared: dict[str, str] | None = None
) -> str:
    """Every option of a config group (``experiment``, ``verify``), kernelbench's and the
    plug-ins', one line each: its name, whose it is when a plug-in's, and its leading
    comment's first sentence (``declared``: options defined in code -> their line)."""
    from kernelbench.config import config_file, config_origin, group_options

    declared = declared or {}
    names = sorted({*group_options(group), *declared})
    lines = [f"{title}: {len(names)} (run one: {use}<name>)"]
    for name in names:
        if name in declared:
            lines.append(f"  {name:<29}{declared[name]}")
            continue
        path = config_file(group, name)
        origin = config_origin(path)
        note = _config_note(path, {}) or "(no description)"
        tag = "" if origin == "kernelbench" else f"[{origin}] "
        lines.append(f"  {name:<29}{tag}{note}")
    return "\n".join(lines)


def method_catalogue(maps: Any) -> str:
    """Every runnable method config (``method=<config>``), grouped under the registered
    method it configures, each with one line; the methods with their docstring's first
    line."""
    from kernelbench.config import config_file, group_options, load_group

    groups: dict[str, list[tuple[str, str]]] = {name: [] for name in maps.names()}
    for option in group_options("method"):
        cfg = load_group("method", option)
        note = _config_note(config_file("method", option), cfg)
        groups.setdefault(str(cfg.get("name")), []).append((option, note))
    count = sum(len(v) for v in groups.values())
    lines = [f"Methods: {len(groups)} methods, {count} configs (run one: method=<config>)"]
    for name, configs in groups.items():
        doc = (maps.get(name).__doc__ or "").strip() if name in maps else ""
        lines.append(f"  {name:<9} {_first_sentence(doc.splitlines()[0] if doc else '')}")
        for option, note in configs:
            lines.append(f"    {option:<23} {note}")
        if not configs:
            lines.append("    (no config: a plug-in's method without a file in configs/method)")
    return "\n".join(lines)


class OneLineError(click.ClickException):
    """A :class:`~kernelbench.errors.KernelbenchError` on its way out of click: shown as
    ``Error: <message>`` on one line, exit code 2 (also under click's ``CliRunner``)."""

    exit_code = 2


class InterruptedExit(click.ClickException):
    """An interrupt (Ctrl-C, SIGTERM): one line saying what was kept, exit 128 + the
    signal (130 for Ctrl-C)."""

    def __init__(self, message: str, signum: int | None = None) -> None:
        super().__init__(message)
        self.exit_code = 128 + (signum or 2)

    def show(self, file: Any = None) -> None:
        click.echo(f"Interrupted: {self.format_message()}", err=True)


class _Group(click.Group):
    """The commands of :data:`COMMANDS`, each imported when it is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands with their one-line help from :data:`COMMANDS` (none imported)."""
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        from kernelbench.errors import KernelbenchError

        try:
            return super().invoke(ctx)
        except KernelbenchError as err:
            raise OneLineError(str(err)) from None
        except KeyboardInterrupt as err:  # before click's "Aborted!" (exit 1)
            text = str(err) or "nothing was running"
            raise InterruptedExit(text, getattr(err, "signum", None)) from None
        except click.UsageError as err:  # click's own: one line too, with where to look
            where = err.ctx.command_path if err.ctx is not None else ctx.command_path
            raise OneLineError(
                f"{err.format_message().rstrip('.')} (see '{where} --help')"
            ) from None

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_paragraph()
        formatter.write_text(
            "The registered methods, kernels, datasets, protocols and learners (with "
            "other packages' plug-ins): kernelbench list."
        )


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kernelbench")
def cli() -> None:
    """Benchmark and experiment runner for random-feature kernel approximation."""


@click.command("list")
def list_cmd() -> None:
    """List the registered methods, kernels, datasets, protocols and learners, and the
    experiments and verify configs: kernelbench's own and those of installed plug-in
    packages (entry points ``kernelbench.plugins``)."""
    for block in catalogue().split("\n\n"):
        click.echo(block)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2."""
    from kernelbench.errors import KernelbenchError

    try:
        # standalone_mode=False returns the exit code of ctx.exit(n) instead of exiting
        rv = cli.main(args=argv, prog_name="kernelbench", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except KernelbenchError as err:
        click.echo(f"Error: {err}", err=True)
        sys.exit(2)
    if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
        sys.exit(rv)


if __name__ == "__main__":  # pragma: no cover
    main()
