"""Replay or record: what each mode does on a hit and on a miss, once for every caller.

``replay_or_record`` is the one body (see ``steps``) that the HTTP recorder and the
cassettes drive, blocking or awaiting. Its way down: look the fixture up (store);
on a hit, check its shape (core schema) and serve it; on a miss, take the
fixture's lock, look again (another process may have recorded it meanwhile:
single flight), refuse before paying for anything that would refuse the write
(secrets gate, a full or read-only disk), call the recorder and save. What
happened is the caller's to note in the ledger, once, with the answer's cost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from .._core.config import Mode, Settings
from .._core.paths import display_path
from .._core.schema import Document, problems, stored_name
from .._store.cache import cached_fixture
from .._store.files import (
    check_before_paying,
    discard_temp,
    read_document,
    save,
    unreadable,
    unusable_folder,
)
from .._store.locks import POLL_SECONDS, LockWait
from ..errors import FixtureCorruptError, FixtureMissingError
from .misses import near_miss_hint, replay_missing_message
from .steps import Pause, Steps, once, run_awaiting, run_blocking

__all__ = ["Outcome", "afetch", "fetch", "replay_or_record", "served"]


class Outcome(NamedTuple):
    """What a lookup gave: the fixture document, whether it was just recorded, and
    whether that recording replaced a different answer. (A named tuple: one is made
    per replayed request, at a third of a frozen dataclass's cost.)"""

    doc: Document
    recorded: bool
    changed: bool = False
    #: Read from its file for this call alone (too large for the fixture cache): its
    #: answer is best rebuilt piece by piece.
    large: bool = False


Secrets = Callable[[], Iterable[tuple[str, str]]]


def served(
    path: Path,
    doc: Document,
    kind: str | None = None,
    live_request: Any = None,
    stored_request: Any = None,
) -> Outcome:
    """``doc`` as a replay, once its shape fits its kind: a fixture that would replay
    wrongly (a 200 with no body, SSE events under a request that asked for JSON) fails
    here, naming the file and the field, before anything reaches the SDK.

    ``live_request``, when given, is the stored form of the request sent now: an answer
    is checked against what the SDK will parse it for (a stream or not), whatever the
    file says. ``stored_request``, the stored form the fixture is named after (every
    dehydrate rule applied), is the request the file must hold (see ``_check_holds``).
    """
    if kind is not None and doc.get("kind") != kind:
        raise unreadable(path, f"it holds a {doc.get('kind')!r} fixture, not {kind!r}")
    if "response" not in doc:
        raise unreadable(path, "it has no 'response'")
    if stored_request is not None and doc.get("request") != stored_request:
        _check_holds(path, doc)
    if live_request is not None:
        doc = {**doc, "request": live_request}
    try:
        found = problems(doc, path.name, replay=True)
    except RecursionError:
        raise unreadable(path, "it is nested too deeply") from None
    if found:
        more = f" (and {len(found) - 1} more: `vcr_kit check` lists them)" if found[1:] else ""
        raise unreadable(path, found[0] + more)
    return Outcome(doc, recorded=False)


def _check_holds(path: Path, doc: Document) -> None:
    """Raise unless the stored request of ``doc`` has the name ``path`` has.

    Asked only when the stored request is not equal to the live one (a plain ``==``,
    no hashing: the replay path's whole cost). They differ when the file was copied,
    renamed or edited, and also where two requests of one name may: the roles of a
    cassette's messages (its name hashes their content only), a query stored as pairs.
    So the name decides: the stored request is named as at recording time, and a
    file whose request has another name answers another request.
    """
    other = stored_name(doc, path.name)
    if other == path.name:
        return
    where = display_path(path)
    if other is None:
        raise FixtureCorruptError(
            f"Fixture {where} holds no request that can be named, so nothing says it "
            "answers this one. Delete it and record again.",
            path,
        )
    raise FixtureCorruptError(
        f"Fixture {where} holds the answer to another request: its stored request is "
        f"named {other}, not {path.name} (the file was copied, renamed or edited by "
        "hand). Delete it and record again, or rename it to the name of its request.",
        path,
    )


def _lookup(
    path: Path, settings: Settings, stored_request: Any, kind: str | None
) -> tuple[Document | None, bool]:
    """The fixture's document, or None, and whether it was read for this call alone."""
    if settings.mode is not Mode.RECORD:
        # An HTTP fixture is only read (a cassette's codec may build on its document):
        # kept parsed per process while its file is unchanged.
        cached = cached_fixture(path) if kind == "http" else None
        doc = cached.doc if cached is not None else read_document(path)
        if doc is not None:
            return doc, cached is None
    unusable = unusable_folder(path.parent)  # a miss only: the replay path never asks
    if unusable is not None:
        raise unusable
    if settings.mode is Mode.REPLAY:
        hint = near_miss_hint(path, stored_request)
        raise FixtureMissingError(replay_missing_message(path, hint), path)
    return None, False


def replay_or_record(
    path: Path,
    settings: Settings,
    record: Callable[[], Steps[Document | None]],
    secrets: Secrets = tuple,
    stored_request: Any = None,
    *,
    kind: str | None = None,
    live_request: Any = None,
) -> Steps[Outcome | None]:
    """Replay the fixture at ``path`` or record it, once across processes and threads.

    ``stored_request`` is the stored form of the request, the one the fixture is named
    after (scanned for secrets before a call, shown in a miss's diff); ``live_request``
    the stored form of the request sent now, the one the answer is checked against on
    replay (see ``served``). Returns None when the recorder declined to
    save (its live answer is then the caller's to use).
    """
    doc, uncached = _lookup(path, settings, stored_request, kind)
    if doc is not None:
        outcome = served(path, doc, kind, live_request, stored_request)
        return outcome._replace(large=True) if uncached else outcome
    wait = LockWait(path, settings.lock_timeout)
    while not wait.try_acquire():
        yield Pause(POLL_SECONDS)
    try:
        if settings.mode is Mode.AUTO:  # single flight: another process may have recorded it
            doc = read_document(path)
            if doc is not None:
                return served(path, doc, kind, live_request, stored_request)
        known = list(secrets())
        temp = check_before_paying(path, stored_request, known)
        try:
            recorded = yield from record()
        except BaseException:
            discard_temp(temp)
            raise
        if recorded is None:
            discard_temp(temp)
            return None
        doc, changed = save(path, recorded, known, temp)
        return Outcome(doc, recorded=True, changed=changed)
    finally:
        wait.release()


# fetch and afetch: the two thin shells over the one body above, alike on purpose.
def fetch(
    path: Path,
    settings: Settings,
    record: Callable[[], Document | None],
    secrets: Secrets = tuple,
    stored_request: Any = None,
    *,
    kind: str | None = None,
) -> Outcome | None:
    """``replay_or_record`` for a blocking ``record``."""
    steps = replay_or_record(
        path, settings, lambda: once(record), secrets, stored_request, kind=kind
    )
    return run_blocking(steps)


async def afetch(
    path: Path,
    settings: Settings,
    record: Callable[[], Awaitable[Document | None]],
    secrets: Secrets = tuple,
    stored_request: Any = None,
    *,
    kind: str | None = None,
) -> Outcome | None:
    """``replay_or_record`` for an async ``record``: waits for the lock without blocking
    the event loop."""
    steps = replay_or_record(
        path, settings, lambda: once(record), secrets, stored_request, kind=kind
    )
    return await run_awaiting(steps)
