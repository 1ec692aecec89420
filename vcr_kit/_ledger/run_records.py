"""Reading the run records (``runs`` writes them) and judging each run as a whole.

A run is every record with its id, in every folder read: the processes of one
``pytest -n``, the environments of one ``tox``, the shards of one CI job gathered
into one fixtures folder. It is complete when:

- no record gives a reason nothing can make up for (a narrowed collection, an
  interruption, a missing fixture, a process vcr_kit cannot judge, an unreadable
  record), and
- a process says it ran the whole suite and everything passed, or, failing that,
  the processes that ran a part (shards, ``-k``, ``-x``) all collected the same
  tests and every one of them passed in at least one of them.

Merging is a union, so a mistaken merge only hides unused fixtures, it never marks
a used one as unused. A folder is judged only by runs that wrote a record in it.

A run that is not complete may still vouch for some fixtures (``vouches``): a process
that ran a part chosen by place and passed all of it (its record ``covers`` it)
vouches for a fixture whose every known user (the tests that used it, by file, in
any record of the folder) lies inside that part. A fixture used outside a test, or
by a test whose file no record gives, has unknown users: only a complete run vouches
for it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .runs import RUNS_FOLDER, Coverage

__all__ = ["Place", "Record", "Run", "judge", "read_runs", "vouches"]

#: A test that used a fixture: its file (absolute) and whether it is a TestCase test.
Place = tuple[Path, bool]


@dataclass(frozen=True)
class Record:
    """One process's record, as read."""

    folder: Path
    run: str
    started: float
    finished: float
    complete: bool
    why: str
    runner: str = ""
    command: str = ""
    hard: bool = True
    defers: bool = False
    used: frozenset[str] = frozenset()
    suite: frozenset[str] | None = None
    passed: frozenset[str] = frozenset()
    #: fixture name -> the tests that used it (records written before it: empty).
    tests: dict[str, frozenset[str]] = field(default_factory=dict)
    #: test id -> its place (records written before it: empty).
    places: dict[str, Place] = field(default_factory=dict)
    covers: Coverage | None = None


@dataclass
class Run:
    """The records of one run, merged and judged."""

    id: str
    started: float = float("inf")
    finished: float = 0.0
    complete: bool = False
    why: list[str] = field(default_factory=list)
    #: The fixture names used, per folder that holds a record of this run.
    used: dict[Path, set[str]] = field(default_factory=dict)
    processes: int = 0
    runners: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    #: Per folder, fixture name -> the tests that used it.
    tests: dict[Path, dict[str, set[str]]] = field(default_factory=dict)
    #: Per folder, fixture name -> the places of the tests that used it; and the names
    #: used where no place is known (outside a test, or a record without places).
    users: dict[Path, dict[str, set[Place]]] = field(default_factory=dict)
    unknown_users: dict[Path, set[str]] = field(default_factory=dict)
    #: The parts of the suite a process of the run ran whole and passed.
    covers: list[Coverage] = field(default_factory=list)


def vouches(run: Run, users: set[Place] | None) -> bool:
    """Whether ``run`` vouches for a fixture of a folder it has a record in, whose known
    users are ``users`` (None: some are unknown): it is complete, or a part it covers
    holds every user. A user is held by a part that ran its file, or, when the file
    is gone, by one whose paths hold it."""
    if run.complete:
        return True
    if not users or not run.covers:
        return False
    return all(any(_holds(part, place) for part in run.covers) for place in users)


def _holds(part: Coverage, place: Place) -> bool:
    file, testcase = place
    if part.testcase_only and not testcase:
        return False
    if file in part.files:
        return True
    inside = any(file == p or p in file.parents for p in part.paths)
    return inside and not os.path.lexists(file)


def judge(records: Sequence[Record]) -> tuple[bool, list[str]]:
    """(complete, why) of a run from its records; see the module's docstring."""
    if not records:
        return False, ["no record"]
    hard = _unique(r.why for r in records if not r.complete and r.hard)
    if hard:
        return False, hard
    judges = [r for r in records if not r.defers]
    if not judges:
        return False, ["no process judged the run (the xdist controller wrote no record)"]
    for record in judges:
        if record.complete:
            return True, [record.why]
    why = _unique(r.why for r in judges)
    suites = {r.suite for r in judges}
    if None in suites:
        return False, why
    if len(suites) > 1:
        return False, [*why, "its processes collected different tests"]
    (suite,) = suites
    assert suite is not None
    passed: set[str] = set().union(*(r.passed for r in records))
    missing = sorted(suite - passed)
    if missing:
        return False, [
            *why,
            f"{len(missing)} of {len(suite)} tests passed in no process of the run "
            f"(first: {missing[0]})",
        ]
    across = "in 1 process" if len(judges) == 1 else f"across {len(judges)} processes"
    return True, [f"every one of the {len(suite)} collected tests passed, {across}"]


def read_runs(folders: Iterable[Path]) -> list[Run]:
    """The runs recorded in ``folders``, oldest first by the time they finished."""
    records: dict[str, list[Record]] = {}
    unreadable: dict[str, list[tuple[Path, str]]] = {}
    for folder in folders:
        for run_id, path in _record_paths(folder):
            record = _read(folder, run_id, path)
            if record is None:
                unreadable.setdefault(run_id, []).append((folder, path.name))
            else:
                records.setdefault(run_id, []).append(record)
    runs = []
    for run_id in sorted(set(records) | set(unreadable)):
        found = records.get(run_id, [])
        run = Run(run_id, processes=len(found))
        for record in found:
            run.started = min(run.started, record.started)
            run.finished = max(run.finished, record.finished)
            run.used.setdefault(record.folder, set()).update(record.used)
            users = run.tests.setdefault(record.folder, {})
            for name, tests in record.tests.items():
                users.setdefault(name, set()).update(tests)
            _add_users(run, record)
            if record.covers is not None:
                run.covers.append(record.covers)
            if record.runner and record.runner not in run.runners:
                run.runners.append(record.runner)
            if record.command and not record.defers and record.command not in run.commands:
                run.commands.append(record.command)
        run.complete, run.why = judge(found)
        for folder, name in unreadable.get(run_id, []):
            run.complete = False
            run.covers = []  # what the unreadable record used is not known
            run.why.append(f"an unreadable record ({name})")
            run.used.setdefault(folder, set())
        if found:
            runs.append(run)
    runs.sort(key=lambda r: r.finished)
    return runs


def _add_users(run: Run, record: Record) -> None:
    users = run.users.setdefault(record.folder, {})
    unknown = run.unknown_users.setdefault(record.folder, set())
    for name in record.used:
        tests = record.tests.get(name, frozenset())
        if not tests or any(t not in record.places for t in tests):
            unknown.add(name)
        users.setdefault(name, set()).update(record.places[t] for t in tests if t in record.places)


def _record_paths(folder: Path) -> list[tuple[str, Path]]:
    try:
        run_dirs = [e for e in os.scandir(folder / RUNS_FOLDER) if e.is_dir()]
    except OSError:
        return []
    found: list[tuple[str, Path]] = []
    for entry in run_dirs:
        try:
            names = sorted(n for n in os.listdir(entry.path) if n.endswith(".json"))
        except OSError:
            continue
        found.extend((entry.name, Path(entry.path, name)) for name in names)
    return found


def _read(folder: Path, run_id: str, path: Path) -> Record | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        suite = data.get("suite")
        return Record(
            folder=folder,
            run=run_id,
            started=float(data["started"]),
            finished=float(data["finished"]),
            complete=data.get("complete") is True,
            why=str(data.get("why") or "no verdict"),
            runner=str(data.get("runner") or ""),
            command=str(data.get("command") or ""),
            hard=data.get("hard") is not False,
            defers=data.get("defers") is True,
            used=frozenset(str(n) for n in data.get("used", [])),
            suite=None if suite is None else frozenset(str(n) for n in suite),
            passed=frozenset(str(n) for n in data.get("passed", [])),
            tests={
                str(name): frozenset(str(t) for t in tests)
                for name, tests in (data.get("tests") or {}).items()
                if isinstance(tests, list)
            },
            places={
                str(test): (_at(folder, place["file"]), place.get("testcase") is True)
                for test, place in (data.get("test_files") or {}).items()
                if isinstance(place, dict) and isinstance(place.get("file"), str)
            },
            covers=_covers(folder, data.get("covers")),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def _covers(folder: Path, data: Any) -> Coverage | None:
    if not isinstance(data, dict):
        return None
    return Coverage(
        paths=tuple(_at(folder, str(p)) for p in data["paths"]),
        files=frozenset(_at(folder, str(f)) for f in data["files"]),
        testcase_only=data.get("testcase_only") is not False,
        why=str(data.get("why") or ""),
    )


def _at(folder: Path, stored: str) -> Path:
    """A path a record stores (relative to its folder), made absolute and normal."""
    return Path(os.path.abspath(os.path.join(folder, stored)))


def _unique(reasons: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(reasons))
