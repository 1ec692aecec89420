"""Disk faults: a full file system, a read-only one, a folder removed mid-run (issue #10).

The full and read-only cases use a small tmpfs mounted for the test where the machine
allows it (root on Linux); elsewhere they are skipped with the reason, and a
simulated ``ENOSPC`` (the last ``fsync`` of a write fails) still runs everywhere.
Each case ends with a clear vcr_kit error or a success, nothing half-written in the
fixtures folder, and the API called only for an answer that could be kept or rescued.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import threading
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL
from tests.support.helpers import fault_report
from tests.support.helpers.env import patch_env
from tests.support.helpers.loopback_case import LoopbackTestCase
from vcr_kit._store.files import LOCK_FOLDER

pytestmark = pytest.mark.child

FS_SIZE = "256k"
_cases: list[str] = []


def mount_small_fs(test: unittest.TestCase, folder: Path) -> None:
    """A tmpfs of ``FS_SIZE`` at ``folder``, unmounted on cleanup; skips where impossible."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        test.skipTest("a small file system needs root and mount(8); the simulated ENOSPC runs")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={FS_SIZE}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        test.skipTest(f"cannot mount a tmpfs here ({done.stderr.strip()}); simulated ENOSPC runs")
    test.addCleanup(subprocess.run, ["umount", "-l", str(folder)], check=False)


def remount_read_only(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)


def fixtures_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != LOCK_FOLDER)


def temps_in(folder: Path) -> list[str]:
    locks = folder / LOCK_FOLDER
    return sorted(n for n in os.listdir(locks) if n.endswith(".tmp")) if locks.exists() else []


class DiskFaultTest(LoopbackTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.cache = self.tmp / "cache"
        patch_env(self, VCR_REPORT="0", XDG_CACHE_HOME=str(self.cache))

    def create(self, text: str, mode: str = "auto") -> Any:
        with vcr_kit.client(
            mode=mode, fixtures_dir=self.fixtures, base_url=self.server.url, api_key=self.key
        ) as client:
            return client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": text}]
            )

    def refused(self, text: str, error: type[Exception] = vcr_kit.FixtureWriteError) -> str:
        with self.assertRaises(error) as caught:
            self.create(text)
        self.assertNotIsInstance(caught.exception, anthropic.APIConnectionError)
        return str(caught.exception)

    def note(self, case: str) -> None:
        _cases.append(case)

    # -- a full file system ---------------------------------------------------------

    def test_full_file_system_refuses_before_the_call(self) -> None:
        mount_small_fs(self, self.fixtures)
        self.create("Small")  # the folder and its .locks/ exist, as in a real project
        self.server.reset_log()
        with contextlib.suppress(OSError), open(self.fixtures / "filler", "wb") as filler:
            while True:
                filler.write(b"x" * 4096)
                filler.flush()
        message = self.refused("No room")
        self.assertTrue(
            message.endswith(
                f"no space left on the device ({self.fixtures}). Free some space and run again. "
                "The API was not called."
            ),
            message,
        )
        self.assertEqual(self.server.log, [])
        self.assertEqual(len(fixtures_in(self.fixtures)), 2)  # "Small" and the filler
        self.assertEqual(temps_in(self.fixtures), [])
        self.note("full file system: refused before the call")

    def test_an_answer_that_does_not_fit_is_rescued(self) -> None:
        mount_small_fs(self, self.fixtures)
        text = "Long question. " * 12_000  # ~180 KB: asked and answered (echoed)
        message = self.refused(text)
        self.assertEqual(len(self.server.log), 1)  # paid once; the SDK did not retry
        rescued = list((self.cache / "vcr_kit" / "rescued").glob("*.json"))
        self.assertEqual(len(rescued), 1)
        path = self.fixtures / rescued[0].name
        self.assertEqual(
            message,
            f"Cannot write fixture {path}: no space left on the device ({self.fixtures}). "
            f"Free some space and run again. The answer was paid for: it is kept in "
            f"{rescued[0]}; move it to {path} once the folder can be written.",
        )
        self.assertEqual(fixtures_in(self.fixtures), [])
        self.assertEqual(temps_in(self.fixtures), [])
        # Moved where there is room, it replays: nothing paid for was lost.
        elsewhere = self.tmp / "roomy"
        elsewhere.mkdir()
        shutil.copy(rescued[0], elsewhere / rescued[0].name)
        self.fixtures = elsewhere
        self.server.reset_log()
        reply = self.create(text, mode="replay")
        self.assertTrue(reply.content[0].text.startswith("Echo: Long question."))
        self.note("full file system after the call: answer rescued, replays once moved")

    def test_simulated_enospc_on_the_last_fsync_is_rescued(self) -> None:
        if not os.path.isdir("/proc/self/fd"):
            self.skipTest("tells the fixture's file by /proc/self/fd")
        real_fsync = os.fsync
        folder = str(self.fixtures)

        def fsync(fd: int) -> None:  # the fixture's temp file only, not the rescue's
            if os.readlink(f"/proc/self/fd/{fd}").startswith(folder + os.sep):
                raise OSError(errno.ENOSPC, "No space left on device")
            real_fsync(fd)

        with mock.patch("vcr_kit._store.files.os.fsync", fsync):
            message = self.refused("Simulated")
        self.assertIn("no space left on the device", message)
        self.assertIn("The answer was paid for: it is kept in ", message)
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual(fixtures_in(self.fixtures), [])
        self.assertEqual(temps_in(self.fixtures), [])
        self.note("simulated ENOSPC on fsync: answer rescued")

    # -- read-only -------------------------------------------------------------------

    def test_read_only_file_system_replays_and_refuses_new_recordings(self) -> None:
        mount_small_fs(self, self.fixtures)
        self.create("Recorded before")
        remount_read_only(self.fixtures)
        self.server.reset_log()
        self.assertEqual(self.create("Recorded before").content[0].text, "Echo: Recorded before")
        message = self.refused("Never recorded")
        self.assertIn("Read-only file system", message)
        self.assertEqual(self.server.log, [])
        self.assertEqual(len(fixtures_in(self.fixtures)), 1)
        self.note("read-only file system: replays, refuses a recording before the call")

    # -- the folder removed mid-run ----------------------------------------------------

    def test_folder_removed_while_the_call_runs(self) -> None:
        self.create("First")
        gone = threading.Event()

        def remove_soon() -> None:
            # [[slow]] keeps the call 0.3 s on the server: remove the folder meanwhile.
            while not self.server.log:
                pass
            shutil.rmtree(self.fixtures)
            gone.set()

        remover = threading.Thread(target=remove_soon)
        self.server.reset_log()
        remover.start()
        try:
            reply = self.create("Second [[slow]]")
        except vcr_kit.FixtureWriteError as exc:  # also fine: clear, and rescued
            self.assertIn("kept in", str(exc))
        else:
            self.assertEqual(reply.content[0].text, "Echo: Second [[slow]]")
            self.assertEqual(len(fixtures_in(self.fixtures)), 1)
        remover.join()
        self.assertTrue(gone.is_set())
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual(temps_in(self.fixtures), [])
        self.server.reset_log()
        self.create("Second [[slow]]")  # the next run: replayed, or recorded once more
        self.note("fixtures folder removed mid-call: recorded into a new folder")


def tearDownModule() -> None:
    fault_report.note(f"disk faults: {len(_cases)} cases passed: " + "; ".join(sorted(_cases)))
    fault_report.print_for_unittest("disk")


if __name__ == "__main__":
    unittest.main()
