"""Bad input on the command line: one line naming the valid choices, exit code 2, no
traceback, and nothing computed (the table of issue 18, run through click's CliRunner)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from kernelbench.cli import app
from kernelbench.config import group_options
from kernelbench.results import shard_files

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
    (["run", "kernel.params.gamma=-1"], "Error: gamma must be > 0, got -1.0"),
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
]


@pytest.mark.parametrize(("args", "first_line"), TABLE, ids=[" ".join(a) for a, _ in TABLE])
def test_bad_input_is_one_line_before_any_compute(tmp_path, monkeypatch, args, first_line):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch: not a SLURM node
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a directory")
    out = tmp_path / "res"
    args = [a.format(tmp=tmp_path) for a in args]
    if args[0] == "run" and not any(a.startswith("output_dir=") for a in args):
        args.append(f"output_dir={out}")
    result = CliRunner().invoke(app(), args, prog_name="kernelbench")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "HYDRA_FULL_ERROR" not in result.output
    assert len(lines) == 1, result.output
    assert lines[0].startswith(first_line.format(tmp=tmp_path)), lines[0]
    assert not out.exists() or not shard_files(out)  # nothing computed


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
            result = CliRunner().invoke(app(), ["run", "method=rff", f"output_dir={target}"])
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
    from kernelbench.experiment import build_cell, cell_shard_path, make_cell, run_and_store

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
