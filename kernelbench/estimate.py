"""The plan of a grid before compute: ``kernelbench estimate`` (the command is
:func:`kernelbench.launch.estimate`) and the line that ``kernelbench run`` and
``verify`` print before their first cell.

:func:`grid_points` expands ``kernelbench run``'s arguments as Hydra's basic sweeper
does and refuses, in one line, an empty sweep, a sweep without ``-m`` and non-finite
numbers; :func:`run_plan` also refuses what each job would refuse before loading its
data (:meth:`Protocol.skip`). The cells are priced (each by its protocol's ``price``
hook) and guarded by :mod:`kernelbench.cost`.

Composing every cell with Hydra costs 0.1-0.3 s each, so the cells are composed once
per distinct set of overrides other than ``method``, ``kernel``, ``n``, ``runs`` and
``seed``; those are set on the composed config (the method and kernel from their files).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import click

from kernelbench.cost import Plan, check_plan, limits, price
from kernelbench.errors import KernelbenchError

#: Overrides set on a composed config instead of composed (scalars and whole groups).
_SET_AFTER = ("n", "runs", "seed")
_GROUPS_AFTER = ("method", "kernel")
#: Hydra flags that show something instead of running (no plan; Hydra allows none
#: with --multirun).
SHOWS = ("--cfg", "-c", "--info", "-i", "--shell-completion", "-sc", "--hydra-help", "--help")


def parse_overrides(overrides: Sequence[str]) -> list[Any]:
    """Hydra's parse of ``overrides``; one line for one it cannot parse."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    try:
        return OverridesParser.create().parse_overrides(list(overrides))
    except OverrideParseException as err:
        first = str(err).strip().splitlines()[0]
        raise KernelbenchError(f"invalid override: {first}") from None


def _check_values(ov: Any, values: list[Any]) -> None:
    """Non-finite numbers and a launcher's ``n_jobs`` of 0, for any setting."""
    from kernelbench.validation import check_finite, check_n_jobs

    key = ov.key_or_group.lstrip("+~")
    for v in values:
        check_finite(key, v)
        if key == "hydra.launcher.n_jobs":
            check_n_jobs(key, v)


def grid_points(hydra_args: Sequence[str]) -> list[list[str]]:
    """The override list of each job of ``kernelbench run`` (``hydra_args`` as
    :func:`kernelbench.launch.plan` returns them), in Hydra's basic sweeper's order."""
    from kernelbench.config import experiment_sweep

    multirun = "--multirun" in hydra_args
    overrides = [a for a in hydra_args if not a.startswith("-")]
    parsed = parse_overrides(overrides)
    axes: dict[str, list[str]] = {}
    experiment = None
    for text, ov in zip(overrides, parsed, strict=True):
        key = ov.get_key_element()
        if ov.is_sweep_override():
            if not ov.is_discrete_sweep():  # an interval: left to the sweeper
                continue
            values = list(ov.sweep_string_iterator())
            _check_values(ov, list(ov.sweep_iterator()))
            if not values:
                raise KernelbenchError(
                    f"empty sweep: {text!r} has no values; give at least one "
                    "(e.g. n='range(1,4)' is 1, 2, 3)"
                )
            if not multirun:
                shown = ",".join(values)
                raise KernelbenchError(
                    f"{text!r} is a sweep: use -m to sweep (kernelbench run -m "
                    f"{ov.get_key_element()}={shown}), or give one value"
                )
            axes[key] = [f"{key}={v}" for v in values]
        else:
            if not ov.is_delete():
                _check_values(ov, [ov.value()])
            axes[key] = [text]
            if ov.key_or_group == "experiment":
                experiment = str(ov.value())
    if experiment is not None and multirun:
        grid = {k: [f"{k}={v}" for v in vs] for k, vs in experiment_sweep(experiment)[1].items()}
        axes = {**{k: v for k, v in grid.items() if k not in axes}, **axes}
        axes = {"experiment": axes.pop("experiment"), **axes}
    return [list(p) for p in itertools.product(*axes.values())]


def grid_cells(points: Sequence[Sequence[str]]) -> list[Any]:
    """The :class:`~kernelbench.cell.Cell` of each job (see the module docstring)."""
    from kernelbench.cell import build_cell
    from kernelbench.config import compose, load_group
    from kernelbench.validation import check_n

    built: dict[tuple, Any] = {}
    cells = []
    for point in points:
        parsed = parse_overrides(point)
        dotted = {ov.key_or_group.split(".")[0] for ov in parsed if "." in ov.key_or_group}
        rest, later, groups = [], {}, {}
        for text, ov in zip(point, parsed, strict=True):
            key = ov.key_or_group
            plain = not (ov.is_delete() or ov.is_add() or ov.is_force_add())
            if plain and key in _SET_AFTER:
                later[key] = ov.value()
            elif plain and key in _GROUPS_AFTER and key not in dotted:
                groups[key] = str(ov.value())
            else:
                rest.append(text)
        key = (tuple(rest), tuple(sorted(groups.items())), later.get("runs"), later.get("seed"))
        if key not in built:
            cfg = compose(rest)
            for group, name in groups.items():
                if (cfg[group].get("label") or cfg[group].get("name")) != name:
                    cfg[group] = load_group(group, name)
            cfg.update({k: v for k, v in later.items() if k != "n"})
            built[key] = build_cell(cfg)
        cell = built[key]
        if "n" in later and later["n"] != cell.n:
            cell = dataclasses.replace(cell, n=check_n(later["n"]))
        cells.append(cell)
    return cells


def run_plan(hydra_args: Sequence[str]) -> Plan | None:
    """The plan of ``kernelbench run`` (None when Hydra only shows something)."""
    if any(a.split("=", 1)[0] in SHOWS for a in hydra_args):
        return None
    cells = grid_cells(grid_points(hydra_args))
    for cell in cells:  # what a job checks before loading data: before the plan line
        try:
            reason = cell.protocol.skip(cell)
        except KernelbenchError as err:
            reason = str(err)
        if reason is not None:
            raise KernelbenchError(f"{cell.name}: {reason}")
    return Plan(price(cells))


def parts_plan(parts: Sequence[Sequence[str]]) -> Plan:
    """One plan over several grids' Hydra arguments (a leaderboard's grids, each as
    :func:`kernelbench.launch.plan` validated it)."""
    return Plan([c for part in parts for c in getattr(run_plan(part), "costs", ())])


def announce(plan: Plan | None) -> None:
    """What ``kernelbench run`` does before Hydra starts: the plan line (on stderr, with
    the progress: stdout holds the cells' results) and its guards; None: nothing runs."""
    if plan is not None:
        click.echo(plan.line(), err=True)
        check_plan(plan, **limits(plan))
