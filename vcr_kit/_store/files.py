"""Fixture files on disk: read, check before a write, atomic write, keep a paid answer.

A fixture is one pretty-printed JSON object in a fixed key order, so re-recording an
unchanged answer rewrites the same bytes and a review diff is readable. Writes go
to a temp file in the git-ignored ``.locks/`` folder beside the fixture (same file
system), are fsynced, then ``os.replace``d over the target: a crash at any instant
leaves the old file or the new one, never a torn one, and the temp file a killed
writer leaves behind is one ``git add`` never stages and the next writer removes.

I/O only: which mode reads or writes what is the engine's to decide (``_engine.policy``).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, NoReturn

from .._core.json_pieces import Unusual, write_json
from .._core.paths import display_path
from .._core.schema import FORMAT_KEY, FORMAT_VERSION, Document
from ..dehydrate import map_strings
from ..errors import (
    ConfigError,
    FixtureCorruptError,
    FixtureValueError,
    FixtureWriteError,
    VCRError,
)
from .rescue import rescue, rescue_folders

__all__ = [
    "LOCK_FOLDER",
    "MAX_FIXTURE_BYTES",
    "STALE_SECONDS",
    "TEMP_CLEANUPS",
    "TEMP_SUFFIX",
    "TempCleanups",
    "check_before_paying",
    "discard_temp",
    "link_out",
    "mask_request_ids",
    "parse_document",
    "private_folder",
    "read_document",
    "read_fixture_bytes",
    "refuse_link_out",
    "remove_stale_temps",
    "reserve_temp",
    "save",
    "serialize_document",
    "temp_files",
    "unreadable",
    "unusable_folder",
    "write_document",
    "write_error",
]

LOCK_FOLDER: Final = ".locks"
TEMP_SUFFIX: Final = ".tmp"
#: A temp file older than this belongs to a writer that died: even a large fixture is
#: written in well under a second, so ten minutes never catches a live write.
STALE_SECONDS: Final = 600.0


def read_document(path: Path) -> Document | None:
    """The fixture at ``path``, or None if there is none. Never returns a torn file."""
    try:
        data = read_fixture_bytes(path)
    except (FileNotFoundError, NotADirectoryError):  # a parent that is a file: no fixture
        return None
    except PermissionError as exc:
        raise _refused(path, exc) from None
    except OSError as exc:  # a loop of links, an I/O error: the file's, said as such
        raise FixtureCorruptError(
            f"Fixture {display_path(path)} cannot be read: {exc.strerror or exc}. "
            "Delete it, or re-record it with VCR_MODE=record.",
            path,
        ) from None
    try:
        # As json.loads(bytes) decodes them, but with the bytes let go before the parse:
        # a large fixture is held as its text and its document, not also its bytes.
        text = data.decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError:
        return parse_document(data, path)  # which says at which byte
    del data
    return parse_document(text, path)


#: No fixture vcr_kit writes comes near this (the API takes requests of at most tens of
#: MB); a larger file is refused before a byte of it is read, not parsed into memory.
MAX_FIXTURE_BYTES: Final = 512 * 1024 * 1024
#: Opening a named pipe for reading waits for a writer: never wait (no effect on files).
#: A link is never followed by the open itself: where it leads is judged first.
_OPEN_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def read_fixture_bytes(
    path: Path, limit: int = MAX_FIXTURE_BYTES, within: Path | None = None
) -> bytes:
    """The bytes of the fixture file at ``path``: a regular file of at most ``limit``
    bytes, else ``FixtureCorruptError`` (a folder, a named pipe, a device, a huge file,
    a link to a file outside ``within``, by default the folder that holds ``path``).
    Raises ``OSError`` when it cannot be opened (missing, not permitted)."""
    if not _NOFOLLOW and os.path.islink(path):  # no O_NOFOLLOW: asked first
        refuse_link_out(path, within)
    try:
        fd = os.open(path, _OPEN_FLAGS | _NOFOLLOW)  # one open and one fstat: the hot path
    except OSError:
        if not _NOFOLLOW or not os.path.islink(path):
            raise
        refuse_link_out(path, within)  # a link within the folder is read as its file
        fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FixtureCorruptError(
                f"Fixture {display_path(path)} is {_file_type(info.st_mode)}, not a file. "
                "Remove it.",
                path,
            )
        if info.st_size > limit:
            raise FixtureCorruptError(
                f"Fixture {display_path(path)} is {info.st_size} bytes, more than a fixture "
                f"may be ({limit}); it was not read. Delete it, or re-record it with "
                "VCR_MODE=record.",
                path,
            )
        # One read for the whole file (asking one byte more than its size sees the end);
        # more only if it grows meanwhile, and never past the limit.
        chunks, total = [], 0
        while chunk := os.read(fd, max(info.st_size + 1, 65536)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FixtureCorruptError(
                    f"Fixture {display_path(path)} grew past {limit} bytes while being read.",
                    path,
                )
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def link_out(path: Path, within: Path | None = None) -> str | None:
    """Why ``path`` is not a file of the folder ``within`` (by default its own folder)
    when it, or a folder on the way to it below ``within``, is a link that leads
    outside; None when it is no such link. Git stores a link, not the file it leads to:
    a fixture read through one is not the fixture the repository holds, and a command
    that printed it would show a file from anywhere on the machine."""
    folder = path.parent if within is None else within
    try:
        target = path.resolve()
        inside = target.is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a loop of links
        return "a link that cannot be followed (a loop?)"
    if inside:
        return None
    return f"a link to {target}, outside the fixtures folder"


def refuse_link_out(path: Path, within: Path | None) -> None:
    """Raise ``FixtureCorruptError`` when ``path`` is a link out of ``within``."""
    why = link_out(path, within)
    if why is not None:
        raise FixtureCorruptError(
            f"Fixture {display_path(path)} is {why}: vcr_kit never reads it. Replace the "
            "link with the fixture file itself, or remove it.",
            path,
        )


def _file_type(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _refused(path: Path, exc: OSError) -> VCRError:
    """The error for a fixture the file system will not let vcr_kit read: the folder's
    fault (a ``ConfigError`` naming it) or the file's."""
    if not os.access(path.parent, os.X_OK):
        return unusable_folder(path.parent) or ConfigError(
            f"The fixtures folder {display_path(path.parent)} cannot be read "
            f"({exc.strerror or exc}). Make it readable, or set VCR_FIXTURES_DIR.",
            path.parent,
        )
    return FixtureCorruptError(
        f"Fixture {display_path(path)} cannot be read: {exc.strerror or exc}. "
        "Make it readable, or delete it and record again.",
        path,
    )


def unusable_folder(folder: Path) -> ConfigError | None:
    """Why ``folder`` cannot be the fixtures folder (a file, or under a file; a folder
    vcr_kit may not read), or None. Asked on a miss only: never on the replay path."""
    where = display_path(folder)
    advice = "Set VCR_FIXTURES_DIR (or fixtures_dir=) to a folder."
    for here in (folder, *folder.parents):
        try:
            info = here.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue  # not there yet (recording creates it), or under a file: said above
        except OSError as exc:
            return ConfigError(
                f"The fixtures folder {where} cannot be used: {display_path(here)}: "
                f"{exc.strerror or exc}. {advice}",
                folder,
            )
        if stat.S_ISDIR(info.st_mode):
            if here == folder and not os.access(folder, os.R_OK | os.X_OK):
                return ConfigError(
                    f"The fixtures folder {where} cannot be read (permission denied). "
                    f"Make it readable, or {advice[0].lower()}{advice[1:]}",
                    folder,
                )
            return None
        what = _file_type(info.st_mode) if not stat.S_ISREG(info.st_mode) else "a file"
        if here == folder:
            return ConfigError(
                f"The fixtures folder {where} is {what}, not a folder. {advice}", folder
            )
        return ConfigError(
            f"The fixtures folder {where} cannot be made: {display_path(here)} is {what}, "
            f"not a folder. {advice}",
            folder,
        )
    return None


def parse_document(data: bytes | str, path: Path) -> Document:
    """The fixture document in ``data`` (its bytes, or their text as ``json.loads``
    decodes them), else ``FixtureCorruptError`` saying what is wrong."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        doc = None
    except RecursionError:  # a hand-made file nested thousands deep
        raise FixtureCorruptError(
            f"Fixture {display_path(path)} is nested too deeply to parse. "
            "Delete it, or re-record it with VCR_MODE=record.",
            path,
        ) from None
    version = doc.get(FORMAT_KEY) if isinstance(doc, dict) else None
    if isinstance(doc, dict) and type(version) is int and 0 < version <= FORMAT_VERSION:
        return doc  # the replay path: one parse, nothing else
    _explain_corrupt(data, path)


def _explain_corrupt(data: bytes | str, path: Path) -> NoReturn:
    """Raise the error that says what is wrong with an unreadable fixture, and where."""
    where = display_path(path)
    advice = "Delete it, or re-record it with VCR_MODE=record."
    if not (data.strip() if isinstance(data, bytes) else data.strip(_ASCII_SPACE)):
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


#: What ``bytes.strip`` strips (``str.strip`` strips more: a file of "\x1c" is not empty).
_ASCII_SPACE: Final = " \t\n\r\x0b\x0c"


def unreadable(path: Path, problem: object) -> FixtureCorruptError:
    """The error for a fixture that parses as JSON but cannot be replayed."""
    return FixtureCorruptError(
        f"Fixture {display_path(path)} cannot be replayed: {problem}. "
        "Delete it, or re-record it with VCR_MODE=record.",
        path,
    )


def serialize_document(doc: Document) -> bytes:
    """The fixture's bytes: ``json.dumps(doc, indent=2, ensure_ascii=False,
    allow_nan=False)`` and a new line, encoded as UTF-8.

    Written piece by piece into one buffer (``_core.json_pieces``): a large answer is
    held as its document and these bytes, not also as the encoder's pieces and their
    joined text. A value that writer leaves to ``json.dumps`` (NaN, a tuple, a key that
    is not a string, a lone surrogate) is written the old way, which raises what it
    raised before.
    """
    # Not sort_keys: the response keeps the wire order, which the SDK shows in error
    # messages ("Error code: 400 - {...}"); vcr_kit's own keys are built in a fixed order.
    out = io.BytesIO()
    try:
        write_json(doc, lambda text: out.write(text.encode("utf-8")), indent=2)
        out.write(b"\n")
        return out.getvalue()  # the buffer itself (trimmed in place), not a copy
    except (Unusual, ValueError, RecursionError):
        pass  # json.dumps says what is wrong, outside this handler: no chained error
    out.close()  # lets go of what was written
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    text += "\n"  # in place (the only reference): a large answer is not copied for it
    return text.encode("utf-8")


def write_document(
    path: Path,
    doc: Document,
    secrets: Iterable[tuple[str, str]] = (),
    temp: Path | None = None,
) -> None:
    """Write atomically after a secret scan; on any failure no file is changed.
    ``temp``: an empty temp file made for this write (``reserve_temp``), else one is
    made now; it is renamed over ``path`` or removed."""
    doc = {FORMAT_KEY: FORMAT_VERSION, **doc}
    try:
        data = serialize_document(doc)
    except (TypeError, ValueError) as exc:  # NaN/infinity, or a value that slipped past encode
        discard_temp(temp)
        raise FixtureValueError(
            f"Cannot record {display_path(path)}: the result is not JSON-able ({exc}). "
            "Return JSON values or SDK objects from the played function.",
            path,
        ) from None
    from .secrets import scan_for_secrets  # its patterns: compiled when a test first records

    try:
        scan_for_secrets(data, path, secrets, doc)
    except BaseException:
        discard_temp(temp)
        raise
    folder = path.parent
    try:
        fd, temp_name = _open_temp(path, temp)
    except OSError as exc:
        raise write_error(path, exc) from None
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
            raise write_error(path, exc) from None
        raise
    _fsync_folder(folder)
    _now_and_then_remove_stale_temps(folder)


def _open_temp(path: Path, temp: Path | None) -> tuple[int, str]:
    """An open descriptor of the temp file to write ``path``'s bytes into, and its name:
    ``temp`` when it is still there (another process may have taken it for a dead
    writer's after ``STALE_SECONDS``), else a new one. Raises ``OSError``."""
    if temp is not None:
        try:
            return os.open(temp, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)), str(temp)
        except FileNotFoundError:
            pass
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = private_folder(path.parent)
    return tempfile.mkstemp(dir=scratch, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)




class TempCleanups:
    """When this process last looked for dead writers' temp files in each folder: a
    look lists the folder, which costs more the more fixtures it holds."""

    __slots__ = ("last_cleaned",)

    #: Folder -> ``time.monotonic()`` of the last look there.
    last_cleaned: dict[Path, float]

    def __init__(self) -> None:
        self.last_cleaned = {}

    def reset(self) -> None:
        """No folder looked at yet: the next write to each looks again."""
        self.last_cleaned.clear()


TEMP_CLEANUPS: Final = TempCleanups()
#: A temp file is stale after ten minutes: looking once a minute finds each in time.
_CLEAN_EVERY: Final = 60.0


def _now_and_then_remove_stale_temps(folder: Path) -> None:
    now = time.monotonic()
    last = TEMP_CLEANUPS.last_cleaned.get(folder)
    if last is not None and now - last < _CLEAN_EVERY:
        return
    TEMP_CLEANUPS.last_cleaned[folder] = now
    remove_stale_temps(folder)


def write_error(path: Path, exc: OSError) -> FixtureWriteError:
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


#: Below this much free space a recording is refused before the call: most answers
#: are a few KB; a longer one that still does not fit is rescued (see ``rescue``).
MIN_FREE_BYTES: Final = 64 * 1024


def reserve_temp(path: Path) -> Path:
    """The temp file the answer to ``path`` will be written into, created now: the
    proof that the write could be made after a paid call (a folder in the fixture's
    place, a folder that refuses new files, a nearly full disk raise
    ``FixtureWriteError`` instead). One file serves as the probe and as the write's
    temp file: one create and one unlink fewer per recording. Called with the
    fixture's lock held (so ``.locks/`` exists); ``discard_temp`` it if nothing is
    written."""
    folder = path.parent
    probe: OSError | None = None
    temp: Path | None = None
    if path.is_dir():
        probe = IsADirectoryError(errno.EISDIR, "Is a directory")
    elif not os.access(folder, os.W_OK):  # EROFS or permissions: where os.replace lands
        probe = PermissionError(errno.EACCES, "Permission denied")
    else:
        try:
            temp = _new_temp(path, folder / LOCK_FOLDER)
            stats = os.statvfs(folder) if hasattr(os, "statvfs") else None
            if stats is not None and stats.f_bavail * stats.f_frsize < MIN_FREE_BYTES:
                probe = OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            probe = exc
    if probe is not None or temp is None:
        discard_temp(temp)
        error = write_error(path, probe or OSError(errno.EIO, "no temp file"))
        raise FixtureWriteError(f"{error.message} The API was not called.", path)
    return temp


def _new_temp(path: Path, scratch: Path) -> Path:
    fd, name = tempfile.mkstemp(dir=scratch, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    os.close(fd)
    return Path(name)


def discard_temp(temp: Path | None) -> None:
    """Remove a reserved temp file that was not written (the call failed or was not
    kept, or the answer on disk was already the same)."""
    if temp is not None:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def check_before_paying(
    path: Path, request: Any, secrets: Iterable[tuple[str, str]]
) -> Path:
    """Everything that would refuse the write, checked before the live call: a call
    whose answer cannot be kept is not made (and paid for) at all. Returns the temp
    file the answer will be written into (see ``reserve_temp``)."""
    if request is not None:
        from .secrets import scan_request  # as in ``write_document``: a replay needs none

        scan_request(request, path, secrets)
    return reserve_temp(path)


def save(
    path: Path, doc: Document, secrets: Iterable[tuple[str, str]], temp: Path | None = None
) -> tuple[Document, bool]:
    """Write ``doc`` as the fixture at ``path`` unless the file already says the same.

    Returns the document as it is on disk and whether it replaced a different answer
    (the summary lists those). On a failed write the paid answer is rescued and the
    error says where it is. ``temp``: the file ``reserve_temp`` made for this write
    (used, or removed).
    """
    doc = {FORMAT_KEY: FORMAT_VERSION, **doc}
    kept = _same_answer_on_disk(path, doc)
    if kept is not None:  # a re-record that changed nothing changes no byte
        discard_temp(temp)
        return kept, False
    existed = path.exists()
    try:
        write_document(path, doc, secrets, temp)
    except FixtureWriteError as exc:  # after the paid call: keep the answer somewhere
        raise _rescued(path, doc, exc) from None
    return doc, existed


# An error keeps the request id the API gave it (it is what one quotes to Anthropic),
# so a re-recorded error differs from the file in that id alone.
_REQUEST_ID = re.compile(r"req_[A-Za-z0-9_]+")


def _same_answer_on_disk(path: Path, doc: Document) -> Document | None:
    """The fixture on disk if it says what ``doc`` says but for request ids, else None."""
    try:
        old = read_document(path)
        return old if old is not None and mask_request_ids(old) == mask_request_ids(doc) else None
    except (VCRError, OSError, RecursionError):  # unreadable or too deep: not the same
        return None


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


def mask_request_ids(value: Any) -> Any:
    """``value`` with every request id reduced to ``req_``: two answers that differ in
    nothing else are the same answer."""
    # Also inside text: the SDK's error message quotes the body, request id included.
    return map_strings(value, lambda s: _REQUEST_ID.sub("req_", s) if "req_" in s else s)
