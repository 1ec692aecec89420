"""The one way into the ledger: ``note`` what happened to a request, once.

Each entry goes to the journal (this test's assertions, the run's totals), to the
run record (what ``vcr_kit unused`` reads), and to the session cost; the first one
arranges for the summary line at exit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from . import journal, runs
from .cost import PricedUsage, add_priced, add_usage
from .journal import Entry, Event
from .summary import register_summary

__all__ = ["Event", "ReplayNote", "note", "note_replay", "replay_note"]


def note(
    event: Event,
    path: Path | None,
    *,
    usage: Iterable[Mapping[str, Any]] | PricedUsage = (),
    detail: str = "",
    changed: bool = False,
) -> None:
    """``event`` happened to the fixture at ``path`` (None: no fixture; ``detail`` says
    what instead). ``usage``: the answer's (model, usage) entries, counted in the
    session cost as a live call's would be (or the same already priced, which a
    replayed fixture keeps). ``changed``: a re-record replaced a
    different answer (the summary names it)."""
    register_summary()
    if isinstance(usage, PricedUsage):
        cost = add_priced(usage)
    else:
        cost = add_usage(usage) if usage else 0.0
    journal.add(event, path, cost, detail)
    runs.note(event.value, path, cost)
    if changed and path is not None:
        runs.note_changed(path)


class ReplayNote(NamedTuple):
    """What ``note(Event.REPLAYED, path, usage=priced)`` records, made once per fixture
    (``replay_note``) so that each replay records it in one cheaper call
    (``note_replay``): the journal's entry, the folder and name the run record keeps."""

    priced: PricedUsage
    entry: Entry
    folder: Path
    name: str


def replay_note(path: Path, priced: PricedUsage) -> ReplayNote:
    """The note of each replay of the fixture at ``path``, whose usage is ``priced``."""
    # The folder as the journal keeps it (one object per path): sets and dicts keyed by
    # it then find it by identity, with no path comparison.
    folder = journal.folder_of(path)
    return ReplayNote(priced, Entry(Event.REPLAYED, path, priced.usd), folder, path.name)


def note_replay(kept: ReplayNote) -> None:
    """``note(Event.REPLAYED, path, usage=priced)`` for the ``kept`` note of a fixture:
    the same records, without making them anew."""
    register_summary()
    cost = add_priced(kept.priced)
    entry = kept.entry
    if cost != entry.cost_usd:  # inside a cassette's recording: it counts the cost
        entry = Entry(Event.REPLAYED, entry.path, cost)
    journal.add_entry(entry, kept.folder)
    runs.note_used(kept.folder, kept.name)
