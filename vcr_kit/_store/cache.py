"""Fixtures read once per process: a file's bytes, known to parse, kept while the file is
the same file with the same bytes.

Replay reads the same fixture again and again (a test run calls the same thing in many
tests, a benchmark in a loop), and parsing a long conversation's fixture costs more
than the SDK parsing its answer. A file is known unchanged by its ``stat``: device,
inode, size, modification and change times in nanoseconds. Every write vcr_kit makes
is a new inode (``os.replace``), and an edit in place moves ``st_ctime_ns``; a file
that no longer matches is read again. A timestamp only moves if the clock ticked between
two changes, and many kernels stamp files with a coarse clock (a tick of up to 10 ms;
some filesystems keep seconds): a file changed shortly before it was read may change
again with the same ``stat``. Such a "racy" file (as git calls it) is trusted by its
``stat`` only once it was read ``RACY_SECONDS`` after its last change; until then its
bytes are read and compared on each use. Each cached fixture carries a ``memo``: what the
engine derived from it once (its request's canonical bytes, its rendered answer), valid
exactly as long as the document is.

Bounded: the most recently used fixtures only, at most ``MAX_CACHED_FILES`` of them
and ``MAX_CACHED_TOTAL`` bytes of files together, and no file larger than
``MAX_CACHED_BYTES`` (a large answer is read each time rather than held).

I/O only; nothing here decides whether a fixture is served.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._core.schema import Document
from ..errors import VCRError
from .files import parse_document, read_fixture_bytes

__all__ = [
    "CACHE",
    "MAX_CACHED_BYTES",
    "MAX_CACHED_FILES",
    "MAX_CACHED_TOTAL",
    "RACY_SECONDS",
    "CachedFixture",
    "FixtureCache",
    "cached_fixture",
    "cached_fixture_in",
]

#: Fixtures kept parsed at once (the least recently used one goes first).
MAX_CACHED_FILES: Final = 256
#: A file larger than this is never kept: its parse would stay in memory for the run.
MAX_CACHED_BYTES: Final = 4 * 1024 * 1024
#: The files kept, together (a proxy serving a whole suite runs for long).
MAX_CACHED_TOTAL: Final = 64 * 1024 * 1024

#: Longer than any filesystem's timestamp step that matters here (FAT keeps two
#: seconds): a file read this long after its last change is known by its ``stat``.
RACY_SECONDS: Final = 3.0
_RACY_NS: Final = int(RACY_SECONDS * 1e9)

_Identity = tuple[int, int, int, int, int]


@dataclass(eq=False)
class CachedFixture:
    """One fixture's bytes (known to parse), and what the engine derived from them
    (``memo``). The bytes are kept, not the parsed document: a long conversation's
    document is thousands of objects that every garbage collection would walk for as
    long as the process runs; ``doc`` parses them again when asked."""

    path: Path
    data: bytes
    memo: dict[str, Any] = field(default_factory=dict)
    #: False while the file may still change without its ``stat`` changing.
    settled: bool = True

    @property
    def doc(self) -> Document:
        """The document, parsed now (a new one each time: it may be changed)."""
        return parse_document(self.data, self.path)


class FixtureCache:
    """The fixtures this process keeps, least recently used first."""

    __slots__ = ("entries", "lock", "total")

    #: Keyed by the path as text: hashing a ``Path`` costs more than the ``stat``.
    entries: OrderedDict[str, tuple[_Identity, CachedFixture]]
    #: The sizes of the files kept, together.
    total: int

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries = OrderedDict()
        self.total = 0

    def reset(self) -> None:
        """Keep nothing: every fixture is read from its file again."""
        with self.lock:
            self.entries.clear()
            self.total = 0


CACHE: Final = FixtureCache()


def _identity(info: os.stat_result) -> _Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def cached_fixture(path: Path) -> CachedFixture | None:
    """The fixture at ``path`` parsed, from the cache when the file is unchanged; None
    when there is no usable one (no file, not a regular file, too large to keep, not
    readable or not a fixture: the caller's ordinary read then says what is wrong)."""
    return _cached(str(path), path)


def cached_fixture_in(folder: Path, name: str) -> CachedFixture | None:
    """``cached_fixture(folder / name)``, with no new ``Path`` while the file is kept
    (building one costs more than the ``stat``): the kept fixture's ``path`` is
    ``folder / name``, the same object on every call."""
    return _cached(os.path.join(str(folder), name), None)


def _cached(key: str, path: Path | None) -> CachedFixture | None:
    try:
        info = os.stat(key)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CACHED_BYTES:
        return None
    identity = _identity(info)
    with CACHE.lock:
        entry = CACHE.entries.get(key)
        if entry is not None and entry[0] == identity:
            CACHE.entries.move_to_end(key)
            if entry[1].settled:
                return entry[1]
    kept = entry[1] if entry is not None and entry[0] == identity else None
    if path is None:
        path = kept.path if kept is not None else Path(key)
    read_at = time.time_ns()
    settled = read_at - max(info.st_mtime_ns, info.st_ctime_ns) > _RACY_NS
    try:
        data = read_fixture_bytes(path, MAX_CACHED_BYTES)
        if kept is not None and data == kept.data:  # racy, but unchanged
            kept.settled = settled
            return kept
        parse_document(data, path)  # only a fixture that parses is kept
    except (OSError, VCRError):
        return None
    fixture = CachedFixture(path, data, settled=settled)
    if len(data) != info.st_size:  # changed between the stat and the read: not kept
        return fixture
    with CACHE.lock:
        old = CACHE.entries.pop(key, None)
        if old is not None:
            CACHE.total -= old[0][2]
        CACHE.entries[key] = (identity, fixture)
        CACHE.total += info.st_size
        while len(CACHE.entries) > MAX_CACHED_FILES or CACHE.total > MAX_CACHED_TOTAL:
            CACHE.total -= CACHE.entries.popitem(last=False)[1][0][2]
    return fixture
