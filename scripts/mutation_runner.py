"""A pre-forking pytest runner for the mutation run (docs/mutation.md): same tests, same verdicts.

mutmut starts the runner once per mutant; most of a fresh pytest's time goes to importing
numpy, scipy, pandas, scikit-learn, numba and pytest's plug-ins. ``serve SOCKET`` imports
them once (never kernelbench: every test run imports the mutated module afresh) and forks
one ``pytest.main`` per request; ``run SOCKET ARGS...`` (mutmut's ``--runner``) sends its
working directory and pytest arguments and exits with pytest's exit code.

    python scripts/mutation_runner.py serve /tmp/kb-mutation.sock &
    mutmut run --paths-to-mutate kernelbench/kernels.py --runner \
        "python scripts/mutation_runner.py run /tmp/kb-mutation.sock -x tests/test_kernels.py"

Without mutmut's loop, on a copy of the tree whose ``.mutmut-cache`` numbers the mutants
(``register COPY FILE`` writes it; ids then match mutmut's):

    python scripts/mutation_runner.py register COPY kernelbench/transforms.py
    # every id of a shared queue (a JSON list), one record per mutant (JSON lines), by
    # as many drivers as there are copies and servers:
    python scripts/mutation_runner.py drive COPY SOCKET FILE QUEUE OUT -- PYTEST_ARGS...
    # chosen mutants, each in a fresh pytest (``--jit`` keeps numba's JIT on):
    python scripts/mutation_runner.py try COPY FILE 12,40-45 -- PYTEST_ARGS...

Each applies one mutant (mutmut's ``mutate`` by id) to COPY's FILE, tests it and writes
the unmutated file back (also on SIGINT/SIGTERM).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: A forked pytest still running after this many seconds is killed (mutmut's timeout
#: stops only the client).
CHILD_TIMEOUT_S = 600


def serve(path: str) -> None:
    """Import the heavy dependencies, then fork one pytest per connection, in turn."""
    import hydra.extra.pytest_plugin  # noqa: F401
    import hypothesis.extra.numpy  # noqa: F401
    import hypothesis.strategies  # noqa: F401
    import numba  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pytest
    import scipy.linalg  # noqa: F401
    import scipy.sparse.linalg  # noqa: F401
    import scipy.stats  # noqa: F401
    import sklearn.metrics.pairwise  # noqa: F401
    import xdist.plugin  # noqa: F401
    from hypothesis import Phase, settings

    # a failing example kills the mutant: no shrinking (minutes of it at a high load)
    settings.register_profile("mutation", phases=(Phase.explicit, Phase.reuse, Phase.generate))
    settings.load_profile("mutation")
    assert not any(m == "kernelbench" or m.startswith("kernelbench.") for m in sys.modules)
    # the imported objects never change: the children's collections skip them
    gc.freeze()
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(4)
    while True:
        conn, _ = server.accept()
        request = json.loads(conn.makefile().readline())
        pid = os.fork()
        if pid == 0:
            server.close()
            # no .pyc of a mutant: two same-size mutants written within one second
            # would otherwise share a stale cache entry
            sys.dont_write_bytecode = True
            os.chdir(request["cwd"])
            log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(log, 1)
            os.dup2(log, 2)
            signal.alarm(CHILD_TIMEOUT_S)
            code = pytest.main(request["argv"])
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(code))
        _, status = os.waitpid(pid, 0)
        try:
            conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        except OSError:  # the client is gone (mutmut's timeout stopped it)
            pass
        conn.close()


def ask(path: str, cwd: str, argv: list[str], log: str) -> int | None:
    """pytest's exit status for ``argv`` run in ``cwd`` by the server at ``path`` (its
    output to ``log``); None, said on stderr, when no server answers."""
    conn = socket.socket(socket.AF_UNIX)
    try:
        conn.connect(path)
    except OSError as err:
        print(f"mutation_runner: no server at {path} ({err})", file=sys.stderr)
        return None
    conn.sendall((json.dumps({"cwd": cwd, "argv": argv, "log": log}) + "\n").encode())
    line = conn.makefile().readline()
    if not line:  # the server stopped before answering
        print("mutation_runner: no answer from the server", file=sys.stderr)
        return None
    return int(line)


def run(path: str, argv: list[str]) -> int:
    """Run pytest with ``argv`` in the server: 0 when it passed, else 1."""
    log = os.environ.get("MUTATION_PYTEST_LOG", os.devnull)
    code = ask(path, os.getcwd(), argv, log)
    if code is None:
        # no server, or none answering: never a killed mutant; 0 leaves it a survivor,
        # re-tested next run
        print("mutation_runner: reported as passed", file=sys.stderr)
        return 0
    if code == -signal.SIGALRM:
        # the child ran past CHILD_TIMEOUT_S: slow under load is not a kill; a survivor is
        # re-tested next run, and a mutant that truly hangs is found there by hand
        msg = f"mutation_runner: pytest ran past {CHILD_TIMEOUT_S} s; reported as passed"
        print(msg, file=sys.stderr)
        return 0
    # mutmut 2 counts only exit code 1 as killed: a mutant that breaks collection
    # (pytest's 2, e.g. an import error) or kills pytest is killed as well
    return 0 if code == 0 else 1


def register(copy: str, fname: str) -> int:
    """Write COPY's ``.mutmut-cache`` with FILE's mutants (mutmut's numbering); their count."""
    from mutmut import add_mutations_by_file
    from mutmut.cache import update_line_numbers

    os.chdir(copy)
    found: dict = {}
    update_line_numbers(fname)
    add_mutations_by_file(found, fname, [], None)
    return len(found[fname])


def parse_ids(text: str) -> list[int]:
    """``12,40-45`` -> [12, 40, ..., 45]."""
    ids: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        ids += range(int(lo), int(hi or lo) + 1)
    return ids


class Mutants:
    """Mutants of FILE in COPY by mutmut's id; :meth:`applied` writes one and restores."""

    def __init__(self, copy: str, fname: str) -> None:
        os.chdir(copy)
        self.copy, self.fname = copy, fname
        with open(fname) as f:
            self.orig = f.read()
        for sig in (signal.SIGINT, signal.SIGTERM):  # restore, then stop
            signal.signal(sig, self._stop)

    def _stop(self, signum, frame) -> None:
        self.restore()
        sys.exit(128 + signum)

    def restore(self) -> None:
        with open(self.fname, "w") as f:
            f.write(self.orig)

    def source(self, pk: int) -> tuple[str, list[tuple[int, str, str]]]:
        """Mutant ``pk``'s source and its changed lines (number, before, after)."""
        from mutmut import Context, mutate
        from mutmut.cache import filename_and_mutation_id_from_pk

        fn, mid = filename_and_mutation_id_from_pk(pk)
        ctx = Context(source=self.orig, mutation_id=mid, filename=fn, dict_synonyms=[])
        new, _ = mutate(ctx)
        pairs = zip(self.orig.splitlines(), new.splitlines(), strict=False)
        return new, [(k + 1, a.strip(), b.strip()) for k, (a, b) in enumerate(pairs) if a != b]

    def run(self, pk: int, test: Callable[[], T]) -> tuple[T, list]:
        """``test()``'s result with mutant ``pk`` written; the file restored after."""
        new, diff = self.source(pk)
        try:
            with open(self.fname, "w") as f:
                f.write(new)
            return test(), diff
        finally:
            self.restore()


def first_failure(text: str) -> str:
    """pytest's first ``FAILED``/``ERROR`` summary line ('' if none)."""
    lines = (x.strip() for x in text.splitlines())
    return next((x for x in lines if x.startswith(("FAILED", "ERROR"))), "")[:300]


def pop(queue: str) -> int | None:
    """The next id of a shared JSON list (locked), or None when it is empty."""
    import fcntl

    with open(queue, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        ids = json.load(f)
        if not ids:
            return None
        f.seek(0)
        f.truncate()
        json.dump(ids[1:], f)
        return ids[0]


def drive(copy: str, sock: str, fname: str, queue: str, out: str, argv: list[str]) -> None:
    """Test every id of ``queue`` through the server at ``sock``; a JSON line each."""
    import time

    mutants = Mutants(copy, fname)
    log = f"{copy}/.mutation-pytest.log"

    def test() -> int:
        code = ask(sock, copy, argv, log)
        if code is None:  # the file is restored on the way out
            raise SystemExit("mutation_runner: drive needs a server (serve SOCKET)")
        return code

    while (pk := pop(queue)) is not None:
        t = time.time()
        code, diff = mutants.run(pk, test)
        with open(log, errors="replace") as f:
            first = first_failure(f.read())
        line, before, after = diff[0] if diff else (None, "", "")
        rec = {"id": pk, "line": line, "before": before, "after": after, "code": code}
        rec.update(first=first, wall=round(time.time() - t, 2))
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def try_mutants(copy: str, fname: str, ids: str, argv: list[str], jit: bool) -> None:
    """Each mutant of ``ids`` in a fresh pytest (JIT off unless ``jit``); a line each."""
    import subprocess

    mutants = Mutants(copy, fname)
    env = dict(os.environ, PYTHONPATH=copy, PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
    if not jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-n", "0"]
    cmd += ["-p", "no:cacheprovider", *argv]
    for pk in parse_ids(ids):
        done, diff = mutants.run(
            pk, lambda: subprocess.run(cmd, env=env, capture_output=True, text=True)
        )
        code = done.returncode
        verdict = "SURVIVED" if code == 0 else f"KILLED(rc={code})"
        print(pk, verdict, diff[0] if diff else "(no diff)", first_failure(done.stdout))


USAGE = """usage: mutation_runner.py serve SOCKET | run SOCKET PYTEST_ARGS...
       | register COPY FILE | drive COPY SOCKET FILE QUEUE OUT -- PYTEST_ARGS...
       | try COPY FILE IDS [--jit] -- PYTEST_ARGS..."""


def main(args: list[str]) -> int | None:
    """The subcommands (module docstring)."""
    cmd = args[0] if args else ""
    own, rest = args[1:], None
    if "--" in args:
        own, rest = args[1 : args.index("--")], args[args.index("--") + 1 :]
    if cmd == "serve" and len(args) >= 2:
        serve(args[1])
    elif cmd == "run" and len(args) >= 2:
        return run(args[1], args[2:])
    elif cmd == "register" and len(args) == 3:
        print(args[2], register(args[1], args[2]), "mutants")
    elif cmd == "drive" and len(own) == 5 and rest is not None:
        drive(*own, rest)
    elif cmd == "try" and rest is not None and len([a for a in own if a != "--jit"]) == 3:
        copy, fname, ids = (a for a in own if a != "--jit")
        try_mutants(copy, fname, ids, rest, "--jit" in own)
    else:
        return USAGE
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
