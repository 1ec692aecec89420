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
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .runs import RUNS_FOLDER

__all__ = ["Record", "Run", "judge", "last_complete", "read_runs"]


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
            if record.runner and record.runner not in run.runners:
                run.runners.append(record.runner)
            if record.command and not record.defers and record.command not in run.commands:
                run.commands.append(record.command)
        run.complete, run.why = judge(found)
        for folder, name in unreadable.get(run_id, []):
            run.complete = False
            run.why.append(f"an unreadable record ({name})")
            run.used.setdefault(folder, set())
        if found:
            runs.append(run)
    runs.sort(key=lambda r: r.finished)
    return runs


def last_complete(folder: Path, runs: Sequence[Run]) -> tuple[Run | None, list[Run]]:
    """The last complete run with a record in ``folder``, and the runs with a record
    in it that finished after that one (all of them when none is complete)."""
    here = [run for run in runs if folder in run.used]
    for index in range(len(here) - 1, -1, -1):
        if here[index].complete:
            return here[index], here[index + 1 :]
    return None, here


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
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def _unique(reasons: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(reasons))
