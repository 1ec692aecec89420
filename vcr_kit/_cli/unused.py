"""List the fixtures that the last complete test run did not use.

Every test run writes a run record beside the fixtures (FOLDER/.runs/, git-ignored)
naming the fixtures it replayed, recorded or missed, and the file of each test that
used one. A run is complete only on positive evidence that it ran the whole suite
and every test passed: under pytest, no argument that narrows the suite (test
paths, -k, -m, --ignore, --lf, -x, an option vcr_kit does not know), no collection
error or skip, every collected test passed, exit status 0; under unittest, python -m
unittest with the default start folder and pattern, no test names, -k or -f, and
nothing failed, errored, was skipped or interrupted. The shards of one run (one
VCR_RUN_ID, their records gathered into FOLDER/.runs/) are judged on their union.

A run narrowed by place only (pytest given test paths, python -m unittest given a
start folder, or run in a project set up for pytest) that passed everything is
complete over that part: it vouches for the fixtures whose known users (the tests
that used them, in any run record) all lie inside it. A fixture is judged by the
last run that vouches for it; fixtures used by a later run, or newer than that run,
are never listed; fixtures no run vouches for are kept and counted. A run that ran
no test leaves no record. With no run that vouches for any fixture of a folder,
nothing can be said: exit status 1.
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
from .._ledger.run_records import Place, Run, read_runs, vouches
from .._store.scan import fixture_folders, fixture_paths
from ._common import add_folder, folder_of, plural

NAME = "unused"
HELP = "list the fixtures the last complete test run did not use"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)
    parser.add_argument("--all-runs", action="store_true",
                        help="also list each later run that was not complete")  # fmt: skip


@dataclass
class Unused:
    """What the run records say about the fixtures below a folder."""

    files: list[Path] = field(default_factory=list)
    checked: int = 0
    #: (folder, why) for each folder with fixtures but no run that vouches for any, and
    #: how many fixtures they hold (all kept).
    unknown: list[tuple[Path, str]] = field(default_factory=list)
    in_unknown: int = 0
    #: Fixtures of judged folders that no run vouches for: kept.
    unjudged: list[Path] = field(default_factory=list)
    #: The runs the listing is based on (each the last to vouch for some fixture).
    runs: list[Run] = field(default_factory=list)
    #: Runs after those that vouch for nothing: what they used is kept.
    later: list[Run] = field(default_factory=list)


def find_unused(root: Path) -> Unused:
    found = Unused()
    by_folder: dict[Path, list[Path]] = {}
    for path in fixture_paths(root):
        if path.is_file():
            by_folder.setdefault(path.parent, []).append(path)
    all_runs = read_runs(fixture_folders(root))
    for folder, paths in sorted(by_folder.items()):
        here = [run for run in all_runs if folder in run.used]
        users = _users(folder, here)
        bases = {path: _basis(here, users.get(path.name)) for path in paths}
        judged = [index for index in bases.values() if index is not None]
        if not judged:
            found.unknown.append((folder, _why_unknown(here)))
            found.in_unknown += len(paths)
            continue
        for index in sorted(set(judged)):
            if here[index] not in found.runs:
                found.runs.append(here[index])
        found.later += [r for r in here[min(judged) :] if r not in found.runs + found.later]
        for path, basis in bases.items():
            found.checked += 1
            if basis is None:
                found.unjudged.append(path)
            elif _unused(path, folder, here[basis:]):
                found.files.append(path)
    found.later = [r for r in found.later if r not in found.runs]
    return found


def _users(folder: Path, runs: Sequence[Run]) -> dict[str, set[Place] | None]:
    """Fixture name -> the places of every test that used it in any run here; None
    when some use has no known place."""
    users: dict[str, set[Place] | None] = {}
    for run in runs:
        unknown = run.unknown_users.get(folder, set())
        for name, places in run.users.get(folder, {}).items():
            known = users.get(name, set())
            users[name] = None if known is None or name in unknown else known | places
    return users


def _basis(runs: Sequence[Run], users: set[Place] | None) -> int | None:
    """The index of the last run that vouches for a fixture with these users."""
    for index in range(len(runs) - 1, -1, -1):
        if vouches(runs[index], users):
            return index
    return None


def _unused(path: Path, folder: Path, runs: Sequence[Run]) -> bool:
    """Not used by its basis run (``runs[0]``) nor by any run after it, and older."""
    if any(path.name in run.used.get(folder, ()) for run in runs):
        return False
    try:
        return path.stat().st_mtime < runs[0].started  # newer: a pull, a copy, a rename
    except OSError:
        return False


def _why_unknown(runs: Sequence[Run]) -> str:
    if not runs:
        return "no run recorded"
    last = runs[-1]
    return f"the last run is not complete: {'; '.join(last.why)} [{describe(last)}]"


def describe(run: Run) -> str:
    """Which run: its id, when it finished, its runner and command line."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.finished))
    how = " | ".join(run.commands[:3]) or ", ".join(run.runners) or "no command recorded"
    if len(run.commands) > 3:
        how += f" | {len(run.commands) - 3} more"
    shards = f", {run.processes} processes" if run.processes > 1 else ""
    return f"run {run.id}, finished {when}, {how}{shards}"


def explain_unknown(found: Unused) -> None:
    """Why nothing can be said (when no run vouches for any fixture): an error."""
    if found.runs:
        return
    for folder, why in found.unknown:
        print(
            f"vcr_kit: no complete run recorded for {display_path(folder)}/ ({why}); "
            "run the whole suite once (pytest with no selection, or python -m unittest)",
            file=sys.stderr,
        )


def describe_runs(found: Unused, every_run: bool = False) -> list[str]:
    """One line per run a listing is based on, then one line counting the later runs
    that were not complete (one line per run with ``every_run``), then one counting the
    fixtures no run vouches for."""
    lines = [f"vcr_kit: based on {describe(run)}: {_basis_words(run)}"
             for run in sorted(found.runs, key=lambda r: r.finished)]  # fmt: skip
    later = sorted(found.later, key=lambda r: r.finished)
    if every_run:
        lines += [f"vcr_kit: not complete, so only what it used is kept: {describe(run)} "
                  f"({'; '.join(run.why)})" for run in later]  # fmt: skip
    elif later:
        lines.append(
            f"vcr_kit: {plural(len(later), 'later run')} not complete, so only what "
            f"{'it' if len(later) == 1 else 'they'} used is kept (vcr_kit unused --all-runs lists "
            f"{'it' if len(later) == 1 else 'them'})"
        )
    if found.unjudged:
        lines.append(
            f"vcr_kit: {plural(len(found.unjudged), 'fixture')} kept: no complete run "
            "covered every test known to use "
            f"{'it' if len(found.unjudged) == 1 else 'them'}"
        )
    if found.unknown:
        folders = ", ".join(f"{display_path(folder)}/" for folder, _ in found.unknown)
        lines.append(
            f"vcr_kit: {plural(found.in_unknown, 'fixture')} kept in {folders}: no run there "
            "vouches for any"
        )
    return lines


def _basis_words(run: Run) -> str:
    if run.complete:
        return f"complete ({'; '.join(run.why)})"
    parts = []
    for part in run.covers:
        places = ", ".join(display_path(p) for p in part.paths)
        kind = "the TestCase tests in " if part.testcase_only else ""
        parts.append(f"complete over {kind}{places} ({part.why})")
    return "; ".join(dict.fromkeys(parts))


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    found = find_unused(folder)
    for path in found.files:
        print(display_path(path))
    explain_unknown(found)
    if found.runs:
        print(
            f"vcr_kit: {len(found.files)} of {plural(found.checked, 'fixture')} unused by the "
            "last complete run"
        )
        print("\n".join(describe_runs(found, getattr(args, "all_runs", False))))
    return 0 if found.runs or not found.unknown else 1


def is_terminal() -> bool:
    return os.isatty(sys.stdin.fileno()) if sys.stdin is not None else False
