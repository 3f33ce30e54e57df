"""``kernelbench verify``: does kernelbench reproduce Munkhoeva et al. (2018), Figure 1?

Runs a grid (``--grid reduced|full``), aggregates each cell's error over runs and
compares it, cell by cell, with the paper's reported mean and with our own committed
baseline. What counts as reproduced is data, in ``configs/verify/<name>.yaml``: the
reference table, the method mapping, the known deviations, the family-wise alpha,
the measured sample-to-sample variation and the baseline table. The statistics are
explained in ``docs/verification.md``; in short, for a cell

    z = (ours - paper) / sqrt(s_ours^2 / R + s_paper^2 / R_paper + 2 tau^2)

with tau the standard deviation of a cell's mean error across independent X, Y
samples (measured, relative to the mean, per dataset and kernel), and a cell
reproduces when |z| <= z_crit, the Sidak-corrected two-sided quantile (Student's t at
the Welch-Satterthwaite degrees of freedom of the variance) at the family-wise rate
alpha over all comparisons that can fail.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
from scipy import stats

from kernelbench.errors import KernelbenchError, choices_error

DEFAULT_CONFIG = "munkhoeva2018_fig1"
GRIDS = ("reduced", "full")
#: Keys of a cell in aggregated tables.
CELL = ["dataset", "kernel", "method_label", "n"]
#: Verdicts against the paper.
REPRODUCED = "reproduced"
DEVIATES = "deviates"
KNOWN = "known deviation"
NO_REFERENCE = "no reference"
#: Verdicts against the baseline.
AGREES = "agrees"
DRIFTS = "drifts"
NO_BASELINE = "no baseline"
#: Relative difference below which two means computed from the same runs are equal
#: (floating-point noise of another BLAS build), when the comparison has no noise.
EXACT_RTOL = 1e-9


# -- configuration ------------------------------------------------------------------


@dataclass(frozen=True)
class KnownDeviation:
    """A rule: cells it matches are a known deviation from the paper, for ``reason``."""

    reason: str
    datasets: tuple[str, ...] | None = None
    kernels: tuple[str, ...] | None = None
    methods: tuple[str, ...] | None = None
    ns: tuple[str, ...] | None = None
    data_sources: tuple[str, ...] | None = None
    compare_with: str | None = None
    detail: str = ""

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether a cell (dataset, kernel, method_label, n, data_source) matches."""
        checks = (
            (self.datasets, row.get("dataset")),
            (self.kernels, row.get("kernel")),
            (self.methods, row.get("method_label")),
            (self.ns, _n_str(row.get("n"))),
            (self.data_sources, row.get("data_source")),
        )
        for patterns, value in checks:
            if patterns is None:
                continue
            if value is None or (isinstance(value, float) and math.isnan(value)):
                return False
            if not any(fnmatch.fnmatchcase(str(value), p) for p in patterns):
                return False
        return True


@dataclass
class VerifyConfig:
    """The contents of ``configs/verify/<name>.yaml`` (paths resolved)."""

    name: str
    reference: str
    metric: str = "rel_fro_error"
    #: grid name -> [(experiment file, extra method configs)]
    grids: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    seed: int = 0
    alpha: float = 0.01
    sample_variation: Path | None = None
    baseline: Path | None = None
    compare: dict[str, str] = field(default_factory=dict)
    known_deviations: list[KnownDeviation] = field(default_factory=list)

    def reference_method(self, label: str) -> str:
        return self.compare.get(label, label)

    def known(self, row: Mapping[str, Any]) -> list[KnownDeviation]:
        return [k for k in self.known_deviations if k.matches(row)]


def _n_str(n: Any) -> str | None:
    if n is None:
        return None
    n = float(n)
    return str(int(n)) if n.is_integer() else repr(n)


def repo_root() -> Path:
    """The checkout root (relative paths in verify configs start here)."""
    return Path(__file__).resolve().parents[1]


def _tuple(value: Any, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | int | float):
        value = [value]
    if not isinstance(value, list | tuple):
        raise KernelbenchError(f"known_deviations: {key} must be a list, got {value!r}")
    return tuple(_n_str(v) if key == "ns" else str(v) for v in value)


def parse_known(items: Iterable[Mapping[str, Any]]) -> list[KnownDeviation]:
    """Known-deviation rules from their YAML form (a list of mappings)."""
    keys = {
        "reason",
        "detail",
        "compare_with",
        "datasets",
        "kernels",
        "methods",
        "ns",
        "data_sources",
    }
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
        rules.append(
            KnownDeviation(
                reason=str(item["reason"]).strip(),
                datasets=_tuple(item.get("datasets"), "datasets"),
                kernels=_tuple(item.get("kernels"), "kernels"),
                methods=_tuple(item.get("methods"), "methods"),
                ns=_tuple(item.get("ns"), "ns"),
                data_sources=_tuple(item.get("data_sources"), "data_sources"),
                compare_with=item.get("compare_with"),
                detail=str(item.get("detail") or "").strip(),
            )
        )
    return rules


def config_path(name: str | Path = DEFAULT_CONFIG) -> Path:
    """A verify config: a path to a YAML file, or a name in ``configs/verify/``."""
    from kernelbench.config import config_dir

    p = Path(name)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise KernelbenchError(f"verify config {str(p)!r} does not exist")
        return p
    path = config_dir() / "verify" / f"{name}.yaml"
    if not path.is_file():
        found = sorted(q.stem for q in (config_dir() / "verify").glob("*.yaml"))
        raise choices_error("verify config", str(name), found)
    return path


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
    """Read and check a verify config; relative table paths resolve from the repo root,
    or from the config's own directory for a config given by path."""
    import yaml

    path = config_path(name)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise KernelbenchError(f"cannot parse {path}: {err}".splitlines()[0]) from None
    if not isinstance(raw, Mapping) or not raw.get("reference"):
        raise KernelbenchError(f"{path}: needs at least `reference:`")
    base = repo_root() if path.parent.name == "verify" else path.parent

    def resolve(value: Any) -> Path | None:
        if value is None:
            return None
        p = Path(value)
        return p if p.is_absolute() else base / p

    alpha = float(raw.get("alpha", 0.01))
    if not 0.0 < alpha < 1.0:
        raise KernelbenchError(f"{path}: alpha must be in (0, 1), got {alpha}")
    grids = {
        str(k): [_grid_entry(e, path) for e in (v if isinstance(v, list) else [v])]
        for k, v in (raw.get("grids") or {}).items()
    }
    return VerifyConfig(
        name=path.stem,
        reference=str(raw["reference"]),
        metric=str(raw.get("metric", "rel_fro_error")),
        grids=grids,
        seed=int(raw.get("seed", 0)),
        alpha=alpha,
        sample_variation=resolve(raw.get("sample_variation")),
        baseline=resolve(raw.get("baseline")),
        compare={str(k): str(v) for k, v in (raw.get("compare") or {}).items()},
        known_deviations=parse_known(raw.get("known_deviations") or []),
    )


# -- the grid -------------------------------------------------------------------------


def experiment_grid(experiment: str) -> dict[str, Any]:
    """An experiment file's name, runs and sweep lists (``configs/experiment/<name>.yaml``)."""
    from omegaconf import OmegaConf

    from kernelbench.config import config_dir, group_options

    path = config_dir() / "experiment" / f"{experiment}.yaml"
    if not path.is_file():
        raise choices_error("experiment", experiment, group_options("experiment"))
    raw = OmegaConf.load(path)
    params = OmegaConf.select(raw, "hydra.sweeper.params") or {}
    sweep = {str(k): [s.strip() for s in str(v).split(",")] for k, v in params.items()}
    return {
        "experiment": str(raw.get("experiment", experiment)),
        "runs": raw.get("runs"),
        "datasets": sweep.get("dataset", []),
        "kernels": sweep.get("kernel", []),
        "methods": sweep.get("method", []),
        "ns": [float(n) if "." in n else int(n) for n in sweep.get("n", [])],
    }


def grid_cells(
    cfg: VerifyConfig, grid: str, runs: int | None = None, seed: int | None = None
) -> list[dict[str, Any]]:
    """The cells of a verify grid, built by :func:`kernelbench.experiment.make_cell`."""
    from kernelbench.experiment import make_cell

    if grid not in cfg.grids:
        raise choices_error("grid", grid, cfg.grids)
    cells = []
    for exp, extra in cfg.grids[grid]:
        g = experiment_grid(exp)
        r = runs if runs is not None else g["runs"]
        methods = list(dict.fromkeys([*g["methods"], *extra]))
        for ds, kern, meth, n in itertools.product(g["datasets"], g["kernels"], methods, g["ns"]):
            s = cfg.seed if seed is None else seed
            cells.append(make_cell(meth, kern, ds, n, r, s, g["experiment"]))
    return cells


def grid_experiments(cfg: VerifyConfig, grid: str) -> list[str]:
    return sorted({experiment_grid(e)["experiment"] for e, _ in cfg.grids[grid]})


def _run_one(cell: dict[str, Any], output_dir: str) -> str:
    import io

    from kernelbench.experiment import run_and_store

    buf = io.StringIO()
    run_and_store(cell, output_dir, blas_threads=1, echo=lambda s: print(s, file=buf))
    return buf.getvalue().strip()


def run_cells(
    cells: Sequence[dict[str, Any]],
    output_dir: str | Path,
    jobs: int = 1,
    echo: Callable[[str], None] | None = None,
) -> None:
    """Run (or resume) cells into ``output_dir``: shards are bit-identical for any ``jobs``.

    Every run draws from its own derived seed and BLAS runs on one thread, so the
    order and the worker of a cell do not change its numbers.
    """
    total = len(cells)
    if jobs <= 1:
        for i, cell in enumerate(cells):
            line = _run_one(cell, str(output_dir))
            if echo:
                echo(f"[{i + 1}/{total}] {line}")
        return
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=jobs, return_as="generator", batch_size=1)
    for i, line in enumerate(par(delayed(_run_one)(c, str(output_dir)) for c in cells)):
        if echo:
            echo(f"[{i + 1}/{total}] {line}")


# -- statistics ---------------------------------------------------------------------------


def sidak_rate(m: int, alpha: float) -> float:
    """Per-test two-sided rate giving family-wise rate ``alpha`` over ``m`` tests (Sidak)."""
    m = max(int(m), 1)
    return -math.expm1(math.log1p(-alpha) / m)


def sidak_z(m: int, alpha: float, df: float = math.inf) -> float:
    """Two-sided threshold with family-wise false-alarm rate ``alpha`` over ``m`` tests.

    Sidak: per-test rate 1 - (1 - alpha)^(1/m); valid for any correlation of the
    (jointly normal) statistics, and exact when they are independent. ``df``: the
    quantile of Student's t with that many degrees of freedom (inf: normal).
    """
    per_test = sidak_rate(m, alpha)
    if not np.isfinite(df):
        return float(stats.norm.isf(per_test / 2.0))
    return float(stats.t.isf(per_test / 2.0, max(float(df), 1.0)))


def welch_df(parts: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variance estimates.

    ``parts``: (variance term, its degrees of freedom); a term with infinite df
    (a known quantity) adds no uncertainty; all terms zero gives inf.
    """
    total = sum(v for v, _ in parts)
    denom = sum(v * v / df for v, df in parts if v > 0 and np.isfinite(df) and df > 0)
    if total <= 0 or denom <= 0:
        return math.inf
    return total * total / denom


def aggregate(df: pd.DataFrame, metric: str = "rel_fro_error") -> pd.DataFrame:
    """Per cell: runs, mean, std (ddof 1), sem, seed and data source of a results frame."""
    if metric not in df.columns:
        raise KernelbenchError(f"results have no column {metric!r}")
    rows = []
    for key, g in df.groupby(CELL, sort=True):
        v = g[metric].dropna().to_numpy(dtype=float)
        if v.size == 0:
            continue
        std = float(v.std(ddof=1)) if v.size > 1 else float("nan")
        src = g["data_source"].dropna() if "data_source" in g else pd.Series(dtype=object)
        rows.append(
            {
                **dict(zip(CELL, key, strict=True)),
                "seed": int(g["seed"].iloc[0]) if "seed" in g else 0,
                "runs": int(v.size),
                "mean": float(v.mean()),
                "std": std,
                "sem": std / math.sqrt(v.size) if v.size > 1 else float("nan"),
                "data_source": str(src.iloc[0]) if len(src) else None,
            }
        )
    out = pd.DataFrame(rows)
    if not out.empty:
        out["n"] = out["n"].astype(float)
    return out


def load_sample_variation(path: Path | None) -> pd.DataFrame | None:
    """The pooled tau/mean table (dataset, kernel, cv), or None (tau = 0)."""
    if path is None:
        return None
    if not path.is_file():
        raise KernelbenchError(
            f"sample-variation table {str(path)!r} not found "
            "(scripts/measure_sample_variation.py writes it)"
        )
    tab = pd.read_csv(path)
    missing = {"dataset", "kernel", "cv"} - set(tab.columns)
    if missing:
        raise KernelbenchError(f"{path}: missing columns {sorted(missing)}")
    return tab


def tau_cv(tab: pd.DataFrame | None, dataset: str, kernel: str) -> tuple[float, str]:
    """tau / mean for (dataset, kernel) and where it came from.

    A pair that was not measured gets the largest measured value ("fallback"),
    the conservative choice for reference cells added later.
    """
    if tab is None or tab.empty:
        return 0.0, "none"
    hit = tab[(tab["dataset"] == dataset) & (tab["kernel"] == kernel)]
    if len(hit):
        return float(hit["cv"].iloc[0]), "measured"
    return float(tab["cv"].max()), "fallback"


def tau_df(tab: pd.DataFrame | None, dataset: str, kernel: str) -> float:
    """Degrees of freedom of the tau^2 estimate (column ``df``; inf when absent)."""
    if tab is None or tab.empty or "df" not in tab.columns:
        return math.inf
    hit = tab[(tab["dataset"] == dataset) & (tab["kernel"] == kernel)]
    return float(hit["df"].iloc[0]) if len(hit) else float(tab["df"].min())


def compare_reference(
    ours: pd.DataFrame, ref: pd.DataFrame, cfg: VerifyConfig, tau_table: pd.DataFrame | None
) -> pd.DataFrame:
    """Per our cell: the matched paper cell, ratio, standard error of the difference, z.

    Adds columns paper_method, paper_mean, paper_sem, paper_runs, ratio, tau,
    tau_source, se_diff, z, df (Welch-Satterthwaite, for the t threshold) and known
    (the matching rules' reasons, '' if none).
    """
    ref = ref.copy()
    ref["n"] = ref["n"].astype(float)
    ref_idx = {(r.dataset, r.kernel, r.method, float(r.n)): r for r in ref.itertuples()}
    rows = []
    for cell in ours.to_dict("records"):
        rmethod = cfg.reference_method(cell["method_label"])
        r = ref_idx.get((cell["dataset"], cell["kernel"], rmethod, float(cell["n"])))
        out = dict(cell)
        out["paper_method"] = rmethod if r is not None else None
        rules = cfg.known(cell)
        out["known"] = "; ".join(k.reason for k in rules)
        if r is None:
            out.update(
                paper_mean=np.nan,
                paper_sem=np.nan,
                paper_runs=np.nan,
                ratio=np.nan,
                tau=np.nan,
                tau_source="",
                se_diff=np.nan,
                z=np.nan,
            )
            rows.append(out)
            continue
        cv, source = tau_cv(tau_table, cell["dataset"], cell["kernel"])
        tau = cv * float(r.mean)
        paper_sem = float(r.std) / math.sqrt(float(r.runs))
        ours_sem = cell["sem"] if np.isfinite(cell["sem"]) else 0.0
        parts = [
            (ours_sem**2, cell["runs"] - 1.0),
            (paper_sem**2, float(r.runs) - 1.0),
            (2.0 * tau**2, tau_df(tau_table, cell["dataset"], cell["kernel"])),
        ]
        se = math.sqrt(sum(v for v, _ in parts))
        diff = cell["mean"] - float(r.mean)
        out.update(
            paper_mean=float(r.mean),
            paper_sem=paper_sem,
            paper_runs=int(r.runs),
            ratio=cell["mean"] / float(r.mean) if r.mean else np.nan,
            tau=tau,
            tau_source=source,
            se_diff=se,
            z=_z(diff, se, float(r.mean)),
            df=welch_df(parts),
        )
        rows.append(out)
    return pd.DataFrame(rows)


def _z(diff: float, se: float, scale: float) -> float:
    """diff / se; with no noise (se ~ 0) the means must agree to floating point."""
    floor = EXACT_RTOL * abs(scale)
    if se <= floor:
        return 0.0 if abs(diff) <= floor else math.copysign(math.inf, diff)
    return diff / se


def compare_baseline(ours: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Per our cell: the baseline mean, ratio and z of the difference (tau = 0).

    Both sides use the same X, Y when their data seeds agree; then run r draws
    the same features on both sides too, so the first min(R, B) runs are shared
    and Var(ours - base) = s^2 (1/R + 1/B - 2 min(R, B) / (R B)), with s^2 the
    average of both sides' variances. Without a shared seed the sides are
    independent (s_o^2/R + s_b^2/B) but differ by the X, Y sample too, which this
    check does not allow for: baselines are compared at the same seed.
    """
    base = base.copy()
    base["n"] = base["n"].astype(float)
    idx = {(b.dataset, b.kernel, b.method_label, float(b.n)): b for b in base.itertuples()}
    rows = []
    for cell in ours.to_dict("records"):
        b = idx.get((cell["dataset"], cell["kernel"], cell["method_label"], float(cell["n"])))
        out = {k: cell[k] for k in CELL}
        if b is None:
            out.update(
                base_mean=np.nan, base_runs=np.nan, base_ratio=np.nan, base_se=np.nan, base_z=np.nan
            )
            rows.append(out)
            continue
        R, B = int(cell["runs"]), int(b.runs)
        s_o = cell["std"] if np.isfinite(cell["std"]) else 0.0
        s_b = float(b.std) if np.isfinite(b.std) else 0.0
        if int(getattr(b, "seed", cell["seed"])) == int(cell["seed"]):
            shared = min(R, B)
            factor = max(1.0 / R + 1.0 / B - 2.0 * shared / (R * B), 0.0)
            var = 0.5 * (s_o**2 + s_b**2) * factor
            df = welch_df([(0.5 * s_o**2, R - 1.0), (0.5 * s_b**2, B - 1.0)])
        else:
            var = s_o**2 / R + s_b**2 / B
            df = welch_df([(s_o**2 / R, R - 1.0), (s_b**2 / B, B - 1.0)])
        se = math.sqrt(var)
        out.update(
            base_mean=float(b.mean),
            base_runs=B,
            base_ratio=cell["mean"] / float(b.mean) if b.mean else np.nan,
            base_se=se,
            base_z=_z(cell["mean"] - float(b.mean), se, float(b.mean)),
            base_df=df,
        )
        rows.append(out)
    return pd.DataFrame(rows)


def judge(table: pd.DataFrame, alpha: float, baseline: bool) -> tuple[pd.DataFrame, float, int]:
    """Add verdict (and base_verdict) columns; return (table, per-test rate, family size).

    The family: paper comparisons that are not known deviations, plus baseline
    comparisons (when checked). Each comparison passes when |z| <= z_crit, the
    Sidak threshold of Student's t at the comparison's Welch-Satterthwaite df
    (columns z_crit, base_z_crit).
    """
    t = table.copy()
    has_ref = t["paper_mean"].notna()
    gated = has_ref & (t["known"] == "")
    m = int(gated.sum())
    if baseline:
        m += int(t["base_mean"].notna().sum())
    rate = sidak_rate(m, alpha)
    t["z_crit"] = [
        sidak_z(m, alpha, df) if ok else np.nan
        for ok, df in zip(has_ref, t["df"].fillna(math.inf), strict=True)
    ]
    within = t["z"].abs() <= t["z_crit"]
    t["within_tolerance"] = np.where(has_ref, within, np.nan)
    verdict = np.where(within, REPRODUCED, DEVIATES).astype(object)
    verdict = np.where(t["known"] != "", KNOWN + ": " + t["known"], verdict)
    t["verdict"] = np.where(has_ref, verdict, NO_REFERENCE)
    if baseline:
        t["base_z_crit"] = [sidak_z(m, alpha, df) for df in t["base_df"].fillna(math.inf)]
        bv = np.where(t["base_z"].abs() <= t["base_z_crit"], AGREES, DRIFTS).astype(object)
        t["base_verdict"] = np.where(t["base_mean"].notna(), bv, NO_BASELINE)
    return t, rate, m


def verify_table(
    ours: pd.DataFrame,
    cfg: VerifyConfig,
    ref: pd.DataFrame | None = None,
    baseline: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, float, int]:
    """The whole comparison of aggregated results (:func:`aggregate`)."""
    from kernelbench.reference import load_reference

    if ref is None:
        ref = load_reference(cfg.reference)
    t = compare_reference(ours, ref, cfg, load_sample_variation(cfg.sample_variation))
    if baseline is not None:
        t = t.merge(compare_baseline(ours, baseline), on=CELL, how="left")
    t, rate, m = judge(t, cfg.alpha, baseline is not None)
    return _sorted(t), rate, m


def _sorted(t: pd.DataFrame) -> pd.DataFrame:
    from kernelbench.plot import _dataset_order, _kernel_rank, _label_rank

    order = {ds: i for i, ds in enumerate(_dataset_order(t))} if "d" in t else {}
    keys = pd.DataFrame(
        {
            "_ds": t["dataset"].map(lambda d: (order.get(d, 99), d)),
            "_k": t["kernel"].map(_kernel_rank),
            "_m": t["method_label"].map(_label_rank),
            "_n": t["n"],
        }
    )
    idx = sorted(range(len(t)), key=lambda i: tuple(keys.iloc[i]))
    return t.iloc[idx].reset_index(drop=True)


def counts(t: pd.DataFrame) -> dict[str, int]:
    v = t["verdict"]
    out = {
        "reproduced": int((v == REPRODUCED).sum()),
        "known": int(v.str.startswith(KNOWN).sum()),
        "deviate": int((v == DEVIATES).sum()),
        "no_reference": int((v == NO_REFERENCE).sum()),
    }
    if "base_verdict" in t:
        b = t["base_verdict"]
        out.update(
            agree=int((b == AGREES).sum()),
            drift=int((b == DRIFTS).sum()),
            no_baseline=int((b == NO_BASELINE).sum()),
        )
    return out


def failed(t: pd.DataFrame) -> bool:
    """Whether any cell that must reproduce deviates, or any baseline cell drifts."""
    bad = (t["verdict"] == DEVIATES).any()
    if "base_verdict" in t:
        bad = bad or (t["base_verdict"] == DRIFTS).any()
    return bool(bad)


# -- output -----------------------------------------------------------------------------


def _num(x: Any, spec: str = ".4g") -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-" if x is None or np.isnan(x) else ("inf" if x > 0 else "-inf")
    return format(x, spec)


def _pm(mean: Any, sem: Any) -> str:
    if mean is None or not np.isfinite(mean):
        return "-"
    return f"{mean:.4g} ± {_num(sem, '.2g')}"


def display_frame(t: pd.DataFrame) -> pd.DataFrame:
    """The printed columns: one row per cell."""
    cols = {
        "dataset": t["dataset"],
        "kernel": t["kernel"],
        "method": t["method_label"],
        "n": t["n"].map(_n_str),
        "runs": t["runs"].astype(int).astype(str),
        "ours (mean ± se)": [_pm(m, s) for m, s in zip(t["mean"], t["sem"], strict=True)],
        "paper (mean ± se)": [
            _pm(m, s) for m, s in zip(t["paper_mean"], t["paper_sem"], strict=True)
        ],
        "ratio": t["ratio"].map(lambda x: _num(x, ".3f")),
        "z": t["z"].map(lambda x: _num(x, "+.2f")),
        "z_crit": t["z_crit"].map(lambda x: _num(x, ".2f")),
    }
    if "base_verdict" in t:
        cols["baseline (mean)"] = t["base_mean"].map(lambda x: _num(x, ".4g"))
        cols["z_base"] = t["base_z"].map(lambda x: _num(x, "+.2f"))
        cols["vs baseline"] = t["base_verdict"]
    cols["verdict"] = t["verdict"]  # last: the reasons of known deviations are long
    return pd.DataFrame(cols)


def format_text(d: pd.DataFrame) -> str:
    widths = [max(len(str(c)), *(len(str(v)) for v in d[c])) for c in d.columns]
    right = {"n", "runs", "ratio", "z", "z_crit", "z_base", "baseline (mean)"}

    def line(vals: Iterable[Any]) -> str:
        parts = []
        for c, v, w in zip(d.columns, vals, widths, strict=True):
            parts.append(str(v).rjust(w) if c in right else str(v).ljust(w))
        return "  ".join(parts).rstrip()

    out = [line(d.columns), line("-" * w for w in widths)]
    out += [line(row) for row in d.itertuples(index=False)]
    return "\n".join(out)


def summary_line(c: Mapping[str, int]) -> str:
    return f"{c['reproduced']} reproduced, {c['known']} known deviations, {c['deviate']} deviate"


def write_table(t: pd.DataFrame, path: Path) -> None:
    """``.csv``: every column of the comparison; ``.md``: the printed table as Markdown."""
    from kernelbench.plot import markdown_table

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".md":
        path.write_text(markdown_table(display_frame(t)))
    else:
        t.to_csv(path, index=False)


# -- command ---------------------------------------------------------------------------


def load_baseline(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise KernelbenchError(
            f"baseline table {str(path)!r} not found (scripts/make_baseline.py writes it; "
            "--no-baseline skips the check)"
        )
    base = pd.read_csv(path)
    missing = {*CELL, "runs", "mean", "std"} - set(base.columns)
    if missing:
        raise KernelbenchError(f"{path}: missing columns {sorted(missing)}")
    return base


@click.command("verify")
@click.option(
    "--grid",
    type=click.Choice(GRIDS),
    default="reduced",
    show_default=True,
    help="reduced: Powerplant, LETTER, USPS, n = 1, 3, 5, 30 runs (CI); full: Fig. 1.",
)
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the grid's shards are run and stored (resumed) [default: results/verify-GRID].",
)
@click.option("--runs", type=click.IntRange(min=2), default=None, help="Override runs per cell.")
@click.option("--no-run", is_flag=True, help="Compare the results already there; run nothing.")
@click.option(
    "--baseline/--no-baseline",
    "use_baseline",
    default=None,
    help="Also check against our committed baseline [default: when the table exists].",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Cells run in parallel (results are identical for any value).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the comparison: .csv (all columns) or .md (the table).",
)
@click.option(
    "--config",
    "config_name",
    default=DEFAULT_CONFIG,
    show_default=True,
    help="Verify config: a name in configs/verify/ or a YAML path.",
)
@click.option("--alpha", type=float, default=None, help="Family-wise false-alarm rate.")
@click.option("--quiet", "-q", is_flag=True, help="Do not echo cells as they run.")
def verify(
    grid: str,
    results_dir: Path | None,
    runs: int | None,
    no_run: bool,
    use_baseline: bool | None,
    jobs: int,
    out: Path | None,
    config_name: str,
    alpha: float | None,
    quiet: bool,
) -> None:
    """Run a Fig. 1 grid and check, cell by cell, that it reproduces the paper.

    Exit status 0 when every cell that should reproduce does (and no cell drifts
    from the baseline), 1 otherwise, 2 on usage errors.
    """
    from kernelbench.results import read_results

    cfg = load_config(config_name)
    if alpha is not None:
        if not 0.0 < alpha < 1.0:
            raise KernelbenchError(f"--alpha must be in (0, 1), got {alpha}")
        cfg.alpha = alpha
    results_dir = results_dir or Path("results") / f"verify-{grid}"
    cells = grid_cells(cfg, grid, runs=runs)
    t0 = time.perf_counter()
    if not no_run:
        echo = None if quiet else (lambda s: click.echo(s, err=True))
        run_cells(cells, results_dir, jobs=jobs, echo=echo)
    df = read_results(results_dir)
    df = df[df["experiment"].isin(grid_experiments(cfg, grid))]
    want = {
        (c["dataset"]["name"], c["kernel"]["name"], c["method"]["label"], float(c["n"]))
        for c in cells
    }
    keep = [
        k in want
        for k in zip(
            df["dataset"], df["kernel"], df["method_label"], df["n"].astype(float), strict=True
        )
    ]
    df = df[keep]
    if df.empty:
        raise KernelbenchError(f"no results of the {grid} grid under {str(results_dir)!r}")
    if runs is not None:
        df = df[df["runs"] == runs]
    ours = aggregate(df, cfg.metric)
    dims = df.groupby("dataset")["d"].first()
    ours["d"] = ours["dataset"].map(dims)  # orders the table's datasets by d
    missing_cells = len(want) - len(ours)

    base = None
    if use_baseline is None:
        use_baseline = cfg.baseline is not None and cfg.baseline.is_file()
    if use_baseline:
        if cfg.baseline is None:
            raise KernelbenchError(f"verify config {cfg.name!r} names no baseline table")
        base = load_baseline(cfg.baseline)
    t, rate, m = verify_table(ours, cfg, baseline=base)

    click.echo(format_text(display_frame(t)))
    click.echo("")
    c = counts(t)
    zc = t["z_crit"].dropna()
    span = f"{zc.min():.2f}-{zc.max():.2f}" if len(zc) else "-"
    click.echo(
        "z = (ours - paper) / sqrt(se_ours^2 + se_paper^2 + 2 tau^2); reproduced when "
        f"|z| <= z_crit = {span} (Sidak: family-wise alpha {cfg.alpha:g} over {m} "
        f"comparisons, per-test {rate:.2g}; Student t at Welch-Satterthwaite df)"
    )
    if c["no_reference"]:
        click.echo(f"{c['no_reference']} cells have no paper number (shown, not judged)")
    if missing_cells > 0:
        click.echo(f"{missing_cells} cells of the {grid} grid have no results in {results_dir}")
    if base is not None:
        click.echo(
            f"baseline {cfg.baseline}: {c['agree']} agree, {c['drift']} drift"
            + (f", {c['no_baseline']} not in the baseline" if c["no_baseline"] else "")
        )
    click.echo(f"[{time.perf_counter() - t0:.0f} s]", err=True)
    if out is not None:
        write_table(t, out)
        click.echo(f"wrote {out}", err=True)
    click.echo(summary_line(c))
    if failed(t):
        raise SystemExit(1)
