"""The ``kernelbench`` command line: run, plot, verify, report, baseline, datasets and list.

Every subcommand is registered the same way: one row of :data:`COMMANDS` (its name,
the module and attribute of its click command, its one-line help). The group imports a
command's module only when that command is run or asked for its own help, so
``kernelbench --help`` and an unknown command or option answer without importing
Hydra, scikit-learn or the plug-ins (docs/performance.md, "Start-up").
"""

from __future__ import annotations

import importlib
import sys
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
    "plot": (
        "kernelbench.plot_command",
        "plot",
        "Draw the papers' figures and tables from results.",
    ),
    "verify": (
        "kernelbench.verify.command",
        "verify",
        "Check a paper's grid cell by cell against its numbers.",
    ),
    "report": (
        "kernelbench.report.command",
        "report",
        "Write REPRODUCTION.md from the committed results.",
    ),
    "baseline": (
        "kernelbench.baseline.command",
        "baseline",
        "Write an experiment's baseline into results/baseline/.",
    ),
    "datasets": (
        "kernelbench.datasets.cli",
        "datasets",
        "List, fetch and describe the benchmark datasets.",
    ),
    "migrate": (
        "kernelbench.migrate",
        "migrate",
        "Bring the shards of an earlier schema to the current one.",
    ),
    "list": (
        "kernelbench.cli",
        "list_cmd",
        "List the registered methods, kernels, datasets and more.",
    ),
}


def catalogue() -> str:
    """The registered names of every plug-in kind (imports the plug-in modules)."""
    from kernelbench.datasets import DATASETS
    from kernelbench.features import FEATURE_MAPS
    from kernelbench.kernels import KERNELS
    from kernelbench.learners import LEARNERS
    from kernelbench.protocols import PROTOCOLS

    return (
        f"Methods:   {', '.join(FEATURE_MAPS.names())}\n\n"
        f"Kernels:   {', '.join(KERNELS.names())}\n\n"
        f"Datasets:  {', '.join(DATASETS.names())}\n\n"
        f"Protocols: {', '.join(PROTOCOLS.names())}\n\n"
        f"Learners:  {', '.join(LEARNERS.names())}"
    )


class OneLineError(click.ClickException):
    """A :class:`~kernelbench.errors.KernelbenchError` on its way out of click: shown as
    ``Error: <message>`` on one line, exit code 2 (also under click's ``CliRunner``)."""

    exit_code = 2


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
    """List the registered methods, kernels, datasets, protocols and learners: kernelbench's
    own and those of installed plug-in packages (entry points ``kernelbench.plugins``)."""
    for line in catalogue().split("\n\n"):
        click.echo(line)


def app() -> click.Group:
    """The ``kernelbench`` group (e.g. for ``CliRunner``); its commands load on demand."""
    return cli


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
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
        sys.exit(rv)


if __name__ == "__main__":  # pragma: no cover
    main()
