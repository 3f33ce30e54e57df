"""``kernelbench`` end to end: subprocesses in a scratch directory, small digits cells."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kernelbench.cell import shard_schema
from kernelbench.config import group_options
from kernelbench.protocols import get_protocol
from kernelbench.results import read_results, shard_files

REPO = Path(__file__).resolve().parent.parent
SCHEMA = shard_schema(get_protocol("kernel_approx"))
# digits with 60 samples per subset: every cell takes a fraction of a second
SMALL = "dataset.splits.kernel_approx.samples=60"


def _starts(text: str, expected: str) -> bool:
    """Whether ``text`` starts with ``expected``, where ``h=*`` stands for a shard's hash
    part (``h=`` and 8 hex digits: SMALL's samples differ from digits' default)."""
    pattern = re.escape(expected).replace(re.escape("h=*"), "h=[0-9a-f]{8}")
    return re.match(pattern, text) is not None


ERRORS = ["dataset", "kernel", "method_label", "n", "run", "D", "rel_fro_error", "rel_spec_error"]


def kb(*args: str, cwd: Path, check: bool = True, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    proc = subprocess.run(
        [sys.executable, "-m", "kernelbench.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def work(tmp_path):
    """An empty working directory; the test checks that nothing but results lands there."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return cwd


def _rel(paths, root):
    return sorted(str(p.relative_to(root)) for p in paths)


def cli_inprocess(*args: str) -> int:
    """Run ``kernelbench args`` in this process; the exit code (0 if main returns)."""
    from kernelbench.cli import main

    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_list_names_every_experiment_and_verify_config_on_one_line(capsys):
    """``kernelbench list``: a block per config group, one line per option (its name and
    its file's leading comment, or a paper's verify config and its ``about``), every option
    of the group and nothing else."""
    assert cli_inprocess("list") == 0
    out = capsys.readouterr().out
    experiments = out.split("\nExperiments: ", 1)[1].split("\nVerify configs: ", 1)[0]
    verify = out.split("\nVerify configs: ", 1)[1].split("\nBroken plug-ins:", 1)[0]
    from kernelbench.verify import config_names

    for block, names in ((experiments, group_options("experiment")), (verify, config_names())):
        head, *rows = block.strip().splitlines()
        assert head.startswith(f"{len(names)} (run one: kernelbench ")
        assert [row.split()[0] for row in rows] == names
        assert all(row.startswith("  ") and len(row.split()) > 2 for row in rows), rows
        assert not [row for row in rows if "(no description)" in row or "@package" in row]


def test_help_lists_methods_kernels_datasets(capsys):
    assert cli_inprocess("list") == 0
    out = capsys.readouterr().out
    for name in ("rff", "sr33", "qmc", "rbf", "arccos1", "digits", "letter", "usps"):
        assert name in out
    # the protocols and learners a cell can name
    assert "Protocols: downstream, kernel_approx, krr" in out
    assert "Learners:  linear, svm_precomputed" in out
    assert cli_inprocess("--help") == 0
    out = capsys.readouterr().out
    assert "kernelbench list" in out  # where the catalogue is
    for cmd in ("run", "plot", "datasets", "verify", "report", "baseline", "list"):
        assert cmd in out
    # each command's short help is a whole sentence, not cut at an abbreviation
    for line in out.splitlines():
        if line.strip().split(" ")[0] in ("run", "plot", "datasets", "verify"):
            assert not line.rstrip().endswith(("...", "Fig.")), line
    assert cli_inprocess("--version") == 0
    assert capsys.readouterr().out.startswith("kernelbench, version ")
    assert cli_inprocess("run", "--help") == 0
    run_help = capsys.readouterr().out
    assert "orf_tallqr" in run_help and "fig1_reduced" in run_help and "--multirun" in run_help


def test_every_command_is_one_row_of_the_table():
    """One registration style: each subcommand is a row of cli.COMMANDS, resolved to the
    click command of that name; no command module declares its own short help."""
    import click

    from kernelbench.cli import COMMANDS, cli

    group = cli
    ctx = click.Context(group)
    assert group.list_commands(ctx) == sorted(COMMANDS)
    for name in COMMANDS:
        cmd = group.get_command(ctx, name)
        assert isinstance(cmd, click.Command) and cmd.name == name
        assert cmd.short_help is None
    assert group.get_command(ctx, "nope") is None


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["nope"],
        ["--bogus"],
        ["plot", "--bogus"],
        ["verify", "--help"],
        ["report", "--help"],
        ["estimate", "--help"],
        ["estimate", "--bogus"],
    ],
)
def test_help_and_argument_errors_import_no_heavy_module(args):
    """``kernelbench --help`` and argument errors answer before scikit-learn, Hydra, numba
    or any plug-in module is imported (the start-up of docs/performance.md)."""
    code = (
        "import sys\n"
        "from kernelbench.cli import main\n"
        "code = 0\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "heavy = ('sklearn', 'hydra', 'numba', 'scipy', 'kernelbench.features', 'matplotlib',\n"
        "         'plotly', 'jinja2', 'markdown_it', 'kernelbench.outputs.site')\n"
        "print(sorted(m for m in heavy if m in sys.modules), code, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stderr.strip().splitlines()[-1] == f"[] {0 if '--help' in args else 2}"


def test_default_run_is_the_quick_grid(work):
    proc = kb("run", "runs=2", SMALL, cwd=work)
    *lines, final = proc.stdout.strip().splitlines()
    assert proc.stderr.startswith("plan: 12 cells, 24 runs, about ")  # the plan, on stderr
    assert len(lines) == 12
    assert final.startswith("12 of 12 cells: 12 computed; shards in ")
    assert final.endswith("; plot: kernelbench plot results/runs --experiment quick")
    # samples=60 (SMALL) is not digits' default: the cell's hash part is named
    assert _starts(lines[0], "[1/12] digits rbf rff h=* n=1: rel_fro ")
    assert all("(2 runs)" in line for line in lines)
    files = shard_files(work / "results" / "runs")
    assert len(files) == 12
    assert {f.parts[-6] for f in files} == {"quick"}  # quick/digits/kernel/method/h=*/n
    # nothing else in the working directory: no outputs/, multirun/, logs; user results
    # in results/runs/, apart from the committed results/reference/ and results/baseline/
    assert sorted(os.listdir(work)) == ["results"]
    assert sorted(os.listdir(work / "results")) == ["runs"]
    assert sorted(os.listdir(work / "results" / "runs")) == [".hydra", "quick"]


def test_single_cell(tmp_path, work):
    out = tmp_path / "res"
    proc = kb(
        "run", "method=sr33", "kernel=arccos1", "runs=3", SMALL, f"output_dir={out}", cwd=work
    )
    assert _starts(proc.stdout, "digits arccos1 sr33 h=* n=1: rel_fro ")
    (shard,) = _rel(shard_files(out), out)
    assert _starts(shard, "kernel_approx/digits/arccos1/sr33/h=*/n=1.parquet")
    assert os.listdir(work) == []  # no .hydra, outputs/ or logs in the working directory
    df = read_results(out)
    assert len(df) == 3 and set(df["method"]) == {"sr33"} and set(df["kernel"]) == {"arccos1"}


def test_written_parquet_schema(tmp_path, work):
    out = tmp_path / "res"
    kb("run", "method=qmc", "runs=2", SMALL, f"output_dir={out}", cwd=work)
    (path,) = shard_files(out)
    assert pq.read_schema(path).equals(SCHEMA, check_metadata=False)
    row = read_results(out).iloc[0]
    assert row["experiment"] == "kernel_approx" and row["paper_label"] == "QMC"
    assert row["method_params"] == '{"scramble":true,"sequence":"halton"}'
    assert row["D"] == 2 * 1 * (64 + 1) and row["n_features"] == 2 * row["D"]
    assert row["blas_threads"] == 1 and row["blas"]
    assert row["data_source"] and row["data_deviation"] is not None
    assert len(row["config_hash"]) == 16


def test_multirun_2x2_and_joblib_gives_identical_rows(tmp_path, work):
    grid = ["-m", "method=rff,sr33", "kernel=rbf,arccos0", "runs=3", SMALL]
    seq, par = tmp_path / "seq", tmp_path / "par"
    proc = kb("run", *grid, f"output_dir={seq}", cwd=work)
    assert len(proc.stdout.strip().splitlines()) == 4 + 1  # and the summary
    expected = [
        f"kernel_approx/digits/{k}/{m}/h=*/n=1.parquet"
        for k in ("arccos0", "rbf")
        for m in ("rff", "sr33")
    ]
    got = _rel(shard_files(seq), seq)
    assert len(got) == 4 and all(_starts(g, e) for g, e in zip(got, expected, strict=True))
    kb(
        "run",
        *grid,
        f"output_dir={par}",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        cwd=work,
    )
    a, b = read_results(seq), read_results(par)
    assert len(a) == 12
    assert a[ERRORS].equals(b[ERRORS])
    assert (a["config_hash"] == b["config_hash"]).all()
    assert os.listdir(work) == []


def test_submitit_local_launcher_gives_identical_rows(tmp_path, work):
    """The cluster route (submitit, as with hydra/launcher=slurm) on this machine."""
    pytest.importorskip(
        "hydra_plugins.hydra_submitit_launcher",
        reason="the submitit launcher is not installed (pip install -e '.[slurm]')",
    )
    grid = ["-m", "method=rff,sr33", "kernel=rbf,arccos0", "runs=3", SMALL]
    seq, sub = tmp_path / "seq", tmp_path / "sub"
    kb("run", *grid, f"output_dir={seq}", cwd=work)
    kb("run", *grid, f"output_dir={sub}", "hydra/launcher=submitit_local", cwd=work)
    assert _rel(shard_files(sub), sub) == _rel(shard_files(seq), seq)
    a, b = read_results(seq), read_results(sub)
    assert len(a) == 12
    assert a[ERRORS].equals(b[ERRORS])
    assert (a["config_hash"] == b["config_hash"]).all()


def test_resume_after_a_killed_sweep(tmp_path, work):
    out = tmp_path / "res"
    runs = 10
    args = ["run", "-m", "method=rff,orf,sr33", "kernel=rbf,arccos0", "n=1,2,3", f"runs={runs}"]
    args += ["dataset.splits.kernel_approx.samples=100", f"output_dir={out}"]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernelbench.cli", *args],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.is_dir() and len(shard_files(out)) >= 2:
                break
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done = shard_files(out)
    assert len(done) >= 2
    # every shard that is visible is complete
    for path in done:
        assert pq.read_table(path).num_rows == runs
    before = {p: p.read_bytes() for p in done}
    # a writer killed mid-write leaves at most a hidden temp file: the reader ignores it
    stale = done[0].parent / f".{done[0].name}.tmp-999999999"
    stale.write_bytes(b"PAR1 partial")
    assert len(read_results(out)) == runs * len(done)

    proc = kb(*args, cwd=work)
    skipped = [line for line in proc.stdout.splitlines() if line.endswith("skipped (done)")]
    assert len(skipped) == len(done)
    assert len(shard_files(out)) == 3 * 2 * 3
    for path, data in before.items():
        assert path.read_bytes() == data  # finished cells were not recomputed
    assert len(read_results(out)) == runs * 18


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["method=foo"],
            "Error: unknown method 'foo'; valid choices: " + ", ".join(group_options("method")),
        ),
        (
            ["-m", "kernel=rbf,poly"],
            "Error: unknown kernel 'poly'; valid choices: arccos0, arccos1, rbf",
        ),
        (["dataset=nope"], "Error: unknown dataset 'nope'; valid choices: "),
        (["n=0"], "Error: n must be a positive number, got 0"),
        (["-m", "n=1,-1"], "Error: n must be a positive number, got -1"),
        (["runs=0"], "Error: runs must be a positive integer, got 0"),
        (["runs=-5", "method=rff"], "Error: runs must be a positive integer, got -5"),
        (
            ["method=sorf", "method.params.n_blocks=7", "runs=1", SMALL],
            "Error: digits rbf sorf n_blocks=7 h=* n=1: n_blocks must be an integer in 1..3, got 7",
        ),
        (
            ["method=qmc", "+method.params.order=2", "runs=1", SMALL],
            "Error: digits rbf qmc order=2 h=* n=1: unknown parameter(s) order for method 'qmc'; "
            "valid: ",
        ),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    assert cli_inprocess("run", *args, f"output_dir={tmp_path / 'res'}") == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert _starts(lines[0], message)
    assert not (tmp_path / "res").exists() or not shard_files(tmp_path / "res")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-m", "method=rff,foo"],
            "Error: unknown method 'foo'; valid choices: fastfood, gq, lev_rff, ",
        ),
        (
            ["-m", "method=sorf", "method.params.n_blocks=0,1", "runs=1", SMALL],
            "Error: digits rbf sorf n_blocks=0 h=* n=1: n_blocks must be an integer in 1..3, got 0",
        ),
    ],
)
def test_bad_input_in_a_subprocess_has_no_traceback(tmp_path, work, args, message):
    proc = kb("run", *args, f"output_dir={tmp_path / 'res'}", cwd=work, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert _starts(proc.stderr, message)
    assert "Traceback" not in proc.stderr and "HYDRA_FULL_ERROR" not in proc.stderr


def test_method_that_cannot_handle_the_input(tmp_path, monkeypatch, capsys):
    """qmc with a sequence limited to fewer dimensions than the data (in-process)."""
    from kernelbench.cli import main
    from kernelbench.features import qmc

    monkeypatch.setitem(qmc.MAX_DIM, "scipy_joe_kuo", 10)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    with pytest.raises(SystemExit) as info:
        main(
            [
                "run",
                "method=qmc",
                "method.params.sequence=sobol",
                "runs=1",
                SMALL,
                f"output_dir={tmp_path}",
            ]
        )
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    # the plan line, then the job's refusal (it depends on the data's d)
    assert len(err) == 2 and err[0].startswith("plan: 1 cells, 1 runs, ")
    assert _starts(
        err[1],
        "Error: digits rbf qmc sequence=sobol h=* n=1: qmc generator 'scipy_joe_kuo' supports "
        "at most 10 dimensions, got d=64; use sequence=halton or a generator without a limit",
    )
    assert "HYDRA_FULL_ERROR" not in os.environ


def test_hydra_composes_each_override_value_once_before_any_job_runs(work):
    """Before launching, Hydra's sweeper composes the jobs that together hold every
    override value of the sweep (launch.covering_jobs), not every job: a value that
    fails to compose still stops the grid before any cell runs."""
    from kernelbench.launch import covering_jobs

    grid = [[f"method={m}", f"n={n}"] for m in ("rff", "orf") for n in (1, 2, 3)]
    assert covering_jobs(grid) == [grid[0], grid[1], grid[2], grid[3]]
    args = ["run", "-m", "method=rff,orf", "n=1,2,3", "runs=1", SMALL]
    code = (
        "import json, sys\n"
        "from hydra._internal.config_loader_impl import ConfigLoaderImpl\n"
        "from hydra.errors import ConfigCompositionException\n"
        "calls, load, fail = [], ConfigLoaderImpl.load_sweep_config, sys.argv[1]\n"
        "def counted(self, master_config, sweep_overrides):\n"
        "    calls.append(sorted(o for o in sweep_overrides if o[:2] in ('me', 'n=')))\n"
        "    if fail in sweep_overrides:\n"
        "        raise ConfigCompositionException('cannot compose ' + fail)\n"
        "    return load(self, master_config, sweep_overrides)\n"
        "ConfigLoaderImpl.load_sweep_config = counted\n"
        "from kernelbench.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "finally:\n"
        "    print(json.dumps(calls))\n"
    )

    def run(fail: str) -> tuple[list, subprocess.CompletedProcess]:
        proc = subprocess.run(
            [sys.executable, "-c", code, fail], cwd=work, capture_output=True, text=True
        )
        return json.loads(proc.stdout.strip().splitlines()[-1]), proc

    calls, proc = run("none")
    # the 4 covering jobs composed first, then each of the 6 jobs by the launcher
    covering = [["method=rff", "n=1"], ["method=rff", "n=2"], ["method=rff", "n=3"]]
    covering.append(["method=orf", "n=1"])
    assert calls[:4] == covering and len(calls) == 10, proc.stderr
    assert len(shard_files(work / "results" / "runs")) == 6
    # method=orf composed once, by the covering jobs: its failure comes before any job
    calls, proc = run("method=orf")
    assert len(calls) == 4, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "Error: cannot compose method=orf"
    assert len(shard_files(work / "results" / "runs")) == 6  # none added, none lost
