"""Delete the fixtures the last complete test run did not use, and writers' debris.

Lists what `vcr_kit unused` lists, plus temp files of killed writers and lock files
of fixtures that no longer exist, then asks before deleting. --yes deletes without
asking (for scripts); --dry-run only lists. Folders with no complete run recorded
keep every fixture (exit status 1); their debris is still removed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from .._core.paths import display_path
from .._store.scan import debris
from ._common import add_folder, folder_of, plural, size
from .unused import describe_runs, explain_unknown, find_unused, is_terminal

NAME = "prune"
HELP = "delete unused fixtures and debris (asks first; --yes, --dry-run)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    how.add_argument("--dry-run", "-n", action="store_true", help="only list what would go")


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    found = find_unused(folder)
    junk = debris(folder)
    explain_unknown(found.unknown)
    doomed: list[Path] = [*found.files, *(d.path for d in junk)]
    for path in found.files:
        print(f"unused  {display_path(path)}")
    for item in junk:
        print(f"debris  {display_path(item.path)} ({item.what}, {size(item.size)})")
    status = 1 if found.unknown else 0
    if not doomed:
        print("vcr_kit: nothing to prune")
        return status
    what = f"{plural(len(found.files), 'unused fixture')} and {plural(len(junk), 'debris file')}"
    if args.dry_run:
        print(f"vcr_kit: would delete {what} ({describe_runs(found.runs)}); nothing deleted")
        return status
    if not args.yes:
        if not is_terminal():
            print("vcr_kit: not deleting without --yes (no terminal to ask)", file=sys.stderr)
            return 2
        answer = input(f"Delete {what}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("vcr_kit: nothing deleted")
            return status
    for path in doomed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    print(f"vcr_kit: deleted {what}")
    return status
