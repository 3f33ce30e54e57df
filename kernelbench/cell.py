"""One cell of a grid, resolved once: the typed, frozen :class:`Cell`.

:func:`build_cell` builds it from the composed config (``experiment``, ``protocol``,
``dataset``, ``kernel``, ``method``, ``n``, ``runs``, ``seed``, ``data``): the
protocol's settings validated, the data key and data settings, the default runs. What
is a function of the cell alone is a cached property (config hash, shard variant,
name, data cache key). Read it by attribute; :func:`dataclasses.replace` makes another.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from kernelbench.errors import KernelbenchError
from kernelbench.registry import Registry
from kernelbench.results import SCHEMA_VERSION, dumps, format_n, make_schema
from kernelbench.settings import ProtocolSettings, defaults
from kernelbench.validation import check_n, check_runs


@dataclass(frozen=True)
class Metric:
    """A quantity a protocol reports (:attr:`Measurement.metrics`): its column and axis
    label."""

    column: str
    label: str
    #: short name in one-line summaries
    short: str = ""


@dataclass(frozen=True)
class Figure:
    """A figure or table drawn from a protocol's results (``kernelbench plot --figure``).
    ``draw`` names its function as an entry point does, ``module:function``, called as
    ``draw(rows, out, options)``; its module is imported only to draw it."""

    name: str
    help: str
    draw: str
    #: metric ids (keys of the protocol's ``metrics``) it can show; the first is its default
    metrics: tuple[str, ...] = ()

    def load(self) -> Callable[..., Any]:
        """The drawing function ``draw`` names."""
        module, _, attr = self.draw.partition(":")
        return getattr(importlib.import_module(module), attr)


class Measurement(Protocol):
    """What a protocol is (:class:`kernelbench.protocols.Protocol` implements it): the
    declarations of its cells, rows and reports, and its hooks. Declared here so that
    ``cell`` depends on nothing in ``protocols/``. Derived: :func:`shard_schema`,
    :func:`cell_keys`, :func:`row_keys`."""

    @property
    def name(self) -> str: ...
    @property
    def Settings(self) -> type[ProtocolSettings]: ...  # noqa: N802 - the class attribute
    @property
    def columns(self) -> tuple[tuple[str, pa.DataType], ...]: ...
    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def index(self) -> tuple[str, ...]: ...
    @property
    def budget(self) -> str: ...
    @property
    def batch(self) -> int: ...
    @property
    def extendable(self) -> bool: ...
    @property
    def data_runs(self) -> bool: ...
    @property
    def metrics(self) -> Mapping[str, Metric]: ...
    @property
    def headline(self) -> str: ...
    @property
    def figures(self) -> tuple[Figure, ...]: ...

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]: ...
    def skip(self, cell: Cell) -> str | None: ...
    def prepare(self, cell: Cell) -> Any: ...
    def cell_columns(self, cell: Cell, ctx: Any) -> dict[str, Any]: ...
    def measure(self, cell: Cell, ctx: Any, runs: Sequence[int]) -> list[dict]: ...
    def run(self, cell: Cell, ctx: Any, run: int) -> list[dict]: ...
    def read_reference(self, table: Any) -> Any: ...
    def price(self, cell: Cell) -> Any: ...  # a kernelbench.cost.Work


def shard_schema(proto: Measurement) -> pa.Schema:
    """The Parquet schema of a protocol's shards."""
    return make_schema(list(proto.columns))


def cell_keys(proto: Measurement) -> tuple[str, ...]:
    """The columns that identify a cell in aggregated tables (verify, figures)."""
    return ("dataset", "kernel", "method_label", *proto.keys, "n", *proto.index)


def row_keys(cell: Cell) -> dict[str, Any]:
    """The values of the protocol's ``keys``, columns of every row of the cell."""
    return {k: cell.settings[k] for k in cell.protocol.keys}


#: Protocols by name; each plug-in module registers its own (:mod:`kernelbench.plugins`).
PROTOCOLS: Registry[Measurement] = Registry("protocol")


def get_protocol(cell_or_name: Mapping[str, Any] | str) -> Measurement:
    """The protocol of a cell or of a name (:func:`protocol_name`)."""
    return PROTOCOLS.get(protocol_name(cell_or_name))


def protocol_name(cell_or_name: Mapping[str, Any] | str) -> str:
    """A protocol's name, given as is or as a cell's ``protocol`` (its settings'
    ``name``, or a name; default ``kernel_approx``)."""
    if isinstance(cell_or_name, str):
        return cell_or_name
    if isinstance(cell_or_name, Cell):
        return cell_or_name.protocol.name
    proto = cell_or_name.get("protocol", "kernel_approx")
    return str(proto.get("name") if isinstance(proto, Mapping) else proto)


#: Config keys that select a cell (the rest is where and how to run it).
CELL_KEYS = ("experiment", "protocol", "dataset", "kernel", "method", "n", "runs", "seed")
#: Default data sources of a cell built from a dict without ``data``.
_NO_SOURCES = {"mirror": None, "cache": None, "download": False}


@dataclass(frozen=True, eq=False)
class Cell:
    """A resolved cell (see the module docstring); build it with :func:`build_cell`."""

    #: the results' experiment name (default: the protocol's name)
    experiment: str
    #: the protocol object (:data:`kernelbench.protocols.PROTOCOLS`)
    protocol: Measurement
    #: its validated, resolved settings as stored and hashed (``name`` first)
    settings: dict[str, Any]
    #: the dataset's config entry (name, data recipes under ``splits``, ...)
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
    def options(self) -> ProtocolSettings:
        """The settings as the protocol's ``Settings`` dataclass (defaults filled)."""
        cls = self.protocol.Settings
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
        """SHA-256 (16 hex digits) of what determines the cell's numbers: :meth:`payload`,
        the dataset part its protocol reads (:func:`protocol_dataset`) and
        :data:`SCHEMA_VERSION`; not where or how it runs."""
        return _digest(self, schema_version=SCHEMA_VERSION)[:16]

    @property
    def path_parts(self) -> tuple[str, ...]:
        """The protocol's directory levels of the shard: ``<key>=<value>`` for each of its
        ``keys`` (an integral float as an int: ``d=16``)."""
        parts = ((k, self.settings[k]) for k in self.protocol.keys)
        return tuple(f"{k}={format_n(v) if isinstance(v, float) else v}" for k, v in parts)

    @cached_property
    def variant(self) -> tuple[str, ...]:
        """The shard path parts of what differs from :func:`default_cell`, in order:
        ``protocol=<name>`` (not the experiment's), ``seed=<s>``, ``<key>=<value>`` per
        differing kernel and method parameter, and ``h=<8 hex>`` (the identity's hash)
        when anything else differs or has no readable form. Two cells that differ in
        anything but ``runs`` never share a path; a default cell has none."""
        return _shard_variant(self)

    @cached_property
    def name(self) -> str:
        """``letter rbf sr33 seed=1 n_blocks=2 n=1``: dataset, kernel, method label, the
        protocol's path parts and the :attr:`variant`."""
        parts = [str(self.dataset["name"]), str(self.kernel["name"]), self.method_label]
        parts += list(self.path_parts)
        parts += list(self.variant)
        return " ".join(parts) + f" n={self.n}"

    def with_runs(self, runs: int) -> Cell:
        """The same cell with ``runs`` runs (a shard stored with fewer runs)."""
        return dataclasses.replace(self, runs=check_runs(runs))

    def __deepcopy__(self, memo: dict[int, Any]) -> Cell:
        """A copy with its own dicts and nothing cached (what is computed from the
        copy reflects its own values)."""
        values = {f.name: copy.deepcopy(getattr(self, f.name), memo) for f in _FIELDS}
        values["protocol"] = self.protocol
        return Cell(**values)

    def payload(self) -> dict[str, Any]:
        """What identifies the cell, keyed as the config (:data:`CELL_KEYS`; the
        protocol's settings under ``protocol``): the config hash's payload."""
        return {k: self.settings if k == "protocol" else getattr(self, k) for k in CELL_KEYS}

    def __repr__(self) -> str:
        return f"Cell({self.experiment}: {self.name}, runs={self.runs}, seed={self.seed})"


_FIELDS = dataclasses.fields(Cell)


def build_cell(config: Cell | Mapping[str, Any]) -> Cell:
    """The :class:`Cell` of a composed config (a :class:`Cell` as is); one line for
    what is wrong."""
    if isinstance(config, Cell):
        return config
    proto, settings = _resolve_protocol(config)
    method = dict(config["method"])
    method.setdefault("label", method["name"])
    method.setdefault("paper_label", "")
    method["params"] = dict(method.get("params") or {})
    kernel = dict(config["kernel"])
    kernel["params"] = dict(kernel.get("params") or {})
    n, seed = check_n(config["n"]), int(config.get("seed", 0))
    data = dict(config.get("data") or _NO_SOURCES)
    data_key = str(settings.get("data") or proto.name)
    data_settings = _data_settings(proto.name, config["dataset"], data_key)
    runs = config.get("runs")
    if runs is None:
        runs = data_settings.get("runs") if proto.data_runs else None
        runs = settings.get("runs") if runs is None else runs
        if runs is None:
            raise KernelbenchError(
                f"runs is null and neither dataset {config['dataset'].get('name')!r} nor "
                f"protocol {proto.name!r} sets a default"
            )
    extra = {k: v for k, v in config.items() if k not in (*CELL_KEYS, "data", "output_dir")}
    output_dir = config.get("output_dir")
    return Cell(
        experiment=str(config.get("experiment") or proto.name),
        protocol=proto,
        settings=settings,
        dataset=dict(config["dataset"]),
        kernel=kernel,
        method=method,
        n=n,
        runs=check_runs(runs),
        seed=seed,
        data=data,
        data_key=data_key,
        data_settings=data_settings,
        output_dir=None if output_dir is None else str(output_dir),
        extra=extra,
    )


def _data_settings(protocol: str, dataset: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The dataset's data settings ``dataset.splits.<key>``, or one line naming those
    it has."""
    from kernelbench.datasets.splits import recipes

    found = recipes(dataset)
    if key not in found:
        raise KernelbenchError(
            f"dataset {dataset.get('name')!r} has no data settings for protocol {protocol!r} "
            f"(dataset.splits.{key}); it has: {', '.join(found) or 'none'}"
        )
    return dict(found[key])


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


def protocol_dataset(cell: Cell) -> dict[str, Any]:
    """The cell's dataset entry with, of its data recipes (``splits``), only the one its
    protocol reads: editing another protocol's data settings leaves it alone."""
    dataset = dict(cell.dataset)
    splits = dataset.get("splits")
    if isinstance(splits, Mapping):
        key = cell.data_key
        dataset["splits"] = {key: splits[key]} if key in splits else {}
    return dataset


def _digest(cell: Cell, drop: str = "", **more: Any) -> str:
    """SHA-256 (hex) of :meth:`Cell.payload` but ``drop``, with the dataset part its
    protocol reads (:func:`protocol_dataset`) and ``more``."""
    payload = {k: v for k, v in cell.payload().items() if k != drop}
    payload = {**payload, "dataset": protocol_dataset(cell), **more}
    return hashlib.sha256(dumps(payload).encode()).hexdigest()


# -- shard identity ------------------------------------------------------------------

#: Names of the path parts that are not kernel or method parameters.
_RESERVED_PARTS = frozenset({"protocol", "seed", "h", "n"})
_READABLE_STR = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{0,31}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
_MISSING = object()


def _readable(value: Any) -> str | None:
    """``value`` as an unambiguous path fragment (``1`` vs ``1.0``; no string that reads
    as another type), or None (then it goes to the hash)."""
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
    """Settings (dotted key -> value) that every experiment file of ``experiment`` fixes:
    the defaults of its cells, so a paper grid's shards keep short paths."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from kernelbench.config import group_files

    parser = OverridesParser.create()
    found: list[dict[str, Any]] = []
    for path in group_files("experiment"):
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
    from kernelbench.config import group_options, load_group

    return load_group(group, name) if name in group_options(group) else None


def _set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    *head, last = key.split(".")
    for part in head:
        nxt = tree.get(part)
        if not isinstance(nxt, dict):
            nxt = tree[part] = {}
        tree = nxt
    tree[last] = value


def default_cell(cell: Cell) -> dict[str, Any]:
    """A cell's settings when none is overridden: the config files of its kernel,
    method label, dataset and protocol, the base ``seed``, and what its experiment's
    files fix (:func:`_experiment_fixed`); None for a part without a file."""
    from kernelbench.config import default_option

    fixed = _experiment_fixed(cell.experiment)
    proto_name = fixed.get("protocol")
    if not isinstance(proto_name, str):
        exp = cell.experiment
        proto_name = exp if exp in PROTOCOLS else default_option("protocol") or "kernel_approx"
    out: dict[str, Any] = {
        "seed": base_config()["seed"],
        "kernel": _group_file("kernel", cell.kernel["name"]),
        "method": _group_file("method", cell.method_label),
        "dataset": _group_file("dataset", cell.dataset["name"]),
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
    out["protocol"] = _checked(proto_name, out["protocol"])
    return out


def _checked(protocol: str, settings: dict[str, Any] | None) -> dict[str, Any] | None:
    """``settings`` checked by the protocol (``check_settings``), None if they fail."""
    try:
        return None if settings is None else get_protocol(protocol).check_settings(settings)
    except KernelbenchError:
        return None


def _shard_variant(cell: Cell) -> tuple[str, ...]:
    proto = cell.protocol
    base = default_cell(cell)
    parts: list[str] = []
    rest = False
    if base["protocol"] is None or proto.name != base["protocol"]["name"]:
        parts.append(f"protocol={proto.name}")
        base["protocol"] = _checked(proto.name, _group_file("protocol", proto.name))
    if cell.seed != base["seed"]:
        parts.append(f"seed={int(cell.seed)}")
    kernel_keys: set[str] = set()
    for group in ("kernel", "method"):
        have, want = getattr(cell, group), base[group]
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
            named &= key in defaults if group == "kernel" else key not in kernel_keys
            if text is None or not named:
                rest = True
            else:
                parts.append(f"{key}={text}")
    if base["protocol"] is None:
        rest = True
    else:
        shown = set(proto.keys)
        have = {k: v for k, v in cell.settings.items() if k not in shown}
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


def _identity_hash(cell: Cell) -> str:
    """``h=<8 hex>``: SHA-256 of everything in the config hash but ``runs``."""
    return "h=" + _digest(cell, drop="runs")[:8]


#: Longest variant directory name; a longer one is replaced by its ``h=`` part alone.
_MAX_VARIANT = 120


def cell_folder(cell: Cell, output_dir: str | Path) -> Path:
    """The folder of a cell's method label and protocol parts, which holds its shard
    (default cell) or the variant folder of its shard."""
    names = (cell.experiment, cell.dataset["name"], cell.kernel["name"], cell.method_label)
    return Path(output_dir).joinpath(*names, *cell.path_parts)


def cell_shard_path(cell: Cell | Mapping[str, Any], output_dir: str | Path) -> Path:
    """Where a cell's shard lives (:mod:`kernelbench.results`): its variant comma-joined
    as the last directory."""
    cell = build_cell(cell)
    variant = ",".join(cell.variant)
    if len(variant) > _MAX_VARIANT:
        variant = _identity_hash(cell)
    folder = cell_folder(cell, output_dir) / variant if variant else cell_folder(cell, output_dir)
    return folder / f"n={format_n(cell.n)}.parquet"


def base_config() -> dict[str, Any]:
    """The top-level values of ``configs/config.yaml`` (no groups, no hydra settings)."""
    return copy.deepcopy(_base_config())


@lru_cache(maxsize=1)
def _base_config() -> dict[str, Any]:
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir

    raw = OmegaConf.to_container(OmegaConf.load(config_dir() / "config.yaml"), resolve=False)
    assert isinstance(raw, dict)
    return {str(k): v for k, v in raw.items() if k not in ("defaults", "hydra")}
