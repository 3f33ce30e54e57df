"""Where data comes from: the mirror (``KERNELBENCH_DATA`` or ``data.mirror``: read-only
``<name>.npz`` and ``MANIFEST.json``), then the cache (``KERNELBENCH_CACHE`` or
``~/.cache/kernelbench``: ``<name>.npz`` and its ``<name>.sha256``, written atomically),
then the dataset's downloader. A file failing its checksum is never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from kernelbench.datasets.spec import DATASETS, Arrays, Dataset, DatasetSpec
from kernelbench.errors import DataUnavailableError, KernelbenchError
from kernelbench.results import atomic_write

ENV_MIRROR = "KERNELBENCH_DATA"
ENV_CACHE = "KERNELBENCH_CACHE"
DEFAULT_CACHE = "~/.cache/kernelbench"
ARRAY_KEYS = ("X", "y", "X_test", "y_test")


@dataclass(frozen=True)
class Locations:
    """The resolved mirror directory (or None) and cache directory."""

    mirror: Path | None
    cache: Path

    @classmethod
    def resolve(
        cls, mirror: str | os.PathLike[str] | None = None, cache: str | None = None
    ) -> Locations:
        """Explicit values first, then ``KERNELBENCH_DATA`` / ``KERNELBENCH_CACHE``, then defaults.

        Relative paths are taken relative to the current directory, at call time.
        """
        mirror = mirror or os.environ.get(ENV_MIRROR) or None
        cache = cache or os.environ.get(ENV_CACHE) or DEFAULT_CACHE
        return cls(
            mirror=Path(mirror).expanduser().resolve() if mirror else None,
            cache=Path(cache).expanduser().resolve(),
        )


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@cache
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(Path(path))


def sha256_of(path: Path) -> str:
    """SHA-256 of ``path``, computed once per process per (path, size, mtime)."""
    st = path.stat()
    return _sha256_cached(str(path), st.st_size, st.st_mtime_ns)


def sidecar(path: Path) -> Path:
    """The checksum file of a cached ``<name>.npz``: ``<name>.sha256``."""
    return path.with_suffix(".sha256")


def write_cache(path: Path, arrays: Arrays) -> str:
    """Write ``arrays`` to ``path`` (npz), then its checksum sidecar, both atomically: an
    interrupted write leaves the old pair or a mismatch, never a file that passes."""
    unknown = set(arrays) - set(ARRAY_KEYS)
    if unknown or "X" not in arrays or "y" not in arrays:
        raise KernelbenchError(f"cache arrays must be X, y[, X_test, y_test]; got {sorted(arrays)}")
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))
    digest = sha256_file(path)
    line = f"{digest}  {path.name}\n".encode()
    atomic_write(sidecar(path), lambda f: f.write(line))
    return digest


def cache_state(path: Path) -> str:
    """``"ok"``, ``"missing"`` or ``"corrupt"`` (no sidecar, or a checksum mismatch)."""
    if not path.is_file():
        return "missing"
    side = sidecar(path)
    if not side.is_file():
        return "corrupt"
    expected = side.read_text().split()[:1]
    return "ok" if expected and expected[0] == sha256_of(path) else "corrupt"


def read_npz(path: Path) -> Arrays:
    """Read every array of an npz file into memory (no pickles)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files if k in ARRAY_KEYS}
    except (OSError, ValueError) as err:
        raise DataUnavailableError(f"cannot read {path}: {err}") from None


@cache
def read_manifest(mirror: Path) -> dict[str, dict[str, Any]]:
    """The mirror's ``MANIFEST.json`` entries by name ({} when there is none)."""
    path = mirror / "MANIFEST.json"
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text())
    return {e["name"]: e for e in entries}


def _check_arrays(spec: DatasetSpec, arrays: Arrays, path: Path) -> None:
    for key in ("X", "y"):
        if key not in arrays:
            raise DataUnavailableError(f"{path} has no array {key!r}")
    X = arrays["X"]
    if X.ndim != 2 or X.shape[1] != spec.d or len(arrays["y"]) != len(X):
        raise DataUnavailableError(
            f"{path} holds X {X.shape}, y {arrays['y'].shape}; expected d={spec.d} for {spec.name}"
        )
    for key in ("X", "X_test"):
        A = arrays.get(key)
        if A is not None and A.dtype.kind in "fc" and not np.isfinite(A).all():
            bad = int(A.size - np.isfinite(A).sum())
            raise DataUnavailableError(
                f"{path} holds {bad} non-finite values (NaN or inf) in {key}; dataset "
                f"{spec.name!r} must be finite: fetch it again with `{fetch_command(spec.name)}`"
            )


def _make(
    spec: DatasetSpec, arrays: Arrays, source: str, path: Path | None, digest: str | None
) -> Dataset:
    return Dataset(
        name=spec.name,
        X=arrays["X"],
        y=arrays["y"],
        X_test=arrays.get("X_test"),
        y_test=arrays.get("y_test"),
        source=source,  # type: ignore[arg-type]
        path=str(path) if path is not None else None,
        spec=spec,
        sha256=digest,
    )


def _locate(name: str, locs: Locations) -> tuple[str, Path]:
    """(mirror|cache|corrupt|missing, the file) of a downloadable dataset."""
    if locs.mirror is not None and (locs.mirror / f"{name}.npz").is_file():
        return "mirror", locs.mirror / f"{name}.npz"
    path = locs.cache / f"{name}.npz"
    state = cache_state(path)
    return "cache" if state == "ok" else state, path


def mirror_checksum(spec: DatasetSpec, path: Path) -> tuple[str, str | None]:
    """(sha256 of the mirror file ``path``, the one its MANIFEST.json or spec expects, or
    None when neither names one)."""
    expected = read_manifest(path.parent).get(spec.name, {}).get("npz_sha256") or spec.sha256
    return sha256_of(path), expected or None


def _read(spec: DatasetSpec, path: Path, source: str, digest: str) -> Dataset:
    arrays = read_npz(path)
    _check_arrays(spec, arrays, path)
    return _make(spec, arrays, source, path, digest)


def fetch_command(name: str) -> str:
    """The command that downloads ``name`` into the cache."""
    return f"kernelbench datasets fetch {name}"


def _searched(spec: DatasetSpec, locs: Locations) -> str:
    if locs.mirror is None:
        mirror = f"mirror (none: set {ENV_MIRROR} or data.mirror)"
    else:
        mirror = f"mirror {locs.mirror / (spec.name + '.npz')}"
    return f"{mirror}, cache {locs.cache / (spec.name + '.npz')}"


def where(name: str, mirror: str | None = None, cache: str | None = None) -> tuple[str, str | None]:
    """Where ``name`` loads from: (mirror|cache|corrupt|missing|bundled, path or None)."""
    if DATASETS.get(name).bundled is not None:
        return "bundled", None
    state, path = _locate(name, Locations.resolve(mirror, cache))
    return state, None if state == "missing" else str(path)


def fetch_dataset(
    name: str, cache: str | None = None, progress: bool = True, force: bool = False
) -> Path:
    """Download ``name`` into the cache (unless a valid copy is there) and return its path."""
    spec = DATASETS.get(name)
    locs = Locations.resolve(None, cache)
    path = locs.cache / f"{name}.npz"
    if spec.bundled is not None:
        raise KernelbenchError(f"dataset {name!r} is bundled with scikit-learn; nothing to fetch")
    if not force and cache_state(path) == "ok":
        return path
    if spec.downloader is None:  # pragma: no cover - every non-bundled spec has one
        raise DataUnavailableError(f"dataset {name!r} has no download source")
    locs.cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}.", dir=locs.cache) as workdir:
        try:
            arrays = spec.downloader(Path(workdir), progress)
        except KernelbenchError:
            raise
        except Exception as err:  # the network boundary: any failure becomes one line
            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            reason = reason if len(reason) <= 160 else reason[:157] + "..."
            raise DataUnavailableError(
                f"could not download dataset {name!r} from {spec.source}: {reason}; "
                f"searched {_searched(spec, locs)}"
            ) from None
    _check_arrays(spec, arrays, path)
    write_cache(path, arrays)
    return path


def load_dataset(
    name: str, mirror: str | None = None, cache: str | None = None, download: bool = False
) -> Dataset:
    """Load ``name`` from the mirror, else the cache, else (if ``download``) the network;
    otherwise one :class:`DataUnavailableError` line naming the places and the fetch
    command (a cached file failing its checksum is fetched again, or reported)."""
    spec = DATASETS.get(name)
    if spec.bundled is not None:
        return _make(spec, spec.bundled(), "bundled", None, None)
    locs = Locations.resolve(mirror, cache)
    state, path = _locate(name, locs)
    if state == "mirror":
        digest, expected = mirror_checksum(spec, path)
        if expected and digest != expected:
            raise DataUnavailableError(
                f"mirror file {path} fails its checksum (sha256 {digest[:12]}..., "
                f"expected {expected[:12]}...); the mirror is corrupt or out of date"
            )
        return _read(spec, path, "mirror", digest)
    if state == "cache":
        return _read(spec, path, "cache", sha256_of(path))
    if not download:
        if state == "corrupt":
            raise DataUnavailableError(
                f"cached file {path} for dataset {name!r} fails its checksum (corrupt or "
                f"incomplete); fetch it again with `{fetch_command(name)}`"
            )
        raise DataUnavailableError(
            f"dataset {name!r} is not available offline; searched {_searched(spec, locs)}; "
            f"download it with `{fetch_command(name)}`"
        )
    path = fetch_dataset(name, cache=str(locs.cache), progress=False, force=True)
    return _read(spec, path, "download", sha256_of(path))
