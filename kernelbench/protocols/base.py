"""The protocol plug-in, measurement side: what one experiment measures and stores.

A protocol (as an Objective in benchopt) is one module in ``kernelbench/protocols/``
with a :class:`Protocol` subclass registered in :data:`PROTOCOLS`, its settings a
dataclass (:attr:`Protocol.Settings`, selected by ``configs/protocol/<name>.yaml``).
It owns

* how a cell is measured: :meth:`Protocol.prepare` (data and what every run shares)
  and :meth:`Protocol.measure` (the rows of a batch of runs);
* its row schema: the common cell and provenance columns of
  :mod:`kernelbench.results` around its own :attr:`Protocol.columns`;
* one declaration of the settings that identify a cell beside dataset, kernel, method
  and n (:attr:`Protocol.cell_settings`), from which its shard path parts, its row
  keys and its cell keys (:attr:`Protocol.cell_keys`) are derived.

What its results are summarised, compared and drawn as (metrics, headline, figures,
reference cells) is its reporting side, :mod:`kernelbench.reporting` (one module of the
same name), read by ``kernelbench plot``, ``verify``, ``report`` and ``baseline``.

The runner (:mod:`kernelbench.experiment`) only calls these hooks; adding a protocol
needs no change there.

The hooks take a *cell*: a :class:`kernelbench.cell.Cell`, built once from the
composed config (``configs/config.yaml``) with the protocol's settings validated and
resolved (:attr:`Protocol.Settings`, :meth:`Protocol.check_settings`), its data key
and the dataset's data settings for it (``dataset.splits[<data key>]``), read by
attribute: a protocol reads its settings as its dataclass (``self._opts(cell).sigma``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import numpy as np
import pyarrow as pa

from kernelbench.errors import KernelbenchError, choices_error
from kernelbench.results import dumps, make_schema
from kernelbench.seeding import derive_rng
from kernelbench.settings import ProtocolSettings, field_names, store, typed

if TYPE_CHECKING:  # pragma: no cover
    from kernelbench.cell import Cell
    from kernelbench.features import RandomFeatureMap

#: A protocol's settings dataclass.
S = TypeVar("S", bound=ProtocolSettings)


#: Most rows over which a bandwidth rule averages (the neighbours are all rows).
BANDWIDTH_QUERIES = 1000
#: What a cell's ``n`` counts (the ``budget`` setting, where a protocol allows it): ``n``
#: (Munkhoeva et al.: D = 2 n (d + 1)) or ``s`` (Yang et al. 2014: s = D points).
BUDGETS: tuple[str, ...] = ("n", "s")


@lru_cache(maxsize=16)
def _bandwidth_gamma(dataset_json: str, seed: int, data_json: str, key: str, rule: str) -> float:
    import json

    from kernelbench.bandwidth import nn_sigma, parse_rule
    from kernelbench.datasets import train_part
    from kernelbench.datasets.splits import recipes

    dataset = json.loads(dataset_json)
    name = str(dataset["name"])
    X = train_part(name, recipes(dataset)[key], json.loads(data_json)).scaled()
    queries = min(BANDWIDTH_QUERIES, len(X))
    rng = derive_rng(seed, "bandwidth", name)
    return nn_sigma(X, k=parse_rule(rule), n_queries=queries, random_state=rng).gamma


@lru_cache(maxsize=4)
def kernel_approx_pair_cached(dataset_json: str, seed: int, data_json: str, key: str) -> tuple:
    """X, Y (read-only, C-contiguous float64) and the provenance of
    :func:`kernelbench.datasets.kernel_approx_pair`, cached per (dataset, seed, data
    settings, data key): the sample of ``kernel_approx``, ``pair_mse`` and ``qmc_adaptive``."""
    import json

    from kernelbench.datasets import kernel_approx_pair

    X, Y, prov = kernel_approx_pair(json.loads(dataset_json), seed, json.loads(data_json), key)
    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    X.setflags(write=False)
    Y.setflags(write=False)
    return X, Y, dict(prov)


@lru_cache(maxsize=8)
def exact_kernel_cached(pair_key: tuple, kernel: str, kparams_json: str) -> tuple:
    """The read-only exact cross-kernel K = k(X, Y) of :func:`kernel_approx_pair_cached`
    (``pair_key``: its arguments), its Frobenius and its spectral norm."""
    import json

    from kernelbench.kernels import exact_kernel
    from kernelbench.metrics import spectral_norm

    X, Y, _ = kernel_approx_pair_cached(*pair_key)
    K = exact_kernel(kernel, X, Y, **json.loads(kparams_json))
    K.setflags(write=False)
    return K, float(np.linalg.norm(K)), spectral_norm(K)


@dataclass(frozen=True)
class Pair:
    """What every run of a cell on a sample pair shares (:meth:`Protocol.exact_pair`):
    X, Y, the exact kernel K = k(X, Y), its Frobenius and spectral norms, provenance."""

    X: np.ndarray
    Y: np.ndarray
    K: np.ndarray
    fro_K: float
    spec_K: float
    provenance: dict[str, Any]

    def columns(self) -> dict[str, Any]:
        """The cell columns every protocol on a sample pair records: d, samples, the
        data's source and deviation note."""
        return {
            "d": int(self.X.shape[1]),
            "samples": int(self.X.shape[0]),
            "data_source": self.provenance.get("data_source"),
            "data_deviation": self.provenance.get("data_deviation"),
        }


class Protocol(Generic[S]):
    """Base class of the protocols (see the module docstring); ``S`` is its settings
    dataclass (:attr:`Settings`)."""

    #: registry id, the stem of configs/protocol/<name>.yaml
    name: ClassVar[str] = ""
    #: one line: the paper experiment it reproduces
    title: ClassVar[str] = ""
    #: the protocol's own columns of a row, between the common cell and provenance ones
    columns: ClassVar[tuple[tuple[str, pa.DataType], ...]] = ()
    #: settings that identify a cell beside dataset, kernel, method and n (e.g. the
    #: learner), declared once: each is a directory level ``<key>=<value>`` of the shard
    #: path (:meth:`path_parts`), a column of every row (:meth:`row_keys`) and a cell key
    #: (:attr:`cell_keys`)
    cell_settings: ClassVar[tuple[str, ...]] = ()
    #: columns that tell apart the rows of one run (e.g. an iteration): cell keys after n
    row_index: ClassVar[tuple[str, ...]] = ()
    #: the settings' schema and defaults (:mod:`kernelbench.settings`)
    Settings: ClassVar[type[ProtocolSettings]] = ProtocolSettings
    #: whether a shard stored with fewer runs may be extended by the missing runs (run
    #: r's row depends on r alone); False where rows are measurements of the moment
    extendable: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A protocol with a ``Settings`` dataclass registers it as the structured config
        ``protocol/<name>_settings`` (the schema ``configs/protocol/<name>.yaml`` selects)."""
        super().__init_subclass__(**kwargs)
        if "Settings" in cls.__dict__ and cls.name:
            store(cls.name, cls.Settings)

    # -- schema and settings -------------------------------------------------------
    def _opts(self, cell: Cell) -> S:
        """The cell's settings as this protocol's dataclass (:attr:`Cell.options`)."""
        return cast(S, cell.options)

    def schema(self) -> pa.Schema:
        """The Parquet schema of this protocol's shards."""
        return make_schema(list(self.columns))

    def check_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the protocol settings (unknown keys are one-line errors) and fill
        the ones left out from the ``Settings`` dataclass, typed as Hydra types them.

        ``budget`` (where a protocol allows it) must be one of :data:`BUDGETS`; the
        default ``n`` is dropped, so a cell's settings and hash are those without it.
        Called once per cell, when it is built (:func:`kernelbench.cell.build_cell`).
        """
        valid = set(field_names(self.Settings))
        unknown = sorted(set(settings) - valid)
        if unknown:
            raise KernelbenchError(
                f"unknown setting(s) {', '.join(unknown)} for protocol {self.name!r}; "
                f"valid: {', '.join(sorted(valid - {'name'}))}"
            )
        out = typed(self.Settings, settings)
        if "budget" in out:
            if out["budget"] not in BUDGETS:
                raise choices_error(f"budget of protocol {self.name!r}", out["budget"], BUDGETS)
            if out["budget"] == BUDGETS[0]:
                del out["budget"]
        return out

    def exact_pair(self, cell: Cell) -> Pair:
        """The cell's samples X, Y (the data settings' entry ``protocol.data``, default
        the protocol's name) and their exact kernel, both cached per process; one line
        if the kernel is zero (relative errors undefined)."""
        pair_key = cell.pair_key
        X, Y, prov = kernel_approx_pair_cached(*pair_key)
        K, fro_K, spec_K = exact_kernel_cached(
            pair_key, cell.kernel["name"], dumps(self.kernel_params(cell))
        )
        if fro_K == 0.0 or spec_K == 0.0:
            raise KernelbenchError(
                f"the exact kernel of {cell.dataset['name']!r} is zero; errors are undefined"
            )
        return Pair(X, Y, K, fro_K, spec_K, prov)

    def default_runs(self, settings: Mapping[str, Any], data: Mapping[str, Any]) -> int | None:
        """Runs when the cell says ``runs: null``: the dataset's data settings' (``data``),
        else the protocol's."""
        runs = data.get("runs")
        return settings.get("runs") if runs is None else runs

    @property
    def cell_keys(self) -> tuple[str, ...]:
        """The columns that identify a cell in aggregated tables (verify, figures):
        dataset, kernel, method label, :attr:`cell_settings`, n, :attr:`row_index`."""
        return ("dataset", "kernel", "method_label", *self.cell_settings, "n", *self.row_index)

    def row_keys(self, cell: Cell) -> dict[str, Any]:
        """The values of :attr:`cell_settings`, columns of every row of the cell."""
        return {k: cell.settings[k] for k in self.cell_settings}

    # -- measurement ---------------------------------------------------------------
    def check(self, cell: Cell) -> None:
        """Validate what can be checked before loading data (method, kernel, settings).

        A data rule for gamma (``nn50``) is parsed here and resolved later, in
        :meth:`kernel_params`, when the data is loaded.
        """
        from kernelbench.bandwidth import parse_rule

        params = dict(cell.kernel["params"])
        if isinstance(params.get("gamma"), str):
            parse_rule(params["gamma"])
            params["gamma"] = 1.0  # stands for the data's value while checking the map
        fm = self.feature_map(replace(cell, kernel={**cell.kernel, "params": params}), None)
        fm._check_params()  # the method's own parameters (n_blocks, ...), before any data

    def prepare(self, cell: Cell) -> Any:
        """Load the data and compute what every run of the cell shares."""
        raise NotImplementedError

    def cell_columns(self, cell: Cell, ctx: Any) -> dict[str, Any]:
        """Columns with one value per cell: at least d, data_source and data_deviation."""
        raise NotImplementedError

    def measure(self, cell: Cell, ctx: Any, runs: Sequence[int]) -> list[dict]:
        """The rows of ``runs`` (each a fresh map from :meth:`run_rng`), in order.

        A row holds D, n_features, fit_seconds, transform_seconds and the protocol's
        columns: one row per run, or several rows per run that each name their ``run``
        (e.g. one per iteration). The default measures the runs one by one with
        :meth:`measure_run`; a protocol may batch them, with rows identical to the
        one-by-one ones.
        """
        return [self.measure_run(cell, ctx, r) for r in runs]

    def measure_run(self, cell: Cell, ctx: Any, run: int) -> dict:
        raise NotImplementedError

    def batch_size(self, cell: Cell) -> int:
        """How many runs :meth:`measure` is given at once (progress is per batch)."""
        return 1

    # -- feature maps --------------------------------------------------------------
    def run_rng(self, cell: Cell, run: int) -> np.random.Generator:
        """The Generator of run ``run``: from (seed, dataset, kernel, method label, n, run),
        so a run draws the same map whatever the order, worker or protocol."""
        return derive_rng(
            cell.seed,
            cell.dataset["name"],
            cell.kernel["name"],
            cell.method["label"],
            cell.n,
            run,
        )

    def map_n(self, cell: Cell, d: int) -> float:
        """The feature map's budget n for the cell's budget.

        ``budget: n`` (the default): the identity, D = 2 n (d + 1) projections.
        ``budget: s`` (Yang et al. 2014, Tables 1-2: s points, each a cos and a sin
        feature): the cell's n is s = D, so the map gets n = s / (2 (d + 1)).
        """
        if getattr(cell.options, "budget", BUDGETS[0]) == "s":
            return float(cell.n) / (2.0 * (d + 1))
        return cell.n

    def kernel_params(self, cell: Cell, ctx: Any = None) -> dict[str, Any]:
        """The kernel parameters the maps and the exact kernel get.

        ``gamma`` may name a data rule, ``nn<k>`` (Yu et al. 2016, Sec. 3: sigma =
        the mean distance to the k-th nearest neighbour, gamma = 1 / (2 sigma^2)),
        resolved by :meth:`bandwidth_gamma` on the cell's data.
        """
        params = dict(cell.kernel["params"])
        if isinstance(params.get("gamma"), str):
            params["gamma"] = self.bandwidth_gamma(cell, params["gamma"])
        return params

    def bandwidth_gamma(self, cell: Cell, rule: str) -> float:
        """gamma of a bandwidth rule (``nn<k>``) on the dataset's scaled train part.

        The train part is the one of the protocol's data settings; the mean runs
        over at most :data:`BANDWIDTH_QUERIES` rows drawn by a Generator derived
        from (seed, "bandwidth", dataset), the neighbours over all rows
        (:func:`kernelbench.bandwidth.nn_sigma`). Cached per process.
        """
        return _bandwidth_gamma(*cell.pair_key, rule)

    def feature_map(
        self,
        cell: Cell,
        random_state: Any,
        d: int | None = None,
        ctx: Any = None,
    ) -> RandomFeatureMap:
        """An unfitted map of the cell's method (validates method and parameters)."""
        from kernelbench.features import make_feature_map

        method = cell.method
        n = cell.n if d is None else self.map_n(cell, d)
        return make_feature_map(
            method["name"],
            kernel=cell.kernel["name"],
            n=n,
            random_state=random_state,
            **self.kernel_params(cell, ctx),
            **method["params"],
        )
