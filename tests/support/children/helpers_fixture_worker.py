"""Worker code that the parallel and crash-safety tests run in other processes.

As a script (``python helpers_fixture_worker.py PATH``) it is the crash-safety
writer: it prints ``ready``, then rewrites the fixture at PATH with vcr_kit's
``write_document`` as fast as it can, forever, with documents of varying sizes
(some about 1 MB), until the parent kills it with SIGKILL. Every document is
complete and self-checking (``sha256`` of its payload), and ``expected_document``
rebuilds any of them from its sequence number.

``process_worker`` is the target of the spawned processes of ``test_parallel``.

Both import vcr_kit's modules without running ``vcr_kit/__init__.py``, which
imports the whole Anthropic SDK (about a second per process): the store and the
fixture code under test are the same, and dozens of short-lived processes stay
cheap.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import time
import types
from pathlib import Path
from typing import Any

#: Payload sizes, cycled: small, medium and about 1 MB documents.
SIZES = (200, 50_000, 1_000_000, 5_000, 300_000, 1_000_000, 20)
READY = "ready"
PARALLEL_INPUT = {"prompt": "the same request from every worker"}
FIRST_WRITE = "first write done"


def vcr_kit_module(name: str) -> types.ModuleType:
    """``vcr_kit.<name>``, importing the package's ``__init__`` only if already loaded."""
    if "vcr_kit" not in sys.modules:
        spec = importlib.util.find_spec("vcr_kit")
        if spec is None or spec.submodule_search_locations is None:
            raise ImportError("vcr_kit is not installed")
        package = types.ModuleType("vcr_kit")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        sys.modules["vcr_kit"] = package
    return importlib.import_module(f"vcr_kit.{name}")


def payload(seq: int) -> str:
    size = SIZES[seq % len(SIZES)]
    unit = f"<{seq}:abcdefghijklmnopqrstuvwxyz0123456789>"
    return (unit * (size // len(unit) + 1))[:size]


def expected_document(seq: int) -> dict[str, Any]:
    """The document the writer writes for ``seq`` (without the format key)."""
    text = payload(seq)
    return {
        "kind": "generic",
        "request": {"worker": "crash-safety"},
        "response": {
            "seq": seq,
            "size": len(text),
            "payload": text,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        },
    }


def write_forever(path: Path) -> None:
    write_document = vcr_kit_module("_store.files").write_document
    # A random start, so that successive workers do not repeat the same timings.
    seq = int.from_bytes(os.urandom(2), "big")
    print(READY, flush=True)
    first = True
    while True:
        write_document(path, expected_document(seq))
        if first:
            print(FIRST_WRITE, flush=True)
            first = False
        seq += 1


def process_worker(
    barrier: Any, results: Any, fixtures_dir: str, counter: str, *, mode: str, window: float
) -> None:
    """Spawned by test_parallel: wait for every worker, then play the same fixture."""
    tag = f"process-{os.getpid()}"
    try:
        fixture = vcr_kit_module("_engine.cassette").fixture

        def call_api() -> dict[str, Any]:
            fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{tag}\n".encode())
            finally:
                os.close(fd)
            time.sleep(window)  # widens the race window; nothing asserts on time
            return {"answer": 42, "recorded_by": tag, "text": "x" * 2000}

        barrier.wait(120)
        with fixture(PARALLEL_INPUT, "parallel", mode=mode, fixtures_dir=fixtures_dir) as f:
            value = f.play(call_api)
        results.put(("ok", tag, value, f.recorded))
    except BaseException as exc:
        results.put(("error", tag, repr(exc), False))


if __name__ == "__main__":
    write_forever(Path(sys.argv[1]))
