"""Error types whose message is shown to the user as one clean line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class KernelbenchError(ValueError):
    """A user-facing error: the CLI prints ``str(err)`` on one line, with no traceback."""


class Interrupted(KeyboardInterrupt):
    """An interrupt (Ctrl-C, SIGTERM) on its way out: ``str(err)`` says what was kept;
    ``signum`` is the signal (None: SIGINT), so the exit code is 128 + signum."""

    def __init__(self, message: str = "", signum: int | None = None) -> None:
        super().__init__(message)
        self.signum = signum


class DataUnavailableError(KernelbenchError):
    """A dataset is neither in the mirror, nor in the cache, and cannot be downloaded."""


def choices_error(kind: str, value: object, valid: Iterable[str]) -> KernelbenchError:
    """Build the one-line error for an unknown ``kind`` naming the valid choices."""
    names = ", ".join(sorted(valid))
    return KernelbenchError(f"unknown {kind} {value!r}; valid choices: {names}")


def unknown_setting_error(key: str, valid: Iterable[str], where: str = "") -> KernelbenchError:
    """The one-line error for an unknown setting: the closest valid one (difflib), else
    the valid ones; ``where`` says whose settings they are (e.g. " for kernel 'arccos0'")."""
    names = sorted(set(valid))
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if close:
        return KernelbenchError(f"unknown setting {key!r}{where}; did you mean {close[0]!r}?")
    listed = ", ".join(names) if names else "none"
    return KernelbenchError(f"unknown setting {key!r}{where}; valid settings: {listed}")
