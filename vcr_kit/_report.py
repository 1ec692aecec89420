"""The one-line run summary printed on stderr when the process ends.

``vcr_kit: 41 replayed, 2 recorded, 0 missing; $0.8421 of API calls replayed;
fixtures/ (43 files)``. ``VCR_REPORT=0`` silences it.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path

from . import _journal
from ._config import truthy
from ._store import display_path

_registered: list[bool] = []
_lock = threading.Lock()


def _json_files(folder: Path) -> int:
    try:
        return sum(1 for entry in os.scandir(folder) if entry.name.endswith(".json"))
    except OSError:
        return 0


def summary_line() -> str | None:
    """The summary of everything vcr_kit did in this process, or None if it did nothing."""
    counts, replayed_cost, folders = _journal.totals()
    replayed = counts[_journal.Event.REPLAYED]
    recorded = counts[_journal.Event.RECORDED]
    missing = counts[_journal.Event.MISSING]
    live = counts[_journal.Event.LIVE]
    if not (replayed or recorded or missing or live):
        return None
    # Folders gone by now (a test's temporary ones) say nothing about the project.
    where = "".join(
        f"; {display_path(folder)}/ ({_json_files(folder)} files)"
        for folder in sorted(folders)
        if folder.is_dir()
    )
    # Live calls are named only when there were some: the usual line stays short.
    live_part = f", {live} live (not recorded)" if live else ""
    return (
        f"vcr_kit: {replayed} replayed, {recorded} recorded, {missing} missing{live_part}; "
        f"${replayed_cost:.4f} of API calls replayed{where}"
    )


def print_summary() -> None:
    if not truthy(os.environ.get("VCR_REPORT", "1")):
        return
    line = summary_line()
    if line:
        print(line, file=sys.stderr, flush=True)


def register_summary() -> None:
    """Print the summary at exit (once per process, whatever the test runner)."""
    with _lock:
        if _registered:
            return
        _registered.append(True)
    atexit.register(print_summary)
