"""The one-line run summary printed on stderr when the run ends.

``vcr_kit: 41 replayed, 2 recorded, 0 missing; $0.8421 of API calls replayed,
$0.0312 recorded; fixtures/ (43 files)``, then ``; answer changed: ...`` naming the
fixtures a re-record rewrote with a different answer. ``VCR_REPORT=0`` silences it.

Under pytest-xdist only the controller prints: each worker hands its totals over
(``worker_totals``, sent through xdist's ``workeroutput``) and the controller adds
them (``add_worker_totals``), so a run prints one line, not one per worker.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._core.config import in_xdist_worker, summary_wanted
from .._core.paths import display_path
from . import journal, runs

#: Changed fixtures named in the line; more are counted.
_MAX_CHANGED_SHOWN: Final = 5
#: Reasons for answers not written, named in the line; more are counted.
_MAX_REASONS_SHOWN: Final = 3


@dataclass(eq=False)
class SummaryState:
    """What the summary line adds to this process's own totals. One instance,
    ``SUMMARY``; its fields change only under its ``lock``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Each pytest-xdist worker's totals (``add_worker_totals``).
    from_workers: list[dict[str, Any]] = field(default_factory=list)
    #: The line is printed at exit (``atexit``, once per process).
    registered: bool = False

    def reset(self) -> None:
        """Forget the workers' totals (for tests). Kept: ``registered`` (the exit hook
        is in place once per process)."""
        with self.lock:
            self.from_workers = []


SUMMARY = SummaryState()


def _json_files(folder: Path) -> int:
    try:
        return sum(1 for entry in os.scandir(folder) if entry.name.endswith(".json"))
    except OSError:
        return 0


def worker_totals() -> dict[str, Any]:
    """This process's totals as plain JSON, for the process that prints the summary."""
    counts, replayed_cost, folders = journal.totals()
    return {
        "counts": {event.value: n for event, n in counts.items()},
        "replayed_usd": replayed_cost,
        "recorded_usd": runs.recorded_cost(),
        "folders": sorted(str(f) for f in folders),
        "changed": [str(p) for p in runs.changed()],
        "not_recorded": dict(journal.not_recorded()),
    }


def add_worker_totals(totals: dict[str, Any]) -> None:
    """Count a worker's totals in this process's summary (the pytest-xdist controller)."""
    with SUMMARY.lock:
        SUMMARY.from_workers.append(totals)
    register_summary()


def _all_totals() -> dict[str, Any]:
    own = worker_totals()
    with SUMMARY.lock:
        workers = list(SUMMARY.from_workers)
    counts: Counter[str] = Counter(own["counts"])
    reasons: Counter[str] = Counter(own["not_recorded"])
    merged = dict(own, folders=set(own["folders"]), changed=list(own["changed"]))
    for other in workers:
        counts.update(other.get("counts", {}))
        reasons.update(other.get("not_recorded", {}))
        merged["replayed_usd"] += float(other.get("replayed_usd", 0.0))
        merged["recorded_usd"] += float(other.get("recorded_usd", 0.0))
        merged["folders"].update(other.get("folders", []))
        merged["changed"] += [c for c in other.get("changed", []) if c not in merged["changed"]]
    merged["counts"] = counts
    merged["not_recorded"] = reasons
    return merged


def summary_line() -> str | None:
    """The summary of everything vcr_kit did in this run, or None if it did nothing."""
    totals = _all_totals()
    counts = totals["counts"]
    replayed = counts[journal.Event.REPLAYED.value]
    recorded = counts[journal.Event.RECORDED.value]
    missing = counts[journal.Event.MISSING.value]
    live = counts[journal.Event.LIVE.value]
    faults = counts[journal.Event.FAULT.value]
    if not (replayed or recorded or missing or live or faults):
        return None
    # Folders gone by now (a test's temporary ones) say nothing about the project.
    where = "".join(
        f"; {display_path(folder)}/ ({_json_files(folder)} files)"
        for folder in sorted(Path(f) for f in totals["folders"])
        if folder.is_dir()
    )
    changed = [display_path(Path(p)) for p in totals["changed"]]
    if changed:
        shown = ", ".join(changed[:_MAX_CHANGED_SHOWN])
        more = len(changed) - _MAX_CHANGED_SHOWN
        where += f"; answer changed: {shown}" + (f" and {more} more" if more > 0 else "")
    # Live calls are named only when there were some: the usual line stays short.
    live_part = f", {live} live ({_why_not_recorded(totals['not_recorded'])})" if live else ""
    # Injected faults are counted apart: they are neither replays nor calls to the API.
    live_part += f", {faults} faults injected" if faults else ""
    return (
        f"vcr_kit: {replayed} replayed, {recorded} recorded, {missing} missing{live_part}; "
        f"${totals['replayed_usd']:.4f} of API calls replayed, "
        f"${totals['recorded_usd']:.4f} recorded{where}"
    )


def _why_not_recorded(reasons: Counter[str]) -> str:
    """``not recorded``, and why, when an answer the request did not earn was dropped."""
    shown = [
        reason.removeprefix("not recorded: ") + (f" (x{n})" if n > 1 else "")
        for reason, n in reasons.most_common(_MAX_REASONS_SHOWN)
    ]
    if not shown:
        return "not recorded"
    more = len(reasons) - len(shown)
    return "not recorded: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def print_summary() -> None:
    if not summary_wanted():
        return
    if in_xdist_worker():  # the controller prints for the whole run
        return
    line = summary_line()
    if line:
        print(line, file=sys.stderr, flush=True)


def register_summary() -> None:
    """Print the summary at exit (once per process, whatever the test runner)."""
    if SUMMARY.registered:  # every note comes here: the common case takes no lock
        return
    with SUMMARY.lock:
        if SUMMARY.registered:
            return
        SUMMARY.registered = True
    atexit.register(print_summary)
