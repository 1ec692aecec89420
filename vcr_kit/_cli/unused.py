"""List the fixtures that the last complete test run did not use.

Every test run writes a run record beside the fixtures (FOLDER/.runs/, git-ignored)
naming the fixtures it replayed, recorded or missed. A run is complete when it ran
the whole suite: under pytest with no test paths, node ids, -k, -m or --lf, nothing
deselected, no collection error, and exit status 0; under unittest, python -m
unittest with no test names, -k or -f, or any run with VCR_RUN_COMPLETE=1. Each folder
is judged by its own records. Fixtures used by a later (partial) run, or newer than
the complete run, are never listed. With no complete run recorded, nothing can be
said: exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._core.paths import display_path
from .._ledger.runs import Run, last_complete
from .._store.scan import fixture_paths
from ._common import add_folder, folder_of, plural

NAME = "unused"
HELP = "list the fixtures the last complete test run did not use"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)


@dataclass
class Unused:
    """What the run records say about the fixtures below a folder."""

    files: list[Path] = field(default_factory=list)
    checked: int = 0
    #: (folder, why) for each folder with fixtures but no complete run.
    unknown: list[tuple[Path, str]] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)


def find_unused(root: Path) -> Unused:
    found = Unused()
    by_folder: dict[Path, list[Path]] = {}
    for path in fixture_paths(root):
        if path.is_file():
            by_folder.setdefault(path.parent, []).append(path)
    for folder, paths in sorted(by_folder.items()):
        run, later = last_complete(folder)
        if run is None:
            why = f"the last run is not complete: {'; '.join(later[-1].why)}" if later else (
                "no run recorded"
            )
            found.unknown.append((folder, why))
            continue
        found.runs.append(run)
        keep = set(run.used).union(*(r.used for r in later))
        for path in paths:
            found.checked += 1
            if path.name in keep:
                continue
            try:
                if path.stat().st_mtime >= run.started:  # new since: a pull, a copy, a rename
                    continue
            except OSError:
                continue
            found.files.append(path)
    return found


def explain_unknown(unknown: list[tuple[Path, str]]) -> None:
    for folder, why in unknown:
        print(
            f"vcr_kit: no complete run recorded for {display_path(folder)}/ ({why}); "
            "run the whole suite once (pytest with no selection, or python -m unittest)",
            file=sys.stderr,
        )


def describe_runs(runs: list[Run]) -> str:
    if not runs:
        return "no complete run"
    last = max(runs, key=lambda r: r.finished)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last.finished))
    return f"run {last.id}, finished {when}"


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    found = find_unused(folder)
    for path in found.files:
        print(display_path(path))
    explain_unknown(found.unknown)
    if found.runs:
        print(
            f"vcr_kit: {len(found.files)} of {plural(found.checked, 'fixture')} unused by the "
            f"last complete run ({describe_runs(found.runs)})"
        )
    return 1 if found.unknown else 0


def is_terminal() -> bool:
    return os.isatty(sys.stdin.fileno()) if sys.stdin is not None else False
