"""One cell of a grid, resolved once: the typed, frozen :class:`Cell`.

A cell is one point of an experiment's grid: what a protocol measures and one shard
stores. :func:`build_cell` builds it once, in one place, from the composed config (the
Hydra job's config, :func:`kernelbench.grid.expand`'s cells, ``make_cell``'s dict)::

    {"experiment": ..., "protocol": {"name": "kernel_approx", "data": ...},
     "n": 1, "runs": None, "seed": 0,
     "method": {"name", "label", "paper_label", "params"},
     "kernel": {"name", "params"}, "dataset": {"name", "splits", ...},
     "data": {"mirror", "cache", "download"}}

It validates the protocol's settings (:meth:`Protocol.check_settings`, over the
protocol's ``Settings`` dataclass: derived settings such as krr's reading are filled
here), resolves the data key and the dataset's data settings for the protocol, the
default runs and the experiment name. Everything that is a function of the cell alone
is a cached property: :attr:`Cell.config_hash`, :attr:`Cell.variant`
(:func:`shard_variant`), :attr:`Cell.name` (:func:`cell_name`), the cache keys of the
shared data (:attr:`Cell.pair_key`). A :class:`Cell` still reads as the resolved dict
(``cell["protocol"]["reading"]``, ``{**cell, "runs": 3}``), so protocol hooks written for
dicts keep working; its dicts are not to be mutated.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, ClassVar, Protocol

import pyarrow as pa

from kernelbench.errors import KernelbenchError
from kernelbench.registry import Registry
from kernelbench.results import SCHEMA_VERSION, dumps, shard_path
from kernelbench.settings import ProtocolSettings, defaults
from kernelbench.validation import check_n, check_runs


class Measurement(Protocol):
    """What a cell and the runner need of a protocol (:class:`kernelbench.protocols.Protocol`
    implements it): the cell layer knows protocols through this contract alone, so
    ``cell`` depends on nothing in ``protocols/`` and protocols may depend on it."""

    name: ClassVar[str]
    Settings: ClassVar[type[ProtocolSettings] | None]
    cell_settings: ClassVar[tuple[str, ...]]
    extendable: ClassVar[bool]

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]: ...
    def data_key(self, cell: Mapping[str, Any]) -> str: ...
    def data_settings(self, cell: Mapping[str, Any]) -> dict[str, Any]: ...
    def default_runs(self, cell: Mapping[str, Any]) -> int | None: ...
    def path_parts(self, cell: Cell) -> tuple[str, ...]: ...
    def check(self, cell: Cell) -> None: ...
    def prepare(self, cell: Cell) -> Any: ...
    def batch_size(self, cell: Cell) -> int: ...
    def measure(self, cell: Cell, ctx: Any, runs: Sequence[int]) -> list[dict]: ...
    def row_keys(self, cell: Cell) -> dict[str, Any]: ...
    def cell_columns(self, cell: Cell, ctx: Any) -> dict[str, Any]: ...
    def schema(self) -> pa.Schema: ...


#: Protocols by name; each plug-in module registers its own (:mod:`kernelbench.plugins`).
PROTOCOLS: Registry[Measurement] = Registry("protocol")


def get_protocol(cell_or_name: Mapping[str, Any] | str) -> Measurement:
    """The protocol of a cell (its ``protocol.name``, default ``kernel_approx``) or of a
    name."""
    return PROTOCOLS.get(protocol_name(cell_or_name))


def protocol_name(cell_or_name: Mapping[str, Any] | str) -> str:
    """A protocol's name, given as is or as a cell's ``protocol`` (its settings'
    ``name``, or a name; default ``kernel_approx``)."""
    if isinstance(cell_or_name, str):
        return cell_or_name
    proto = cell_or_name.get("protocol", "kernel_approx")
    return proto.get("name") if isinstance(proto, Mapping) else proto


#: Config keys that select a cell (the rest is where and how to run it).
CELL_KEYS = ("experiment", "protocol", "dataset", "kernel", "method", "n", "runs", "seed")
#: Default data sources of a cell built from a dict without ``data``.
_NO_SOURCES = {"mirror": None, "cache": None, "download": False}


@dataclass(frozen=True, eq=False)
class Cell(Mapping[str, Any]):
    """A resolved cell (see the module docstring); build it with :func:`build_cell`."""

    #: the results' experiment name (default: the protocol's name)
    experiment: str
    #: the protocol object (:data:`kernelbench.protocols.PROTOCOLS`)
    protocol: Measurement
    #: its validated, resolved settings as stored and hashed (``name`` first)
    settings: dict[str, Any]
    #: the dataset's config entry (name, data recipes under ``protocols``, ...)
    dataset: dict[str, Any]
    #: ``{"name", "params", ...}`` of the kernel config
    kernel: dict[str, Any]
    #: ``{"name", "label", "paper_label", "params", ...}`` of the method config
    method: dict[str, Any]
    n: int | float
    runs: int
    seed: int
    #: where the data comes from: ``{"mirror", "cache", "download"}``
    data: dict[str, Any]
    #: the entry of ``dataset.splits`` (data recipes) the protocol reads (``protocol.data``)
    data_key: str
    #: that entry: the dataset's data settings for the protocol
    data_settings: dict[str, Any]
    #: where a protocol may cache work shared by cells (not part of the config hash)
    output_dir: str | None = None
    #: the config's other top-level keys (overwrite, blas_threads, ...)
    extra: dict[str, Any] = field(default_factory=dict)

    # -- typed views ---------------------------------------------------------------
    @cached_property
    def options(self) -> ProtocolSettings | None:
        """The settings as the protocol's ``Settings`` dataclass (defaults filled), or
        None for a protocol without one."""
        cls = self.protocol.Settings
        if cls is None:
            return None
        return cls(**{**defaults(cls), **self.settings})

    @property
    def method_label(self) -> str:
        return str(self.method["label"])

    @cached_property
    def pair_key(self) -> tuple[str, int, str, str]:
        """The hashable key of the data a cell reads (dataset entry, seed, data
        sources, data key), computed once: the caches of the shared samples use it."""
        return (dumps(self.dataset), int(self.seed), dumps(self.data), self.data_key)

    # -- identity ------------------------------------------------------------------
    @cached_property
    def config_hash(self) -> str:
        """:func:`config_hash` of this cell."""
        return _hash_payload(self, protocol_dataset(self))

    @cached_property
    def variant(self) -> tuple[str, ...]:
        """:func:`shard_variant` of this cell."""
        return _shard_variant(self)

    @cached_property
    def name(self) -> str:
        """:func:`cell_name` of this cell."""
        parts = [str(self.dataset["name"]), str(self.kernel["name"]), self.method_label]
        parts += list(self.protocol.path_parts(self))
        parts += list(self.variant)
        return " ".join(parts) + f" n={self.n}"

    def with_runs(self, runs: int) -> Cell:
        """The same cell with ``runs`` runs (a shard stored with fewer runs)."""
        return dataclasses.replace(self, runs=check_runs(runs))

    def with_output_dir(self, output_dir: str | Path | None) -> Cell:
        return dataclasses.replace(self, output_dir=None if output_dir is None else str(output_dir))

    def __deepcopy__(self, memo: dict[int, Any]) -> Cell:
        """A copy with its own dicts and nothing cached (what is computed from the
        copy reflects its own values)."""
        values = {f.name: copy.deepcopy(getattr(self, f.name), memo) for f in _FIELDS}
        values["protocol"] = self.protocol
        return Cell(**values)

    # -- the resolved dict ---------------------------------------------------------
    @cached_property
    def _view(self) -> dict[str, Any]:
        return {
            **self.extra,
            "experiment": self.experiment,
            "protocol": self.settings,
            "dataset": self.dataset,
            "kernel": self.kernel,
            "method": self.method,
            "n": self.n,
            "runs": self.runs,
            "seed": self.seed,
            "data": self.data,
            "output_dir": self.output_dir,
        }

    def __getitem__(self, key: str) -> Any:
        return self._view[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def __repr__(self) -> str:
        return f"Cell({self.experiment}: {self.name}, runs={self.runs}, seed={self.seed})"


_FIELDS = dataclasses.fields(Cell)


def build_cell(config: Mapping[str, Any]) -> Cell:
    """The :class:`Cell` of a composed config (a :class:`Cell` is returned as is).

    Validates the protocol's settings and fills their defaults (the protocol's
    ``Settings`` dataclass; a name is read from ``configs/protocol/<name>.yaml``),
    ``runs`` from the dataset's data settings for the protocol, else the protocol's,
    ``n`` normalised, the experiment name; one line for what is wrong.
    """
    if isinstance(config, Cell):
        return config
    proto, settings = _resolve_protocol(config)
    method = dict(config["method"])
    method.setdefault("label", method["name"])
    method.setdefault("paper_label", "")
    method["params"] = dict(method.get("params") or {})
    kernel = dict(config["kernel"])
    kernel["params"] = dict(kernel.get("params") or {})
    view = {
        **config,
        "protocol": settings,
        "method": method,
        "kernel": kernel,
        "n": check_n(config["n"]),
        "seed": int(config.get("seed", 0)),
        "experiment": config.get("experiment") or proto.name,
        "data": config.get("data") or dict(_NO_SOURCES),
    }
    data_settings = proto.data_settings(view)  # one line if the dataset lacks the entry
    runs = config.get("runs")
    if runs is None:
        runs = proto.default_runs(view)
        if runs is None:
            raise KernelbenchError(
                f"runs is null and neither dataset {config['dataset'].get('name')!r} nor "
                f"protocol {proto.name!r} sets a default"
            )
    extra = {k: v for k, v in config.items() if k not in (*CELL_KEYS, "data", "output_dir")}
    output_dir = config.get("output_dir")
    return Cell(
        experiment=str(view["experiment"]),
        protocol=proto,
        settings=settings,
        dataset=dict(config["dataset"]),
        kernel=kernel,
        method=method,
        n=view["n"],
        runs=check_runs(runs),
        seed=view["seed"],
        data=dict(view["data"]),
        data_key=proto.data_key(view),
        data_settings=data_settings,
        output_dir=None if output_dir is None else str(output_dir),
        extra=extra,
    )


def _resolve_protocol(cell: Mapping[str, Any]) -> tuple[Measurement, dict[str, Any]]:
    """The cell's protocol and its validated settings (a name is read from
    ``configs/protocol/<name>.yaml``)."""
    from kernelbench.config import load_group

    settings = cell.get("protocol", "kernel_approx")
    if settings is None or isinstance(settings, str):
        name = settings or "kernel_approx"
        get_protocol(name)  # one line naming the protocols if unknown
        settings = load_group("protocol", name)
    if not isinstance(settings, Mapping) or "name" not in settings:
        raise KernelbenchError(
            f"protocol must be a name or a mapping with a name, got {settings!r}"
        )
    proto = get_protocol(str(settings["name"]))
    return proto, proto.check_settings(settings)


def protocol_dataset(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a cell's dataset entry that its protocol reads: every key but the
    data recipes (``splits``), and of these only the entry ``protocol.data`` (default the
    protocol's name), so editing another protocol's data settings leaves it alone."""
    cell = build_cell(cell)
    dataset = dict(cell.dataset)
    splits = dataset.get("splits")
    if isinstance(splits, Mapping):
        key = cell.data_key
        dataset["splits"] = {key: splits[key]} if key in splits else {}
    return dataset


def _hash_payload(cell: Cell, dataset: Any) -> str:
    payload = {k: cell[k] for k in CELL_KEYS}
    payload["dataset"] = dataset
    payload["schema_version"] = SCHEMA_VERSION
    return hashlib.sha256(dumps(payload).encode()).hexdigest()[:16]


def config_hash(cell: Mapping[str, Any]) -> str:
    """SHA-256 (16 hex digits) of everything that determines a cell's numbers.

    The experiment, the protocol's settings, the part of the dataset entry the protocol
    reads (:func:`protocol_dataset`), kernel, method, n, runs, seed and
    :data:`SCHEMA_VERSION`; not the output directory, overwrite, the launcher or BLAS
    threads. Computed once per :class:`Cell`.
    """
    return build_cell(cell).config_hash


# -- shard identity ------------------------------------------------------------------

#: Names of the path parts that are not kernel or method parameters.
_RESERVED_PARTS = frozenset({"protocol", "seed", "h", "n"})
_READABLE_STR = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{0,31}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
_MISSING = object()


def _readable(value: Any) -> str | None:
    """``value`` as an unambiguous path fragment, or None (then it goes to the hash).

    Numbers keep their type (``1`` vs ``1.0``); strings must start with a letter and
    not read as another type (``true``, ``null``, ``nan``, ...)."""
    if value is None or isinstance(value, bool):
        return dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str) and _READABLE_STR.fullmatch(value):
        if value.lower() not in {"true", "false", "null", "none", "nan", "inf", "infinity"}:
            return value
    return None


@lru_cache(maxsize=64)
def _experiment_fixed(experiment: str) -> dict[str, Any]:
    """Settings that every experiment file naming its results ``experiment`` fixes to
    one value (dotted key -> value, e.g. ``kernel.params.gamma: nn50``, ``protocol``):
    the defaults of that experiment's cells, so a paper grid's shards keep short paths."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    parser = OverridesParser.create()
    found: list[dict[str, Any]] = []
    for path in sorted((config_dir() / "experiment").glob("*.yaml")):
        raw = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        if not isinstance(raw, dict) or raw.get("experiment") != experiment:
            continue
        fixed: dict[str, Any] = {}
        for entry in raw.get("defaults") or []:
            if isinstance(entry, dict):
                for key, value in entry.items():
                    fixed[str(key).replace("override", "").strip().lstrip("/")] = value
        for key, value in raw.items():
            if key not in ("defaults", "hydra", "experiment") and not isinstance(value, dict):
                fixed[str(key)] = value
        params = ((raw.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
        for key, value in params.items():
            ov = parser.parse_override(f"{key}={value}")
            if not ov.is_sweep_override():
                fixed[str(key)] = ov.value()
        found.append(fixed)
    if not found:
        return {}
    return {k: v for k, v in found[0].items() if all(k in f and f[k] == v for f in found[1:])}


def _group_file(group: str, name: Any) -> dict[str, Any] | None:
    from kernelbench.config import config_dir, load_group

    if not isinstance(name, str) or not (config_dir() / group / f"{name}.yaml").is_file():
        return None
    return load_group(group, name)


def _set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    *head, last = key.split(".")
    for part in head:
        nxt = tree.get(part)
        if not isinstance(nxt, dict):
            nxt = tree[part] = {}
        tree = nxt
    tree[last] = value


def default_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """What a resolved cell's settings are when none is overridden: the config files of
    its kernel, method label, dataset and protocol (``configs/<group>/``) and
    ``seed`` of ``configs/config.yaml``, with the settings its experiment's files fix
    (:func:`_experiment_fixed`). A part missing a file is None."""
    fixed = _experiment_fixed(str(cell["experiment"]))
    proto_name = fixed.get("protocol")
    if not isinstance(proto_name, str):
        exp = str(cell["experiment"])
        proto_name = exp if exp in PROTOCOLS else _default_protocol()
    out: dict[str, Any] = {
        "seed": base_config()["seed"],
        "kernel": _group_file("kernel", cell["kernel"]["name"]),
        "method": _group_file("method", cell["method"]["label"]),
        "dataset": _group_file("dataset", cell["dataset"]["name"]),
        "protocol": _group_file("protocol", proto_name),
    }
    for key, value in fixed.items():
        top = key.split(".")[0]
        if "." in key and isinstance(out.get(top), dict):
            _set_dotted(out, key, value)
        elif key == "seed":
            out["seed"] = value
    for group in ("kernel", "method"):
        if isinstance(out[group], dict):
            out[group]["params"] = dict(out[group].get("params") or {})
    if isinstance(out["method"], dict):
        out["method"].setdefault("label", out["method"].get("name"))
        out["method"].setdefault("paper_label", "")
    if isinstance(out["protocol"], dict):
        try:
            out["protocol"] = get_protocol(proto_name).check_settings(out["protocol"])
        except KernelbenchError:
            out["protocol"] = None
    return out


@lru_cache(maxsize=1)
def _default_protocol() -> str:
    """The protocol of ``configs/config.yaml``'s defaults list."""
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    raw = OmegaConf.to_container(OmegaConf.load(config_dir() / "config.yaml"), resolve=False)
    for entry in raw.get("defaults") or []:  # type: ignore[union-attr]
        if isinstance(entry, dict) and "protocol" in entry:
            return str(entry["protocol"])
    return "kernel_approx"  # pragma: no cover


def shard_variant(cell: Mapping[str, Any]) -> tuple[str, ...]:
    """The parts of a cell's shard path beyond experiment, dataset, kernel,
    method label, the protocol's parts and n: what differs from :func:`default_cell`.

    In order: ``protocol=<name>`` (a protocol other than the experiment's),
    ``seed=<s>``, then ``<key>=<value>`` for each kernel parameter and each method
    parameter that differs, and ``h=<8 hex>`` (a hash of the whole identity) when
    anything else differs or a value has no readable form: a changed dataset or
    protocol setting, a removed parameter, a method parameter named like a kernel
    parameter. Parts decode uniquely, so two cells that differ in anything but
    ``runs`` (kept out: a shard with fewer runs is extended) never share a path.
    Empty for a default cell: its path is the one of earlier versions. Computed once
    per :class:`Cell` (:attr:`Cell.variant`).
    """
    return build_cell(cell).variant


def _shard_variant(cell: Cell) -> tuple[str, ...]:
    proto = cell.protocol
    base = default_cell(cell)
    parts: list[str] = []
    rest = False
    if base["protocol"] is None or proto.name != base["protocol"]["name"]:
        parts.append(f"protocol={proto.name}")
        base["protocol"] = _group_file("protocol", proto.name)
        if base["protocol"] is not None:
            try:
                base["protocol"] = proto.check_settings(base["protocol"])
            except KernelbenchError:
                base["protocol"] = None
    if cell["seed"] != base["seed"]:
        parts.append(f"seed={int(cell['seed'])}")
    kernel_keys: set[str] = set()
    for group in ("kernel", "method"):
        have, want = cell[group], base[group]
        if want is None:
            rest = True
            continue
        if {k: v for k, v in have.items() if k != "params"} != {
            k: v for k, v in want.items() if k != "params"
        }:
            rest = True
        params, defaults = have["params"], want["params"]
        if group == "kernel":
            kernel_keys = set(defaults)
        for key in sorted(set(params) | set(defaults)):
            value = params.get(key, _MISSING)
            if value == defaults.get(key, _MISSING):
                continue
            text = None if value is _MISSING else _readable(value)
            named = bool(_KEY.fullmatch(key)) and key not in _RESERVED_PARTS
            if group == "kernel":
                named &= key in defaults
            else:
                named &= key not in kernel_keys
            if text is None or not named:
                rest = True
            else:
                parts.append(f"{key}={text}")
    if base["protocol"] is None:
        rest = True
    else:
        shown = set(proto.cell_settings)
        have = {k: v for k, v in cell["protocol"].items() if k not in shown}
        want = {k: v for k, v in base["protocol"].items() if k not in shown}
        rest |= have != want
    if base["dataset"] is None:
        rest = True
    else:
        base_cell = dataclasses.replace(cell, dataset=base["dataset"])
        rest |= protocol_dataset(cell) != protocol_dataset(base_cell)
    if rest:
        parts.append(_identity_hash(cell))
    return tuple(parts)


def _identity_hash(cell: Mapping[str, Any]) -> str:
    """``h=<8 hex>``: SHA-256 of everything in the config hash but ``runs``."""
    payload = {k: cell[k] for k in CELL_KEYS if k != "runs"}
    payload["dataset"] = protocol_dataset(cell)
    return "h=" + hashlib.sha256(dumps(payload).encode()).hexdigest()[:8]


def cell_name(cell: Mapping[str, Any]) -> str:
    """``letter rbf sr33 n=1``, with the protocol's own path parts and what differs from
    the defaults (:func:`shard_variant`): ``letter rbf sr33 seed=1 n_blocks=2 n=1``.
    A config that does not build names its dataset, kernel, method and n alone."""
    if isinstance(cell, Cell):
        return cell.name
    parts = [
        str(cell["dataset"]["name"]),
        str(cell["kernel"]["name"]),
        str(cell["method"].get("label") or cell["method"]["name"]),
    ]
    try:
        parts += list(get_protocol(cell).path_parts(cell))
        parts += list(build_cell(cell).variant)
    except (KernelbenchError, AttributeError, KeyError, TypeError, ValueError):
        pass
    return " ".join(parts) + f" n={check_n(cell['n'])}"


#: Longest variant directory name; a longer one is replaced by its ``h=`` part alone.
_MAX_VARIANT = 120


def cell_shard_path(cell: Mapping[str, Any], output_dir: str | Path) -> Path:
    """Where a resolved cell's shard lives: :func:`kernelbench.results.shard_path` with
    the cell's variant (:func:`shard_variant`, comma-joined) as the last directory."""
    cell = build_cell(cell)
    variant = ",".join(cell.variant)
    if len(variant) > _MAX_VARIANT:
        variant = _identity_hash(cell)
    return _layout_path(cell, output_dir, *([variant] if variant else []))


def _layout_path(cell: Cell, output_dir: str | Path, *variant: str) -> Path:
    return shard_path(
        output_dir,
        cell["experiment"],
        cell["dataset"]["name"],
        cell["kernel"]["name"],
        cell["method"]["label"],
        cell["n"],
        *cell.protocol.path_parts(cell),
        *variant,
    )


def base_config() -> dict[str, Any]:
    """The top-level values of ``configs/config.yaml`` (no groups, no hydra settings)."""
    return copy.deepcopy(_base_config())


@lru_cache(maxsize=1)
def _base_config() -> dict[str, Any]:
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    raw = OmegaConf.to_container(OmegaConf.load(config_dir() / "config.yaml"), resolve=False)
    return {k: v for k, v in raw.items() if k not in ("defaults", "hydra")}
