"""``kernelbench run``: the Hydra glue that launches a grid, one job per cell.

The click command checks the overrides and counts the cells (:func:`plan`), then
hands them to a ``hydra.main`` task, so sweepers and launchers behave as in any Hydra
app; one job (:func:`_job`) builds one :class:`~kernelbench.cell.Cell` and runs
:func:`kernelbench.experiment.run_and_store`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from kernelbench.errors import Interrupted, KernelbenchError, choices_error

#: Config groups that users select on the command line, with their registry kind.
GROUPS = ("method", "kernel", "dataset", "protocol", "experiment")

#: The grid run by a bare ``kernelbench run``.
DEFAULT_EXPERIMENT = "quick"

#: Overrides that select a cell; without any of them (and without -m) a run is the quick grid.
_CELL_KEYS = ("method", "kernel", "dataset", "protocol", "n", "experiment")
#: Groups whose settings name one option (``kernel.params.gamma=0.5``, ``method.params.
#: n_blocks=2``): overriding one of them also makes a single cell, not the quick grid.
_CELL_PARAM_GROUPS = ("method", "kernel")

#: Hydra's own command-line flags (``-m/--multirun`` and ``--help`` are click's).
_HYDRA_FLAGS = tuple(
    "--cfg -c --resolve --package -p --info -i --config-path -cp --config-name -cn "
    "--config-dir -cd --experimental-rerun --shell-completion -sc --hydra-help".split()
)
#: Those that take a value (``--cfg job``); ``--info`` takes an optional one.
_HYDRA_VALUE_FLAGS = frozenset(_HYDRA_FLAGS) - {
    *"--resolve --info -i --shell-completion -sc --hydra-help".split()
}

_ENV_TOTAL = "KERNELBENCH_GRID_CELLS"

# -- the Hydra task (one job = one cell) ---------------------------------------------


def _job(cfg: Any) -> None:
    """Hydra task function: build the job's :class:`~kernelbench.cell.Cell` (once) from
    the composed config, run it and store its shard."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from kernelbench.cell import build_cell, cell_shard_path
    from kernelbench.experiment import run_and_store
    from kernelbench.progress import ENV_BAR, ENV_BOARD, Heartbeat, JobReport

    config = OmegaConf.to_container(cfg, resolve=True)
    try:
        cell = build_cell(config)
    except KernelbenchError as err:
        raise KernelbenchError(f"{_config_name(config)}: {err}") from None
    prefix, num = "", 0
    with contextlib.suppress(ValueError):  # ValueError: not under Hydra
        hc = HydraConfig.get()
        if hc.mode is not None and hc.mode.name == "MULTIRUN":
            num, total = hc.job.num, os.environ.get(_ENV_TOTAL)
            prefix = f"[{num + 1}/{total}] " if total else f"[{num + 1}] "
    # progress: a report to the launching process where it runs on this machine (not
    # under SLURM); it draws a bar on a terminal, which prints the job's lines; else
    # heartbeat lines on stderr
    board = os.environ.get(ENV_BOARD)
    report = JobReport(Path(board), num) if board and Path(board).is_dir() else None
    drawn = report is not None and os.environ.get(ENV_BAR) == "1"
    beat = None if drawn else Heartbeat(prefix + cell.name)
    echo = report.echo if drawn and report is not None else (lambda line: click.echo(line))

    def on_run(done: int, total: int) -> None:
        for sink in (report, beat):
            if sink is not None:
                sink.update(done, total)

    outcome, message = "failed", None
    try:
        with _job_interrupts():
            df = run_and_store(
                cell,
                output_dir=cell.output_dir,
                overwrite=bool(cell.extra.get("overwrite")),
                blas_threads=cell.extra.get("blas_threads"),
                echo=echo,
                prefix=prefix,
                on_run=on_run,
            )
        outcome = "skipped" if df is None else "computed"
    except KeyboardInterrupt as err:
        outcome, message = "interrupted", str(err)
        if not _in_launcher():  # back to the launching process as an ordinary error
            signum = getattr(err, "signum", None) or 2
            raise JobInterrupted(f"signal {signum}: {message}") from None
        raise
    except KernelbenchError as err:
        # name the cell: in a sweep the error reaches the user after the other jobs
        raise KernelbenchError(f"{cell.name}: {err}") from None
    finally:
        if beat is not None:
            beat.close()
        if report is not None:  # how the job ended and where its shard is
            out, shard = cell.output_dir, None
            if out is not None and outcome not in ("failed", "interrupted"):
                shard = str(cell_shard_path(cell, out))
            report.finish(outcome, shard, out, message)


def _config_name(config: dict[str, Any]) -> str:
    """Dataset, kernel, method and n of a config that does not build (else ``job``)."""
    from kernelbench.validation import check_n

    try:
        method = config["method"]
        parts = [config["dataset"]["name"], config["kernel"]["name"]]
        parts.append(method.get("label") or method["name"])
        return " ".join(map(str, parts)) + f" n={check_n(config['n'])}"
    except (KernelbenchError, KeyError, TypeError):  # pragma: no cover
        return "job"


# -- validation before Hydra composes anything ----------------------------------------


def _values(ov: Any) -> list[Any]:
    """The values an override takes (a list for sweeps); [] for deletions."""
    if ov.is_delete():
        return []
    if ov.is_sweep_override():
        if ov.is_discrete_sweep():
            return list(ov.sweep_iterator())
        return []  # interval sweeps: left to the sweeper
    return [ov.value()]


def _split(args: list[str]) -> tuple[list[str], list[str]]:
    """Hydra flags (``--cfg job``, ``hydra/launcher=...`` stays an override) vs overrides."""
    flags, overrides = [], []
    it = iter(args)
    info_values = {"all", "config", "defaults", "defaults-tree", "plugins", "searchpath"}
    pending_info = False
    for arg in it:
        if pending_info and arg in info_values:
            flags.append(arg)
        elif arg.startswith("-"):
            if arg.split("=", 1)[0] not in _HYDRA_FLAGS:
                raise _unknown_option(arg, next(it, None))
            flags.append(arg)
            if arg in _HYDRA_VALUE_FLAGS:
                nxt = next(it, None)
                if nxt is not None:
                    flags.append(nxt)
        else:
            overrides.append(arg)
        pending_info = arg in ("--info", "-i")
    return flags, overrides


def _unknown_option(arg: str, following: str | None) -> KernelbenchError:
    """``--runs 3``: settings are overrides (``runs=3``), not options."""
    name, _, value = arg.lstrip("-").partition("=")
    value = value or (following if following is not None and "=" not in following else "")
    if name in _settings():
        hint = f"{name}={value}" if value else f"{name}=VALUE"
        return KernelbenchError(f"unknown option {arg!r}; settings are overrides: write {hint!r}")
    flags = ", ".join(["-m/--multirun", *_HYDRA_FLAGS])
    return KernelbenchError(f"unknown option {arg!r}; valid options: {flags}")


def _settings() -> dict[str, Any]:
    """The top-level settings of ``configs/config.yaml`` and the config groups."""
    from kernelbench.cell import base_config

    return {**base_config(), **{g: None for g in GROUPS}, "hydra": None}


#: config group -> the registry module and name of what its options configure
GROUP_REGISTRIES = {
    "method": ("kernelbench.features", "FEATURE_MAPS"),
    "kernel": ("kernelbench.kernels", "KERNELS"),
    "dataset": ("kernelbench.datasets", "DATASETS"),
    "protocol": ("kernelbench.protocols", "PROTOCOLS"),
}


def unconfigured(group: str) -> dict[str, str]:
    """The names registered for ``group`` (:data:`GROUP_REGISTRIES`) without a config
    file ``<group>/<name>.yaml``, each with the module that registers it."""
    import importlib

    from kernelbench.config import group_options

    module, attr = GROUP_REGISTRIES[group]
    options = set(group_options(group))
    return {
        name: getattr(obj, "__module__", None) or type(obj).__module__
        for name, obj in getattr(importlib.import_module(module), attr).items()
        if name not in options
    }


def _unknown_option_of(group: str, value: Any, valid: list[str]) -> KernelbenchError:
    """An option of ``group`` with no config file: "unknown", unless a plug-in module
    registers it (``kernelbench list`` shows it) but ships no ``<group>/<value>.yaml``."""
    from kernelbench.plugins import BUILTIN, entry_points

    plugins = any(ep.value.split(".")[0] != BUILTIN for ep in entry_points())
    found = unconfigured(group) if plugins and group in GROUP_REGISTRIES else {}
    if isinstance(value, str) and value in found:
        return KernelbenchError(
            f"{group} {value!r} (module {found[value]}) is registered but has no config file "
            f"{group}/{value}.yaml: add one to its plug-in's CONFIG_DIR (kernelbench list "
            "shows it as broken)"
        )
    return choices_error(group, value, valid)


#: the launchers of the [slurm] extra (hydra-submitit-launcher; configs/hydra/launcher/slurm.yaml)
EXTRA_LAUNCHERS = ("slurm", "submitit_slurm", "submitit_local")
#: those of them that submit to a SLURM cluster
SUBMITTING = ("slurm", "submitit_slurm")


def _check_launcher(value: Any) -> None:
    """A launcher that exists (Hydra's installed plugins and the ``hydra/launcher/``
    files of the config search path); a SLURM one only where SLURM's ``sbatch`` is on
    PATH."""
    import shutil

    from hydra.core.config_store import ConfigStore
    from hydra.core.plugins import Plugins

    from kernelbench.config import group_options

    Plugins.instance()  # registers the plugins' configs
    names = {p.removesuffix(".yaml") for p in ConfigStore.instance().list("hydra/launcher")}
    if value in EXTRA_LAUNCHERS and "submitit_slurm" not in names:
        raise KernelbenchError(
            f"hydra/launcher={value} needs hydra-submitit-launcher, the [slurm] extra: "
            "pip install 'kernelbench[slurm]'"
        )
    valid = sorted(names | set(group_options("hydra/launcher")))
    if value not in valid:
        raise choices_error("launcher", value, valid)
    if value in SUBMITTING and shutil.which("sbatch") is None:
        raise KernelbenchError(
            f"hydra/launcher={value} needs SLURM, but sbatch is not on PATH (not a cluster "
            "node?); run it on the cluster, or here with hydra/launcher=joblib or "
            "submitit_local"
        )


def _check_key(ov: Any, selected: dict[str, list[str]]) -> None:
    """An override's key must exist: ``metod=rff`` and ``+metod=rff`` are typos (one
    line with the closest setting); ``kernel.params.gamma`` must exist in every kernel
    the run selects (``+`` adds new keys below a known top-level setting)."""
    from kernelbench.config import group_options, load_group
    from kernelbench.errors import unknown_setting_error

    key = ov.key_or_group
    settings = _settings()
    root = key.split("/")[0].split(".")[0]
    if root not in settings:
        raise unknown_setting_error(root, settings)
    parts = key.split(".")
    if "/" in key or len(parts) == 1 or root == "hydra" or ov.is_add() or ov.is_force_add():
        return
    if root in GROUPS and root != "experiment":
        trees = [(f" for {root} {opt!r}", load_group(root, opt)) for opt in selected.get(root, ())]
    else:
        trees = [("", settings[root])]
    path = parts[1:]
    for where, node in trees:
        found, node = _walk(node, path)
        if found == len(path):
            continue
        prefix = ".".join(parts[: found + 1])
        valid = [f"{prefix}.{k}" for k in node] if isinstance(node, dict) else []
        others = []
        if where:  # method.params.n_blocks on rff: name the methods that have it
            options = group_options(root)
            others = [o for o in options if _walk(load_group(root, o), path)[0] == len(path)]
        if others:
            raise KernelbenchError(
                f"unknown setting {key!r}{where}; it is a setting of {root} "
                f"{', '.join(others)} (add {root}={others[0]})"
            )
        raise unknown_setting_error(key, valid, where)


def _walk(node: Any, path: list[str]) -> tuple[int, Any]:
    """How many leading parts of ``path`` the nested dicts ``node`` have, and the node
    where the walk stopped."""
    for i, part in enumerate(path):
        if not isinstance(node, dict) or part not in node:
            return i, node
        node = node[part]
    return len(path), node


def _check_gamma(value: Any) -> None:
    from kernelbench.bandwidth import parse_rule
    from kernelbench.kernels import resolve_gamma

    if isinstance(value, str):
        parse_rule(value)
    elif value is not None:  # null: the kernel's default
        resolve_gamma(value, 1)


def _check_setting(key: str, value: Any) -> None:
    """Values of the top-level settings that Hydra does not type-check."""
    from kernelbench import validation as v

    checks: dict[str, Callable[[Any], Any]] = {
        "seed": lambda x: v.check_int("seed", x, 0),
        "n": v.check_n,
        "runs": lambda x: x is None or v.check_runs(x),  # null: the dataset's
        "overwrite": lambda x: v.check_bool("overwrite", x),
        "data.download": lambda x: v.check_bool("data.download", x),
        "blas_threads": lambda x: x is None or v.check_int("blas_threads", x, 1),
        "output_dir": v.check_output_dir,
        "hydra/launcher": _check_launcher,
        "kernel.params.gamma": _check_gamma,
    }
    if key in checks:
        checks[key](value)


def plan(args: list[str], multirun: bool) -> tuple[list[str], bool, int]:
    """(Hydra arguments, multirun, number of cells) of ``args``, or one line, before any
    compute, for what is wrong (unknown options, settings and group options, bad values,
    an unusable ``output_dir``, a launcher that cannot run here).

    Without ``-m`` a run is one cell if it names one (an override of method, kernel,
    dataset, protocol or n, or a setting below method or kernel), else the quick grid;
    ``experiment=`` is always a grid.
    """
    from kernelbench.cell import base_config
    from kernelbench.config import (
        config_file,
        config_origin,
        default_option,
        expand,
        experiment_sweep,
        group_options,
    )
    from kernelbench.estimate import SHOWS, parse_overrides

    flags, overrides = _split(args)
    parsed = parse_overrides(overrides)
    keys = {ov.key_or_group.lstrip("+~") for ov in parsed}
    names_cell = any(k in _CELL_KEYS or k.split(".")[0] in _CELL_PARAM_GROUPS for k in keys)
    if not multirun and not names_cell:
        # a bare `kernelbench run` (possibly with settings like output_dir=...) runs the quick grid
        overrides = [f"experiment={DEFAULT_EXPERIMENT}", *overrides]
        parsed = parse_overrides(overrides)

    experiment = None
    swept: dict[str, list[Any]] = {}
    for ov in parsed:
        key = ov.key_or_group
        values = _values(ov)
        if key in GROUPS:
            valid = group_options(key)
            for v in values:
                if not isinstance(v, str) or v not in valid:
                    raise _unknown_option_of(key, v, valid)
            if key == "experiment" and values:
                if len(values) > 1:
                    raise KernelbenchError("choose one experiment at a time")
                experiment = values[0]
        else:
            for v in values:
                _check_setting(key, v)
        if values:
            swept[key] = values

    if experiment is not None:
        multirun = True  # an experiment is a grid: its sweeper params need multirun
        for key, values in experiment_sweep(experiment)[1].items():
            swept.setdefault(key, values)
    selected = {
        g: [str(v) for v in swept[g]] if g in swept else [default_option(g, experiment)]
        for g in GROUPS
    }
    if experiment is not None:  # the options the experiment file sweeps or selects exist
        for group, options in selected.items():
            valid = group_options(group)
            for opt in options:
                if opt is not None and opt not in valid:
                    err = _unknown_option_of(group, opt, valid)
                    where = config_origin(config_file("experiment", experiment))
                    raise KernelbenchError(f"experiment {experiment} ({where}): {err}")
    for ov in parsed:
        _check_key(ov, selected)
    if "output_dir" not in swept:
        _check_setting("output_dir", base_config()["output_dir"])
    if any(f.split("=", 1)[0] in SHOWS for f in flags):
        multirun = False  # an experiment's grid shows its first job
    cells = len(expand(swept)) if multirun else 1
    hydra_args = [*(["--multirun"] if multirun else []), *flags, *overrides]
    return hydra_args, multirun, cells


class _HideJobErrorHeader:
    """sys.stderr minus Hydra's "Error executing job with overrides" line (shown again
    for failures not kernelbench's own)."""

    _HEADER = "Error executing job with overrides:"

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.hidden: list[str] = []

    def write(self, text: str) -> int:
        if text.startswith(self._HEADER):
            self.hidden.append(text)
            return len(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _patched_env(argv: list[str], env: dict[str, str]) -> Iterator[_HideJobErrorHeader]:
    """``sys.argv``, the variables ``env`` and ``sys.stderr`` (filtered) set inside; the
    caller's values and logging restored after (Hydra configures logging)."""
    old_argv, old_env = sys.argv, {k: os.environ.get(k) for k in env}
    root = logging.getLogger()
    old_logging = (root.level, list(root.handlers))
    loggers = logging.root.manager.loggerDict
    old_disabled = {n: lg.disabled for n, lg in loggers.items() if isinstance(lg, logging.Logger)}
    filtered = _HideJobErrorHeader(sys.stderr)
    sys.argv = argv
    os.environ.update(env)
    try:
        with contextlib.redirect_stderr(filtered):
            yield filtered
    finally:
        sys.argv = old_argv
        root.setLevel(old_logging[0])
        root.handlers[:] = old_logging[1]
        for name, lg in loggers.items():
            if isinstance(lg, logging.Logger):
                lg.disabled = old_disabled.get(name, False)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: The launching process's pid, for its jobs (a job in another process handles its own
#: interrupts).
_ENV_LAUNCHER = "KERNELBENCH_LAUNCHER_PID"
#: How long the launching process waits, after an interrupt, for the jobs it forwarded
#: the signal to (joblib's workers) to keep their finished runs.
_STOP_WAIT_S = 60.0


class JobInterrupted(Exception):
    """An interrupted job that ran in its own process (a joblib worker, a SLURM job) on
    its way back to the launching process, as an ordinary error (submitit stores only
    those): ``signal <n>: <what the cell kept>``."""

    PATTERN = r"signal (\d+): (.*)"


def _in_launcher() -> bool:
    """Whether this is the launching process (the basic launcher runs jobs in it)."""
    return os.environ.get(_ENV_LAUNCHER) in (None, str(os.getpid()))


@contextlib.contextmanager
def _handling(handler: Any) -> Iterator[None]:
    """``handler`` for SIGINT and SIGTERM while the block runs; the old ones after."""
    import signal

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, previous in old.items():
            signal.signal(s, previous)


@contextlib.contextmanager
def _job_interrupts() -> Iterator[None]:
    """In a job that runs in its own process (a joblib worker, a SLURM job, which
    submitit tells to ignore SIGTERM): the first SIGINT or SIGTERM interrupts the cell,
    which keeps its finished runs; later ones (a terminal's Ctrl-C reaches the workers
    and the launcher, which forwards it) are ignored while it stops."""
    import signal
    import threading

    if _in_launcher() or threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted("terminated", None if signum == signal.SIGINT else signum)

    with _handling(interrupt):
        yield


@contextlib.contextmanager
def _interrupts(reports: Path) -> Iterator[None]:
    """SIGINT (Ctrl-C) and SIGTERM (``kill``, SLURM's time limit) interrupt the run
    while the block runs: forwarded to the running jobs of other processes (joblib's
    workers, which would otherwise be killed) and awaited until they report what they
    kept (``reports``), then raised here as :class:`Interrupted` (exit 130 or 143), so
    each running cell keeps its finished runs. A second signal while stopping is ignored."""
    import signal
    import threading
    import time

    from kernelbench.progress import read_reports

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = False

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except OSError:  # ended (or not ours)
            return False
        return True

    def running() -> list[int]:
        """The processes of this run's unfinished jobs other than this one."""
        me, states = os.getpid(), read_reports(reports).values()
        pids = [s.get("pid") for s in states if not s.get("finished")]
        return [p for p in pids if isinstance(p, int) and p != me and alive(p)]

    def interrupt(signum: int, frame: Any) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        for pid in running():
            with contextlib.suppress(OSError):  # ended meanwhile
                os.kill(pid, signum)
        deadline = time.monotonic() + _STOP_WAIT_S
        while running() and time.monotonic() < deadline:
            time.sleep(0.05)
        raise Interrupted("terminated", None if signum == signal.SIGINT else signum)

    with _handling(interrupt):
        yield


def _interrupted_line(reports: Path, err: BaseException) -> str:
    """What an interrupted run kept, in one line: the interrupted cells' own lines
    (``kept k of N runs in PATH``) and the number of finished cells."""
    from kernelbench.progress import read_reports

    done = list(read_reports(reports).values())
    said = [r["message"] for r in done if r.get("outcome") == "interrupted" and r.get("message")]
    own = str(err) if str(err) != "terminated" else ""
    if own and own not in said:
        said.append(own)
    suffix = "; rerun to continue"
    resume = any(m.endswith(suffix) for m in said)
    line = "; ".join(m.removesuffix(suffix) for m in said)
    finished = [r for r in done if r.get("shard")]
    if not line:
        line = "between cells" if finished else "before any cell ran"
    if finished:
        line += f" ({len(finished)} finished cell{'s' * (len(finished) > 1)} kept)"
    return line + (suffix if resume else "")


def _slurm_request(launcher: str, overrides: list[str]) -> tuple[dict[str, Any], set[str]]:
    """The SLURM launcher's settings as the run would compose them (the plug-in's
    defaults, ``configs/hydra/launcher/slurm.yaml``, the ``hydra.launcher.*`` overrides)
    and the names the overrides set."""
    from hydra.core.config_store import ConfigStore
    from hydra.core.plugins import Plugins
    from omegaconf import OmegaConf

    from kernelbench.config import config_file
    from kernelbench.estimate import parse_overrides

    Plugins.instance()  # registers the plug-in's structured config
    node = ConfigStore.instance().load("hydra/launcher/submitit_slurm.yaml").node
    request = dict(OmegaConf.to_container(node, resolve=False))  # type: ignore[arg-type]
    if launcher == "slurm":
        ours = OmegaConf.to_container(OmegaConf.load(config_file("hydra/launcher", "slurm")))
        request.update({k: v for k, v in ours.items() if k != "defaults"})  # type: ignore[union-attr]
    given = set()
    for ov in parse_overrides([o for o in overrides if o.startswith("hydra.launcher.")]):
        key = ov.key_or_group.removeprefix("hydra.launcher.")
        if not ov.is_sweep_override() and not ov.is_delete():
            request[key] = ov.value()
            given.add(key)
    return request, given


def _fit_slurm(launcher: str, hydra_args: list[str]) -> tuple[list[str], bool]:
    """Before anything is submitted: the request checked against the partition it
    goes to (:func:`kernelbench.slurm.fit`: one line, exit 2, for what the user set
    beyond its limits; defaults lowered, said in one line), and whether the cluster
    keeps no accounting (said in one line: submitit's ``sacct`` calls then only fail)."""
    from kernelbench import slurm

    request, given = _slurm_request(launcher, hydra_args)
    lowered, note = slurm.fit(request, given, slurm.partitions())
    if note is not None:
        click.echo(note, err=True)
    no_accounting = slurm.accounting() is None
    if no_accounting:
        click.echo(
            "slurm: this cluster keeps no accounting (sacct fails), so kernelbench follows "
            "the jobs by their results; squeue shows those still queued or running",
            err=True,
        )
    return [*hydra_args, *(f"hydra.launcher.{k}={v}" for k, v in lowered.items())], no_accounting


@contextlib.contextmanager
def _without_sacct(quiet: bool) -> Iterator[None]:
    """submitit's SLURM job watcher without its ``sacct`` calls (``quiet``): on a
    cluster without accounting each one fails with a warning, twice per poll, and the
    jobs are followed by their result files all the same."""
    if not quiet:
        yield
        return
    from submitit.slurm.slurm import SlurmInfoWatcher

    make = SlurmInfoWatcher._make_command
    SlurmInfoWatcher._make_command = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        SlurmInfoWatcher._make_command = make  # type: ignore[method-assign]


def covering_jobs(batch: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """The jobs of ``batch`` that hold an override no earlier one of them holds (the
    first job always): together they hold every override value of the sweep."""
    seen: set[str] = set()
    chosen = []
    for job in batch:
        if not seen.issuperset(job):
            chosen.append(job)
            seen.update(job)
    return chosen


@contextlib.contextmanager
def _compose_each_override_once() -> Iterator[None]:
    """Hydra's sweeper composes every job of a batch before it launches any
    (``validate_batch_is_legal``, about 50 ms a job here, in this process while no job
    runs: 10 s of the 192-cell Liu grid's wall). :func:`plan` and the plan line have
    already built every cell from its overrides, so inside, the sweeper composes only
    :func:`covering_jobs`: every override value of the sweep still goes through Hydra's
    composition once before anything runs (17 jobs of the Liu grid's 192)."""
    from hydra.plugins.sweeper import Sweeper

    every = Sweeper.validate_batch_is_legal

    def covering(self: Sweeper, batch: Sequence[Sequence[str]]) -> None:
        every(self, covering_jobs(batch))

    Sweeper.validate_batch_is_legal = covering  # type: ignore[method-assign]
    try:
        yield
    finally:
        Sweeper.validate_batch_is_legal = every  # type: ignore[method-assign]


def _job_error(err: Exception) -> Interrupted | None:
    """A job of another process that was interrupted (a SLURM job's ``scancel`` or time
    limit: SIGTERM), as Hydra hands it back, as an interrupt here."""
    import re

    m = re.fullmatch(JobInterrupted.PATTERN, str(err)) if isinstance(err, JobInterrupted) else None
    return None if m is None else Interrupted(m[2], int(m[1]) if m[1] != "2" else None)


def launch(args: list[str], multirun: bool = False) -> None:
    """Run ``kernelbench run [args]`` in this process (what the click command does)."""
    import shutil
    import tempfile

    import hydra
    from hydra.errors import HydraException

    from kernelbench.config import config_dir, searchpath_overrides
    from kernelbench.estimate import SHOWS, announce, parts_plan, run_plan
    from kernelbench.outputs.leaderboard import part_args
    from kernelbench.plugins import load
    from kernelbench.progress import ENV_BAR, ENV_BOARD, Board, read_reports, summary

    parts = part_args(list(args))
    if parts is not None:  # a leaderboard: priced as a whole, then one launch per grid
        announce(parts_plan([plan(list(part), True)[0] for part in parts]))
        for part in parts:
            launch(part, True)
        return
    hydra_args, multirun, cells = plan(list(args), multirun)
    launcher = next((a.split("=", 1)[1] for a in hydra_args if a.startswith("hydra/launcher=")), "")
    quiet = False
    if launcher in SUBMITTING:  # what the cluster cannot run is refused here
        hydra_args, quiet = _fit_slurm(launcher, hydra_args)
    announce(run_plan(hydra_args))  # the plan line; refuses oversize work
    load()  # the plug-ins register their structured configs (protocol settings)
    if not any(a.startswith("hydra.searchpath") for a in hydra_args):
        hydra_args += searchpath_overrides()  # the plug-ins' config directories
    task = hydra.main(version_base=None, config_path=str(config_dir()), config_name="config")(_job)
    shows = any(a.split("=", 1)[0] in SHOWS for a in hydra_args)
    reports = Path(tempfile.mkdtemp(prefix="kernelbench-progress-"))
    board = Board(reports, cells) if sys.stderr.isatty() and not shows else None
    # HYDRA_FULL_ERROR makes Hydra re-raise job errors instead of printing a stack
    # trace and exiting 1: the CLI then shows them as one line.
    env = {"HYDRA_FULL_ERROR": "1", _ENV_TOTAL: str(cells), ENV_BOARD: str(reports)}
    env[ENV_BAR] = "1" if board is not None else "0"
    env[_ENV_LAUNCHER] = str(os.getpid())
    interrupted = False
    with (
        _patched_env(["kernelbench run", *hydra_args], env) as stderr,
        _interrupts(reports),
        _without_sacct(quiet),
        _compose_each_override_once(),
    ):
        try:
            try:
                task()
            except JobInterrupted as err:  # a SLURM job interrupted: an interrupt here
                stopped = _job_error(err)
                if stopped is None:
                    raise
                raise stopped from None
        except KeyboardInterrupt as err:
            interrupted = True
            line = _interrupted_line(reports, err)
            raise Interrupted(line, getattr(err, "signum", None)) from None
        except KernelbenchError:
            raise
        except HydraException as err:
            lines = [ln for ln in str(err).strip().splitlines() if ln.strip()]
            cause = str(err.__cause__ or "").strip().splitlines()
            if cause and lines:  # a typed setting (OmegaConf): say what is wrong with it
                lines = [f"{lines[0]}: {cause[0]}"]
            # Hydra's first line says what failed, the second (if any) what to do
            raise KernelbenchError(" ".join(lines[:2]) or type(err).__name__) from None
        except Exception:
            for text in stderr.hidden:  # not ours: show which job failed
                stderr._stream.write(text)
            raise
        finally:
            if board is not None:
                board.close()
            done = list(read_reports(reports).values())
            shutil.rmtree(reports, ignore_errors=True)
            # the summary, also above the error of a failed cell once others finished
            ok = [r for r in done if r.get("outcome") not in (None, "failed", "interrupted")]
            if ok and not shows and not interrupted:
                click.echo(summary(done, cells))


_HELP_EPILOG = """\b
Examples:
  kernelbench run                                  the quick grid (digits, seconds)
  kernelbench run method=sr33 kernel=arccos1       one cell, defaults elsewhere
  kernelbench run -m method=rff,sr33 n=1,2,3       a sweep (comma lists, range(1,6))
  kernelbench run experiment=fig1_reduced          a paper grid (configs/experiment/)
  kernelbench run experiment=fig1_reduced hydra/launcher=joblib hydra.launcher.n_jobs=4
  kernelbench run experiment=fig1 hydra/launcher=slurm   (needs kernelbench[slurm])

\b
One cell or a grid:
  one cell   an override of method, kernel, dataset, protocol or n, or of a setting
             below method or kernel (kernel.params.gamma=0.5, method.params.n_blocks=2
             with method=sorf); defaults elsewhere
  a grid     -m (the product of the comma lists), experiment=NAME, or none of the
             above (kernelbench run seed=1 runs the quick grid with seed 1)

\b
Settings: n, runs (null = the dataset's), seed, output_dir (results/runs), overwrite,
blas_threads, data.mirror, data.cache, data.download, protocol.<setting>.
Settings are key=value overrides, not options (runs=3, not --runs 3).
Finished cells are skipped. Ctrl-C keeps the running cell's finished runs; the same
command continues from there.
"""


class _RunCommand(click.Command):
    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from kernelbench.config import group_options

        formatter.write_paragraph()
        formatter.write_text(_HELP_EPILOG)
        formatter.write_paragraph()
        lines = ["\b", "Config groups:"]
        for g in GROUPS:
            with contextlib.suppress(OSError):  # pragma: no cover
                lines.append(f"  {g + ':':<12}{', '.join(group_options(g))}")
        formatter.write_text("\n".join(lines))


@click.command(
    "run",
    cls=_RunCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": False},
)
@click.option("-m", "--multirun", is_flag=True, help="Sweep comma lists and ranges (Hydra).")
@click.argument("overrides", nargs=-1, type=click.UNPROCESSED)
def run(multirun: bool, overrides: tuple[str, ...]) -> None:
    """Run a grid of cells; OVERRIDES use Hydra's grammar (key=value, group=option)."""
    launch(list(overrides), multirun=multirun)


@click.command(
    "estimate",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": False},
)
@click.option("-m", "--multirun", is_flag=True, help="Sweep comma lists and ranges (Hydra).")
@click.argument("overrides", nargs=-1, type=click.UNPROCESSED)
def estimate(multirun: bool, overrides: tuple[str, ...]) -> None:
    """Price a run and run nothing: the cells, runs, time and peak memory that
    ``kernelbench run OVERRIDES`` would take (the same overrides and -m).

    \b
    Examples:
      kernelbench estimate                         the quick grid
      kernelbench estimate experiment=fig1         a paper grid
      kernelbench estimate -m method=rff,sr33 n=1,2,3 dataset=mnist
    """
    from kernelbench.cost import Plan, available_memory, format_bytes, limits, parse_memory
    from kernelbench.estimate import parts_plan, run_plan
    from kernelbench.outputs.leaderboard import part_args

    parts = part_args(list(overrides))
    if parts is not None:
        priced: Plan | None = parts_plan([plan(list(part), True)[0] for part in parts])
    else:
        priced = run_plan(plan(list(overrides), multirun)[0])
    if priced is None:
        raise KernelbenchError("nothing to price: --cfg, --info and --help run no cells")
    click.echo(priced.line())
    for measured in priced.probes:  # plug-ins' maps: when and how they were probed
        click.echo(measured.line())
    settings = limits(priced)
    limit = parse_memory(settings["max_memory"]) or available_memory()
    big = priced.largest
    if big is not None and limit is not None and big.peak_bytes > limit:
        click.echo(f"over the memory limit {format_bytes(limit)}: kernelbench run would refuse it")
    max_h = settings["max_hours"]
    if max_h is not None and priced.seconds > 3600 * float(max_h):
        click.echo(f"over max_hours={max_h}: kernelbench run needs confirm=true")
