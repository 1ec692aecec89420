"""Real pytest, unittest and script runs forked from one driver process
(``tests/support/children/run_driver.py``), instead of a python start each.

A python start that imports the SDK costs about three seconds here; a fork of the
driver, which imported it once, a fraction of that. Each run is still a process of its
own, started in its own folder with its own environment and ``sys.argv``, loading
vcr_kit afresh and leaving at its end through ``sys.exit`` (its ``atexit`` handlers, the
run record among them, run as in any process). So a test that checks what a run does
checks it on a real run; only the interpreter's start is shared. One difference shows:
a forked pytest run's warnings summary says pytest cannot rewrite the asserts of anyio
and hypothesis (already imported); silencing it (their docstrings asking pytest to leave
them alone) made a run with unclosed clients fail at exit where a fresh one passes, so
it is left as it is.

One driver per test process (``driver()``), started on first use and stopped at the
process's exit: the child-tier files that a pytest-xdist worker runs share it. Each run
raises the audit event of a process start in the test's own process, so the guard of
the in-process tier (``tests/tiers.py``) fails an ``inprocess`` test that makes one.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.support.helpers.env import environ_without_vcr
from tests.support.helpers.paths import ROOT

__all__ = ["RunDriver", "driver"]

SCRIPT = ROOT / "tests" / "support" / "children" / "run_driver.py"


#: Each runner as a python command line (``STARTS[runner] + args``).
STARTS = {"pytest": ["-m", "pytest"], "unittest": ["-m", "unittest"], "script": [],
          "code": ["-c"]}  # fmt: skip


#: Start-up settings a fork follows (the path) or compares as options (the warnings).
_FOLLOWED = ("PYTHONPATH", "PYTHONWARNINGS")


def _startup(env: dict[str, str], flags: Sequence[str] = ()) -> dict[str, Any]:
    """What a python started with ``env`` and the command-line ``flags`` (``-W X`` only)
    reads at its start, but its path: its PYTHON* variables, its warning options as a
    set (``-W error`` beside PYTHONWARNINGS=error filters alike)."""
    found: dict[str, Any] = {
        k: v for k, v in env.items() if k.startswith("PYTHON") and k not in _FOLLOWED
    }
    options = [o for o in env.get("PYTHONWARNINGS", "").split(",") if o]
    words = list(flags)
    while words:
        if words[0] != "-W" or len(words) < 2:
            raise ValueError(f"only -W options are taken as interpreter flags, not {words}")
        options.append(words[1])
        words = words[2:]
    found["warnings"] = frozenset(options)
    return found


class RunDriver:
    """A started ``run_driver.py``: ``run`` makes one real run in a child forked from it."""

    def __init__(self, prefix: Sequence[str] = ()) -> None:
        env = environ_without_vcr()
        #: What the interpreter reads at its start (warnings, hash seed, ...): a fork keeps
        #: the driver's, so a run asking for others is a python start of its own. (Its
        #: PYTHONPATH a fork can follow: the driver sets ``sys.path`` from it.)
        self.startup = _startup(env)
        self.prefix = list(prefix)
        self.process = subprocess.Popen(
            [*prefix, sys.executable, str(SCRIPT)],  # e.g. ``unshare -n``: its runs offline
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # its group, so that a hung run is killed with it
        )
        self.outputs = Path(tempfile.mkdtemp(prefix="vcr-run-driver-"))
        self.count = 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(
        self,
        runner: str,
        args: Sequence[str],
        *,
        cwd: str | Path,
        env: dict[str, str],
        flags: Sequence[str] = (),
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        """``pytest ARGS`` (``pytest.main``), ``python -m unittest ARGS``, ``python ARGS``
        (runner "script") or ``python -c ARGS`` (runner "code") in ``cwd`` with exactly
        ``env``, to its end; its exit status and output, as ``subprocess.run(...,
        capture_output=True)`` gives them, as ``python FLAGS ...`` would. Forked, unless
        ``env`` and ``flags`` ask the interpreter for other start-up settings than the
        driver's: then a python start of its own (under the driver's prefix).
        A run still going after ``timeout`` seconds kills the driver (and the run) and
        fails the test."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        if _startup(env, flags) != self.startup:
            return subprocess.run(
                [*self.prefix, sys.executable, *flags, *STARTS[runner], *args], cwd=cwd, env=env,
                capture_output=True, text=True, timeout=timeout, check=False,
            )  # fmt: skip
        # A process starts, if not from here: the audit event a start from here raises,
        # so that the in-process tier's guard (tests/tiers.py) still sees it.
        command = [sys.executable, str(SCRIPT), runner, *args]
        sys.audit("subprocess.Popen", sys.executable, command, str(cwd), env)
        self.count += 1
        out = self.outputs / f"{self.count}.out"
        err = self.outputs / f"{self.count}.err"
        request = {"cwd": str(cwd), "env": env, "runner": runner, "args": list(args),
                   "out": str(out), "err": str(err)}  # fmt: skip
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.stop(kill=True)
            raise AssertionError(f"{runner} {list(args)} in {cwd}: still running after {timeout} s")
        answer = self.process.stdout.readline()
        if not answer:
            raise AssertionError(f"the run driver died running {runner} {list(args)}")
        status = int(json.loads(answer)["status"])
        done = subprocess.CompletedProcess(
            [runner, *args], status, out.read_text(encoding="utf-8", errors="replace"),
            err.read_text(encoding="utf-8", errors="replace"),
        )  # fmt: skip
        out.unlink()
        err.unlink()
        return done

    def stop(self, kill: bool = False) -> None:
        if kill and self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()  # no more requests: the driver ends
        self.process.wait(60)
        for leftover in self.outputs.iterdir():
            leftover.unlink()
        self.outputs.rmdir()


_DRIVERS: dict[tuple[str, ...], RunDriver] = {}
_STOP_AT_EXIT: list[object] = []  # registered once


def driver(prefix: Sequence[str] = ()) -> RunDriver:
    """This process's driver (one per ``prefix``: ``offline_prefix()`` gives one whose
    runs have no network), started on first use (again if it died)."""
    key = tuple(prefix)
    if key not in _DRIVERS or not _DRIVERS[key].alive():
        if not _DRIVERS and not _STOP_AT_EXIT:
            _STOP_AT_EXIT.append(atexit.register(_stop_all))
        if key in _DRIVERS:
            _DRIVERS.pop(key).stop()
        _DRIVERS[key] = RunDriver(prefix)
    return _DRIVERS[key]


def _stop_all() -> None:
    while _DRIVERS:
        _DRIVERS.popitem()[1].stop()
