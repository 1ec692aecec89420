"""Runs real test runs, many of them, fast: a process that imports the SDK, pytest and
unittest once, then, for each request read from stdin (one JSON object a line:
``cwd``, ``env``, ``runner`` "pytest" or "unittest", ``args``, ``log``), forks a child
that runs ``pytest.main(args)`` or ``python -m unittest args`` in ``cwd`` exactly as
the command line would (``sys.argv``, the environment, exit through ``sys.exit`` so
that every ``atexit`` handler runs), and answers ``{"status": N}`` when it ended.

vcr_kit itself is not imported here: each child loads it afresh, so its run record
is that of a new process.
"""

from __future__ import annotations

import json
import os
import sys
import unittest

import anthropic  # noqa: F401  (the slow import, paid once)
import pytest


def run_child(request: dict[str, object]) -> None:
    """In the forked child: become the test run; never returns."""
    log = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    args = [str(a) for a in list(request["args"])]  # type: ignore[call-overload]
    sys.path[0] = os.getcwd()  # as under `python -m ...` (not this script's folder)
    if request["runner"] == "pytest":
        sys.argv = ["pytest", *args]
        sys.exit(pytest.main(args))
    sys.argv = ["python -m unittest", *args]
    unittest.main(module=None)


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                run_child(request)
            except SystemExit:
                raise  # ends the child through the interpreter's exit: atexit runs
            except BaseException as exc:  # never fall back into the parent's loop
                print(f"run_driver child: {exc!r}", file=sys.stderr)
                sys.exit(99)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
