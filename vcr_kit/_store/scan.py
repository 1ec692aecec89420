"""What is on disk below a fixtures folder: fixtures, unreadable files, debris.

The commands of ``python -m vcr_kit`` all start here. Reading never raises for a bad
file (unreadable, not UTF-8, not JSON, a folder named ``*.json``): each one becomes
a ``Fixture`` whose ``error`` says what is wrong, so a command reports it and goes on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._core.paths import display_path
from .._core.schema import MAX_DEPTH, nested_deeper_than
from ..errors import VCRError
from .files import (
    LOCK_FOLDER,
    STALE_SECONDS,
    link_out,
    parse_document,
    read_fixture_bytes,
    temp_files,
)

JSON_SUFFIX: Final = ".json"
LOCK_SUFFIX: Final = ".lock"


@dataclass(frozen=True)
class Fixture:
    """One ``*.json`` entry: its parsed document, or why there is none."""

    path: Path
    size: int
    doc: dict[str, Any] | None
    error: str | None = None
    #: The folder it was read as a file of (a link out of it is never read).
    folder: Path | None = None

    @property
    def name(self) -> str:
        return self.path.name


def fixture_paths(folder: Path) -> list[Path]:
    """Every ``*.json`` below ``folder``, sorted; hidden files and folders (``.locks/``,
    ``.runs/``, ``.git/``) are not fixtures. A folder named ``*.json`` is yielded (and
    reported by ``read``), never walked into."""
    return sorted(_walk(folder))


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder, onerror=_unreadable_folder):
        here = Path(root)
        odd = sorted(d for d in dirs if d.endswith(JSON_SUFFIX) and not d.startswith("."))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in odd)
        names = [f for f in files if f.endswith(JSON_SUFFIX) and not f.startswith(".")]
        for name in sorted([*names, *odd]):
            yield here / name


def read(path: Path, root: Path | None = None) -> Fixture:
    """The fixture at ``path``; never raises. ``root``: the folder being scanned (by
    default the one that holds ``path``): a link out of it, or through a folder that is
    one, is reported, never read (git would store the link, not the file)."""
    outside = link_out(path, root)
    if outside is not None:
        return Fixture(path, 0, None, f"{outside}; a fixture must be a file in it", root)
    if path.is_dir():
        return Fixture(path, 0, None, "a folder, not a fixture file; remove or rename it", root)
    try:
        data = read_fixture_bytes(path, within=root)
    except VCRError as exc:
        return Fixture(path, 0, None, exc.message, root)
    except OSError as exc:
        return Fixture(path, 0, None, f"cannot be read: {exc.strerror or exc}", root)
    try:
        doc = parse_document(data, path)
    except VCRError as exc:
        return Fixture(path, len(data), None, exc.message, root)
    if nested_deeper_than(doc):
        return Fixture(
            path, len(data), None, f"nested more than {MAX_DEPTH} levels deep: not a fixture",
            root,
        )
    return Fixture(path, len(data), doc, folder=root)


def read_named(path: Path) -> Fixture:
    """``read`` for a fixture file named on the command line (``show``, ``diff``): judged
    as a file of the fixtures folder (``VCR_FIXTURES_DIR``, else ``fixtures/``) when it
    is in it as named, so that a subfolder that is a link out is seen; else as a file of
    its own folder."""
    root = None
    try:
        from .._core.config import load_settings

        home = Path(os.path.abspath(load_settings().fixtures_dir))
    except VCRError:  # a bad setting: the file's own folder judges
        home = None
    if home is not None and Path(os.path.abspath(path)).is_relative_to(home):
        root = home
    return read(path, root)


def links_out(folder: Path) -> list[tuple[Path, str]]:
    """Each folder below ``folder`` that is a link leading out of it, and why: its
    fixtures are not walked (a link is never followed), and ``check`` says so."""
    found = []
    for here in fixture_folders(folder):
        try:
            names = sorted(os.listdir(here))
        except OSError:
            continue
        for name in names:
            path = here / name
            if name.startswith(".") or name.endswith(JSON_SUFFIX) or not path.is_symlink():
                continue
            if path.is_dir():
                why = link_out(path, folder)
                if why is not None:
                    found.append((path, why))
    return found


def scan(folder: Path) -> list[Fixture]:
    return [read(path, folder) for path in fixture_paths(folder)]


def _unreadable_folder(exc: OSError) -> None:
    """A folder below the fixtures folder that cannot be listed: said, never skipped
    in silence (``check`` would call its fixtures fine). The commands print it in one
    line."""
    raise exc


def fixture_folders(folder: Path) -> list[Path]:
    """``folder`` and every non-hidden folder below it: each may hold its own
    ``.locks/`` and ``.runs/``."""
    found = []
    for root, dirs, _files in os.walk(folder, onerror=_unreadable_folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.endswith(JSON_SUFFIX))
        found.append(Path(root))
    return found


@dataclass(frozen=True)
class Debris:
    """A file a writer or a lock left behind that nothing needs any more."""

    path: Path
    size: int
    what: str  # "temp file" or "lock file"

    def describe(self) -> str:
        where = display_path(self.path)
        return f"{where}: {self.what} of a writer that is gone ({self.size} bytes)"


def debris(folder: Path, older_than: float = STALE_SECONDS) -> list[Debris]:
    """Stale temp files (a killed writer's) and lock files of fixtures that do not exist,
    in ``folder`` and below. Young ones may belong to a live writer and are left out."""
    limit = time.time() - older_than
    found: list[Debris] = []
    for here in fixture_folders(folder):
        for temp in temp_files(here):
            stat = _stat(temp)
            if stat is not None and stat.st_mtime < limit:
                found.append(Debris(temp, stat.st_size, "temp file"))
        locks = here / LOCK_FOLDER
        try:
            names = sorted(os.listdir(locks))
        except OSError:
            continue
        for name in names:
            if not name.endswith(LOCK_SUFFIX) or name.startswith("."):
                continue
            fixture = here / name.removesuffix(LOCK_SUFFIX)
            stat = _stat(locks / name)
            if stat is not None and stat.st_mtime < limit and not fixture.exists():
                found.append(Debris(locks / name, stat.st_size, "lock file"))
    return found


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None
