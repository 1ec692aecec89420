"""A recording worker for the SIGKILL fault test (``test_fault_crash.py``), run as a script.

``python helpers_fault_worker.py FOLDER KEYS THREADS``: prints ``ready``, then each of
THREADS threads records fixtures ``crash-<key>`` for random keys in ``range(KEYS)``
with ``fixture(..., mode="record")`` (every play calls the "API" and rewrites the
file, under the per-fixture lock, so writers overlap on every fixture), printing
``done <key>`` after each recording returns. Answers are 100 B to 300 KB and carry
the SHA-256 of their payload. It stops when its stdin closes (a survivor: it prints
``stopped`` and exits 0) or when the parent kills it with SIGKILL mid-write.

Like ``helpers_fixture_worker.py`` it loads vcr_kit's modules without the SDK.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import threading
from typing import Any

from helpers_fixture_worker import vcr_kit_module

READY = "ready"
STOPPED = "stopped"
SIZES = (100, 2_000, 40_000, 300_000)


def answer(key: int, writer: str) -> dict[str, Any]:
    size = random.choice(SIZES)
    payload = (f"<{key}:{writer}>" * (size // 8 + 1))[:size]
    return {
        "key": key,
        "writer": writer,
        "payload": payload,
        "sha256": hashlib.sha256(payload.encode()).hexdigest(),
    }


def main(folder: str, keys: int, threads: int) -> None:
    fixture = vcr_kit_module("_engine.cassette").fixture
    stop = threading.Event()
    out = threading.Lock()

    def say(line: str) -> None:
        with out:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def record(index: int) -> None:
        writer = f"{os.getpid()}-{index}"
        while not stop.is_set():
            key = random.randrange(keys)
            with fixture({"key": key}, "crash", mode="record", fixtures_dir=folder) as f:
                f.play(lambda key=key: answer(key, writer))
            say(f"done {key}")

    workers = [threading.Thread(target=record, args=(i,)) for i in range(threads)]
    say(READY)  # before any "done" line
    for worker in workers:
        worker.start()
    sys.stdin.read()  # the parent closes stdin: stop after the current recordings
    stop.set()
    for worker in workers:
        worker.join()
    say(STOPPED)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
