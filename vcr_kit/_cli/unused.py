"""List the fixtures that the last complete test run did not use.

Every test run writes a run record beside the fixtures (FOLDER/.runs/, git-ignored)
naming the fixtures it replayed, recorded or missed. A run is complete only on
positive evidence that it ran the whole suite and every test passed: under pytest,
no argument that narrows the suite (test paths, -k, -m, --ignore, --lf, -x, an
option vcr_kit does not know), no collection error or skip, every collected test
passed, exit status 0; under unittest, python -m unittest with the default start
folder and pattern, no test names, -k or -f, and nothing failed, errored, was
skipped or interrupted. The shards of one run (one VCR_RUN_ID, their records
gathered into FOLDER/.runs/) are judged on their union. Fixtures used by a later
(partial) run, or newer than the complete run, are never listed. With no complete
run recorded, nothing can be said: exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._core.paths import display_path
from .._ledger.run_records import Run, last_complete, read_runs
from .._store.scan import fixture_folders, fixture_paths
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
    #: The complete runs the listing is based on.
    runs: list[Run] = field(default_factory=list)
    #: Partial runs after those: what they used is kept; they are no basis.
    later: list[Run] = field(default_factory=list)


def find_unused(root: Path) -> Unused:
    found = Unused()
    by_folder: dict[Path, list[Path]] = {}
    for path in fixture_paths(root):
        if path.is_file():
            by_folder.setdefault(path.parent, []).append(path)
    all_runs = read_runs(fixture_folders(root))
    for folder, paths in sorted(by_folder.items()):
        run, later = last_complete(folder, all_runs)
        if run is None:
            why = (
                f"the last run is not complete: {'; '.join(later[-1].why)} [{describe(later[-1])}]"
                if later
                else "no run recorded"
            )
            found.unknown.append((folder, why))
            continue
        if run not in found.runs:
            found.runs.append(run)
        found.later += [r for r in later if r not in found.later]
        keep = set(run.used[folder]).union(*(r.used[folder] for r in later))
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


def describe(run: Run) -> str:
    """Which run: its id, when it finished, its runner and command line."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.finished))
    how = " | ".join(run.commands[:3]) or ", ".join(run.runners) or "no command recorded"
    if len(run.commands) > 3:
        how += f" | {len(run.commands) - 3} more"
    shards = f", {run.processes} processes" if run.processes > 1 else ""
    return f"run {run.id}, finished {when}, {how}{shards}"


def explain_unknown(unknown: list[tuple[Path, str]]) -> None:
    for folder, why in unknown:
        print(
            f"vcr_kit: no complete run recorded for {display_path(folder)}/ ({why}); "
            "run the whole suite once (pytest with no selection, or python -m unittest)",
            file=sys.stderr,
        )


def describe_runs(runs: Sequence[Run], later: Sequence[Run] = ()) -> list[str]:
    """One line per run a listing is based on, then one per later partial run."""
    return [
        *(
            f"vcr_kit: based on {describe(run)}: complete ({'; '.join(run.why)})"
            for run in sorted(runs, key=lambda r: r.finished)
        ),
        *(
            f"vcr_kit: not complete, so only what it used is kept: {describe(run)} "
            f"({'; '.join(run.why)})"
            for run in sorted(later, key=lambda r: r.finished)
        ),
    ]


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
            "last complete run"
        )
        print("\n".join(describe_runs(found.runs, found.later)))
    return 1 if found.unknown else 0


def is_terminal() -> bool:
    return os.isatty(sys.stdin.fileno()) if sys.stdin is not None else False
