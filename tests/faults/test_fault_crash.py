"""SIGKILL at random points of recording, several processes and threads at once.

Each round starts ``PROCESSES`` workers (``helpers_fault_worker.py``), each recording
with ``THREADS`` threads into the same ``KEYS`` fixtures (so every fixture has
writers in several processes), kills some of them with SIGKILL at a random moment
and lets the others finish (the survivors). After every round:

- no torn fixture: every file parses, has the shape of its kind, and its payload
  matches its SHA-256;
- no lost fixture: every key any worker reported as recorded (killed or survivor)
  is on disk;
- the next run succeeds with no manual cleanup: a fresh process replays every
  recorded key (auto mode, no call) and records the others, with locks and temp
  files of the killed writers left where they fell.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import unittest

import pytest

from tests.support.helpers import fault_report
from tests.support.helpers.env import patch_env, temp_dir
from tests.support.helpers.paths import ROOT
from vcr_kit import fixture
from vcr_kit._core.schema import problems
from vcr_kit._store.files import read_document

pytestmark = pytest.mark.load

WORKER = ROOT / "tests" / "support" / "children" / "helpers_fault_worker.py"
ROUNDS = 6
PROCESSES = 4
THREADS = 3
KEYS = 12
NEW_KEYS = 3  # keys no worker records: the next run records them beside the debris
MIN_RUN, MAX_RUN = 0.3, 1.2


@unittest.skipUnless(hasattr(signal, "SIGKILL"), "needs SIGKILL")
class SigkillWhileRecordingTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self) / "fixtures"

    def start(self) -> subprocess.Popen[str]:
        worker = subprocess.Popen(
            [sys.executable, "-W", "error", str(WORKER), str(self.folder), str(KEYS),
             str(THREADS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=WORKER.parent,
        )
        self.addCleanup(self.reap, worker)
        return worker

    @staticmethod
    def reap(worker: subprocess.Popen[str]) -> None:
        if worker.poll() is None:
            worker.kill()
        worker.communicate()

    def check_files(self, done: set[int]) -> int:
        checked = 0
        for key in range(KEYS):
            path = fixture({"key": key}, "crash", fixtures_dir=self.folder).path
            if not path.exists():
                self.assertNotIn(key, done, f"key {key} was recorded, then lost")
                continue
            doc = read_document(path)  # raises on a torn file
            assert doc is not None
            self.assertEqual(problems(doc, path.name), [], path)
            answer = doc["response"]
            digest = hashlib.sha256(answer["payload"].encode()).hexdigest()
            self.assertEqual(answer["sha256"], digest, f"{path}: payload torn")
            self.assertEqual(answer["key"], key)
            checked += 1
        return checked

    def test_killed_writers_leave_no_torn_or_lost_fixture(self) -> None:
        rng = random.Random()
        kills = survivors = checked = recordings = 0
        done: set[int] = set()
        for _round in range(ROUNDS):
            workers = [self.start() for _ in range(PROCESSES)]
            for worker in workers:
                assert worker.stdout is not None
                self.assertEqual(worker.stdout.readline().strip(), "ready")
            time.sleep(rng.uniform(MIN_RUN, MAX_RUN))
            doomed = set(rng.sample(range(PROCESSES), rng.randint(1, PROCESSES - 1)))
            for index in doomed:
                os.kill(workers[index].pid, signal.SIGKILL)
            for index, worker in enumerate(workers):
                out, err = worker.communicate("")  # closes stdin: survivors stop
                lines = out.splitlines()
                if index in doomed:
                    self.assertEqual(worker.returncode, -signal.SIGKILL, err)
                    kills += 1
                else:
                    self.assertEqual((worker.returncode, err), (0, ""))
                    self.assertEqual(lines[-1], "stopped")
                    survivors += 1
                finished = [int(line.split()[1]) for line in lines if line.startswith("done ")]
                recordings += len(finished)
                done.update(finished)
            checked += self.check_files(done)

        # The next run, as a user would start it: nothing cleaned up by hand.
        script = (
            "import json, sys\n"
            "from vcr_kit import fixture\n"
            "calls = []\n"
            "for key in range(int(sys.argv[2])):\n"
            "    with fixture({'key': key}, 'crash', mode='auto', fixtures_dir=sys.argv[1]) as f:\n"
            "        f.play(lambda: calls.append(key) or {'key': key, 'payload': '', 'sha256':"
            " 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'})\n"
            "print(json.dumps(calls))\n"
        )
        env = {**os.environ, "VCR_LOCK_TIMEOUT": "5"}
        after = subprocess.run(
            [sys.executable, "-W", "error", "-c", script, str(self.folder), str(KEYS + NEW_KEYS)],
            capture_output=True, text=True, timeout=120, env=env, check=False,
        )
        self.assertEqual(after.returncode, 0, after.stderr)
        called = set(json.loads(after.stdout))
        self.assertEqual(called & done, set(), "a recorded fixture was recorded again")
        self.assertTrue(set(range(KEYS, KEYS + NEW_KEYS)) <= called)
        self.assertEqual(self.check_files(set(range(KEYS))), KEYS)
        self.assertGreater(kills, 0)
        fault_report.note(
            f"SIGKILL while recording: {ROUNDS} rounds of {PROCESSES} processes x {THREADS} "
            f"threads on {KEYS} shared fixtures, {kills} kills, {survivors} survivors, "
            f"{recordings} recordings reported, {checked} fixture files checked: no torn or "
            f"lost fixture; the next run replayed {KEYS + NEW_KEYS - len(called)} and recorded "
            f"{len(called)} with no cleanup"
        )


def tearDownModule() -> None:
    fault_report.print_for_unittest("SIGKILL")


if __name__ == "__main__":
    unittest.main()
