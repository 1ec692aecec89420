"""Move the fixtures the last complete test run did not use, and writers' debris, to
the trash; undo that, or empty the trash.

Lists what `vcr_kit unused` lists (and the run it is based on), plus temp files of
killed writers and lock files of fixtures that no longer exist, then asks before
moving them to FOLDER/.trash/ (git-ignored). --yes moves without asking (for
scripts); --dry-run only lists. --undo puts the last prune's files back; --empty-trash
deletes the trash for good. Folders with no complete run recorded keep every fixture
(exit status 1); their debris is still moved.
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
        count = trash.empty(folder)
        print(f"vcr_kit: emptied {display_path(folder / trash.TRASH_FOLDER)}/ "
              f"({plural(count, 'file')} deleted)")  # fmt: skip
        return 0
    found = find_unused(folder)
    junk = debris(folder)
    explain_unknown(found.unknown)
    doomed: list[Path] = [*found.files, *(d.path for d in junk)]
    for path in found.files:
        print(f"unused  {display_path(path)}")
    for item in junk:
        print(f"debris  {display_path(item.path)} ({item.what}, {size(item.size)})")
    status = 1 if found.unknown else 0
    if found.runs:
        print("\n".join(describe_runs(found.runs, found.later)))
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
    try:
        batch = trash.move_to_trash(folder, doomed)
    except OSError as exc:
        where = display_path(folder / trash.TRASH_FOLDER)
        print(f"vcr_kit: cannot move files to {where}/: {exc}; run vcr_kit prune --undo "
              "to put back what was moved", file=sys.stderr)  # fmt: skip
        return 1
    print(
        f"vcr_kit: moved {what} to {display_path(batch)}/ (undo: vcr_kit prune --undo; "
        "delete for good: vcr_kit prune --empty-trash)"
    )
    return status


def _undo(folder: Path) -> int:
    kept = trash.batches(folder)
    if not kept:
        where = display_path(folder / trash.TRASH_FOLDER)
        print(f"vcr_kit: nothing to undo ({where}/ holds no prune)", file=sys.stderr)
        return 1
    done = trash.restore(folder, kept[-1])
    for path in done.restored:
        print(f"restored  {display_path(path)}")
    for path in done.kept:
        print(f"kept in the trash  {display_path(path)} (a different file has its name now)")
    count = plural(len(done.restored), "file")
    print(f"vcr_kit: restored {count} from {display_path(done.batch)}/")
    return 1 if done.kept else 0
