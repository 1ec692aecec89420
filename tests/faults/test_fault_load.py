"""8 processes x 4 threads, 500 requests, a slow and transiently failing server.

Every process records and replays the same 500 requests (200 distinct, so every
request overlaps with others in its own process and in the seven others) in its own
order, through ``vcr_kit.client()`` against the loopback server: one request in ten
is slow (``[[slow]]``, 0.3 s), one in ten fails with 529 the first time the server
sees it (``[[overloaded-once]]``: the SDK retries it, and the 529 is never kept).
Then each process replays every distinct request in replay mode.

- every distinct request reaches the server exactly once (twice for the
  overloaded-once ones: the 529 and its retry), whatever the race;
- every process sees the same answers, recording or replaying.
"""

from __future__ import annotations

import collections
import json
import random
import threading
import unittest
from typing import Any

import pytest

from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers import fault_report
from tests.support.helpers.env import run_spawned
from tests.support.helpers.loopback_case import LoopbackTestCase

pytestmark = pytest.mark.load

PROCESSES = 8
THREADS = 4
REQUESTS = 500
DISTINCT = 200


def prompt(i: int) -> str:
    trigger = {0: " [[slow]]", 1: " [[overloaded-once]]"}.get(i % 10, "")
    return f"Load question {i}{trigger}"


def load_worker(barrier: Any, results: Any, url: str, folder: str, seed: int) -> None:
    """Spawned: record then replay the requests; put ("ok", answers) or ("error", text)."""
    try:
        import vcr_kit

        texts = [prompt(i % DISTINCT) for i in range(REQUESTS)]
        random.Random(seed).shuffle(texts)
        key = recording_key()
        answers: dict[str, Any] = {}
        replays: dict[str, Any] = {}
        errors: list[str] = []
        lock = threading.Lock()

        def play(mode: str, share: list[str], into: dict[str, Any]) -> None:
            try:
                with vcr_kit.client(
                    mode=mode, fixtures_dir=folder, base_url=url, api_key=key, max_retries=3
                ) as client:
                    for text in share:
                        message = client.messages.create(
                            model=MODEL,
                            max_tokens=16,
                            messages=[{"role": "user", "content": text}],
                        )
                        seen = [message.content[0].to_dict(), message.usage.to_dict()]
                        with lock:
                            if into.setdefault(text, seen) != seen:
                                errors.append(f"{text}: two answers in one process")
            except Exception as exc:
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")

        def run(mode: str, items: list[str], into: dict[str, Any]) -> None:
            threads = [
                threading.Thread(target=play, args=(mode, items[i::THREADS], into))
                for i in range(THREADS)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

        barrier.wait(120)
        run("auto", texts, answers)
        run("replay", sorted(set(texts)), replays)
        if replays != answers:
            errors.append("replay differs from what was recorded or replayed first")
        results.put(("error", errors[:5]) if errors else ("ok", answers))
    except BaseException as exc:
        results.put(("error", [repr(exc)]))


class LoadTest(LoopbackTestCase):
    def test_many_processes_and_threads_record_each_request_once(self) -> None:
        out, exit_codes = run_spawned(
            _seeded, PROCESSES, self.server.url, str(self.fixtures), timeout=300
        )
        self.assertEqual(exit_codes, [0] * PROCESSES)
        errors = [r[1] for r in out if r[0] != "ok"]
        self.assertEqual(errors, [])
        answers = [r[1] for r in out]
        self.assertEqual(len(answers[0]), DISTINCT)
        for other in answers[1:]:
            self.assertEqual(other, answers[0])

        per_key = collections.Counter(
            json.loads(r.body)["messages"][0]["content"]
            for r in self.server.requests_to("/v1/messages")
        )
        expected = {
            prompt(i): 2 if "[[overloaded-once]]" in prompt(i) else 1 for i in range(DISTINCT)
        }
        self.assertEqual(dict(per_key), expected)
        self.assertEqual(len(list(self.fixtures.glob("*.json"))), DISTINCT)
        calls = sum(per_key.values())
        fault_report.note(
            f"load: {PROCESSES} processes x {THREADS} threads, {REQUESTS} requests each "
            f"({DISTINCT} distinct, 1 in 10 slow, 1 in 10 a 529 first) then {DISTINCT} "
            f"replays each: {PROCESSES * (REQUESTS + DISTINCT)} calls, {calls} upstream "
            f"requests = 1 per distinct key (+1 retried 529 for {calls - DISTINCT} keys); "
            "every process saw the same answers"
        )


def _seeded(barrier: Any, results: Any, url: str, folder: str) -> None:
    import os

    load_worker(barrier, results, url, folder, seed=os.getpid())  # each its own order


def tearDownModule() -> None:
    fault_report.print_for_unittest("load")


if __name__ == "__main__":
    unittest.main()
