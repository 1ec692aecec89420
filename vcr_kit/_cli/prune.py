"""Move the fixtures the last complete test run did not use, and writers' debris, to
the trash; undo that, or empty the trash.

Lists what `vcr_kit unused` lists (and the run it is based on), plus temp files of
killed writers and lock files of fixtures that no longer exist, then asks before
moving them to FOLDER/.trash/ (git-ignored). --yes moves without asking (for
scripts); --dry-run only lists. --undo puts back the files of the newest prune not
yet undone: a file whose name a different file has taken stays in the trash (said,
exit status 1) and the next --undo goes to the prune before. --empty-trash deletes
the trash for good. Every message says what was done; what could not be done (a
file that cannot be moved or deleted) is an error: exit status 1. Folders with no
complete run recorded keep every fixture (exit status 1); their debris is still moved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._core.paths import display_path
from .._store import trash
from .._store.scan import debris
from ._common import add_folder, folder_of, plural, size
from .unused import describe_runs, explain_unknown, find_unused, is_terminal

NAME = "prune"
HELP = "move unused fixtures and debris to the trash (asks first; --yes, --dry-run, --undo)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--yes", "-y", action="store_true", help="move without asking")
    how.add_argument("--dry-run", "-n", action="store_true", help="only list what would go")
    how.add_argument("--undo", action="store_true", help="put the last prune's files back")
    how.add_argument(
        "--empty-trash", action="store_true", help="delete what earlier prunes moved, for good"
    )


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    if args.undo:
        return _undo(folder)
    if args.empty_trash:
        return _empty(folder)
    found = find_unused(folder)
    junk = debris(folder)
    explain_unknown(found)
    doomed: list[Path] = [*found.files, *(d.path for d in junk)]
    for path in found.files:
        print(f"unused  {display_path(path)}")
    for item in junk:
        print(f"debris  {display_path(item.path)} ({item.what}, {size(item.size)})")
    status = 1 if found.unknown and not found.runs else 0
    if found.runs:
        print("\n".join(describe_runs(found)))
    if not doomed:
        print("vcr_kit: nothing to prune")
        return status
    what = f"{plural(len(found.files), 'unused fixture')} and {plural(len(junk), 'debris file')}"
    if args.dry_run:
        print(f"vcr_kit: would move {what} to the trash; nothing moved")
        return status
    if not args.yes:
        if not is_terminal():
            print("vcr_kit: not pruning without --yes (no terminal to ask)", file=sys.stderr)
            return 2
        answer = input(f"Move {what} to the trash? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("vcr_kit: nothing moved")
            return status
    return _move(folder, doomed, set(found.files), status)


def _move(folder: Path, doomed: list[Path], fixtures: set[Path], status: int) -> int:
    """Move ``doomed`` to a new batch of the trash and say what was moved, what was
    gone already and what could not be moved (an error: exit status 1)."""
    where = display_path(folder / trash.TRASH_FOLDER)
    try:
        done = trash.move_to_trash(folder, doomed)
    except OSError as exc:
        print(f"vcr_kit: cannot make a batch in {where}/: {exc}; nothing moved", file=sys.stderr)
        return 1
    for path in done.gone:
        print(f"gone  {display_path(path)} (removed since it was listed: nothing to move)")
    for path, why in done.failed:
        print(f"vcr_kit: cannot move {display_path(path)} to {where}/: {why}; it stays in "
              "place", file=sys.stderr)  # fmt: skip
    moved_fixtures = sum(1 for path in done.moved if path in fixtures)
    what = (f"{plural(moved_fixtures, 'unused fixture')} and "
            f"{plural(len(done.moved) - moved_fixtures, 'debris file')}")  # fmt: skip
    if done.batch is not None:
        print(f"vcr_kit: moved {what} to {display_path(done.batch)}/ (undo: vcr_kit prune "
              "--undo; delete for good: vcr_kit prune --empty-trash)")  # fmt: skip
    elif not done.failed:
        print("vcr_kit: nothing moved (every file listed was gone already)")
    if done.failed:
        print(f"vcr_kit: {plural(len(done.failed), 'file')} could not be moved (above)",
              file=sys.stderr)  # fmt: skip
        return 1
    return status


def _empty(folder: Path) -> int:
    where = display_path(folder / trash.TRASH_FOLDER)
    done = trash.empty(folder)
    for path, why in done.failed:
        print(f"vcr_kit: cannot delete {display_path(path)}: {why}", file=sys.stderr)
    if done.failed:
        print(f"vcr_kit: deleted {plural(done.deleted, 'file')} of {where}/; "
              f"{len(done.failed)} could not be deleted (above) and stay there",
              file=sys.stderr)  # fmt: skip
        return 1
    if not done.deleted:
        print(f"vcr_kit: nothing to delete ({where}/ holds no file)")
        return 0
    print(f"vcr_kit: emptied {where}/ ({plural(done.deleted, 'file')} deleted)")
    return 0


def _undo(folder: Path) -> int:
    where = display_path(folder / trash.TRASH_FOLDER)
    kept = trash.batches(folder)
    if not kept:
        left = trash.leftovers(folder)
        why = (
            f"every prune in {where}/ is undone; {plural(len(left), 'file')} that could not "
            "go back stay there: move them by hand, or delete them with vcr_kit prune "
            "--empty-trash"
            if left
            else f"{where}/ holds no prune"
        )
        print(f"vcr_kit: nothing to undo ({why})", file=sys.stderr)
        return 1
    done = trash.restore(folder, kept[-1])
    batch = display_path(done.batch)
    for path in done.restored:
        print(f"restored  {display_path(path)}")
    for path in done.in_place:
        print(f"already in place  {display_path(path)} (the same bytes are there)")
    for path in done.kept:
        print(f"kept in the trash  {display_path(path)} (a different file has its name now)")
    for path, why in done.failed:
        print(f"kept in the trash  {display_path(path)} (cannot move it back: {why})")
    count = plural(len(done.restored), "file")
    same = f"; {len(done.in_place)} already in place" if done.in_place else ""
    if not done.left:
        print(f"vcr_kit: restored {count} from {batch}/{same}")
        return 0
    total = len(done.restored) + len(done.in_place) + done.left
    before = "; the next --undo goes to the prune before it" if len(kept) > 1 else ""
    print(f"vcr_kit: restored {len(done.restored)} of {plural(total, 'file')} from {batch}/"
          f"{same}; {done.left} could not go back (above) and stay there: move them by "
          f"hand, or delete them with vcr_kit prune --empty-trash{before}",
          file=sys.stderr)  # fmt: skip
    return 1
