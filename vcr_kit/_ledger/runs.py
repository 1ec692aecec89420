"""The run record: which fixtures a test run used, so ``unused`` and ``prune`` can tell.

Every process that replays, records or misses a fixture writes, when it ends, one
small JSON file per fixtures folder it touched:
``<folder>/.runs/<run id>/<pid>-<random>.json`` (``.runs/`` holds a ``.gitignore``
of ``*``). It lists the names used, how the process was started (runner, command
line) and its verdict on completeness; ``run_records`` reads and judges them.

A run is identified by ``VCR_RUN_ID``. When it is not set, the first process sets it
in its own environment, so every process it starts joins its run: pytest-xdist
workers, subprocesses of the tests. Under tox (``TOX_ENV_NAME`` set) the default is
``tox-<pid of tox>``: each environment's commands are children of the one tox
process, so ``tox`` and ``tox -p`` make one run of all their environments. CI shards
export one ``VCR_RUN_ID`` and their records are gathered into one folder: they are
judged as one run (``run_records``).

A process's verdict comes from its test runner: pytest (``pytest_plugin``) or
unittest (``_integrations.unittest_run``), each by positive evidence (the whole
suite selected, every test ran and passed). ``VCR_RUN_COMPLETE=0`` vetoes;
``VCR_RUN_COMPLETE=1`` vouches for a command line vcr_kit cannot read (a custom
runner, ``unittest -s tests``), never for skips, failures or interruptions. A
process in which a fixture was missing (the test stopped there), or that is not a
test run (a script with ``FORCE_VCR``), is never complete.

A process that ran a part of the suite chosen by place (``pytest tests/api``,
``python -m unittest discover -s examples``) and passed all of it is complete over
that part: its record ``covers`` the test paths and the files of the tests that ran.
With the file of each test that used a fixture (``test_files``), ``unused`` can tell
which fixtures such a run vouches for: those whose every known user lies inside it.
Paths in a record are relative to its folder, so that records gathered from other
checkouts agree.
"""

from __future__ import annotations

import atexit
import json
import os
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._core.config import in_tox, run_complete_word, run_id_variable, set_run_id
from .journal import folder_of

RUNS_FOLDER: Final = ".runs"
#: Run folders kept per fixtures folder; older ones are removed by the next writer.
KEEP_RUNS: Final = 20
COMPLETE_VAR: Final = "VCR_RUN_COMPLETE"
_USED_EVENTS: Final = frozenset({"replayed", "recorded", "missing", "live"})


@dataclass(frozen=True)
class Verdict:
    """A process's word on whether its run was complete.

    ``hard``: the reason cannot be made up by another process of the run (the
    collection was narrowed, the session was interrupted). A partial verdict that is
    not hard carries the evidence a union can use: ``suite``, the ids of every test
    collected before any selection, and ``passed``, those that ran and passed here.
    ``defers``: an xdist worker, whose controller judges the run."""

    complete: bool
    why: str
    runner: str = ""
    command: str = ""
    hard: bool = True
    suite: tuple[str, ...] | None = None
    passed: frozenset[str] = field(default_factory=frozenset)
    defers: bool = False
    #: Not whole, but complete over a part chosen by place: see ``Coverage``.
    covers: Coverage | None = None


@dataclass(frozen=True)
class Coverage:
    """The part of the suite a process ran whole and passed: the test ``paths`` it was
    given (folders or files, absolute) and the ``files`` of the tests that ran in it.
    ``testcase_only``: the runner runs ``unittest.TestCase`` tests only (unittest), so
    a plain pytest function in those files is not covered."""

    paths: tuple[Path, ...]
    files: frozenset[Path]
    testcase_only: bool
    why: str


#: A runner's judge, called when the record is written (unittest's: by then the
#: results are final).
Judge = Callable[[str], Verdict]


@dataclass(eq=False)
class RunLedger:
    """What this process's run record will say: the one owner of the run's state.

    One instance, ``RUN``; its fields change only under its ``lock``. ``reset``
    (for tests) forgets what the run used and judged; see there for what it keeps."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Per fixtures folder, the names of the fixtures used.
    used: dict[Path, set[str]] = field(default_factory=dict)
    #: Fixtures a re-record rewrote with a different answer.
    changed: list[Path] = field(default_factory=list)
    recorded_usd: float = 0.0
    #: A fixture was missing: the process's run is never complete.
    missing: bool = False
    #: The test runner's word (``set_verdict``), or None.
    verdict: Verdict | None = None
    judges: list[Judge] = field(default_factory=list)
    #: Folders the record goes to even if this process used none of their fixtures.
    extra_folders: set[Path] = field(default_factory=set)
    #: The test running now (its runner's id), and per folder, fixture name -> the
    #: tests that used it: ``drift`` names the test beside each fixture.
    current_test: str = ""
    tests: dict[Path, dict[str, set[str]]] = field(default_factory=dict)
    #: The test running now: its file and whether it is a ``unittest.TestCase`` test
    #: (None: not known); per test id that used a fixture, the same.
    current_place: tuple[Path, bool] | None = None
    places: dict[str, tuple[Path, bool]] = field(default_factory=dict)
    #: The files of every test that ran in this process (a unittest run's coverage).
    test_files: set[Path] = field(default_factory=set)
    #: The record is written at exit (``atexit``, once per process).
    registered: bool = False

    def reset(self) -> None:
        """Forget what the run used and judged. Kept: ``registered`` (the exit hook is
        in place once per process) and ``current_test`` (set and cleared by the
        runner's ``testing`` block around the test that may call this)."""
        with self.lock:
            self.used = {}
            self.changed = []
            self.recorded_usd = 0.0
            self.missing = False
            self.verdict = None
            self.judges = []
            self.extra_folders = set()
            self.tests = {}
            self.places = {}
            self.test_files = set()


RUN = RunLedger()
_started = time.time()
_token = os.urandom(4).hex()


def run_id() -> str:
    """This run's id; set in the environment so that child processes share it."""
    value = run_id_variable()
    if not value:
        if in_tox():
            value = f"tox-{os.getppid()}"
        else:
            value = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{_token}"
        set_run_id(value)
    # The id names a folder: keep it to characters every file system takes.
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in value)[:80] or "run"


def note(event: str, path: Path | None, cost_usd: float = 0.0) -> None:
    """What ``notes.note`` saw: remember the fixture as used by this run."""
    if event not in _USED_EVENTS or path is None:
        return
    with RUN.lock:
        _mark_used(folder_of(path), path.name)
        if event == "recorded":
            RUN.recorded_usd += cost_usd
        elif event == "missing":
            RUN.missing = True


def note_used(folder: Path, name: str) -> None:
    """``note`` of a replay, for a fixture whose folder and name the caller keeps."""
    with RUN.lock:
        _mark_used(folder, name)


def _mark_used(folder: Path, name: str) -> None:
    """The fixture ``name`` in ``folder`` is used by this run, and by the test running
    now (called under ``RUN.lock``)."""
    _register()
    used = RUN.used.get(folder)
    if used is None:
        used = RUN.used[folder] = set()
    used.add(name)
    test = RUN.current_test
    if test:
        RUN.tests.setdefault(folder, {}).setdefault(name, set()).add(test)
        if RUN.current_place is not None:
            RUN.places[test] = RUN.current_place


@contextmanager
def testing(test_id: str, file: str | None, testcase: bool) -> Iterator[None]:
    """The fixtures used while the block runs are used by the test ``test_id``, defined
    in ``file`` (a ``unittest.TestCase`` test if ``testcase``)."""
    # Resolved, as the runners' coverage is: one spelling of each path in a record.
    place = None if not file else (Path(os.path.realpath(file)), testcase)
    with RUN.lock:
        RUN.current_test = test_id
        RUN.current_place = place
        if place is not None:
            RUN.test_files.add(place[0])
    try:
        yield
    finally:
        with RUN.lock:
            RUN.current_test = ""
            RUN.current_place = None


def files_of_tests() -> frozenset[Path]:
    """The files of the tests that ran in this process so far."""
    with RUN.lock:
        return frozenset(RUN.test_files)


def _register() -> None:
    """Called under ``RUN.lock``."""
    if not RUN.registered:
        RUN.registered = True
        run_id()  # fixed now, before the tests start any child process
        atexit.register(flush)


def note_changed(path: Path) -> None:
    """A re-record wrote an answer different from the one on disk."""
    with RUN.lock:
        if path not in RUN.changed:
            RUN.changed.append(path)


def recorded_cost() -> float:
    with RUN.lock:
        return RUN.recorded_usd


def changed() -> list[Path]:
    with RUN.lock:
        return list(RUN.changed)


def folders() -> set[Path]:
    with RUN.lock:
        return set(RUN.used)


def set_verdict(
    complete: bool | Verdict, why: str = "", also_in: Iterable[Path] = ()
) -> None:
    """The test runner's word on this process (a ``Verdict``, or complete and why).
    ``also_in``: folders to write the record to even if this process used none of
    their fixtures (the pytest-xdist controller, whose workers did; the default
    fixtures folder, so that a shard which used no fixture still counts)."""
    given = complete if isinstance(complete, Verdict) else Verdict(complete, why)
    with RUN.lock:
        RUN.verdict = given
        RUN.extra_folders.update(also_in)


def add_judge(judge: Judge) -> None:
    """A runner that can judge this process only at its end (unittest)."""
    with RUN.lock:
        if judge not in RUN.judges:
            RUN.judges.append(judge)


def verdict() -> Verdict:
    """This process's verdict, as it stands now."""
    with RUN.lock:
        given = RUN.verdict
        judges = list(RUN.judges)
        missing = RUN.missing
    command = shlex.join(sys.argv)
    explicit = run_complete_word()
    if missing:
        return Verdict(False, "a fixture was missing", command=command)
    if explicit in ("0", "false", "no"):
        return Verdict(False, f"{COMPLETE_VAR}={explicit}", command=command)
    if given is not None:
        return given
    if judges:
        return judges[0](explicit)
    if explicit in ("1", "true", "yes"):
        return Verdict(True, f"{COMPLETE_VAR}={explicit}", command=command)
    return Verdict(
        False,
        "not a test run vcr_kit can judge (no pytest session, no VCRTestCase under "
        "python -m unittest)",
        command=command,
    )


def flush() -> None:
    """Write (or rewrite) this process's record in each folder it used. Never raises:
    a run record must not fail a test run."""
    try:
        judged = verdict()
    except Exception as exc:  # a judge's bug must not fail the run
        judged = Verdict(False, f"the verdict could not be made: {exc!r}")
    with RUN.lock:
        used = {folder: sorted(names) for folder, names in RUN.used.items()}
        for folder in RUN.extra_folders:
            used.setdefault(folder, [])
        changed_names = [str(p) for p in RUN.changed]
        users = {f: {n: sorted(t) for n, t in names.items()} for f, names in RUN.tests.items()}
        places = dict(RUN.places)
    run = run_id()
    for folder, names in used.items():
        record = {
            "run": run,
            "pid": os.getpid(),
            "started": _started,
            "finished": time.time(),
            "runner": judged.runner,
            "command": judged.command,
            "complete": judged.complete,
            "why": judged.why,
            "hard": judged.hard,
            "defers": judged.defers,
            "used": names,
            "changed": [n for n in changed_names if Path(n).parent == folder],
            "tests": users.get(folder, {}),
            "test_files": _places(folder, users.get(folder, {}), places),
        }
        if judged.covers is not None:
            record["covers"] = _coverage(folder, judged.covers)
        if not judged.complete and not judged.hard and judged.suite is not None:
            # Only a partial record that a union may complete carries the test ids.
            record["suite"] = sorted(judged.suite)
            record["passed"] = sorted(judged.passed)
        try:
            _write(folder, run, record)
        except OSError:
            continue


def _places(
    folder: Path, users: dict[str, list[str]], places: dict[str, tuple[Path, bool]]
) -> dict[str, dict[str, Any]]:
    """Test id -> its file (relative to ``folder``) and kind, for the tests in ``users``."""
    found = {}
    for test in sorted({t for tests in users.values() for t in tests}):
        if test in places:
            file, testcase = places[test]
            found[test] = {"file": relative(file, folder), "testcase": testcase}
    return found


def _coverage(folder: Path, covers: Coverage) -> dict[str, Any]:
    return {
        "paths": [relative(p, folder) for p in covers.paths],
        "files": sorted(relative(f, folder) for f in covers.files),
        "testcase_only": covers.testcase_only,
        "why": covers.why,
    }


def relative(path: Path, folder: Path) -> str:
    """``path`` as a record stores it: relative to the record's folder (records gathered
    from another checkout agree), or absolute where no relative path exists."""
    try:
        return Path(os.path.relpath(path, folder)).as_posix()
    except ValueError:  # another drive (Windows)
        return str(path)


def _write(folder: Path, run: str, record: dict[str, Any]) -> None:
    if not folder.is_dir():  # a test's temporary folder, gone by now: never recreate it
        return
    runs = folder / RUNS_FOLDER
    target = runs / run
    target.mkdir(parents=True, exist_ok=True)
    ignore = runs / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    path = target / f"{os.getpid()}-{_token}.json"
    temp = target / f".{path.name}.tmp"
    temp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(temp, path)  # a reader never sees half a record
    _forget_old_runs(runs)


def _forget_old_runs(runs: Path) -> None:
    try:
        entries = [e for e in os.scandir(runs) if e.is_dir()]
    except OSError:
        return
    entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
    for old in entries[KEEP_RUNS:]:
        shutil.rmtree(old.path, ignore_errors=True)
