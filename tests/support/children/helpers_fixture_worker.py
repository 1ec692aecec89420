"""Worker code that the parallel and SIGKILL tests run in other processes.

``process_worker`` is the target of the spawned processes of ``test_parallel``;
``vcr_kit_module`` also serves ``helpers_fault_worker.py``, the SIGKILL suite's writer.

Both import vcr_kit's modules without running ``vcr_kit/__init__.py``, which
imports the whole Anthropic SDK (about a second per process): the store and the
fixture code under test are the same, and dozens of short-lived processes stay
cheap.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import types
from typing import Any

PARALLEL_INPUT = {"prompt": "the same request from every worker"}


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
