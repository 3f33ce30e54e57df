"""Deterministic random streams derived from the config seed and names: every draw
comes from a Generator built here, so results do not depend on execution order."""

from __future__ import annotations

import hashlib

import numpy as np


def _key(part: object) -> int:
    if isinstance(part, bool | np.bool_):
        return int(part)
    if isinstance(part, int | np.integer) and part >= 0:
        return int(part)
    digest = hashlib.sha256(repr(part).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def seed_sequence(seed: int, *keys: object) -> np.random.SeedSequence:
    """A SeedSequence that depends only on ``seed`` and the ``keys`` (strings, ints)."""
    return np.random.SeedSequence([_key(seed), *(_key(k) for k in keys)])


def derive_rng(seed: int, *keys: object) -> np.random.Generator:
    """A fresh PCG64 generator for the stream named by ``(seed, *keys)``."""
    return np.random.default_rng(seed_sequence(seed, *keys))
