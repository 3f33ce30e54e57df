"""What "reproducing a paper" means: a :class:`~kernelbench.outputs.verdicts.VerifyConfig`,
declared by its paper's module (``VERIFY`` of ``kernelbench/outputs/papers/<paper>.py``)
or read from a YAML file of the same keys (a user's path, or a plug-in's
``configs/verify/<name>.yaml``); one loader and one check for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.outputs.verdicts import (
    RULE_COLUMNS,
    UNMEASURED,
    GridEntry,
    KnownDeviation,
    SampleVariationDefault,
    VerifyConfig,
)
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.results import format_n

DEFAULT_CONFIG = "munkhoeva2018_fig1"


def declared() -> dict[str, VerifyConfig]:
    """kernelbench's own verify configs by name: the papers' declarations."""
    from kernelbench.outputs.papers import VERIFY

    return VERIFY


def config_names() -> list[str]:
    """Every verify config's name: the papers' and the plug-ins' ``configs/verify/``."""
    from kernelbench.config import group_options

    return sorted({*declared(), *group_options("verify")})


def config_path(name: str | Path) -> Path:
    """A verify config file: a path to a YAML file, or a plug-in's
    ``configs/verify/<name>.yaml``; an unknown name is one line naming every config."""
    from kernelbench.config import config_file

    p = Path(name)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise KernelbenchError(f"verify config {str(p)!r} does not exist")
        return p
    try:
        return config_file("verify", str(name))
    except KernelbenchError:
        raise choices_error("verify config", str(name), config_names()) from None


def _default_cv(raw: Any, path: Path) -> SampleVariationDefault:
    """``sample_variation_default: {cv: <float >= 0>, reason: <text>}``; absent:
    :data:`UNMEASURED`."""
    if raw is None:
        return UNMEASURED
    bad = f"{path}: sample_variation_default needs cv (a number >= 0) and reason (text)"
    if not isinstance(raw, Mapping) or set(raw) != {"cv", "reason"}:
        raise KernelbenchError(bad)
    cv, reason = raw["cv"], raw["reason"]
    if isinstance(cv, bool) or not isinstance(cv, int | float) or not cv >= 0:
        raise KernelbenchError(bad)
    if not isinstance(reason, str) or not reason.strip():
        raise KernelbenchError(bad)
    return SampleVariationDefault(float(cv), " ".join(reason.split()))


def _tuple(value: Any, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | int | float):
        value = [value]
    if not isinstance(value, list | tuple):
        raise KernelbenchError(f"known_deviations: {key} must be a list, got {value!r}")
    return tuple(format_n(v) if key == "ns" else str(v) for v in value)


def parse_known(items: Iterable[Mapping[str, Any]]) -> list[KnownDeviation]:
    """Known-deviation rules from their YAML form (a list of mappings)."""
    keys = {"reason", "detail", "compare_with", "where", *RULE_COLUMNS}
    rules = []
    for i, item in enumerate(items or []):
        if not isinstance(item, Mapping):
            raise KernelbenchError(f"known_deviations[{i}] must be a mapping")
        unknown = set(item) - keys
        if unknown:
            raise KernelbenchError(
                f"known_deviations[{i}]: unknown keys {sorted(unknown)}; valid: {sorted(keys)}"
            )
        if not item.get("reason"):
            raise KernelbenchError(f"known_deviations[{i}] needs a reason")
        where = item.get("where") or {}
        if not isinstance(where, Mapping):
            raise KernelbenchError(f"known_deviations[{i}]: where must map columns to patterns")
        rules.append(
            KnownDeviation(
                reason=str(item["reason"]).strip(),
                **{key: _tuple(item.get(key), key) for key in RULE_COLUMNS},
                where=tuple((str(c), _tuple(p, str(c)) or ()) for c, p in where.items()),
                compare_with=item.get("compare_with"),
                detail=str(item.get("detail") or "").strip(),
            )
        )
    return rules


def _grid_entry(entry: Any, path: Path) -> GridEntry:
    if isinstance(entry, str):
        return entry, ()
    if isinstance(entry, Mapping) and entry.get("experiment"):
        extra = entry.get("add_methods") or []
        return str(entry["experiment"]), tuple(str(m) for m in extra)
    raise KernelbenchError(
        f"{path}: a grid entry is an experiment name or "
        f"{{experiment: NAME, add_methods: [...]}}, got {entry!r}"
    )


def from_mapping(raw: Any, path: Path) -> VerifyConfig:
    """The record of a YAML file's mapping (``path``: its file, for the messages), its
    paths as written."""
    if not isinstance(raw, Mapping) or not raw.get("reference"):
        raise KernelbenchError(f"{path}: needs at least `reference:`")
    known = {f.name for f in fields(VerifyConfig)} - {"name"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise KernelbenchError(f"{path}: unknown keys {unknown}; valid: {sorted(known)}")
    grids = {
        str(k): [_grid_entry(e, path) for e in (v if isinstance(v, list) else [v])]
        for k, v in (raw.get("grids") or {}).items()
    }
    paths = {
        k: None if raw.get(k) is None else Path(raw[k]) for k in ("sample_variation", "baseline")
    }
    try:  # a value of the wrong type: one line, not a traceback
        return VerifyConfig(
            name=path.stem,
            reference=str(raw["reference"]),
            protocol=str(raw.get("protocol", "kernel_approx")),
            metric=None if raw.get("metric") is None else str(raw["metric"]),
            scale=float(raw.get("scale", 1.0)),
            grids=grids,
            seed=int(raw.get("seed", 0)),
            alpha=float(raw.get("alpha", 0.01)),
            sample_variation_default=_default_cv(raw.get("sample_variation_default"), path),
            compare={str(k): str(v) for k, v in (raw.get("compare") or {}).items()},
            shared_runs=bool(raw.get("shared_runs", False)),
            known_deviations=parse_known(raw.get("known_deviations") or []),
            about=str(raw.get("about") or ""),
            **paths,
        )
    except (TypeError, ValueError) as err:
        raise KernelbenchError(f"{path}: {err}") from None


def to_mapping(cfg: VerifyConfig) -> dict[str, Any]:
    """The YAML form of a record (:func:`from_mapping` reads it back): e.g. a paper's
    declaration as the start of one's own file."""
    out: dict[str, Any] = {f.name: getattr(cfg, f.name) for f in fields(cfg) if f.name != "name"}
    out["grids"] = {
        k: [{"experiment": e, "add_methods": list(m)} if m else e for e, m in v]
        for k, v in cfg.grids.items()
    }
    for key in ("sample_variation", "baseline"):
        out[key] = None if out[key] is None else str(out[key])
    default = cfg.sample_variation_default
    out["sample_variation_default"] = {"cv": default.cv, "reason": default.reason}
    rules = [{f.name: getattr(r, f.name) for f in fields(r)} for r in cfg.known_deviations]
    for rule in rules:
        rule["where"] = {c: list(p) for c, p in rule["where"]}
    out["known_deviations"] = [
        {k: list(v) if isinstance(v, tuple) else v for k, v in r.items() if v not in (None, "", {})}
        for r in rules
    ]
    out["compare"] = dict(cfg.compare)
    return out


def check(cfg: VerifyConfig, where: str, resolve: Callable[[Path], Path]) -> VerifyConfig:
    """A record checked (alpha, protocol, metric) and its relative paths resolved by
    ``resolve`` (a CSV reference, sample_variation, baseline); ``where`` names whose it is
    in the one-line errors."""
    if not 0.0 < cfg.alpha < 1.0:
        raise KernelbenchError(f"{where}: alpha must be in (0, 1), got {cfg.alpha}")
    try:
        proto = get_protocol(cfg.protocol)
    except KernelbenchError as err:  # say whose config names it
        raise KernelbenchError(f"{where}: {err}") from None
    metric = cfg.metric or proto.headline
    metric_of(proto, metric)  # one line naming the protocol's metrics if unknown
    reference = cfg.reference  # a table of one's own, beside the config
    return replace(
        cfg,
        metric=metric,
        reference=str(resolve(Path(reference))) if reference.endswith(".csv") else reference,
        grids={k: list(v) for k, v in cfg.grids.items()},
        sample_variation=None if cfg.sample_variation is None else resolve(cfg.sample_variation),
        baseline=None if cfg.baseline is None else resolve(cfg.baseline),
        compare=dict(cfg.compare),
        known_deviations=list(cfg.known_deviations),
    )


def load_config(name: str | Path = DEFAULT_CONFIG) -> VerifyConfig:
    """A verify config by name (a paper's declaration, then a plug-in's file) or YAML
    path, checked; relative paths of kernelbench's own name shipped tables
    (``results/baseline/...``: :func:`kernelbench.packaged.shipped`), a file's resolve
    from its directory (an absolute path stays as it is)."""
    import yaml

    from kernelbench.config import config_origin
    from kernelbench.packaged import shipped

    own = declared().get(str(name))  # a declared name has no .yaml suffix
    if own is not None:
        return check(own, f"verify config {own.name!r}", shipped)
    path = config_path(name)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise KernelbenchError(f"cannot parse {path}: {err}".splitlines()[0]) from None
    return check(from_mapping(raw, path), f"{path} ({config_origin(path)})", path.parent.joinpath)
