"""Where ``vcr_kit prune`` puts what it removes, so that a prune can be undone.

Each prune moves its files into a batch, ``<folder>/.trash/<when>/``, at the same
path relative to the folder it pruned (``.trash/`` holds a ``.gitignore`` of ``*``,
and, hidden, is never read as fixtures). Batches are undone newest first, in the
order they were made (``<when>``, then ``-2``, ``-3``... for prunes in one second,
compared as numbers). ``restore`` moves a batch's files back; a file that cannot go
back (its name is taken by a different file) stays in the batch, which is then
marked undone, so that the next undo reaches the batch before it. ``empty`` deletes
the trash for good. Every function says what it did and what it could not do; none
raises for one file.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

TRASH_FOLDER: Final = ".trash"
#: In a batch that was undone, as far as it could be: its files that stay could not
#: go back, and the next undo goes to the batch before it.
UNDONE_MARK: Final = ".vcr_kit-undone"

__all__ = [
    "TRASH_FOLDER",
    "Emptied",
    "Moved",
    "Restored",
    "batches",
    "empty",
    "leftovers",
    "move_to_trash",
    "restore",
]


@dataclass
class Moved:
    """What ``move_to_trash`` did."""

    #: The batch folder; None when nothing was moved (no batch is left behind).
    batch: Path | None
    moved: list[Path] = field(default_factory=list)
    #: Already gone when their turn came (removed since they were listed).
    gone: list[Path] = field(default_factory=list)
    #: (path, why) of files that could not be moved: they are still in place.
    failed: list[tuple[Path, str]] = field(default_factory=list)


def move_to_trash(root: Path, paths: list[Path]) -> Moved:
    """Move ``paths`` (below ``root``) into a new batch of ``root``'s trash.

    Raises ``OSError`` only when the batch itself cannot be made (nothing moved)."""
    trash = root / TRASH_FOLDER
    trash.mkdir(exist_ok=True)
    ignore = trash / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    batch = _new_batch(trash)
    done = Moved(batch)
    for path in paths:
        target = batch / path.relative_to(root)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _move(path, target)
        except FileNotFoundError:
            if os.path.lexists(path):  # the target side failed, not the source
                done.failed.append((path, "a folder in the trash could not be made"))
            else:
                done.gone.append(path)
        except OSError as exc:
            done.failed.append((path, _reason(exc)))
        else:
            done.moved.append(path)
    if not done.moved:
        shutil.rmtree(batch, ignore_errors=True)
        done.batch = None
    return done


def batches(root: Path) -> list[Path]:
    """The prunes in ``root``'s trash not yet undone, oldest first."""
    return [b for b in _all_batches(root) if not (b / UNDONE_MARK).exists()]


def leftovers(root: Path) -> list[Path]:
    """Files of undone prunes that could not go back, still in the trash."""
    return [f for b in _all_batches(root) if (b / UNDONE_MARK).exists() for f in _files(b)]


@dataclass
class Restored:
    batch: Path
    restored: list[Path] = field(default_factory=list)
    #: Already in place: the same bytes are there (the trash's copy is dropped).
    in_place: list[Path] = field(default_factory=list)
    #: Not put back because another file now has their name (left in the batch).
    kept: list[Path] = field(default_factory=list)
    #: (path, why) of files that could not be moved back (left in the batch).
    failed: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def left(self) -> int:
        """How many of the batch's files stay in the trash."""
        return len(self.kept) + len(self.failed)


def restore(root: Path, batch: Path) -> Restored:
    """Move a batch's files back to where they were. A file whose place is taken by a
    different file stays in the trash; one whose place holds the same bytes is dropped.
    Afterwards the batch is gone, or, if files stay, marked undone."""
    done = Restored(batch)
    for path in _files(batch):
        target = root / path.relative_to(batch)
        if os.path.lexists(target):
            if _same_bytes(path, target):
                path.unlink()
                done.in_place.append(target)
            else:
                done.kept.append(target)
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _move(path, target)
        except OSError as exc:
            done.failed.append((target, _reason(exc)))
        else:
            done.restored.append(target)
    if done.left:
        (batch / UNDONE_MARK).write_text("undone; these files could not go back\n", "utf-8")
    else:
        shutil.rmtree(batch, ignore_errors=True)
    return done


@dataclass
class Emptied:
    deleted: int = 0
    #: (path, why) of files that could not be deleted.
    failed: list[tuple[Path, str]] = field(default_factory=list)


def empty(root: Path) -> Emptied:
    """Delete ``root``'s trash, file by file, counting what was deleted."""
    trash = root / TRASH_FOLDER
    done = Emptied()
    for batch in _all_batches(root):
        for path in _files(batch):
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError as exc:
                done.failed.append((path, _reason(exc)))
            else:
                done.deleted += 1
    if not done.failed:
        shutil.rmtree(trash, ignore_errors=True)
    return done


def _all_batches(root: Path) -> list[Path]:
    try:
        found = [Path(e.path) for e in os.scandir(root / TRASH_FOLDER) if e.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda p: _order(p.name))


def _order(name: str) -> tuple[str, int, str]:
    """When a batch was made: its stamp, then its number within that second (as a
    number: ``-10`` comes after ``-9``). A folder not named by vcr_kit sorts first."""
    stamp, _, number = name.partition("-")
    if len(stamp) != 15 or stamp[8] != "T" or not (number or "1").isdigit():
        return ("", 0, name)
    return (stamp, int(number or "1"), "")


def _new_batch(trash: Path) -> Path:
    """A new batch folder that sorts after every batch already there, even when the
    clock moved back since the last one."""
    stamp, number = time.strftime("%Y%m%dT%H%M%S"), 1
    existing = [_order(b.name) for b in _all_batches(trash.parent)]
    newest = max((o for o in existing if o[0]), default=None)
    if newest is not None and (stamp, number) <= newest[:2]:
        stamp, number = newest[0], newest[1] + 1
    while True:
        batch = trash / (stamp if number == 1 else f"{stamp}-{number}")
        try:
            batch.mkdir()
        except FileExistsError:  # another prune made it just now
            number += 1
            continue
        return batch


def _files(batch: Path) -> list[Path]:
    """The files a batch holds (not its mark), sorted."""
    found = []
    for here, dirs, files in os.walk(batch):
        dirs.sort()
        for name in files:
            path = Path(here, name)
            if path.parent != batch or name != UNDONE_MARK:
                found.append(path)
        for name in dirs:  # a link to a folder is a file of the batch, never followed
            if Path(here, name).is_symlink():
                found.append(Path(here, name))
    return sorted(found)


def _move(source: Path, target: Path) -> None:
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:  # another file system below the folder (a mount)
            raise
        shutil.move(str(source), str(target))


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _same_bytes(one: Path, other: Path) -> bool:
    try:
        return one.read_bytes() == other.read_bytes()
    except OSError:
        return False
