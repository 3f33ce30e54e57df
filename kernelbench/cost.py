"""The price of a grid before it runs: seconds and peak memory per cell, from its shapes.

The work counted per process, per (data, kernel), per run and per cell, the
coefficients :data:`COEF` and their calibration are docs/performance.md, "The cost
model". Peak memory is counted, not fitted. The module is light: numpy-free
arithmetic on the resolved :class:`~kernelbench.cell.Cell`; nothing is loaded or drawn.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernelbench.errors import KernelbenchError

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.probe import Probe

#: CPU seconds per unit of each work count of :func:`cell_terms`, one BLAS thread, from
#: ``scripts/calibrate_cost.py --fit`` on the 2-core AMD EPYC development machine: draw,
#: qr, sqr, spectral, chol, eigh, sinc and the GEMM rate (exact, proj, gemm) timed alone,
#: the rest fitted (docs/performance.md, "The cost model"). A numba map's first compile
#: and a run's Python fitted to zero there (absorbed by start and elem). What a cell's
#: protocol does is counted by its ``price`` hook (:class:`Work`); the module names no
#: protocol.
COEF: dict[str, float] = {
    "start": 0.14,  # once per process: the first cell's imports
    "cell": 0.0138,  # per cell: build, shard, summary
    "data": 1.87e-09,  # per (data, kernel): per element of the dataset read and scaled
    "exact": 1.31e-11,  # per flop of the exact kernel (a GEMM)
    "draw": 1.18e-08,  # per normal drawn (d D per run)
    "qr": 2.74e-10,  # per flop of an orthogonal map's QR (D d^2)
    "proj": 1.31e-11,  # per flop of the projections (4 N d D), a GEMM
    "elem": 8.68e-09,  # per feature element (cos, sin, ...: 2 N F), and a run's Python
    "gemm": 1.31e-11,  # per flop of K_hat (2 N^2 F) and of the learners' Grams
    "gemm32": 7.17e-12,  # per flop of a float32 K_hat (its casts too): gemm x 0.547
    "spectral": 1.39e-10,  # per flop of the norms' matrix-vector products
    "sqr": 5.56e-11,  # per flop of a sample-space draw's QR of the points (2 (2N)^2 d)
    "chol": 3.37e-11,  # per flop of a Cholesky factorisation (F^3 / 3)
    "eigh": 1.52e-10,  # per p^3 of a symmetric eigendecomposition (p x p)
    "learn": 2.05e-08,  # per element of an SVM's Gram (libsvm's fit; predict on the exact)
    "probe": 1.0,  # per CPU second of a probed map (a plug-in's: kernelbench.probe)
    "sinc": 1.3e-08,  # per pair and dimension of a box discrepancy (kernelbench.qmc)
}
#: Golub-Kahan steps of a spectral norm, a typical count (N x N, rtol 1e-13).
SPECTRAL_STEPS = 40
#: Methods whose draw orthogonalises blocks (a QR of D d^2 flops per run).
ORTHOGONAL = ("orf", "sr11", "sr13", "sr33")
#: Bytes of one float64.
F64 = 8


@dataclass(frozen=True)
class Shapes:
    """The sizes a cell's cost is counted from."""

    N: int  # rows per subset (sample-pair protocols) or training rows
    N_test: int  # rows mapped besides (test rows; the second subset Y)
    d: int  # input dimension the map sees
    D: int  # projections
    F: int  # features (D per output of the kernel's nonlinearity)
    runs: int
    rows: int  # rows x columns read from the data file (the train part)
    batch: int  # runs measured together (their features held at once)
    n: float = 0.0  # the map's n at d (what a probe of a plug-in's map draws)
    sample_space: bool = False  # whether a run draws the projections of its 2N points


@dataclass(frozen=True)
class Work:
    """A protocol's price of one cell (its ``price`` hook): the cell's shapes and what
    the protocol does besides drawing its maps and mapping its rows, as work counts
    (keys of :data:`COEF`) of all its runs. The map's own work (draw, QR, projections,
    nonlinearity, or a plug-in's probe) is counted by :func:`cell_terms` from ``mapped``
    and ``calls``."""

    shapes: Shapes
    #: work counts of the cell's runs (all of them), e.g. K_hat's GEMM flops
    terms: Mapping[str, float] = field(default_factory=dict)
    #: work done once per (data, kernel) in a process, e.g. the exact kernel
    once: Mapping[str, float] = field(default_factory=dict)
    #: rows mapped per run (None: N + N_test, the two sets once)
    mapped: float | None = None
    #: transform calls per run (what a probe's per-call time is multiplied by)
    calls: int = 2
    #: float64 elements held at the peak besides the data, W and the projections
    #: (None: one run's features and the F x F normal equations)
    held: int | None = None


@dataclass(frozen=True)
class CellCost:
    """What one cell costs: the cell, its shapes, seconds and peak bytes."""

    cell: Cell
    shapes: Shapes
    seconds: float
    peak_bytes: int
    #: its work counts (:func:`cell_terms`)
    terms: dict[str, float]
    #: the probe that priced its map (a plug-in's), else None
    probe: Probe | None = None


def data_shape(cell: Cell) -> tuple[int, int, int]:
    """(rows of the data file's train part, and its test part where the recipe
    concatenates it; the train rows the recipe keeps; d after its PCA) of ``cell``'s
    dataset, from its registered spec: no data is read."""
    from kernelbench.datasets import DATASETS

    ds = cell.data_settings
    spec = DATASETS.get(str(cell.dataset.get("name")))
    rows, d = spec.n_train + (spec.n_test if ds.get("concat_test") else 0), spec.d
    train = int(ds.get("train_rows") or rows)
    if ds.get("pca"):
        d = int(ds["pca"])
    return rows, train, d


def sample_rows(cell: Cell, train: int) -> int:
    """Rows per subset of a sample pair: the recipe's ``samples``, else min(train, 1000)."""
    return int(cell.data_settings.get("samples") or min(train, 1000))


def split_rows(cell: Cell, rows: int, train: int) -> tuple[int, int]:
    """(train, test) rows of a split of ``rows`` rows (``train`` kept) by the recipe's
    ``test``: ``rest`` with ``train_rows``, ``given`` (the test part half the train
    rows), else half and half."""
    ds = cell.data_settings
    if ds.get("test") == "rest" and ds.get("train_rows"):
        return train, max(0, rows - train)
    N = train // 2 if ds.get("test") not in ("given", "rest") else train
    return N, max(0, rows - N) if ds.get("test") != "given" else N // 2


def make_shapes(
    cell: Cell,
    N: int,
    N_test: int,
    d: int,
    rows: int,
    n: float,
    batch: int = 1,
    sample_space: bool = False,
) -> Shapes:
    """The :class:`Shapes` of ``cell``: D projections of the map's ``n`` at ``d``
    (:func:`~kernelbench.features.base.n_projections`) and F = D per output of the
    kernel's nonlinearity (a plug-in kernel: 2)."""
    from kernelbench.features.base import n_projections
    from kernelbench.kernels import KERNELS

    D = n_projections(n, d)
    try:
        outputs = KERNELS.get(str(cell.kernel["name"])).n_outputs
    except KernelbenchError:  # a plug-in kernel: the larger count
        outputs = 2
    return Shapes(N, N_test, d, D, outputs * D, int(cell.runs), rows, batch, n, sample_space)


def features(cell: Cell, s: Shapes) -> float:
    """The features a run computes: F, Nystroem's at most its N fitted rows (m = F
    landmarks)."""
    F = float(s.F)
    return min(F, float(s.N)) if cell.method.get("name") == "nystrom" else F


def pair_work(cell: Cell, s: Shapes, passes: int = 1, gemm: str = "gemm") -> Work:
    """The work of a sample pair X, Y (N x d, N_test x d; :meth:`Protocol.price`'s
    default): per run and pass K_hat = z(X) z(Y)^T (2 N M F flops, priced as COEF's
    ``gemm``: "gemm32" for a float32 product) and the spectral norm of its error
    (:data:`SPECTRAL_STEPS` products of 4 N M flops), the exact K and its norms once;
    held: K, the Krylov bases, and a batch's features and K_hat."""
    R, N, M, F = s.runs, s.N, s.N_test, features(cell, s)
    RP = R * passes
    return Work(
        s,
        terms={gemm: RP * 2.0 * N * M * F, "spectral": RP * 4.0 * SPECTRAL_STEPS * N * M},
        once={"exact": 2.0 * N * M * s.d + 4.0 * SPECTRAL_STEPS * N * M},
        mapped=passes * float(N + M),
        calls=2 * passes,
        held=N * M + 2 * SPECTRAL_STEPS * (N + M) + s.batch * ((N + M) * s.F + N * M),
    )


def sinc_pairs(s: Shapes) -> float:
    """Units of term ``sinc`` in one evaluation of the box discrepancy of D frequencies
    in d dimensions (:func:`kernelbench.qmc.mean_squared_error`): Theorem 9's sum over
    the D (D - 1) / 2 pairs, a product of d sincs each."""
    return s.D * (s.D - 1) / 2 * s.d


def shapes(cell: Cell) -> Shapes:
    """The sizes of ``cell`` (a :class:`~kernelbench.cell.Cell`), as its protocol's
    ``price`` hook counts them."""
    return cell.protocol.price(cell).shapes


def _map_work(cell: Cell, s: Shapes) -> tuple[float, float, float, bool]:
    """(flops per point and projection, normals drawn, QR flops, whether it draws in
    sample space) of one map, as docs/performance.md, "The cost model", counts them."""
    family = str(cell.method.get("name"))
    params = cell.method.get("params") or {}
    d, ss = float(s.d), s.sample_space
    if ss:
        d = float(2 * s.N)
    log_d = max(1.0, math.log2(max(d, 2.0)))
    if family == "sorf":
        blocks = float(params.get("n_blocks", 3))
        return blocks * log_d, blocks * s.D, 0.0, ss
    if family == "sr33" and params.get("rotation", "butterfly") == "butterfly":
        return d + 2 * log_d, 2 * log_d * s.D, 0.0, ss
    if family in ORTHOGONAL and params.get("construction") != "tall_qr":
        return d, d * s.D, s.D * d * d, ss  # tall_qr: reflectors applied as one GEMM
    if ss and family == "orf":  # tall_qr in sample space: d^2 normals, masked twice
        return d, 2.0 * s.d * s.d + d * s.D, 0.0, ss
    return d, d * s.D, 0.0, ss


def cell_terms(
    cell: Cell, shared: bool, work: Work, start: bool, probe: Probe | None = None
) -> dict[str, float]:
    """The work counts of one cell (keys of :data:`COEF`); ``shared``: its data and
    exact kernel were computed by an earlier cell of the grid in the same process;
    ``work``: its protocol's price (:class:`Work`); ``start``: the process's first cell;
    ``probe``: its map's measured speed (a plug-in's), which replaces the map's counted
    work (draw, QR, projections, nonlinearity) by its measured seconds."""
    s = work.shapes
    R, N, M = s.runs, s.N, s.N_test
    family = str(cell.method.get("name"))
    k, draws, qr, ss = _map_work(cell, s)
    terms = dict.fromkeys(COEF, 0.0)
    terms.update(cell=1.0, start=float(start), draw=R * draws, qr=R * qr)
    terms["data"] = 0.0 if shared else float(s.rows)
    terms["sqr"] = R * 2.0 * (N + M) ** 2 * s.d if ss else 0.0
    F = features(cell, s)
    mapped = float(N + M) if work.mapped is None else work.mapped  # rows mapped per run
    for key, v in work.terms.items():
        terms[key] += v
    for key, v in ({} if shared else work.once).items():
        terms[key] += v
    terms["proj"] = R * 2.0 * mapped * k * s.D
    terms["elem"] = R * mapped * F
    if family == "nystrom":  # kernels to the landmarks and K_LL's eigendecomposition
        terms.update(draw=0.0, qr=0.0, proj=R * 2.0 * mapped * s.d * F)
        terms["eigh"] += R * F**3
    if probe is not None:
        terms.update(draw=0.0, qr=0.0, sqr=0.0, proj=0.0, elem=0.0)
        terms["probe"] = R * probe.seconds(work.calls, mapped)
    return terms


def rff_map_seconds(rows: int, d: int, D: int) -> float:
    """The model's seconds of rff's fit and one transform of ``rows`` rows at (d, D): the
    yardstick that sizes a plug-in's probe (:func:`kernelbench.probe.probe`)."""
    return COEF["draw"] * d * D + COEF["proj"] * 2 * rows * d * D + COEF["elem"] * 2 * rows * D


def probe_rows(s: Shapes) -> int:
    """The rows of one transform call of a cell of shapes ``s`` (the larger set)."""
    return max(1, s.N, s.N_test)


def peak_bytes(work: Work) -> int:
    """The float64 bytes a cell holds at once at its peak (docs/performance.md): the
    data, what its protocol holds (:attr:`Work.held`), W and one call's projections."""
    s = work.shapes
    N, M = s.N, s.N_test
    data = s.rows + (N + M) * s.d
    held = (N + M) * s.F + s.F * s.F if work.held is None else work.held
    weights = s.d * s.D
    projections = max(N, M) * s.D  # X W^T before its nonlinearity
    return int(F64 * (data + held + weights + projections))


def price(cells: Iterable[Cell]) -> list[CellCost]:
    """The cost of each cell of a grid in order; a cell whose data and exact kernel an
    earlier cell computed (same process) is priced without them."""
    from kernelbench.probe import is_builtin, probe
    from kernelbench.results import dumps

    seen: set[tuple] = set()
    out = []
    for i, cell in enumerate(cells):
        key = (cell.pair_key, dumps(cell.kernel))
        work = cell.protocol.price(cell)
        s = work.shapes
        measured = None
        if not is_builtin(str(cell.method["name"])):  # a plug-in: its own speed
            measured = probe(cell, s.d, s.D, s.n, probe_rows(s), rff_map_seconds)
        terms = cell_terms(cell, key in seen, work, i == 0, measured)
        seen.add(key)
        seconds = sum(COEF[k] * v for k, v in terms.items())
        out.append(CellCost(cell, s, seconds, peak_bytes(work), terms, measured))
    return out


# -- the plan line and the guards ----------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """A grid's price: its cells' costs (cells already done are priced as well)."""

    costs: Sequence[CellCost]

    @property
    def cells(self) -> int:
        return len(self.costs)

    @property
    def runs(self) -> int:
        return sum(c.shapes.runs for c in self.costs)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.costs)

    @property
    def startup(self) -> float:
        """The seconds of starting a process (its imports), part of :attr:`seconds`."""
        return sum(COEF["start"] * c.terms.get("start", 0.0) for c in self.costs)

    @property
    def probes(self) -> list[Probe]:
        """The distinct probes that priced a map (plug-ins'), in order."""
        seen: dict[tuple, Probe] = {}
        for c in self.costs:
            if c.probe is not None:
                seen.setdefault((c.probe.method, c.probe.kernel, c.probe.d, c.probe.D), c.probe)
        return list(seen.values())

    @property
    def largest(self) -> CellCost | None:
        return max(self.costs, key=lambda c: c.peak_bytes, default=None)

    def line(self) -> str:
        """``plan: 12 cells, 60 runs, about 2 s on one idle core + 0.1 s start-up; peak
        memory 9.0 MiB (digits arccos0 rff n=1)``; ``, 1 map(s) priced by a probe`` where
        plug-ins' maps were (:mod:`kernelbench.probe`)."""
        big = self.largest
        where = f" ({big.cell.name})" if big is not None else ""
        peak = format_bytes(big.peak_bytes) if big is not None else "0 B"
        start = self.startup
        probed = f", {len(self.probes)} map(s) priced by a probe" if self.probes else ""
        return (
            f"plan: {self.cells} cells, {self.runs} runs, about "
            f"{format_seconds(self.seconds - start)} on one idle core + "
            f"{format_seconds(start)} start-up{probed}; peak memory {peak}{where}"
        )


def format_seconds(seconds: float) -> str:
    """``4 s``, ``12 min``, ``3.2 h``, ``5.1 days``."""
    if seconds < 90:
        return f"{max(seconds, 0.0):.0f} s" if seconds >= 1 else f"{max(seconds, 0.0):.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def format_bytes(n: float) -> str:
    """``512 B``, ``3.1 MiB``, ``7.0 GiB``, ``690 TiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable`` of /proc/meminfo), else None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return None


def parse_memory(value: Any) -> int | None:
    """A memory size: bytes as a number, or ``"8GB"``, ``"512MiB"``, ``"2G"``; None: none."""
    if value is None:
        return None
    units = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
    text = str(value).strip().lower().removesuffix("b").removesuffix("i")
    unit = text[-1:] if text[-1:] in units and text[-1:] else ""
    number = text[: len(text) - len(unit)] if unit else text
    try:
        size = float(number) * units[unit]
    except ValueError:
        size = math.nan
    if isinstance(value, bool) or not math.isfinite(size) or size <= 0:
        raise KernelbenchError(
            f"max_memory must be a positive size (bytes, or e.g. 8GB, 512MB), got {value!r}"
        )
    return int(size)


def check_plan(
    plan: Plan,
    max_memory: Any = None,
    max_hours: Any = None,
    confirm: Any = False,
) -> None:
    """Refuse, in one line, a grid whose largest cell needs more memory than
    ``max_memory`` (default: the memory available now), or whose time exceeds
    ``max_hours`` without ``confirm=true`` (null: false)."""
    from kernelbench.validation import check_bool, check_real

    confirm = check_bool("confirm", False if confirm is None else confirm)
    hours = None if max_hours is None else check_real("max_hours", max_hours, 0.0, strict=True)
    limit = parse_memory(max_memory)
    source = "max_memory"
    if limit is None:
        limit, source = available_memory(), "available memory"
    big = plan.largest
    if big is not None and limit is not None and big.peak_bytes > limit:
        s = big.shapes
        samples = f"dataset.splits.{big.cell.data_key}.samples"
        raise KernelbenchError(
            f"{big.cell.name} needs about {format_bytes(big.peak_bytes)} (N={s.N} samples, "
            f"d={s.d}, D={s.D}), over the {source} {format_bytes(limit)}; use a smaller n, "
            f"or fewer samples ({samples}=...), or raise max_memory"
        )
    if hours is not None and plan.seconds > 3600 * hours and not confirm:
        raise KernelbenchError(
            f"{plan.cells} cells, {plan.runs} runs take about {format_seconds(plan.seconds)}, "
            f"over max_hours={hours:g}: add confirm=true to run them, or choose fewer runs "
            "or cells"
        )


def limits(plan: Plan) -> dict[str, Any]:
    """max_memory, max_hours and confirm of a plan (the settings of its first cell's
    config, ``configs/config.yaml`` and the overrides; the same in every cell)."""
    extra = (plan.costs[0].cell.extra or {}) if plan.costs else {}
    return {k: extra.get(k) for k in ("max_memory", "max_hours", "confirm")}


def announce_cells(cells: Sequence[Any], echo: Callable[[str], None], output_dir: Any) -> None:
    """The plan line of composed cells (``kernelbench verify``, before its first cell)
    and the memory guard (``max_memory`` of ``configs/config.yaml``); their time is
    shown, not limited (a paper's grid is what verify is asked to run). ``output_dir``,
    where they will be written, is checked first."""
    from kernelbench.cell import build_cell
    from kernelbench.validation import check_output_dir

    check_output_dir(output_dir, "--results")
    plan = Plan(price([build_cell(c) for c in cells]))
    echo(plan.line())
    check_plan(plan, max_memory=limits(plan)["max_memory"])
