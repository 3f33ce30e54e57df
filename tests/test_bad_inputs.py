"""Bad input on the command line: one line naming the valid choices, exit code 2, no
traceback, and nothing computed (the table of issue 18, run through click's CliRunner)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from kernelbench.cli import cli
from kernelbench.config import group_options
from kernelbench.results import shard_files
from tests.test_plot import make_results, write_shards

METHODS = ", ".join(group_options("method"))
LAUNCHERS = "basic, joblib, slurm, submitit_local, submitit_slurm"
HYDRA_FLAGS = "-m/--multirun, --cfg, -c, --resolve, --package, -p, --info, -i, --config-path"

# (arguments, the whole first line or its start); {tmp} is a scratch directory with a
# file `afile`, {out} the output directory no case may create a shard in
TABLE = [
    (["run", "method=foo"], f"Error: unknown method 'foo'; valid choices: {METHODS}"),
    (["run", "-m", "kernel=rbf,poly"], "Error: unknown kernel 'poly'; valid choices: arccos0, "),
    (["run", "dataset=nope"], "Error: unknown dataset 'nope'; valid choices: census, cifar100"),
    (["run", "protocol=nope"], "Error: unknown protocol 'nope'; valid choices: downstream, "),
    (["run", "experiment=nope"], "Error: unknown experiment 'nope'; valid choices: fig1, "),
    (["run", "-m", "experiment=fig1,fig3"], "Error: choose one experiment at a time"),
    (["run", "n=0"], "Error: n must be a positive number, got 0"),
    (["run", "n=abc"], "Error: n must be a positive number, got 'abc'"),
    (["run", "-m", "n=1,-1"], "Error: n must be a positive number, got -1"),
    (["run", "runs=0"], "Error: runs must be a positive integer, got 0"),
    (["run", "runs=1.5", "method=rff"], "Error: runs must be a positive integer, got 1.5"),
    (["run", "seed=abc"], "Error: seed must be an integer >= 0, got 'abc'"),
    (["run", "seed=-1", "method=rff"], "Error: seed must be an integer >= 0, got -1"),
    (["run", "overwrite=maybe"], "Error: overwrite must be true or false, got 'maybe'"),
    (["run", "data.download=yes"], "Error: data.download must be true or false, got 'yes'"),
    (["run", "blas_threads=0"], "Error: blas_threads must be an integer >= 1, got 0"),
    (["run", "metod=rff"], "Error: unknown setting 'metod'; did you mean 'method'?"),
    (["run", "+metod=rff"], "Error: unknown setting 'metod'; did you mean 'method'?"),
    (
        ["run", "data.mirrorr=x"],
        "Error: unknown setting 'data.mirrorr'; did you mean 'data.mirror'?",
    ),
    (
        ["run", "kernel.params.gama=1"],
        "Error: unknown setting 'kernel.params.gama' for kernel 'rbf'; "
        "did you mean 'kernel.params.gamma'?",
    ),
    (
        ["run", "kernel=arccos0", "kernel.params.gamma=1"],
        "Error: unknown setting 'kernel.params.gamma' for kernel 'arccos0'; it is a setting of "
        "kernel rbf (add kernel=rbf)",
    ),
    (
        ["run", "-m", "kernel=rbf,arccos0", "kernel.params.gamma=1"],
        "Error: unknown setting 'kernel.params.gamma' for kernel 'arccos0'; ",
    ),
    (
        ["run", "method.params.n_blocks=2"],
        "Error: unknown setting 'method.params.n_blocks' for method 'rff'; it is a setting of "
        "method sorf, sorf_hd1, sorf_hd2 (add method=sorf)",
    ),
    (
        ["run", "method=rff", "method.params.foo=1"],
        "Error: unknown setting 'method.params.foo' for method 'rff'; valid settings: none",
    ),
    (
        ["run", "protocol.learner=linear"],
        "Error: unknown setting 'protocol.learner' for protocol 'kernel_approx'; it is a "
        "setting of protocol downstream (add protocol=downstream)",
    ),
    (["run", "kernel.params.gamma=-1"], "Error: gamma must be > 0 and finite, got -1.0"),
    (
        ["run", "-m", "kernel.params.gamma=0.1,nn0"],
        "Error: invalid bandwidth rule 'nn0'; valid: a positive number or nn<k> (e.g. nn50)",
    ),
    (
        ["run", "--runs", "3"],
        "Error: unknown option '--runs'; settings are overrides: write 'runs=3'",
    ),
    (
        ["run", "--seed=2"],
        "Error: unknown option '--seed=2'; settings are overrides: write 'seed=2'",
    ),
    (["run", "--fast"], f"Error: unknown option '--fast'; valid options: {HYDRA_FLAGS}"),
    (["run", "n=range(1"], "Error: invalid override: no viable alternative at input 'range(1'"),
    (
        ["run", "hydra/launcher=jobib"],
        f"Error: unknown launcher 'jobib'; valid choices: {LAUNCHERS}",
    ),
    (
        ["run", "-m", "method=rff", "hydra/launcher=slurm"],
        "Error: hydra/launcher=slurm needs SLURM, but sbatch is not on PATH",
    ),
    (
        ["run", "method=rff", "output_dir={tmp}/afile"],
        "Error: output_dir '{tmp}/afile' is a file, not a directory",
    ),
    (
        ["run", "output_dir={tmp}/afile/runs"],
        "Error: output_dir '{tmp}/afile/runs' cannot be created: '{tmp}/afile' is a file",
    ),
    (["plot", "--figure", "nope"], "Error: unknown figure 'nope'; valid choices: fig1, fig2, "),
    (["plot", "{tmp}/none"], "Error: results directory '{tmp}/none' does not exist"),
    (["verify", "--config", "nope"], "Error: unknown verify config 'nope'; valid choices: "),
    (["verify", "--jobs", "0"], "Error: Invalid value for '--jobs' / '-j': 0 is not in the range"),
    (["datasets", "info", "nope"], "Error: unknown dataset 'nope'; valid choices: census, "),
    (["datasets", "fetch"], "Error: Missing argument 'NAMES...' (see 'kernelbench datasets "),
    (["nope"], "Error: No such command 'nope' (see 'kernelbench --help')"),
    # issue 28: the table of its inputs that did not give one line
    (
        ["run", "output_dir=/proc/x"],
        "Error: output_dir '/proc/x' cannot be created: '/proc' is not writable",
    ),
    (
        ["run", "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0"],
        "Error: hydra.launcher.n_jobs must be an integer >= 1 (or -1: every core), got 0",
    ),
    (["run", "kernel.params.gamma=inf"], "Error: gamma must be > 0 and finite, got inf"),
    (["run", "-m", "n=range(1,0)"], "Error: empty sweep: 'n=range(1,0)' has no values"),
    (["run", "dataset=mnist", "n=100000"], "Error: mnist rbf rff n=100000 needs about "),
    (["run", "dataset=mnist", "n=1e3"], "Error: mnist rbf rff n=1000 needs about "),
    (["run", "runs=1000000"], "Error: 12 cells, 12000000 runs take about "),
    (["run", "method=rff,orf"], "Error: 'method=rff,orf' is a sweep: use -m to sweep"),
    # and what a demanding user tries next
    (["run", "max_memory=lots"], "Error: max_memory must be a positive size (bytes, or e.g. "),
    (["run", "max_memory=1KB"], "Error: digits arccos0 rff n=1 needs about "),
    (["run", "max_hours=-1"], "Error: max_hours must be a number > 0, got -1"),
    (["run", "confirm=maybe"], "Error: confirm must be true or false, got 'maybe'"),
    (["run", "n=inf"], "Error: n must be a positive number, got inf"),
    (["run", "-m", "n=1,nan"], "Error: n must be a positive number, got nan"),
    (
        ["run", "method=sorf", "method.params.n_blocks=inf"],
        "Error: method.params.n_blocks must be a finite number, got inf",
    ),
    (
        ["run", "method=qmc", "method.params.scramble=maybe"],
        "Error: digits rbf qmc scramble=maybe n=1: scramble must be true or false, got 'maybe'",
    ),
    (
        ["run", "dataset.splits.kernel_approx.samples=100000000"],
        "Error: digits rbf rff h=",  # K alone is 8e16 bytes
    ),
    (
        ["run", "-m", "method=lev_rff,slw_rff"],
        "Error: digits rbf slw_rff n=1: method 'slw_rff' is supervised (its fit needs the "
        "labels y); protocol 'kernel_approx' fits maps without labels: use protocol 'krr'",
    ),
    (
        ["run", "protocol=downstream", "method=slw_rff"],
        "Error: digits rbf slw_rff learner=svm_precomputed n=1: method 'slw_rff' is supervised",
    ),
    (["run", "output_dir="], "Error: output_dir must be a directory path, got ''"),
    (
        ["run", "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=1.5"],
        "Error: hydra.launcher.n_jobs must be an integer >= 1",
    ),
    (["estimate", "dataset=nope"], "Error: unknown dataset 'nope'; valid choices: census, "),
    (["estimate", "-m", "n=range(3,1)"], "Error: empty sweep: 'n=range(3,1)' has no values"),
    (
        ["verify", "--results", "/proc/x"],
        "Error: --results '/proc/x' cannot be created: '/proc' is not writable",
    ),
    # issue 38: every command treats its own paths and names as run does ({runs}: a
    # results folder with shards of experiment quick)
    (
        ["plot", "{runs}", "--out", "{tmp}/afile/figs"],
        "Error: --out '{tmp}/afile/figs' cannot be created: '{tmp}/afile' is a file",
    ),
    (
        ["plot", "{runs}", "--out", "/proc/figs"],
        "Error: --out '/proc/figs' cannot be created: '/proc' is not writable",
    ),
    (
        [
            "verify",
            "--config",
            "liu2020_table3",
            "--no-run",
            "--results",
            "{runs}",
            "--out",
            "{tmp}/afile/v.csv",
        ],
        "Error: --out '{tmp}/afile/v.csv': its directory '{tmp}/afile' is a file, not a directory",
    ),
    (
        ["verify", "--no-run", "--results", "{runs}", "--out", "/proc/v.csv"],
        "Error: --out '/proc/v.csv': its directory '/proc' is not writable",
    ),
    (
        ["report", "--out", "{tmp}/afile/r.md"],
        "Error: --out '{tmp}/afile/r.md': its directory '{tmp}/afile' is a file, not a directory",
    ),
    (["report", "--out", "/proc/r.md"], "Error: --out '/proc/r.md': its directory '/proc' is "),
    (
        ["report", "--html", "{tmp}/afile/site"],
        "Error: --html '{tmp}/afile/site' cannot be created: '{tmp}/afile' is a file",
    ),
    (
        ["report", "--html", "/proc/site"],
        "Error: --html '/proc/site' cannot be created: '/proc' is not writable",
    ),
    (
        ["baseline", "nope", "{runs}"],
        "Error: unknown experiment 'nope'; valid choices: leaderboard, leaderboard_liu2020, ",
    ),
    (
        ["baseline", "quick", "{runs}", "--rows-of", "nope"],
        "Error: unknown experiment (--rows-of) 'nope'; valid choices: leaderboard, ",
    ),
    (
        ["baseline", "quick", "{runs}", "--out", "{tmp}/afile/base"],
        "Error: --out '{tmp}/afile/base' cannot be created: '{tmp}/afile' is a file",
    ),
    (
        ["baseline", "quick", "{runs}", "--out", "/proc/base"],
        "Error: --out '/proc/base' cannot be created: '/proc' is not writable",
    ),
    (
        ["leaderboard", "--method", "nosuch"],
        "Error: unknown method 'nosuch'; valid choices: gq, lev_rff, nystrom, orf, ",
    ),
    (
        ["leaderboard", "--csv", "{tmp}/afile/s.csv"],
        "Error: --csv '{tmp}/afile/s.csv': its directory '{tmp}/afile' is a file, not a directory",
    ),
    (["leaderboard", "--csv", "/proc/s.csv"], "Error: --csv '/proc/s.csv': its directory "),
    (["check", "nosuch"], "Error: unknown method 'nosuch'; valid choices: fastfood, gq, "),
    (
        ["datasets", "fetch", "census", "--mirror", "{tmp}", "--cache", "{tmp}/afile/c"],
        "Error: --cache '{tmp}/afile/c' cannot be created: '{tmp}/afile' is a file",
    ),
]


@pytest.mark.parametrize(("args", "first_line"), TABLE, ids=[" ".join(a) for a, _ in TABLE])
def test_bad_input_is_one_line_before_any_compute(tmp_path, monkeypatch, args, first_line):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch: not a SLURM node
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a directory")
    out = tmp_path / "res"
    runs = tmp_path / "runs"
    if any("{runs}" in a for a in args):
        write_shards(make_results(experiment="quick"), runs)
    args = [a.format(tmp=tmp_path, runs=runs) for a in args]
    before = sorted(tmp_path.rglob("*"))
    if args[0] == "run" and not any(a.startswith("output_dir=") for a in args):
        args.append(f"output_dir={out}")
    result = CliRunner().invoke(cli, args, prog_name="kernelbench")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "HYDRA_FULL_ERROR" not in result.output
    # at most the plan line (issue 28: oversize work is priced first), then one error
    assert len(lines) <= 2 and all(ln.startswith("plan: ") for ln in lines[:-1]), result.output
    assert lines[-1].startswith(first_line.format(tmp=tmp_path)), lines[-1]
    assert not out.exists() or not shard_files(out)  # nothing computed
    if args[0] != "run":  # nothing written (run's output_dir may be made before the check)
        assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_output_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        for target, line in [
            (ro, f"Error: output_dir '{ro}' is not writable"),
            (
                ro / "runs",
                f"Error: output_dir '{ro}/runs' cannot be created: '{ro}' is not writable",
            ),
        ]:
            result = CliRunner().invoke(cli, ["run", "method=rff", f"output_dir={target}"])
            assert result.exit_code == 2
            assert result.output.strip() == line
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize(
    ("args", "multirun", "cells"),
    [
        (["kernel.params.gamma=0.5"], False, 1),
        (["method=sorf", "method.params.n_blocks=2"], False, 1),
        (["+method.params.scale=2"], False, 1),
        (["seed=1"], True, 12),  # settings alone: the quick grid
        (["dataset.splits.kernel_approx.samples=60"], True, 12),
        (["-m", "kernel.params.gamma=0.1,1,nn50"], True, 3),
        # showing the config of a grid: Hydra takes --cfg/--info only without --multirun
        (["--cfg", "job", "experiment=fig1_reduced"], False, 1),
        (["-m", "experiment=fig1_reduced", "--info", "defaults"], False, 1),
    ],
)
def test_which_overrides_make_one_cell(args, multirun, cells):
    """A setting below method or kernel names one cell (issue 18: without adding
    method=); settings that apply to any cell leave the quick grid."""
    from kernelbench.launch import plan

    m = args[0] == "-m"
    hydra_args, got_multirun, got_cells = plan(args[1:] if m else args, m)
    assert (got_multirun, got_cells) == (multirun, cells)
    assert ("experiment=quick" in hydra_args) == (cells == 12)


def test_a_corrupt_shard_is_reported_as_corrupt(tmp_path):
    """Not as "config changed": a shard that cannot be read is named and recomputed."""
    from kernelbench.cell import build_cell, cell_shard_path
    from kernelbench.experiment import make_cell, run_and_store

    cell = make_cell("rff", runs=2)
    cell["dataset"]["splits"]["kernel_approx"]["samples"] = 60
    lines: list[str] = []
    first = run_and_store(cell, tmp_path, echo=lines.append)
    path = cell_shard_path(build_cell(cell), tmp_path)
    path.write_bytes(b"PAR1 not a parquet file")
    again = run_and_store(cell, tmp_path, echo=lines.append)
    variant = path.parent.name  # samples=60 is a data setting: the shard's h=... part
    assert (
        lines[-2] == f"digits rbf rff {variant} n=1: corrupt shard {path} (unreadable), recomputing"
    )
    assert again["rel_fro_error"].equals(first["rel_fro_error"])


def _one_error_line(result, start: str) -> None:
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(lines) <= 3 and all(ln.startswith("plan: ") for ln in lines[:-1]), result.output
    assert lines[-1].startswith(start), lines[-1]


def _mount_tmpfs(path, size: str) -> bool:
    """A tiny tmpfs at ``path`` where this process may mount one (root on Linux)."""
    import shutil
    import subprocess

    if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return proc.returncode == 0


def test_a_full_disk_is_one_line_and_keeps_the_finished_shards(tmp_path, monkeypatch):
    """A write that fails (ENOSPC) stops the run with one line naming the shard; the
    shards written before stay whole and no temp file is left behind. On a tiny tmpfs
    where one can be mounted; else the second write is made to fail."""
    import errno
    import subprocess

    import pyarrow.parquet as pq

    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    disk = tmp_path / "disk"
    mounted = _mount_tmpfs(disk, "4k")
    try:
        if not mounted:
            disk.mkdir()
            real, calls = pq.write_table, []

            def write_table(table, where, *a, **k):
                calls.append(where)
                if len(calls) > 1:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real(table, where, *a, **k)

            monkeypatch.setattr(pq, "write_table", write_table)
        args = ["run", "-m", "method=rff", "n=1,2", "runs=2", f"output_dir={disk}"]
        args.append("dataset.splits.kernel_approx.samples=60")
        result = CliRunner().invoke(cli, args, prog_name="kernelbench")
        lines = result.output.strip().splitlines()
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert lines[-1].startswith("Error: digits rbf rff h="), lines[-1]
        assert "cannot write the shard " in lines[-1]
        assert "No space left on device; the shards written before are kept" in lines[-1]
        assert not [p for p in disk.rglob("*") if p.name.startswith(".") and p.is_file()]
        if not mounted:  # the first cell's shard is whole
            from kernelbench.results import read_results

            assert len(shard_files(disk)) == 1
            assert len(read_results(disk)) == 2
    finally:
        if mounted:  # lazily: a failed write's handle may still be open until collected
            import gc

            gc.collect()
            subprocess.run(["umount", "-l", str(disk)], check=False)


def _cache_with(tmp_path, X):
    """A cache directory whose letter.npz (with a valid checksum sidecar) holds X."""
    import numpy as np

    from kernelbench.datasets.sources import write_cache

    cache = tmp_path / "cache"
    cache.mkdir()
    write_cache(cache / "letter.npz", {"X": X, "y": np.zeros(len(X))})
    return cache


def _run_letter(tmp_path, cache):
    (tmp_path / "mirror").mkdir(exist_ok=True)
    args = ["run", "dataset=letter", "runs=2", f"data.mirror={tmp_path / 'mirror'}"]
    args += [f"data.cache={cache}", f"output_dir={tmp_path / 'res'}"]
    return CliRunner().invoke(cli, args, prog_name="kernelbench")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_data_is_one_line(tmp_path, monkeypatch, bad):
    import numpy as np

    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    X = np.random.default_rng(0).uniform(size=(20000, 16))
    X[5, 3] = bad
    cache = _cache_with(tmp_path, X)
    result = _run_letter(tmp_path, cache)
    _one_error_line(result, "Error: letter rbf rff n=1: ")
    assert "holds 1 non-finite values (NaN or inf) in X" in result.output
    assert "kernelbench datasets fetch letter" in result.output
    assert not (tmp_path / "res").exists() or not shard_files(tmp_path / "res")


@pytest.mark.parametrize("content", [b"garbage", b""])
def test_an_unreadable_dataset_file_is_one_line(tmp_path, monkeypatch, content):
    """A corrupt or truncated cached file (its checksum fails) names the file and the
    command that fetches it again."""
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "letter.npz").write_bytes(content)
    result = _run_letter(tmp_path, cache)
    _one_error_line(result, "Error: letter rbf rff n=1: cached file ")
    assert "fetch it again with `kernelbench datasets fetch letter`" in result.output


def test_an_unreadable_mirror_file_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "letter.npz").mkdir()  # not a file at all
    args = ["run", "dataset=letter", "runs=2", f"data.mirror={mirror}"]
    args += [f"data.cache={tmp_path / 'cache'}", f"output_dir={tmp_path / 'res'}"]
    result = CliRunner().invoke(cli, args, prog_name="kernelbench")
    _one_error_line(result, "Error: letter rbf rff n=1: ")


@pytest.mark.parametrize("launcher", ["slurm", "submitit_local"])
def test_a_launcher_whose_extra_is_missing_names_the_extra(tmp_path, monkeypatch, launcher):
    """Without hydra-submitit-launcher (the [slurm] extra), its launchers say so in one
    line, before the check for SLURM's sbatch."""
    from hydra.core.config_store import ConfigStore

    real = ConfigStore.list

    def without_submitit(self, path):
        found = real(self, path)
        return [f for f in found if not f.startswith("submitit")] if "launcher" in path else found

    monkeypatch.setattr(ConfigStore, "list", without_submitit)
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch either
    args = ["run", "-m", "method=rff", f"hydra/launcher={launcher}", f"output_dir={tmp_path}"]
    result = CliRunner().invoke(cli, args, prog_name="kernelbench")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"Error: hydra/launcher={launcher} needs hydra-submitit-launcher, the [slurm] extra: "
        "pip install 'kernelbench[slurm]'"
    )
