"""The ``kernelbench`` command line: run, plot, verify, report, baseline and datasets."""

from __future__ import annotations

import sys
from typing import Any

import click

from kernelbench import __version__


def _catalogue() -> str:
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
        with formatter.section("Registered"):
            for line in _catalogue().split("\n\n"):
                formatter.write_text(line)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kernelbench")
def cli() -> None:
    """Benchmark and experiment runner for random-feature kernel approximation."""


def app() -> click.Group:
    """The ``kernelbench`` group with every command registered (e.g. for ``CliRunner``)."""
    if not cli.commands:
        _register()
    return cli


def _register() -> None:
    from kernelbench.baseline.command import baseline
    from kernelbench.datasets.cli import datasets
    from kernelbench.launch import run
    from kernelbench.plot import plot
    from kernelbench.report.command import report

    commands = [run, plot, datasets, report, baseline]
    try:
        from kernelbench.verify import verify
    except ModuleNotFoundError as err:
        if err.name != "kernelbench.verify":
            raise
    else:
        commands.append(verify)
    for cmd in commands:
        cli.add_command(cmd)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit code 2."""
    from kernelbench.errors import KernelbenchError

    app()
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
