"""The recording writer of the SIGKILL suite (``tests/faults/test_fault_crash.py``).

``record_until_stopped(folder, keys, threads, log, stop)`` is the target of the
suite's processes (forked from a ``multiprocessing`` fork server that has imported this
module, so a writer starts in milliseconds and the suite can kill many of them).
Each of ``threads`` threads records fixtures ``crash-<key>`` for random keys in
``range(keys)`` with ``fixture(..., mode="record")`` (every play calls the "API" and
rewrites the file, under the per-fixture lock, so writers overlap on every fixture),
and appends ``done <key>`` to the file ``log`` after each recording returns (one
``write`` to an ``O_APPEND`` file: a line is whole, and it stays when the writer is
killed). Answers are 100 B to about 1 MB and ``expected_answer`` rebuilds any of them
from its fields, so a reader can check that a file holds exactly one complete answer.
The writer stops when the file ``stop`` appears (a survivor: it appends ``stopped``
and returns) or when the parent kills it with SIGKILL, anywhere, mid-write included;
an error in a thread is logged as ``error <exception>``; its stderr goes to
``<log>.err``.

Like ``helpers_fixture_worker.py`` it loads vcr_kit's modules without the SDK.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import random
import threading
import warnings
from typing import Any

from tests.support.children.helpers_fixture_worker import vcr_kit_module

STOPPED = "stopped"
#: Small to about 1 MB: the large ones keep a write in flight long enough for many
#: kills to land inside it.
SIZES = (100, 2_000, 40_000, 300_000, 1_000_000)

# Imported here, in the fork server, so that a forked writer starts with them loaded
# (with what a first recording imports: the secret scan and the lock).
_fixture = vcr_kit_module("_engine.cassette").fixture
vcr_kit_module("_store.secrets")
vcr_kit_module("_store.locks")
importlib.import_module("filelock")


def expected_answer(key: int, writer: str, size: int) -> dict[str, Any]:
    """The answer writer ``writer`` records for ``key`` with a payload of ``size``."""
    payload = (f"<{key}:{writer}>" * (size // 8 + 1))[:size]
    return {
        "key": key,
        "writer": writer,
        "size": size,
        "payload": payload,
        "sha256": hashlib.sha256(payload.encode()).hexdigest(),
    }


def record_until_stopped(folder: str, keys: int, threads: int, log: str, stop: str) -> None:
    warnings.simplefilter("error")  # as the rest of the suite runs
    # Its own stderr (``<log>.err``): a survivor's must stay empty.
    os.dup2(os.open(f"{log}.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def say(line: str) -> None:
        os.write(fd, f"{line}\n".encode())  # one write: never half a line

    def record(index: int) -> None:
        writer = f"{os.getpid()}-{index}"
        try:
            while not os.path.exists(stop):
                key = random.randrange(keys)
                size = random.choice(SIZES)
                with _fixture({"key": key}, "crash", mode="record", fixtures_dir=folder) as f:
                    f.play(lambda key=key, size=size: expected_answer(key, writer, size))
                say(f"done {key}")
        except BaseException as exc:  # a thread's error would not fail the process
            say(f"error {exc!r}")
            raise

    workers = [threading.Thread(target=record, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    say(STOPPED)
    os.close(fd)
