"""Validators shared by every layer: one-line :class:`KernelbenchError` messages."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from kernelbench.errors import KernelbenchError


def check_n(n: Any) -> int | float:
    """A positive feature budget n; integral values become ints (they name seeds and files)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real) or not np.isfinite(n) or n <= 0:
        raise KernelbenchError(f"n must be a positive number, got {n!r}")
    return int(n) if float(n).is_integer() else float(n)


def check_runs(runs: Any) -> int:
    """A positive integer number of runs."""
    if isinstance(runs, bool) or not isinstance(runs, numbers.Integral) or runs <= 0:
        raise KernelbenchError(f"runs must be a positive integer, got {runs!r}")
    return int(runs)


def check_random_state(random_state: Any) -> np.random.Generator:
    """A numpy Generator from None, an int, a SeedSequence or a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(
        random_state, numbers.Integral | np.random.SeedSequence | np.random.BitGenerator
    ):
        return np.random.default_rng(random_state)
    raise KernelbenchError(
        f"random_state must be None, an int, a SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Validate an integer parameter in [low, high] (bools are not integers here)."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok or value < low or (high is not None and value > high):
        span = f"in {low}..{high}" if high is not None else f">= {low}"
        raise KernelbenchError(f"{name} must be an integer {span}, got {value!r}")
    return int(value)


def check_real(name: str, value: Any, low: float, *, strict: bool, hint: str = "") -> float:
    """Validate a finite real parameter >= low (> low if ``strict``; bools are not numbers)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < low or (strict and value == low):
        bound = f"{'>' if strict else '>='} {low:g}{hint}"
        raise KernelbenchError(f"{name} must be a number {bound}, got {value!r}")
    return float(value)


def check_finite(name: str, value: Any) -> None:
    """Any numeric setting: a finite number (``inf`` and ``nan`` are typos of a size)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isfinite(value):
        raise KernelbenchError(f"{name} must be a finite number, got {value!r}")


def check_n_jobs(name: str, value: Any) -> int:
    """A joblib worker count: an integer >= 1, or negative (-1: every core; not 0)."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value != 0
    if not ok:
        raise KernelbenchError(f"{name} must be an integer >= 1 (or -1: every core), got {value!r}")
    return int(value)


def check_choice(name: str, value: Any, valid: tuple[str, ...]) -> str:
    """Validate a string parameter against its valid values."""
    if value not in valid:
        raise KernelbenchError(f"invalid {name} {value!r}; valid choices: {', '.join(valid)}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """A true/false setting (``overwrite=maybe`` is an error, not true)."""
    if not isinstance(value, bool):
        raise KernelbenchError(f"{name} must be true or false, got {value!r}")
    return value


#: A parameter constraint: ``check(name, value)`` raises one line naming the valid values.
Constraint = Callable[[str, Any], Any]


def Interval(
    type: type, left: float, right: int | None = None, *, strict: bool = False, hint: str = ""
) -> Constraint:
    """scikit-learn's ``Interval`` as a :data:`Constraint`: :func:`check_int` (``int``) in
    ``left..right``, else :func:`check_real`: >= ``left`` (> if ``strict``), no right bound."""
    if type is int:
        return partial(check_int, low=int(left), high=right)
    if right is not None:
        raise TypeError("an Interval of reals has no right bound (check_real)")
    return partial(check_real, low=left, strict=strict, hint=hint)


def StrOptions(options: tuple[str, ...]) -> Constraint:
    """scikit-learn's ``StrOptions`` as a :data:`Constraint` (:func:`check_choice`)."""
    return partial(check_choice, valid=options)


def check_constraints(constraints: Mapping[str, list], params: Mapping[str, Any]) -> None:
    """Each parameter against its constraints (scikit-learn's ``_parameter_constraints``):
    None in its list admits None; otherwise the value must pass each :data:`Constraint`
    (an empty list: a rule between parameters checks it)."""
    for name, value in params.items():
        allowed = constraints.get(name, [])
        if value is not None or None not in allowed:
            for check in filter(None, allowed):
                check(name, value)


def check_output_dir(value: Any, name: str = "output_dir") -> Path:
    """A directory that exists and is writable, or can be created: checked before any
    compute (the nearest existing ancestor must be a writable directory)."""
    if not isinstance(value, str | os.PathLike) or not str(value):
        raise KernelbenchError(f"{name} must be a directory path, got {value!r}")
    path = Path(value).expanduser()
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    shown = f"{name} {str(value)!r}"
    if not probe.is_dir():
        if probe == path.absolute():
            raise KernelbenchError(f"{shown} is a file, not a directory")
        raise KernelbenchError(f"{shown} cannot be created: {str(probe)!r} is a file")
    if not os.access(probe, os.W_OK | os.X_OK) or not _can_create_in(probe):
        if probe == path.absolute():
            raise KernelbenchError(f"{shown} is not writable")
        raise KernelbenchError(f"{shown} cannot be created: {str(probe)!r} is not writable")
    return path


def check_output_file(value: Any, name: str = "--out") -> Path:
    """A file that can be written: not a directory, in a directory :func:`check_output_dir`
    accepts; checked before any work, so that nothing is computed or written first."""
    if not isinstance(value, str | os.PathLike) or not str(value):
        raise KernelbenchError(f"{name} must be a file path, got {value!r}")
    path = Path(value).expanduser()
    if path.is_dir():
        raise KernelbenchError(f"{name} {str(value)!r} is a directory, not a file")
    check_output_dir(path.parent, f"{name} {str(value)!r}: its directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise KernelbenchError(f"{name} {str(value)!r} is not writable")
    return path


def _can_create_in(directory: Path) -> bool:
    """Whether a directory can be made in ``directory`` (tried and removed at once):
    permission bits do not bind root, and /proc, /sys or a read-only mount refuse anyway."""
    import tempfile

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".kernelbench-probe-", dir=directory))
    except OSError:
        return False
    return True


def check_params(
    what: str, params: Iterable[str], valid: Iterable[str], noun: str = "parameter"
) -> None:
    """One line naming the valid parameters (``noun``) of ``what`` if ``params`` has others."""
    bad = sorted(set(params) - set(valid))
    if bad:
        raise KernelbenchError(
            f"unknown {noun}(s) {', '.join(bad)} for {what}; "
            f"valid: {', '.join(sorted(valid)) or 'none'}"
        )
