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


@dataclass(eq=False)
class JournalState:
    """The process-wide side of the journal: the run's totals and the journals open
    now. One instance, ``JOURNAL``; its fields change only under its ``lock``
    (``folders`` excepted: one ``setdefault``, which the GIL keeps whole)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    totals: Counter[Event] = field(default_factory=Counter)
    replayed_cost: float = 0.0
    fixture_dirs: set[Path] = field(default_factory=set)
    #: Why answers were not written (the details of ``LIVE`` entries that name a fixture).
    not_recorded: Counter[str] = field(default_factory=Counter)
    #: The journals of the ``journal()`` blocks running now.
    open_journals: list[Journal] = field(default_factory=list)
    #: One folder object per folder text (``folder_of``): the sets and dicts keyed by
    #: folders then find each by identity, never comparing two equal paths part by part.
    folders: dict[str, Path] = field(default_factory=dict)

    def reset(self) -> None:
        """Forget the run's totals (for tests). Kept: the open journals (each block
        removes its own) and the folder objects (``folder_of`` keeps returning them)."""
        with self.lock:
            self.totals = Counter()
            self.replayed_cost = 0.0
            self.fixture_dirs = set()
            self.not_recorded = Counter()


JOURNAL = JournalState()


@lru_cache(maxsize=256)
def folder_of(path: Path) -> Path:
    """``path.parent``, kept: every replay notes its fixture's folder (twice), and
    ``parent`` builds a new path each time (a replayed fixture's path is one object).
    The fixtures of one folder all get the same object."""
    parent = path.parent
    return JOURNAL.folders.setdefault(str(parent), parent)


def add(event: Event, path: Path | None, cost_usd: float = 0.0, detail: str = "") -> None:
    """Count one entry in the totals and in every open journal."""
    entry = Entry(event, path, cost_usd, detail)
    with JOURNAL.lock:
        JOURNAL.totals[event] += 1
        if event is Event.REPLAYED:
            JOURNAL.replayed_cost += cost_usd
        if path is not None:
            JOURNAL.fixture_dirs.add(folder_of(path))
            if event is Event.LIVE and detail:
                JOURNAL.not_recorded[detail] += 1
        for journal in JOURNAL.open_journals:
            journal.entries.append(entry)


def add_entry(entry: Entry, folder: Path) -> None:
    """``add`` for an entry made once and added again and again (a replayed fixture's,
    kept with ``folder``, its path's parent)."""
    with JOURNAL.lock:
        JOURNAL.totals[entry.event] += 1
        if entry.event is Event.REPLAYED:
            JOURNAL.replayed_cost += entry.cost_usd
        JOURNAL.fixture_dirs.add(folder)
        for journal in JOURNAL.open_journals:
            journal.entries.append(entry)


@contextmanager
def journal() -> Iterator[Journal]:
    """Collect the entries noted while the block runs (one test)."""
    current = Journal()
    with JOURNAL.lock:
        JOURNAL.open_journals.append(current)
    try:
        yield current
    finally:
        with JOURNAL.lock:
            JOURNAL.open_journals.remove(current)


def totals() -> tuple[Counter[Event], float, set[Path]]:
    with JOURNAL.lock:
        return Counter(JOURNAL.totals), JOURNAL.replayed_cost, set(JOURNAL.fixture_dirs)


def not_recorded() -> Counter[str]:
    """Each reason an answer was not written this run ("not recorded: a 401 ..."), counted."""
    with JOURNAL.lock:
        return Counter(JOURNAL.not_recorded)
