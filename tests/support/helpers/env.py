"""Helpers that several test modules share: a clean environment, folders, subprocesses.

Every test must start from the same known environment, whatever the developer's
shell or CI exports, so one list of variables and one way to clear them live here
rather than a copy per module that drifts.

Kept light on purpose: the standard library and ``vcr_kit._store.files`` only (which does
not import the Anthropic SDK; ``start_server`` loads
``tests/support/servers/loopback_server.py`` when called). Nothing here may import
``anthropic`` at module level, so that any test module, and any process it spawns, can
import this one cheaply. ``tests/support/children/sdk_scenarios.py`` and
``tests/support/children/helpers_fixture_worker.py`` do not import it: they also run as
scripts, where ``tests`` is not importable.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import shutil
import subprocess
import tempfile
import unittest
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

from vcr_kit._store.files import LOCK_FOLDER

if TYPE_CHECKING:
    from tests.support.servers.loopback_server import LoopbackServer

__all__ = [
    "VCR_ENV_VARS",
    "entries",
    "environ_without_vcr",
    "installed",
    "offline",
    "offline_prefix",
    "patch_env",
    "reordered",
    "run_captured",
    "run_spawned",
    "start_server",
    "temp_dir",
    "user",
    "vcr_environ",
    "working_dir",
]

#: Variables that steer vcr_kit or the SDK (mode, folder, lock wait, config home, keys,
#: base URL): every test removes them, then sets its own. ``VCR_REPORT`` is not among
#: them: the test command sets it (``VCR_REPORT=0``) and tests may set it themselves.
VCR_ENV_VARS = (
    "VCR_MODE",
    "CI",
    "VCR_RECORD",
    "FORCE_VCR",
    "VCR_FIXTURES_DIR",
    "VCR_LOCK_TIMEOUT",
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_ADMIN_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "VCR_RUN_ID",
    # Under tox the run id derives from TOX_ENV_NAME; a test's own runs must not share it.
    "TOX_ENV_NAME",
    "VCR_RUN_COMPLETE",
)


@contextmanager
def vcr_environ(**values: str) -> Iterator[None]:
    """``os.environ`` without any of ``VCR_ENV_VARS``, plus ``values``; restored on exit."""
    with mock.patch.dict(os.environ, values):
        for name in VCR_ENV_VARS:
            if name not in values:
                os.environ.pop(name, None)
        yield


def patch_env(test: unittest.TestCase, **values: str) -> None:
    """``vcr_environ(**values)`` for the rest of one test, restored on its cleanup."""
    env = vcr_environ(**values)
    env.__enter__()
    test.addCleanup(env.__exit__, None, None, None)


#: What pytest-xdist sets in a worker's environment: a process a test starts is no
#: worker (it would leave its summary line and its run's judgement to a controller it
#: does not have), whether or not this suite runs under xdist.
XDIST_WORKER_VARS = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def environ_without_vcr() -> dict[str, str]:
    """A copy of ``os.environ`` less ``VCR_ENV_VARS`` and ``XDIST_WORKER_VARS``: for a
    subprocess that must not inherit this run's mode, fixtures folder, keys or xdist
    worker's identity."""
    left_out = (*VCR_ENV_VARS, *XDIST_WORKER_VARS)
    return {k: v for k, v in os.environ.items() if k not in left_out}


def temp_dir(test: unittest.TestCase, prefix: str | None = None) -> Path:
    """A new empty folder, removed on the test's cleanup.

    Resolved (``/tmp`` is a link on macOS), so that paths the code under test
    derives from the real cwd or ``realpath`` compare equal to those built on it.
    """
    folder = tempfile.TemporaryDirectory(prefix=prefix)
    test.addCleanup(folder.cleanup)
    return Path(folder.name).resolve()


@contextmanager
def working_dir(path: str | Path) -> Iterator[Path]:
    """Run the block in ``path``; the old cwd is back before the folder is removed."""
    old = os.getcwd()
    os.chdir(path)
    try:
        yield Path.cwd()
    finally:
        os.chdir(old)


def entries(folder: Path) -> list[str]:
    """The folder's entries but the lock and run-record folders (which a lookup and the
    end of a process may create)."""
    if not folder.exists():
        return []
    return sorted(name for name in os.listdir(folder) if name not in (LOCK_FOLDER, ".runs"))


def reordered(value: Any) -> Any:
    """The same JSON value with every object's keys in reverse order: key order must
    never change a fixture's name or match."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


def user(text: str) -> list[dict[str, Any]]:
    """A one-message conversation: the user says ``text``."""
    return [{"role": "user", "content": text}]


def offline_prefix() -> list[str]:
    """``unshare -n`` when it works here (root, Linux); else nothing.

    Under it the command gets a network namespace with no interface up. Where
    ``unshare`` is missing or not permitted (EPERM without root or user namespaces),
    the command runs without it, so each caller must also make an escaped request
    fail (a stopped server, a base URL nothing listens on).
    """
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


def installed(module: str) -> bool:
    """``module`` (dotted, ``google.auth``) can be imported here; not imported."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (``google``) is missing
        return False


def offline() -> list[str]:
    """``unshare -n`` with the loopback interface up (the proxy listens on it)."""
    prefix = offline_prefix()
    if not prefix:
        return []
    return [*prefix, "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh"]


def run_captured(
    command: Sequence[str], *, cwd: str | Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to its end with its output captured as text.

    It never raises on a non-zero exit: the caller asserts on ``returncode`` and
    shows ``stderr``, which says more than ``CalledProcessError`` would.
    """
    return subprocess.run(
        list(command),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_server(test: unittest.TestCase) -> LoopbackServer:
    """A started loopback server (``tests/support/servers/loopback_server.py``), stopped on
    the test's cleanup. Imported on call, so that modules without a server do not load it."""
    from tests.support.servers.loopback_server import LoopbackServer

    server = LoopbackServer().start()
    test.addCleanup(server.stop)
    return server


def run_spawned(
    target: Callable[..., None], count: int, *args: Any, timeout: float, **kwargs: Any
) -> tuple[list[Any], list[int | None]]:
    """Run ``target(barrier, results, *args, **kwargs)`` in ``count`` processes at once.

    The "spawn" start method, as on macOS and Windows: each child imports ``target``'s
    module afresh, so it must be a module-level function. The barrier (``count``
    parties) lets the children race together; each puts one item on ``results``.
    Returns those items, in arrival order, and the children's exit codes. A child still
    alive ``timeout`` seconds after the last item is killed: a hang fails the test
    instead of blocking the run.
    """
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(count)
    results = context.Queue()
    workers = [
        context.Process(target=target, args=(barrier, results, *args), kwargs=kwargs)
        for _ in range(count)
    ]
    for worker in workers:
        worker.start()
    try:
        out = [results.get(timeout=timeout) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout)
            if worker.is_alive():
                worker.kill()
                worker.join()
        results.close()
        results.join_thread()
    return out, [worker.exitcode for worker in workers]
