"""Where ``vcr_kit prune`` puts what it removes, so that a prune can be undone.

Each prune moves its files into ``<folder>/.trash/<when>/``, at the same path
relative to the folder it pruned (``.trash/`` holds a ``.gitignore`` of ``*``, and,
hidden, is never read as fixtures). ``restore`` moves the last prune's files back;
``empty`` deletes the trash for good.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

TRASH_FOLDER: Final = ".trash"

__all__ = ["TRASH_FOLDER", "Restored", "batches", "empty", "move_to_trash", "restore"]


def move_to_trash(root: Path, paths: list[Path]) -> Path:
    """Move ``paths`` (below ``root``) into a new batch of ``root``'s trash; returns
    the batch folder. A file that is already gone is skipped."""
    trash = root / TRASH_FOLDER
    trash.mkdir(exist_ok=True)
    ignore = trash / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    batch = trash / stamp
    count = 1
    while batch.exists():
        count += 1
        batch = trash / f"{stamp}-{count}"
    batch.mkdir()
    for path in paths:
        target = batch / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            _move(path, target)
    return batch


def batches(root: Path) -> list[Path]:
    """The prunes kept in ``root``'s trash, oldest first."""
    try:
        found = [Path(e.path) for e in os.scandir(root / TRASH_FOLDER) if e.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name)


@dataclass
class Restored:
    batch: Path
    restored: list[Path] = field(default_factory=list)
    #: Files not put back because another file now has their name (left in the batch).
    kept: list[Path] = field(default_factory=list)


def restore(root: Path, batch: Path) -> Restored:
    """Move a batch's files back to where they were. A file whose place is taken by a
    different file stays in the trash; one whose place holds the same bytes is dropped."""
    done = Restored(batch)
    for path in sorted(p for p in batch.rglob("*") if p.is_file() or p.is_symlink()):
        target = root / path.relative_to(batch)
        if target.exists():
            if _same_bytes(path, target):
                path.unlink()
            else:
                done.kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        _move(path, target)
        done.restored.append(target)
    if not done.kept:
        shutil.rmtree(batch, ignore_errors=True)
    return done


def empty(root: Path) -> int:
    """Delete ``root``'s trash; returns how many files it held."""
    trash = root / TRASH_FOLDER
    count = sum(1 for batch in batches(root) for p in batch.rglob("*") if not p.is_dir())
    shutil.rmtree(trash, ignore_errors=True)
    return count


def _move(source: Path, target: Path) -> None:
    try:
        os.replace(source, target)
    except OSError:  # another file system below the folder (a mount): copy, then remove
        shutil.move(str(source), str(target))


def _same_bytes(one: Path, other: Path) -> bool:
    try:
        return one.read_bytes() == other.read_bytes()
    except OSError:
        return False
