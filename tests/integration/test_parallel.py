"""Parallel recording: N workers missing the same fixture at once call the API once.

Real processes (the "spawn" start method, as on macOS and Windows), real threads
and real asyncio tasks. Every played function appends a line to a counter file
outside the fixtures folder (O_APPEND, one write per line), so the number of
lines is the number of API calls. The 0.3 s sleep inside the played function only
widens the race window; no assertion depends on timing.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.support.children.helpers_fixture_worker import PARALLEL_INPUT, process_worker
from tests.support.helpers.env import patch_env, run_spawned, temp_dir
from vcr_kit import fixture
from vcr_kit._store.files import LOCK_FOLDER

pytestmark = pytest.mark.child

INPUT = PARALLEL_INPUT
PROCESSES = 6
THREADS = 8
TASKS = 6
RACE_WINDOW = 0.3
WAIT = 120.0  # generous upper bound on waits, so a bug hangs no run forever


def count_call(counter: str, tag: str) -> None:
    fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{tag}\n".encode())
    finally:
        os.close(fd)


def play_once(fixtures_dir: str, counter: str, mode: str, tag: str) -> tuple[Any, bool]:
    def call_api() -> dict[str, Any]:
        count_call(counter, tag)
        time.sleep(RACE_WINDOW)
        return {"answer": 42, "recorded_by": tag, "text": "x" * 2000}

    with fixture(INPUT, "parallel", mode=mode, fixtures_dir=fixtures_dir) as f:
        value = f.play(call_api)
    return value, f.recorded


class ParallelTestCase(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")  # spawned workers inherit it: no exit summary
        self.tmp = temp_dir(self)
        self.dir = self.tmp / "fixtures"
        self.counter = self.tmp / "calls.txt"  # outside the fixtures folder

    def calls(self) -> list[str]:
        return self.counter.read_text(encoding="utf-8").splitlines()

    def fixture_files(self) -> list[Path]:
        return sorted(p for p in self.dir.iterdir() if p.name not in (LOCK_FOLDER, ".runs"))

    def assert_one_valid_fixture(self) -> dict[str, Any]:
        files = self.fixture_files()
        self.assertEqual([p.name for p in files], [fixture(INPUT, "parallel").path.name])
        doc = json.loads(files[0].read_bytes())
        self.assertEqual(doc["vcr_kit_format"], 1)
        return doc

    def assert_recorded_once(self, results: list[tuple[Any, bool]]) -> None:
        """One API call for all the workers: every worker got the recorder's value, only
        the recorder says it recorded, and the fixture holds that value."""
        self.assertEqual(len(self.calls()), 1)
        values = [value for value, _ in results]
        self.assertTrue(all(value == values[0] for value in values), values)
        self.assertEqual(sum(1 for _, recorded in results if recorded), 1)
        self.assertEqual(values[0]["recorded_by"], self.calls()[0])
        self.assertEqual(self.assert_one_valid_fixture()["response"], values[0])

    def run_processes(self, count: int, mode: str) -> list[tuple[str, str, Any, bool]]:
        out, exit_codes = run_spawned(
            process_worker,
            count,
            str(self.dir),
            str(self.counter),
            timeout=WAIT,
            mode=mode,
            window=RACE_WINDOW,
        )
        for exit_code in exit_codes:
            self.assertEqual(exit_code, 0)
        errors = [r for r in out if r[0] != "ok"]
        self.assertEqual(errors, [])
        return out


class ProcessesTest(ParallelTestCase):
    def test_processes_missing_at_once_record_once(self) -> None:
        out = self.run_processes(PROCESSES, "auto")
        self.assertEqual(len(out), PROCESSES)
        self.assert_recorded_once([(value, recorded) for _, _, value, recorded in out])

    def test_record_mode_in_parallel_leaves_a_valid_file(self) -> None:
        count = 4
        out = self.run_processes(count, "record")
        self.assertEqual(len(self.calls()), count)  # record mode always calls
        self.assertTrue(all(recorded for *_, recorded in out))
        for _, tag, value, _ in out:
            self.assertEqual(value["recorded_by"], tag)
        stored = self.assert_one_valid_fixture()["response"]
        self.assertIn(stored, [value for _, _, value, _ in out])


class ThreadsTest(ParallelTestCase):
    def test_threads_missing_at_once_record_once(self) -> None:
        barrier = threading.Barrier(THREADS)
        results: list[tuple[Any, bool]] = []
        errors: list[BaseException] = []
        lock = threading.Lock()

        def worker(index: int) -> None:
            try:
                barrier.wait(WAIT)
                result = play_once(str(self.dir), str(self.counter), "auto", f"thread-{index}")
                with lock:
                    results.append(result)
            except BaseException as exc:
                with lock:
                    errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        self.assertEqual(errors, [])
        self.assertEqual(len(results), THREADS)
        self.assert_recorded_once(results)


class AsyncTasksTest(ParallelTestCase):
    def test_tasks_missing_at_once_record_once(self) -> None:
        async def main() -> list[tuple[Any, bool]]:
            start = asyncio.Event()
            waiting: list[int] = []

            async def task(index: int) -> tuple[Any, bool]:
                async def call_api() -> dict[str, Any]:
                    count_call(str(self.counter), f"task-{index}")
                    await asyncio.sleep(RACE_WINDOW)
                    return {"answer": 42, "recorded_by": f"task-{index}"}

                waiting.append(index)
                await start.wait()
                async with fixture(INPUT, "parallel", mode="auto", fixtures_dir=self.dir) as f:
                    value = await f.play(call_api)
                return value, f.recorded

            tasks = [asyncio.create_task(task(i)) for i in range(TASKS)]
            while len(waiting) < TASKS:
                await asyncio.sleep(0)
            start.set()
            return await asyncio.wait_for(asyncio.gather(*tasks), WAIT)

        results = asyncio.run(main())
        self.assertEqual(len(results), TASKS)
        self.assert_recorded_once(results)


if __name__ == "__main__":
    unittest.main()
