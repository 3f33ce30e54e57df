"""What "reproducing a paper" means, as data: ``configs/verify/<name>.yaml`` (reference,
protocol, metric, grids, method mapping, known deviations, alpha, sample variation,
baseline, ``shared_runs``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kernelbench.errors import KernelbenchError
from kernelbench.protocols import get_protocol, metric_of
from kernelbench.results import format_n

DEFAULT_CONFIG = "munkhoeva2018_fig1"

#: known-deviation rule keys -> the cell column they match
RULE_COLUMNS = {
    "datasets": "dataset",
    "kernels": "kernel",
    "methods": "method_label",
    "ns": "n",
    "data_sources": "data_source",
}


@dataclass(frozen=True)
class KnownDeviation:
    """A rule: the cells it matches are a known deviation, for ``reason``.

    ``datasets``, ``kernels``, ``methods``, ``ns``, ``data_sources`` and ``where`` (any
    other column) hold fnmatch patterns; a key left out matches everything.
    """

    reason: str
    datasets: tuple[str, ...] | None = None
    kernels: tuple[str, ...] | None = None
    methods: tuple[str, ...] | None = None
    ns: tuple[str, ...] | None = None
    data_sources: tuple[str, ...] | None = None
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    compare_with: str | None = None
    detail: str = ""

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether a cell (a mapping of its columns) matches every pattern of the rule."""
        checks = [(getattr(self, key), row.get(col)) for key, col in RULE_COLUMNS.items()]
        checks += [(patterns, row.get(col)) for col, patterns in self.where]
        for patterns, value in checks:
            if patterns is None:
                continue
            if value is None or (isinstance(value, float) and math.isnan(value)):
                return False
            text = format_n(value) if isinstance(value, float) else str(value)
            if not any(fnmatch.fnmatchcase(text, p) for p in patterns):
                return False
        return True


@dataclass(frozen=True)
class SampleVariationDefault:
    """The tau / mean of a (dataset, kernel) pair the sample-variation table does not
    measure, and why that value (``sample_variation_default: {cv, reason}``)."""

    cv: float
    reason: str


#: Without a declared default: no sample-to-sample allowance. An unmeasured pair is held
#: to both sides' run noise alone, the strictest test, never a borrowed wider one.
UNMEASURED = SampleVariationDefault(
    0.0,
    "not measured, so no sample-to-sample allowance: held to both sides' run noise "
    "alone (scripts/measure_sample_variation.py measures it)",
)


@dataclass
class VerifyConfig:
    """The contents of ``configs/verify/<name>.yaml`` (paths resolved)."""

    name: str
    reference: str
    #: the protocol whose results are compared (its cell keys and metrics)
    protocol: str = "kernel_approx"
    #: metric id of the protocol (``fro``, ``accuracy``, ...)
    metric: str = "fro"
    #: our values times ``scale`` are in the reference's units (e.g. 100 for percent)
    scale: float = 1.0
    #: grid name -> [(experiment file, extra method configs)]
    grids: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    seed: int = 0
    alpha: float = 0.01
    sample_variation: Path | None = None
    #: tau / mean of a pair the table does not measure (flagged in the report)
    sample_variation_default: SampleVariationDefault = UNMEASURED
    baseline: Path | None = None
    compare: dict[str, str] = field(default_factory=dict)
    #: run r of every cell shares random draws (a split) with run r of the other cells of
    #: a family: the pooled bias test then bounds our run noise as fully correlated
    shared_runs: bool = False
    known_deviations: list[KnownDeviation] = field(default_factory=list)

    def reference_method(self, label: str) -> str:
        return self.compare.get(label, label)

    def known(self, row: Mapping[str, Any]) -> list[KnownDeviation]:
        return [k for k in self.known_deviations if k.matches(row)]


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


def config_path(name: str | Path = DEFAULT_CONFIG) -> Path:
    """A verify config: a path to a YAML file, or a name in ``configs/verify/``."""
    from kernelbench.config import config_file

    p = Path(name)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise KernelbenchError(f"verify config {str(p)!r} does not exist")
        return p
    return config_file("verify", str(name), kind="verify config")


def _grid_entry(entry: Any, path: Path) -> tuple[str, tuple[str, ...]]:
    if isinstance(entry, str):
        return entry, ()
    if isinstance(entry, Mapping) and entry.get("experiment"):
        extra = entry.get("add_methods") or []
        return str(entry["experiment"]), tuple(str(m) for m in extra)
    raise KernelbenchError(
        f"{path}: a grid entry is an experiment name or "
        f"{{experiment: NAME, add_methods: [...]}}, got {entry!r}"
    )


def load_config(name: str | Path = DEFAULT_CONFIG) -> VerifyConfig:
    """Read and check a verify config; relative paths of kernelbench's own configs name
    shipped tables (``results/baseline/...``: :func:`kernelbench.packaged.shipped`), a
    plug-in's resolve from its config's directory."""
    import yaml

    from kernelbench.config import config_origin, is_builtin
    from kernelbench.packaged import shipped

    path = config_path(name)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise KernelbenchError(f"cannot parse {path}: {err}".splitlines()[0]) from None
    if not isinstance(raw, Mapping) or not raw.get("reference"):
        raise KernelbenchError(f"{path}: needs at least `reference:`")
    builtin = is_builtin(path)

    def resolve(value: Any) -> Path | None:  # an absolute path stays as it is
        if value is None:
            return None
        return shipped(value) if builtin else path.parent / value

    alpha = float(raw.get("alpha", 0.01))
    if not 0.0 < alpha < 1.0:
        raise KernelbenchError(f"{path}: alpha must be in (0, 1), got {alpha}")
    grids = {
        str(k): [_grid_entry(e, path) for e in (v if isinstance(v, list) else [v])]
        for k, v in (raw.get("grids") or {}).items()
    }
    known = {f.name for f in fields(VerifyConfig)} - {"name"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise KernelbenchError(f"{path}: unknown keys {unknown}; valid: {sorted(known)}")
    protocol = str(raw.get("protocol", "kernel_approx"))
    try:
        proto = get_protocol(protocol)
    except KernelbenchError as err:  # say whose config names it
        raise KernelbenchError(f"{path} ({config_origin(path)}): {err}") from None
    metric = str(raw.get("metric") or proto.headline)
    metric_of(proto, metric)  # one line naming the protocol's metrics if unknown
    reference = str(raw["reference"])
    if reference.endswith(".csv"):  # a table of one's own, beside the config
        reference = str(resolve(reference))
    compare = {str(k): str(v) for k, v in (raw.get("compare") or {}).items()}
    return VerifyConfig(
        name=path.stem,
        reference=reference,
        protocol=protocol,
        metric=metric,
        scale=float(raw.get("scale", 1.0)),
        grids=grids,
        seed=int(raw.get("seed", 0)),
        alpha=alpha,
        sample_variation=resolve(raw.get("sample_variation")),
        sample_variation_default=_default_cv(raw.get("sample_variation_default"), path),
        baseline=resolve(raw.get("baseline")),
        compare=compare,
        shared_runs=bool(raw.get("shared_runs", False)),
        known_deviations=parse_known(raw.get("known_deviations") or []),
    )
