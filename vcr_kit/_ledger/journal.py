"""What happened to each fixture this process touched: replayed, recorded or missing.

The unittest mixin opens a journal per test (for its assertion helpers) and the
run summary reads the process-wide totals. Both are fed by ``notes.note``, the one
way into the ledger.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path


class Event(str, Enum):
    REPLAYED = "replayed"
    RECORDED = "recorded"
    MISSING = "missing"
    PASSED_THROUGH = "passed through"
    #: A request that reached the API and was not kept: mode ``off``, an answer the
    #: request did not earn (a 401, a 529, a stream cut short: the entry's path is the
    #: fixture not written, its detail why), a client vcr_kit could not wrap.
    LIVE = "live"
    #: A fault vcr_kit injected in front of the fixture at the entry's path (its detail:
    #: the fault and the request id it carried); the API was not called for it.
    FAULT = "fault"


@dataclass(frozen=True)
class Entry:
    event: Event
    path: Path | None
    cost_usd: float = 0.0
    #: What the entry is about when there is no fixture (``POST https://...``).
    detail: str = ""


@dataclass
class Journal:
    entries: list[Entry] = field(default_factory=list)

    def paths(self, event: Event) -> list[Path]:
        return [e.path for e in self.entries if e.event is event and e.path is not None]

    def count(self, event: Event) -> int:
        return sum(1 for e in self.entries if e.event is event)

    @property
    def faults(self) -> int:
        """How many injected faults the test's code was given."""
        return self.count(Event.FAULT)

    @property
    def replays(self) -> int:
        """How many fixtures the test replayed (faults in front of them not counted)."""
        return self.count(Event.REPLAYED)


_lock = threading.Lock()
_totals: Counter[Event] = Counter()
_replayed_cost = [0.0]
_fixture_dirs: set[Path] = set()
#: Why answers were not written (the details of ``LIVE`` entries that name a fixture).
_not_recorded: Counter[str] = Counter()
_open_journals: list[Journal] = []


#: One folder object per folder text: the sets and dicts keyed by folders then find
#: each by identity, never comparing two equal paths part by part.
_folders: dict[str, Path] = {}


@lru_cache(maxsize=256)
def folder_of(path: Path) -> Path:
    """``path.parent``, kept: every replay notes its fixture's folder (twice), and
    ``parent`` builds a new path each time (a replayed fixture's path is one object).
    The fixtures of one folder all get the same object."""
    parent = path.parent
    return _folders.setdefault(str(parent), parent)


def add(event: Event, path: Path | None, cost_usd: float = 0.0, detail: str = "") -> None:
    """Count one entry in the totals and in every open journal."""
    entry = Entry(event, path, cost_usd, detail)
    with _lock:
        _totals[event] += 1
        if event is Event.REPLAYED:
            _replayed_cost[0] += cost_usd
        if path is not None:
            _fixture_dirs.add(folder_of(path))
            if event is Event.LIVE and detail:
                _not_recorded[detail] += 1
        for journal in _open_journals:
            journal.entries.append(entry)


def add_entry(entry: Entry, folder: Path) -> None:
    """``add`` for an entry made once and added again and again (a replayed fixture's,
    kept with ``folder``, its path's parent)."""
    with _lock:
        _totals[entry.event] += 1
        if entry.event is Event.REPLAYED:
            _replayed_cost[0] += entry.cost_usd
        _fixture_dirs.add(folder)
        for journal in _open_journals:
            journal.entries.append(entry)


@contextmanager
def journal() -> Iterator[Journal]:
    """Collect the entries noted while the block runs (one test)."""
    current = Journal()
    with _lock:
        _open_journals.append(current)
    try:
        yield current
    finally:
        with _lock:
            _open_journals.remove(current)


def totals() -> tuple[Counter[Event], float, set[Path]]:
    with _lock:
        return Counter(_totals), _replayed_cost[0], set(_fixture_dirs)


def not_recorded() -> Counter[str]:
    """Each reason an answer was not written this run ("not recorded: a 401 ..."), counted."""
    with _lock:
        return Counter(_not_recorded)
