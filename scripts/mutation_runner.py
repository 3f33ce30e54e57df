"""A pre-forking pytest runner for the mutation run (docs/mutation.md): same tests, same verdicts.

mutmut starts the runner once per mutant; most of a fresh pytest's time goes to importing
numpy, scipy, pandas, scikit-learn, numba and pytest's plug-ins. ``serve SOCKET`` imports
them once (never kernelbench: every test run imports the mutated module afresh) and forks
one ``pytest.main`` per request; ``run SOCKET ARGS...`` (mutmut's ``--runner``) sends its
working directory and pytest arguments and exits with pytest's exit code.

    python scripts/mutation_runner.py serve /tmp/kb-mutation.sock &
    mutmut run --paths-to-mutate kernelbench/kernels.py --runner \
        "python scripts/mutation_runner.py run /tmp/kb-mutation.sock -x tests/test_kernels.py"
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys

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


def run(path: str, argv: list[str]) -> int:
    """Run pytest with ``argv`` in the server: 0 when it passed, else 1."""
    conn = socket.socket(socket.AF_UNIX)
    try:
        conn.connect(path)
    except OSError as err:
        # no server: never a killed mutant; 0 leaves it a survivor, re-tested next run
        print(f"mutation_runner: no server at {path} ({err}); reported as passed", file=sys.stderr)
        return 0
    log = os.environ.get("MUTATION_PYTEST_LOG", os.devnull)
    request = {"cwd": os.getcwd(), "argv": argv, "log": log}
    conn.sendall((json.dumps(request) + "\n").encode())
    line = conn.makefile().readline()
    if not line:  # the server stopped before answering: not a kill either
        print("mutation_runner: no answer from the server; reported as passed", file=sys.stderr)
        return 0
    code = int(line)
    if code == -signal.SIGALRM:
        # the child ran past CHILD_TIMEOUT_S: slow under load is not a kill; a survivor is
        # re-tested next run, and a mutant that truly hangs is found there by hand
        msg = f"mutation_runner: pytest ran past {CHILD_TIMEOUT_S} s; reported as passed"
        print(msg, file=sys.stderr)
        return 0
    # mutmut 2 counts only exit code 1 as killed: a mutant that breaks collection
    # (pytest's 2, e.g. an import error) or kills pytest is killed as well
    return 0 if code == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit("usage: mutation_runner.py serve SOCKET | run SOCKET PYTEST_ARGS...")
