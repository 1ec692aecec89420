"""Runs real test runs and scripts, many of them, fast: a process that imports the SDK,
pytest and unittest once, then, for each request read from stdin (one JSON object a
line: ``cwd``, ``env``, ``runner`` "pytest", "unittest", "script" or "code", ``args``,
and the files ``out`` and ``err`` its output goes to), forks a child that runs
``pytest.main(args)``, ``python -m unittest args``, ``python args[0] args[1:]`` or
``python -c args[0] args[1:]`` in ``cwd`` exactly as the command line would
(``sys.argv``, ``sys.path`` with the run's PYTHONPATH, the environment, stdin from
/dev/null, exit through ``sys.exit`` so that every ``atexit`` handler runs; an uncaught
exception or Ctrl-C ends it as it ends the interpreter), and answers ``{"status": N}``
when it ended.

vcr_kit itself is not imported here: each child loads it afresh, so its run record
is that of a new process and its settings are read from the request's environment.
(A python start that imports the SDK costs seconds; a fork of this process, a tenth.)
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import signal
import sys
import traceback
import types
import unittest

#: Whether the run ended by an uncaught KeyboardInterrupt (set in the child).
INTERRUPTED = [False]


def end_by_sigint_if_interrupted() -> None:
    """What CPython does after its exit handlers when a KeyboardInterrupt reached the
    top: end by SIGINT (a status of -2 to the parent), as on Ctrl-C."""
    if INTERRUPTED[0]:
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)


#: The PYTHONPATH entries the interpreter put on the driver's path.
OWN_PYTHONPATH = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                  if p]  # fmt: skip


def set_path(first: str) -> None:
    """``sys.path`` as a python started with the run's environment has it: ``first``
    (the script's folder, the current one, '' for -c), then the run's PYTHONPATH
    entries in place of the driver's, then the rest (the standard library, site)."""
    given = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    rest = [p for p in sys.path[1:] if not p or os.path.abspath(p) not in OWN_PYTHONPATH]
    sys.path[:] = [first, *given, *rest]


# Registered before any import can register a handler, so it runs last (atexit is last
# in, first out): after every other handler, as the interpreter's own SIGINT end is.
atexit.register(end_by_sigint_if_interrupted)

import anthropic  # noqa: E402, F401  (the slow import, paid once)
import hypothesis.internal.observability  # noqa: E402, F401  (its pytest plugin's, at each end)
import pytest  # noqa: E402


def redirect(request: dict[str, object]) -> None:
    """The child's stdout and stderr to the request's files; its stdin empty (the
    driver's own stdin carries the requests)."""
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    for fd, name in ((1, "out"), (2, "err")):
        target = os.open(str(request[name]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)


def run_child(request: dict[str, object]) -> None:
    """In the forked child: become the test run or the script; never returns."""
    redirect(request)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    args = [str(a) for a in list(request["args"])]  # type: ignore[call-overload]
    if request["runner"] == "script":  # as `python SCRIPT ARGS`: its folder first on the path
        set_path(os.path.dirname(os.path.abspath(args[0])))
        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")
        sys.exit(0)
    if request["runner"] == "code":  # as `python -c CODE ARGS`, in a __main__ of its own
        set_path("")
        sys.argv = ["-c", *args[1:]]
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(args[0], "<string>", "exec"), main.__dict__)
        sys.exit(0)
    set_path(os.getcwd())  # as under `python -m ...` (not this script's folder)
    if request["runner"] == "pytest":
        sys.argv = ["pytest", *args]
        sys.exit(pytest.main(args))
    sys.argv = ["python -m unittest", *args]
    unittest.main(module=None)


def main() -> None:
    # What is imported now is never garbage: kept out of the collections, so that each
    # run's gc (pytest collects at its end) does not walk (and copy) the SDK's objects.
    gc.freeze()
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                run_child(request)
            except SystemExit:
                raise  # ends the child through the interpreter's exit: atexit runs
            except BaseException as exc:  # as the interpreter would: the traceback, then
                traceback.print_exc()  # status 1, or SIGINT for an uncaught Ctrl-C
                INTERRUPTED[:] = [isinstance(exc, KeyboardInterrupt)]
                sys.exit(1)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
