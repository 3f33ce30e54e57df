"""Progress: one bar over cells and runs on a terminal, heartbeat lines in logs."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from kernelbench.progress import Board, Heartbeat, JobReport, eta, format_seconds


def test_heartbeat_prints_runs_done_and_an_eta_each_interval():
    now = [100.0]
    out = io.StringIO()
    beat = Heartbeat(
        "[2/8] letter rbf sr33 n=5", out, interval=30, clock=lambda: now[0], thread=False
    )
    beat.update(0, 20)
    now[0] = 129.0
    assert not beat.tick() and out.getvalue() == ""
    beat.update(5, 20)
    now[0] = 130.0
    assert beat.tick()
    now[0] = 140.0
    assert not beat.tick()  # at most one line per interval
    beat.update(10, 20)
    now[0] = 160.0
    assert beat.tick()
    assert out.getvalue().splitlines() == [
        "[2/8] letter rbf sr33 n=5: 5/20 runs, 30 s, ETA 1 min 30 s",
        "[2/8] letter rbf sr33 n=5: 10/20 runs, 1 min 00 s, ETA 1 min 00 s",
    ]


def test_heartbeat_eta_counts_only_this_sessions_runs():
    """An extended shard starts at its stored runs: the rate is of the new runs."""
    now = [0.0]
    out = io.StringIO()
    beat = Heartbeat("cell", out, interval=10, clock=lambda: now[0], thread=False)
    beat.update(30, 40)
    now[0] = 10.0
    beat.tick()
    beat.update(32, 40)
    now[0] = 20.0
    beat.tick()
    assert out.getvalue().splitlines() == [
        "cell: 30/40 runs, 10 s, ETA ?",
        "cell: 32/40 runs, 20 s, ETA 1 min 20 s",
    ]


def test_time_formats():
    assert [format_seconds(s) for s in (0.4, 59, 61, 3600 * 2 + 240)] == [
        "0 s",
        "59 s",
        "1 min 01 s",
        "2 h 04 min",
    ]
    assert eta(10, 0, 5) == "?" and eta(10, 1, 5) == "40 s"


def test_board_is_one_bar_over_the_jobs_reports(tmp_path, capsys):
    board = Board(tmp_path, cells=4, every=3600)  # polled by hand below
    a, b = JobReport(tmp_path, 0), JobReport(tmp_path, 1)
    a.update(0, 10)
    b.update(5, 10)
    board.poll()
    assert board.bar.n == 0.5
    assert board.bar.desc == "0/4 cells, 5/20 runs"
    a.update(10, 10)
    a.echo("[1/4] digits rbf rff n=1: rel_fro 0.1 ± 0.01 (10 runs) [1.0 s]")
    a.finish()
    board.poll()
    board.poll()  # a line is printed once
    assert board.bar.n == 1.5 and board.bar.desc == "1/4 cells, 15/20 runs"
    board.close()
    assert capsys.readouterr().out.splitlines() == [
        "[1/4] digits rbf rff n=1: rel_fro 0.1 ± 0.01 (10 runs) [1.0 s]"
    ]


def test_a_run_into_a_log_prints_heartbeat_lines(tmp_path):
    """Not a terminal (a pipe, as under nohup or SLURM): heartbeat lines on stderr, with
    a short interval setting; stdout keeps one line per cell."""
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["KERNELBENCH_HEARTBEAT"] = "0.01"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelbench.cli",
            "run",
            "method=rff",
            "runs=3",
            f"output_dir={tmp_path}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result, final = proc.stdout.splitlines()  # the cell's line and the summary
    assert result.startswith("digits rbf rff n=1: rel_fro ")
    shard = tmp_path / "kernel_approx" / "digits" / "rbf" / "rff" / "n=1.parquet"
    assert final == (
        f"1 of 1 cell: 1 computed; shards in {shard}; "
        f"plot: kernelbench plot {tmp_path} --experiment kernel_approx"
    )
    plan_line, *beats = [line for line in proc.stderr.splitlines() if line]
    assert plan_line.startswith("plan: 1 cells, 3 runs, ")
    assert beats and all(line.startswith("digits rbf rff n=1: ") for line in beats)
    assert all(" runs, " in line and ", ETA " in line for line in beats)


def render(raw: str) -> list[str]:
    """The screen a terminal shows for ``raw`` output: carriage returns overwrite,
    cursor-up escapes move up a line, other escapes are dropped."""
    import re

    lines, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", raw):
        if token == "\r":
            col = 0
        elif token == "\n":
            row, col = row + 1, 0
            lines += [""] * (row + 1 - len(lines))
        elif token == "\x1b[A":
            row = max(0, row - 1)
        elif token.startswith("\x1b"):
            continue
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token) :]
            col += len(token)
    return [line.rstrip() for line in lines]


def test_a_terminal_shows_each_result_on_its_own_line_and_no_bar_left(tmp_path):
    """On a terminal (a pseudo-terminal here) the bar is drawn on stderr while the
    cells run; what stays on the screen is one line per cell, each from its first
    column, and the summary: no fragment of the bar."""
    import pty

    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["TERM"] = "xterm"
    args = ["run", "-m", "method=rff,orf,sr33", "runs=40", f"output_dir={tmp_path}"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: kernelbench on a terminal of 40 x 100 characters
        import fcntl
        import struct
        import termios

        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "kernelbench.cli", *args], env)
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    raw = b"".join(chunks).decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, raw
    assert "cells, " in raw  # the bar was drawn ...
    plan_line, *screen = [line for line in render(raw) if line]
    assert plan_line.startswith("plan: 3 cells, "), plan_line
    assert len(screen) == 4, screen  # ... and nothing of it is left
    for i, (line, method) in enumerate(zip(screen, ["rff", "orf", "sr33"], strict=False)):
        assert line.startswith(f"[{i + 1}/3] digits rbf {method} n=1: rel_fro "), screen
        assert line.endswith("s]") and "cells" not in line and "%|" not in line
    assert screen[3].startswith("3 of 3 cells: 3 computed; shards in ")
