"""Error types whose message is shown to the user as one clean line."""

from __future__ import annotations

from collections.abc import Iterable


class KernelbenchError(ValueError):
    """A user-facing error: the CLI prints ``str(err)`` on one line, with no traceback."""


class DataUnavailableError(KernelbenchError):
    """A dataset is neither in the mirror, nor in the cache, and cannot be downloaded."""


def choices_error(kind: str, value: object, valid: Iterable[str]) -> KernelbenchError:
    """Build the one-line error for an unknown ``kind`` naming the valid choices."""
    names = ", ".join(sorted(valid))
    return KernelbenchError(f"unknown {kind} {value!r}; valid choices: {names}")
