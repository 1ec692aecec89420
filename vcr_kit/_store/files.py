"""Fixture files on disk: read, atomic write, per-fixture lock, single flight.

A fixture is one pretty-printed JSON object in a fixed key order, so re-recording an
unchanged answer rewrites the same bytes and a review diff is readable. Writes go
to a temp file in the git-ignored ``.locks/`` folder beside the fixture (same file
system), are fsynced, then ``os.replace``d over the target: a crash at any instant
leaves the old file or the new one, never a torn one, and the temp file a killed
writer leaves behind is one ``git add`` never stages and the next writer removes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

from filelock import FileLock, Timeout

from .._core.config import Mode, Settings
from .._core.schema import problems
from .._ledger.runs import note_changed
from ..dehydrate import map_strings
from ..errors import (
    FixtureCorruptError,
    FixtureMissingError,
    FixtureValueError,
    FixtureWriteError,
    LockTimeoutError,
)
from .rescue import rescue, rescue_folders
from .secrets import scan_for_secrets, scan_request

FORMAT_VERSION: Final = 1
FORMAT_KEY: Final = "vcr_kit_format"
LOCK_FOLDER: Final = ".locks"
TEMP_SUFFIX: Final = ".tmp"
#: A temp file older than this belongs to a writer that died: even a large fixture is
#: written in well under a second, so ten minutes never catches a live write.
STALE_SECONDS: Final = 600.0
_READ_SIZE: Final = 1 << 16
_ASYNC_LOCK_POLL: Final = 0.02

T = TypeVar("T")
Document = dict[str, Any]


def display_path(path: Path) -> str:
    """The path as the user would type it: relative to the cwd when it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def missing_message(path: Path, hint: str = "") -> str:
    # The absolute path: the run may have started anywhere, and the folder it looked in
    # is what tells a user that it was the wrong one.
    message = (
        f"Fixture missing: {path}. "
        "Re-run the tests with VCR_RECORD=1, then commit the result."
    )
    return f"{message}\n{hint}" if hint else message


NEEDS_KEY: Final = (
    "Recording it needs an API key: set ANTHROPIC_API_KEY (in the environment or in .env) "
    "and run again."
)


def keyless_missing_message(path: Path, hint: str = "") -> str:
    """A miss where recording was allowed but no key was given: the advice is the key
    (``VCR_RECORD=1`` is for CI, where it would change nothing here)."""
    message = f"Fixture missing: {path}.\n{NEEDS_KEY}"
    return f"{message}\n{hint}" if hint else message


def replay_missing_message(path: Path, hint: str = "") -> str:
    """A miss in replay mode: in CI, ``VCR_RECORD=1`` lets the run record; when
    ``VCR_MODE=replay`` itself is set, it would not (``VCR_MODE`` wins), so say that."""
    if os.environ.get("VCR_MODE", "").strip().lower() == "replay":
        message = (
            f"Fixture missing: {path}. VCR_MODE=replay never records: run the tests with "
            "VCR_MODE=auto and an API key, then commit the result."
        )
        return f"{message}\n{hint}" if hint else message
    return missing_message(path, hint)


def read_document(path: Path) -> Document | None:
    """The fixture at ``path``, or None if there is none. Never returns a torn file."""
    try:
        with open(path, "rb") as handle:  # not Path.read_bytes(): this is the replay hot path
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):  # a parent that is a file: no fixture
        return None
    except IsADirectoryError:
        raise FixtureCorruptError(
            f"Fixture {display_path(path)} is a folder, not a file. Remove it.", path
        ) from None
    return parse_document(data, path)


def _read_file(path: Path) -> bytes:
    # os.open/os.read, not Path.read_bytes(): no file object to build, on the replay hot path.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        data = os.read(fd, _READ_SIZE)
        if len(data) < _READ_SIZE:  # most fixtures: one read
            return data
        chunks = [data]
        while chunk := os.read(fd, _READ_SIZE):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_document(data: bytes, path: Path) -> Document:
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        doc = None
    version = doc.get(FORMAT_KEY) if isinstance(doc, dict) else None
    if isinstance(doc, dict) and type(version) is int and 0 < version <= FORMAT_VERSION:
        return doc  # the replay path: one parse, nothing else
    _explain_corrupt(data, path)


def _explain_corrupt(data: bytes, path: Path) -> NoReturn:
    """Raise the error that says what is wrong with an unreadable fixture, and where."""
    where = display_path(path)
    advice = "Delete it, or re-record it with VCR_MODE=record."
    if not data.strip():
        raise FixtureCorruptError(f"Fixture {where} is empty. {advice}", path)
    try:
        doc = json.loads(data)
    except UnicodeDecodeError as exc:
        raise FixtureCorruptError(
            f"Fixture {where} is not UTF-8 (byte {exc.start}). {advice}", path
        ) from None
    except json.JSONDecodeError as exc:
        raise FixtureCorruptError(
            # removesuffix: "Unterminated string starting at" would read "at at line ...".
            f"Fixture {where} is not valid JSON: {exc.msg.removesuffix(' at')} at line "
            f"{exc.lineno} column {exc.colno} (char {exc.pos}). {advice}",
            path,
        ) from None
    if not isinstance(doc, dict) or type(doc.get(FORMAT_KEY)) is not int:
        raise FixtureCorruptError(
            f"Fixture {where} is not a vcr_kit fixture (no {FORMAT_KEY!r} field). {advice}", path
        )
    if doc[FORMAT_KEY] > FORMAT_VERSION:
        raise FixtureCorruptError(
            f"Fixture {where} has format {doc[FORMAT_KEY]}, newer than this vcr_kit reads "
            f"({FORMAT_VERSION}). Upgrade vcr_kit.",
            path,
        )
    raise FixtureCorruptError(  # 0 or negative: no vcr_kit ever wrote it
        f"Fixture {where} has format {doc[FORMAT_KEY]}, which no vcr_kit writes "
        f"(this one reads 1 to {FORMAT_VERSION}). {advice}",
        path,
    )


def unreadable(path: Path, problem: object) -> FixtureCorruptError:
    """The error for a fixture that parses as JSON but cannot be replayed."""
    return FixtureCorruptError(
        f"Fixture {display_path(path)} cannot be replayed: {problem}. "
        "Delete it, or re-record it with VCR_MODE=record.",
        path,
    )


def serialize_document(doc: Document) -> bytes:
    # Not sort_keys: the response keeps the wire order, which the SDK shows in error
    # messages ("Error code: 400 - {...}"); vcr_kit's own keys are built in a fixed order.
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def write_document(path: Path, doc: Document, secrets: Iterable[tuple[str, str]] = ()) -> None:
    """Write atomically after a secret scan; on any failure no file is changed."""
    doc = {FORMAT_KEY: FORMAT_VERSION, **doc}
    try:
        data = serialize_document(doc)
    except (TypeError, ValueError) as exc:  # NaN/infinity, or a value that slipped past encode
        raise FixtureValueError(
            f"Cannot record {display_path(path)}: the result is not JSON-able ({exc}). "
            "Return JSON values or SDK objects from the played function.",
            path,
        ) from None
    scan_for_secrets(data, path, secrets, doc.get("response"))
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        scratch = private_folder(folder)
        fd, temp_name = tempfile.mkstemp(dir=scratch, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:  # owns fd from here: closed whatever happens
            os.chmod(temp_name, 0o644)  # mkstemp makes 0600; a fixture is shared, committed data
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)  # across folders, but within one file system: atomic
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        # Every OSError (a full disk, a read-only folder, a folder where the fixture
        # should be, the folder removed meanwhile): under the SDK a raw OSError would be
        # retried as a connection error, calling the API again for nothing.
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from None
        raise
    _fsync_folder(folder)
    remove_stale_temps(folder)


def _write_error(path: Path, exc: OSError) -> FixtureWriteError:
    where, folder = display_path(path), display_path(path.parent)
    if path.is_dir():
        message = f"Cannot write fixture {where}: a folder is in its place. Remove it."
    elif exc.errno == errno.ENOSPC:
        message = (
            f"Cannot write fixture {where}: no space left on the device ({folder}). "
            "Free some space and run again."
        )
    else:
        message = (
            f"Cannot write fixture {where}: {exc.strerror or exc} ({folder}). "
            "Make the folder writable or set VCR_FIXTURES_DIR."
        )
    return FixtureWriteError(message, path)


def private_folder(folder: Path) -> Path:
    """``folder/.locks``, created with a ``.gitignore`` of ``*``: lock and temp files live
    there, where ``git add`` never stages them. Raises ``OSError``."""
    private = folder / LOCK_FOLDER
    private.mkdir(parents=True, exist_ok=True)
    ignore = private / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    return private


def temp_files(folder: Path) -> list[Path]:
    """Temp files of writers in ``folder``: in ``.locks/``, and beside the fixtures where
    vcr_kit 0.1 wrote them."""
    found: list[Path] = []
    for where in (folder, folder / LOCK_FOLDER):
        try:
            names = os.listdir(where)
        except OSError:
            continue
        found.extend(where / n for n in names if n.startswith(".") and n.endswith(TEMP_SUFFIX))
    return sorted(found)


def remove_stale_temps(folder: Path, older_than: float = STALE_SECONDS) -> list[Path]:
    """Delete the temp files that writers killed mid-write left in ``folder``; return them.
    A young one may be a live write and is left alone."""
    removed = []
    limit = time.time() - older_than
    for temp in temp_files(folder):
        try:
            if temp.stat().st_mtime < limit:
                temp.unlink()
                removed.append(temp)
        except OSError:  # gone already, or not ours to delete: never fail a write for it
            continue
    return removed


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable; not possible on Windows, where it is not needed.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def lock_for(path: Path) -> FileLock:
    """The per-fixture lock. Its file lives in ``.locks/`` beside the fixtures and is
    left in place on release (deleting it would race a process that just opened it)."""
    try:
        folder = private_folder(path.parent)
    except OSError as exc:
        raise FixtureWriteError(
            f"Cannot create the lock folder {display_path(path.parent / LOCK_FOLDER)}: "
            f"{exc.strerror or exc}. Make the fixtures folder writable or set VCR_FIXTURES_DIR.",
            path,
        ) from None
    # thread_local=False: an async task may acquire in one thread and release in another.
    return FileLock(str(folder / (path.name + ".lock")), thread_local=False)


def _lock_error(path: Path, exc: OSError) -> FixtureWriteError:
    error = _write_error(path, exc)
    return FixtureWriteError(f"{error.message} The API was not called.", path)


def _timeout_error(path: Path, timeout: float) -> LockTimeoutError:
    return LockTimeoutError(
        f"Timed out after {timeout:g} s waiting for the lock of {display_path(path)}: another "
        "process is recording it. Raise VCR_LOCK_TIMEOUT, or delete a stale "
        f"{display_path(path.parent / LOCK_FOLDER)} entry if no process is recording.",
        path,
    )


def served(path: Path, doc: Document, kind: str | None = None, request: Any = None) -> Outcome:
    """``doc`` as a replay, once its shape fits its kind: a fixture that would replay
    wrongly (a 200 with no body, SSE events under a request that asked for JSON) fails
    here, naming the file and the field, before anything reaches the SDK.

    An HTTP answer is checked against ``request``, the live request's stored form: it
    is what the SDK will parse the answer for (a stream or not), whatever the file says.
    """
    if kind is not None and doc.get("kind") != kind:
        raise unreadable(path, f"it holds a {doc.get('kind')!r} fixture, not {kind!r}")
    if "response" not in doc:
        raise unreadable(path, "it has no 'response'")
    if request is not None and kind == "http":
        doc = {**doc, "request": request}
    found = problems(doc, path.name, replay=True)
    if found:
        more = f" (and {len(found) - 1} more: `vcr_kit check` lists them)" if found[1:] else ""
        raise unreadable(path, found[0] + more)
    return Outcome(doc, recorded=False)


@dataclass(frozen=True)
class Outcome:
    """What a lookup gave: the fixture document and whether it was just recorded."""

    doc: Document
    recorded: bool


#: A recorder calls the API and returns the document to save, or None when the
#: answer must not be saved (a transient failure the SDK will retry).
Recorder = Callable[[], Document | None]
AsyncRecorder = Callable[[], Awaitable[Document | None]]


def _lookup(path: Path, settings: Settings, request: Any) -> Document | None:
    if settings.mode is Mode.RECORD:
        return None
    doc = read_document(path)
    if doc is None and settings.mode is Mode.REPLAY:
        hint = near_miss_hint(path, request)
        raise FixtureMissingError(replay_missing_message(path, hint), path)
    return doc


#: Below this much free space a recording is refused before the call: most answers
#: are a few KB; a longer one that still does not fit is rescued (see ``_rescue``).
MIN_FREE_BYTES: Final = 64 * 1024


def check_writable(path: Path) -> None:
    """Raise ``FixtureWriteError`` now if ``path`` could not be written after a paid call:
    a folder in its place, a folder that refuses new files, a nearly full disk.
    Called with the fixture's lock held (so ``.locks/`` exists)."""
    folder = path.parent
    probe: OSError | None = None
    if path.is_dir():
        probe = IsADirectoryError(errno.EISDIR, "Is a directory")
    elif not os.access(folder, os.W_OK):  # EROFS or permissions: where os.replace lands
        probe = PermissionError(errno.EACCES, "Permission denied")
    else:
        try:
            fd, name = tempfile.mkstemp(dir=folder / LOCK_FOLDER, suffix=TEMP_SUFFIX)
            os.close(fd)
            os.unlink(name)
            stats = os.statvfs(folder) if hasattr(os, "statvfs") else None
            if stats is not None and stats.f_bavail * stats.f_frsize < MIN_FREE_BYTES:
                probe = OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            probe = exc
    if probe is not None:
        error = _write_error(path, probe)
        raise FixtureWriteError(f"{error.message} The API was not called.", path)


def check_before_paying(
    path: Path, request: Any, secrets: Iterable[tuple[str, str]]
) -> None:
    """Everything that would refuse the write, checked before the live call: a call
    whose answer cannot be kept is not made (and paid for) at all."""
    if request is not None:
        scan_request(request, path, secrets)
    check_writable(path)


def _save(path: Path, doc: Document | None, secrets: Iterable[tuple[str, str]]) -> Outcome | None:
    if doc is None:
        return None
    doc = {FORMAT_KEY: FORMAT_VERSION, **doc}
    kept = _same_answer_on_disk(path, doc)
    if kept is not None:  # a re-record that changed nothing changes no byte
        return Outcome(kept, recorded=True)
    existed = path.exists()
    try:
        write_document(path, doc, secrets)
    except FixtureWriteError as exc:  # after the paid call: keep the answer somewhere
        raise _rescued(path, doc, exc) from None
    if existed:  # the summary lists the answers a re-record changed
        note_changed(path)
    return Outcome(doc, recorded=True)


# An error keeps the request id the API gave it (it is what one quotes to Anthropic),
# so a re-recorded error differs from the file in that id alone.
_REQUEST_ID = re.compile(r"req_[A-Za-z0-9_]+")


def _same_answer_on_disk(path: Path, doc: Document) -> Document | None:
    """The fixture on disk if it says what ``doc`` says but for request ids, else None."""
    try:
        old = read_document(path)
    except (FixtureCorruptError, OSError):
        return None
    if old is None:
        return None
    return old if _mask_request_ids(old) == _mask_request_ids(doc) else None


def _rescued(path: Path, doc: Document, exc: FixtureWriteError) -> FixtureWriteError:
    kept = rescue(path.name, serialize_document(doc))
    if kept is None:
        where = " The answer could not be kept anywhere else either: " + ", ".join(
            display_path(folder) for folder in rescue_folders()
        ) + " refused it too."
    else:
        where = (
            f" The answer was paid for: it is kept in {kept}; "
            f"move it to {display_path(path)} once the folder can be written."
        )
    return FixtureWriteError(exc.message + where, path)


def _mask_request_ids(value: Any) -> Any:
    # Also inside text: the SDK's error message quotes the body, request id included.
    return map_strings(value, lambda s: _REQUEST_ID.sub("req_", s) if "req_" in s else s)


def fetch(
    path: Path,
    settings: Settings,
    record: Recorder,
    secrets: Callable[[], Iterable[tuple[str, str]]] = tuple,
    request: Any = None,
    *,
    kind: str | None = None,
) -> Outcome | None:
    """Replay the fixture at ``path`` or record it, once across processes and threads.

    On a miss the per-fixture lock is taken and the file looked up again: a worker
    that waited while another recorded reads that recording instead of calling the
    API a second time (single flight). Returns None when the recorder declined to
    save (its live answer is then the caller's to use).
    """
    doc = _lookup(path, settings, request)
    if doc is not None:
        return served(path, doc, kind, request)
    lock = lock_for(path)
    try:
        lock.acquire(timeout=settings.lock_timeout)
    except Timeout:
        raise _timeout_error(path, settings.lock_timeout) from None
    except OSError as exc:  # a read-only file system, a full one
        raise _lock_error(path, exc) from None
    try:
        if settings.mode is Mode.AUTO:
            doc = read_document(path)
            if doc is not None:
                return served(path, doc, kind, request)
        known = list(secrets())
        check_before_paying(path, request, known)
        return _save(path, record(), known)
    finally:
        lock.release()


async def afetch(
    path: Path,
    settings: Settings,
    record: AsyncRecorder,
    secrets: Callable[[], Iterable[tuple[str, str]]] = tuple,
    request: Any = None,
    *,
    kind: str | None = None,
) -> Outcome | None:
    """``fetch`` for async callers: waits for the lock without blocking the event loop."""
    import anyio  # the SDK's own async layer: works under asyncio and trio alike

    doc = _lookup(path, settings, request)
    if doc is not None:
        return served(path, doc, kind, request)
    lock = lock_for(path)
    # A wall-clock deadline, as filelock's own wait for sync callers: summing the poll
    # intervals would stretch the wait on a busy event loop, where sleeps overrun.
    deadline = time.monotonic() + settings.lock_timeout
    while True:
        try:
            lock.acquire(timeout=0)
            break
        except Timeout:  # an OSError too: caught first
            if time.monotonic() >= deadline:
                raise _timeout_error(path, settings.lock_timeout) from None
        except OSError as exc:  # a read-only file system, a full one
            raise _lock_error(path, exc) from None
        await anyio.sleep(_ASYNC_LOCK_POLL)
    try:
        if settings.mode is Mode.AUTO:
            doc = read_document(path)
            if doc is not None:
                return served(path, doc, kind, request)
        known = list(secrets())
        check_before_paying(path, request, known)
        return _save(path, await record(), known)
    finally:
        lock.release()


def near_miss_hint(path: Path, request: Any) -> str:
    """Point at the recorded fixture nearest to a missing one (same conversation prefix)."""
    from .._engine.near_miss import describe_near_miss

    try:
        return describe_near_miss(path, request)
    except Exception:  # a hint must never hide the real error
        return ""
