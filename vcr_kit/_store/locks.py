"""The per-fixture lock: one recording of a fixture at a time, across processes and threads.

The lock file lives in ``.locks/`` beside the fixtures and is left in place on release
(deleting it would race a process that just opened it). Waiting is a loop of tries
with a wall-clock deadline (``LockWait``), which a blocking caller and an async one
drive alike (see ``_engine.steps``): the same number of seconds means the same wait.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .._core.paths import display_path
from ..errors import FixtureWriteError, LockTimeoutError
from .files import LOCK_FOLDER, private_folder, write_error

if TYPE_CHECKING:  # imported when a lock is first taken: a replay takes none
    from filelock import FileLock

__all__ = ["POLL_SECONDS", "LockWait", "lock_for"]

#: Between two tries of a lock another process holds.
POLL_SECONDS: Final = 0.02


def lock_for(path: Path) -> FileLock:
    """The per-fixture lock. Its file lives in ``.locks/`` beside the fixtures and is
    left in place on release (deleting it would race a process that just opened it)."""
    try:
        folder = private_folder(path.parent)
    except OSError as exc:
        raise FixtureWriteError(
            f"Cannot create the lock folder {display_path(path.parent / LOCK_FOLDER)}: "
            f"{exc.strerror or exc}. Make the fixtures folder writable or set VCR_FIXTURES_DIR.",
            path,
        ) from None
    from filelock import FileLock  # several ms of imports that a replay never needs

    # thread_local=False: an async task may acquire in one thread and release in another.
    return FileLock(str(folder / (path.name + ".lock")), thread_local=False)


def _lock_error(path: Path, exc: OSError) -> FixtureWriteError:
    error = write_error(path, exc)
    return FixtureWriteError(f"{error.message} The API was not called.", path)


def _timeout_error(path: Path, timeout: float) -> LockTimeoutError:
    return LockTimeoutError(
        f"Timed out after {timeout:g} s waiting for the lock of {display_path(path)}: another "
        "process is recording it. Raise VCR_LOCK_TIMEOUT, or delete a stale "
        f"{display_path(path.parent / LOCK_FOLDER)} entry if no process is recording.",
        path,
    )


class LockWait:
    """Taking the lock of the fixture at ``path`` within ``timeout`` seconds: call
    ``try_acquire`` until it returns True, pausing ``POLL_SECONDS`` between tries."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self.lock = lock_for(path)
        # A wall-clock deadline: summing the pauses would stretch the wait on a busy
        # event loop, where sleeps overrun.
        self._deadline = time.monotonic() + timeout

    def try_acquire(self) -> bool:
        from filelock import Timeout  # loaded with the lock (``lock_for``)

        try:
            self.lock.acquire(timeout=0)
        except Timeout:  # an OSError too: caught first
            if time.monotonic() >= self._deadline:
                raise _timeout_error(self.path, self.timeout) from None
            return False
        except OSError as exc:  # a read-only file system, a full one
            raise _lock_error(self.path, exc) from None
        return True

    def release(self) -> None:
        self.lock.release()
