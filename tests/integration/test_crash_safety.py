"""Atomic writes: a writer killed with SIGKILL at any instant never leaves a torn fixture.

``helpers_fixture_worker.py`` rewrites one fixture with vcr_kit's ``write_document``
as fast as it can (documents from a few bytes to about 1 MB, each carrying the
SHA-256 of its payload). The parent kills it at random moments, many times, and
after every kill the fixture is either absent (only possible before the first
complete write) or exactly one of the complete documents.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import unittest

import pytest

from tests.support.children.helpers_fixture_worker import FIRST_WRITE, READY, expected_document
from tests.support.helpers.env import patch_env, temp_dir
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.load

WORKER = ROOT / "tests" / "support" / "children" / "helpers_fixture_worker.py"
KILLS = 40
#: Kill windows, after the worker said it is ready: from "before its first write"
#: to "several 1 MB writes in". Random, so kills land in every phase of a write.
MIN_DELAY, MAX_DELAY = 0.0, 0.25


@unittest.skipUnless(hasattr(signal, "SIGKILL"), "needs SIGKILL")
class CrashSafetyTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.dir = temp_dir(self) / "fixtures"
        self.path = self.dir / "crash-0123456789ab.json"

    def start_worker(self) -> subprocess.Popen[str]:
        worker = subprocess.Popen(
            [sys.executable, "-W", "error", str(WORKER), str(self.path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.addCleanup(self.reap, worker)
        assert worker.stdout is not None
        line = worker.stdout.readline()
        if line.strip() != READY:
            worker.kill()
            _, err = worker.communicate()
            self.fail(f"the worker did not start: {line!r} {err}")
        return worker

    @staticmethod
    def reap(worker: subprocess.Popen[str]) -> None:
        if worker.poll() is None:
            worker.kill()
        worker.communicate()

    def assert_complete_document(self, kill: int) -> int:
        data = self.path.read_bytes()
        self.assertTrue(data, f"kill {kill}: the fixture is empty")
        try:
            doc = json.loads(data)
        except ValueError as exc:
            self.fail(f"kill {kill}: torn fixture ({len(data)} bytes): {exc}")
        response = doc["response"]
        digest = hashlib.sha256(response["payload"].encode("utf-8")).hexdigest()
        self.assertEqual(response["sha256"], digest, f"kill {kill}: payload does not match")
        self.assertEqual(doc, {"vcr_kit_format": 1, **expected_document(response["seq"])})
        return int(response["seq"])

    def test_sigkill_never_leaves_a_torn_fixture(self) -> None:
        rng = random.Random()
        first_write_seen = False
        sizes_seen: set[int] = set()
        for kill in range(KILLS):
            worker = self.start_worker()
            # Not a timing assertion: only where in the write loop the kill lands.
            time.sleep(rng.uniform(MIN_DELAY, MAX_DELAY))
            os.kill(worker.pid, signal.SIGKILL)
            out, err = worker.communicate()
            self.assertEqual(worker.returncode, -signal.SIGKILL, f"kill {kill}: {err}")
            if FIRST_WRITE in out:
                first_write_seen = True
            if self.path.exists():
                seq = self.assert_complete_document(kill)
                sizes_seen.add(len(expected_document(seq)["response"]["payload"]))
            else:
                self.assertFalse(first_write_seen, f"kill {kill}: a written fixture vanished")
        self.assertTrue(first_write_seen, "no worker ever completed a write")
        # Leftover temp files of killed writers are allowed, in the git-ignored .locks/
        # folder only (where `git add` never stages them); nothing else may appear.
        self.assertEqual(sorted(os.listdir(self.dir)), sorted([self.path.name, ".locks"]))
        temp = re.compile(rf"^\.{re.escape(self.path.name)}\..+\.tmp$")
        for name in os.listdir(self.dir / ".locks"):
            if name != ".gitignore":
                self.assertRegex(name, temp)
        self.assertEqual((self.dir / ".locks" / ".gitignore").read_text(), "*\n")
        self.assertTrue(sizes_seen)


if __name__ == "__main__":
    unittest.main()
