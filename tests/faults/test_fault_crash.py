"""SIGKILL at random instants of recording, several processes and threads at once.

Round after round, until ``KILLS`` writers were killed, each round starts ``WRITERS``
writer processes (``helpers_fault_worker.py``, forked from a fork server that has
loaded vcr_kit: a writer starts in milliseconds), each recording with ``THREADS``
threads into the same ``KEYS`` fixtures (so every fixture has writers in several
processes; answers up to about 1 MB). One to ``WRITERS - 1`` of them are killed with
SIGKILL, each at its own random instant from "before its first write" to "many writes
in"; the others are stopped and finish (the survivors). The rounds share one folder,
so each round starts on the debris of the kills before it. After every round:

- no torn fixture: every file parses, has the shape of its kind, and holds exactly one
  complete answer of one writer (rebuilt from its fields, SHA-256 of the payload too);
- no lost fixture: every key any writer reported as recorded (killed or survivor) is
  on disk; a fixture is absent only if no writer ever finished it;
- nothing but fixtures appears beside them: the killed writers' temp files and locks
  stay in the git-ignored ``.locks/`` folder;
- the next run succeeds with no manual cleanup: a fresh process replays every
  recorded key (auto mode, no call) and records the others, with locks and temp
  files of the killed writers left where they fell.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.support.children.helpers_fault_worker import (
    SIZES,
    STOPPED,
    expected_answer,
    record_until_stopped,
)
from tests.support.helpers import fault_report
from tests.support.helpers.env import patch_env, temp_dir
from vcr_kit import fixture
from vcr_kit._core.schema import problems
from vcr_kit._store.files import read_document

pytestmark = pytest.mark.load

KILLS = 40  # rounds go on until this many writers were killed (one to three a round)
WRITERS = 4
THREADS = 3
KEYS = 12
NEW_KEYS = 3  # keys no writer records: the next run records them beside the debris
#: A doomed writer is killed at a random instant in [0, MAX_RUN) after it starts; the
#: survivors are stopped at MAX_RUN. Not a timing assertion: only where kills land.
MAX_RUN = 0.3
NEXT_RUN = "next-run"  # the writer named in the answers the next run records
WORKER_MODULE = "tests.support.children.helpers_fault_worker"


def _can_fork_server() -> bool:
    return hasattr(signal, "SIGKILL") and "forkserver" in multiprocessing.get_all_start_methods()


@unittest.skipUnless(_can_fork_server(), "needs SIGKILL and a fork server")
class SigkillWhileRecordingTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        work = temp_dir(self)
        self.folder = work / "fixtures"
        self.logs = work / "logs"
        self.logs.mkdir()
        self.started = 0
        self.writers: set[str] = set()  # "<pid>-<thread>" of every writer started
        self.context = multiprocessing.get_context("forkserver")
        # Preloaded in the server (when this test starts it): each writer is a fork.
        self.context.set_forkserver_preload([WORKER_MODULE])

    def start(self) -> tuple[Any, Path, Path]:
        """A writer process, its log and its stop file."""
        self.started += 1
        log, stop = self.logs / f"{self.started}.log", self.logs / f"{self.started}.stop"
        process = self.context.Process(
            target=record_until_stopped,
            args=(str(self.folder), KEYS, THREADS, str(log), str(stop)),
            daemon=True,
        )
        process.start()
        self.addCleanup(self.reap, process)
        self.writers.update(f"{process.pid}-{index}" for index in range(THREADS))
        return process, log, stop

    @staticmethod
    def reap(process: Any) -> None:
        if process.exitcode is None:
            process.kill()
        process.join(30)

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
            self.assertEqual(
                doc,
                {"vcr_kit_format": 1, "kind": "generic", "request": {"key": key},
                 "response": answer, "usage": []},
                path,
            )  # fmt: skip
            self.assertIn(answer["writer"], self.writers, path)
            self.assertIn(answer["size"], (0,) if answer["writer"] == NEXT_RUN else SIZES, path)
            # Exactly one complete answer: a torn or mixed one differs from its rebuild.
            self.assertEqual(
                answer, expected_answer(key, answer["writer"], answer["size"]), f"{path}: torn"
            )
            checked += 1
        return checked

    def check_folder(self) -> None:
        """Fixtures only beside the fixtures; locks and temp files only in ``.locks/``."""
        names = {fixture({"key": key}, "crash", fixtures_dir=self.folder).path.name
                 for key in range(KEYS)}  # fmt: skip
        self.assertLessEqual(set(os.listdir(self.folder)), names | {".locks"})
        temp = re.compile(rf"^\.({'|'.join(map(re.escape, names))})\..+\.tmp$")
        for name in os.listdir(self.folder / ".locks"):
            if name != ".gitignore" and name.removesuffix(".lock") not in names:
                self.assertRegex(name, temp)
        self.assertEqual((self.folder / ".locks" / ".gitignore").read_text(), "*\n")

    def test_killed_writers_leave_no_torn_or_lost_fixture(self) -> None:
        rng = random.Random()
        kills = survivors = checked = recordings = rounds = 0
        done: set[int] = set()
        while kills < KILLS:
            rounds += 1
            writers = [self.start() for _ in range(WRITERS)]
            began = time.monotonic()
            doomed = rng.sample(range(WRITERS), rng.randint(1, WRITERS - 1))
            for at, index in sorted((rng.uniform(0, MAX_RUN), index) for index in doomed):
                time.sleep(max(0.0, began + at - time.monotonic()))
                writers[index][0].kill()  # SIGKILL
            time.sleep(max(0.0, began + MAX_RUN - time.monotonic()))
            for index, (_process, _log, stop) in enumerate(writers):
                if index not in doomed:
                    stop.touch()
            for index, (process, log, _stop) in enumerate(writers):
                process.join(60)
                lines = log.read_text().splitlines() if log.exists() else []
                self.assertEqual([x for x in lines if x.startswith("error ")], [])
                if index in doomed:
                    self.assertEqual(process.exitcode, -signal.SIGKILL, lines[-1:])
                    kills += 1
                else:
                    errors = Path(f"{log}.err").read_text()
                    self.assertEqual((process.exitcode, errors), (0, ""))
                    self.assertEqual(lines[-1], STOPPED)
                    survivors += 1
                finished = [int(line.split()[1]) for line in lines if line.startswith("done ")]
                recordings += len(finished)
                done.update(finished)
            checked += self.check_files(done)
            self.check_folder()

        # The next run, as a user would start it: nothing cleaned up by hand.
        script = (
            "import json, sys\n"
            "from vcr_kit import fixture\n"
            "calls = []\n"
            "for key in range(int(sys.argv[2])):\n"
            "    with fixture({'key': key}, 'crash', mode='auto', fixtures_dir=sys.argv[1]) as f:\n"
            "        f.play(lambda: calls.append(key) or {'key': key, 'writer': sys.argv[3],"
            " 'size': 0, 'payload': '', 'sha256':"
            " 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'})\n"
            "print(json.dumps(calls))\n"
        )
        env = {**os.environ, "VCR_LOCK_TIMEOUT": "5"}
        after = subprocess.run(
            [
                sys.executable,
                "-W",
                "error",
                "-c",
                script,
                str(self.folder),
                str(KEYS + NEW_KEYS),
                NEXT_RUN,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        self.assertEqual(after.returncode, 0, after.stderr)
        called = set(json.loads(after.stdout))
        self.writers.add(NEXT_RUN)
        self.assertEqual(called & done, set(), "a recorded fixture was recorded again")
        self.assertTrue(set(range(KEYS, KEYS + NEW_KEYS)) <= called)
        self.assertEqual(self.check_files(set(range(KEYS))), KEYS)
        self.assertGreater(kills, 0)
        self.assertGreater(len(done), 0, "no writer ever finished a recording")
        fault_report.note(
            f"SIGKILL while recording: {rounds} rounds of {WRITERS} processes x {THREADS} "
            f"threads on {KEYS} shared fixtures, {kills} kills, {survivors} survivors, "
            f"{recordings} recordings reported, {checked} fixture files checked: no torn or "
            f"lost fixture; the next run replayed {KEYS + NEW_KEYS - len(called)} and recorded "
            f"{len(called)} with no cleanup"
        )


def tearDownModule() -> None:
    fault_report.print_for_unittest("SIGKILL")


if __name__ == "__main__":
    unittest.main()
