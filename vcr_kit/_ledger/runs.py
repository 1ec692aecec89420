"""The run record: which fixtures a test run used, so ``unused`` and ``prune`` can tell.

Every process that replays, records or misses a fixture writes, when it ends, one
small JSON file per fixtures folder it touched:
``<folder>/.runs/<run id>/<pid>-<random>.json`` (``.runs/`` holds a ``.gitignore``
of ``*``). It lists the names used and the process's verdict on completeness.

A run is identified by ``VCR_RUN_ID``. When it is not set, the first process sets it
in its own environment, so every process it starts joins its run: pytest-xdist
workers, subprocesses of the tests. Under tox (``TOX_ENV_NAME`` set) the default is
``tox-<pid of tox>``: each environment's commands are children of the one tox
process, so ``tox`` and ``tox -p`` make one run of all their environments. To make
one run of unittest started in several shells, export the same ``VCR_RUN_ID`` in
each. Merging is a union, so a mistaken merge only hides unused fixtures, it never
marks a used one as unused.

A run is complete when every process record of it says so. A process says so:
- under pytest, when the whole suite was selected (no test paths or node ids, no
  ``-k``, ``-m``, ``--lf``, nothing deselected), collection had no error, and the
  session ended with status 0 (a failing or stopped test may not have reached the
  fixtures its later steps use); a pytest-xdist worker takes the selection from
  the controller, which also writes its own verdict for the whole run;
- under unittest, when ``VCR_RUN_COMPLETE=1`` is set, or else when the process is
  ``python -m unittest`` with no test names, no ``-k`` and no ``-f``: unittest has
  no collection hook to tell a whole suite from a part, and argv is all vcr_kit can
  see without replacing the runner; ``VCR_RUN_COMPLETE=0`` vetoes;
- never, when a fixture was missing (the test stopped there), or the process is
  not a test run (a script with ``FORCE_VCR``).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._core.config import in_tox, run_complete_word, run_id_variable, set_run_id

RUNS_FOLDER: Final = ".runs"
#: Run folders kept per fixtures folder; older ones are removed by the next writer.
KEEP_RUNS: Final = 20
_COMPLETE_VAR: Final = "VCR_RUN_COMPLETE"
_USED_EVENTS: Final = frozenset({"replayed", "recorded", "missing", "live"})
#: ``python -m unittest`` options that do not narrow the suite.
_UNITTEST_FLAGS: Final = frozenset(
    {"-v", "--verbose", "-q", "--quiet", "-b", "--buffer", "-c", "--catch", "--locals"}
)
_UNITTEST_VALUED: Final = frozenset(
    {
        "-s",
        "--start-directory",
        "-t",
        "--top-level-directory",
        "-p",
        "--pattern",
        "--durations",
    }
)

_lock = threading.Lock()
_used: dict[Path, set[str]] = {}
_changed: list[Path] = []
_recorded_usd = [0.0]
_missing = [False]
_verdict: list[tuple[bool, str]] = []
_extra_folders: set[Path] = set()
_started = time.time()
_registered: list[bool] = []
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
    with _lock:
        if not _registered:
            _registered.append(True)
            run_id()  # fixed now, before the tests start any child process
            atexit.register(flush)
        _used.setdefault(path.parent, set()).add(path.name)
        if event == "recorded":
            _recorded_usd[0] += cost_usd
        elif event == "missing":
            _missing[0] = True


def note_changed(path: Path) -> None:
    """A re-record wrote an answer different from the one on disk."""
    with _lock:
        if path not in _changed:
            _changed.append(path)


def recorded_cost() -> float:
    with _lock:
        return _recorded_usd[0]


def changed() -> list[Path]:
    with _lock:
        return list(_changed)


def folders() -> set[Path]:
    with _lock:
        return set(_used)


def set_verdict(complete: bool, why: str, also_in: Iterable[Path] = ()) -> None:
    """The test runner's word on whether this process ran the whole suite. ``also_in``:
    folders to write the verdict to even if this process used none of their fixtures
    (the pytest-xdist controller, whose workers did)."""
    with _lock:
        _verdict[:] = [(complete, why)]
        _extra_folders.update(also_in)


def _unittest_verdict(argv: list[str]) -> tuple[bool, str]:
    if not argv or not (argv[0] == "python -m unittest" or argv[0].endswith("unittest")):
        return False, "not a whole-suite test run (no pytest session, not python -m unittest)"
    args = argv[1:]
    if args[:1] == ["discover"]:
        args = args[1:]
    skip_value = False
    for arg in args:
        if skip_value:
            skip_value = False
        elif arg in _UNITTEST_VALUED:
            skip_value = True
        elif arg.split("=", 1)[0] in _UNITTEST_VALUED:
            continue
        elif arg not in _UNITTEST_FLAGS:
            return False, f"python -m unittest was given {arg!r}: a part of the suite"
    return True, "python -m unittest over the whole suite"


def verdict() -> tuple[bool, str]:
    """(complete, why) for this process, as it stands now."""
    with _lock:
        given = list(_verdict)
        missing = _missing[0]
    if missing:
        return False, "a fixture was missing"
    explicit = run_complete_word()
    if explicit in ("0", "false", "no"):
        return False, f"{_COMPLETE_VAR}={explicit}"
    if given:
        return given[0]
    if explicit in ("1", "true", "yes"):
        return True, f"{_COMPLETE_VAR}={explicit}"
    return _unittest_verdict(sys.argv)


def flush() -> None:
    """Write (or rewrite) this process's record in each folder it used. Never raises:
    a run record must not fail a test run."""
    complete, why = verdict()
    with _lock:
        used = {folder: sorted(names) for folder, names in _used.items()}
        for folder in _extra_folders:
            used.setdefault(folder, [])
        changed_names = [str(p) for p in _changed]
    run = run_id()
    for folder, names in used.items():
        record = {
            "run": run,
            "pid": os.getpid(),
            "started": _started,
            "finished": time.time(),
            "complete": complete,
            "why": why,
            "used": names,
            "changed": [n for n in changed_names if Path(n).parent == folder],
        }
        try:
            _write(folder, run, record)
        except OSError:
            continue


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


# -- reading --------------------------------------------------------------------------


@dataclass
class Run:
    """The records of one run in one folder, merged."""

    id: str
    started: float = float("inf")
    finished: float = 0.0
    complete: bool = True
    why: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    processes: int = 0


def read_runs(folder: Path) -> list[Run]:
    """The runs recorded in ``folder``, oldest first by the time they finished."""
    runs_dir = folder / RUNS_FOLDER
    try:
        run_dirs = [e for e in os.scandir(runs_dir) if e.is_dir()]
    except OSError:
        return []
    runs = []
    for entry in sorted(run_dirs, key=lambda e: e.name):
        run = Run(entry.name)
        try:
            names = sorted(n for n in os.listdir(entry.path) if n.endswith(".json"))
        except OSError:
            continue
        for name in names:
            try:
                record = json.loads(Path(entry.path, name).read_text(encoding="utf-8"))
                used = [str(n) for n in record.get("used", [])]
                started, finished = float(record["started"]), float(record["finished"])
            except (OSError, ValueError, TypeError, KeyError, AttributeError):
                run.complete = False
                run.why.append(f"an unreadable record ({name})")
                continue
            run.processes += 1
            run.used.update(used)
            run.started = min(run.started, started)
            run.finished = max(run.finished, finished)
            if record.get("complete") is not True:
                run.complete = False
                reason = str(record.get("why") or "no verdict")
                if reason not in run.why:
                    run.why.append(reason)
        if run.processes:
            runs.append(run)
    runs.sort(key=lambda r: r.finished)
    return runs


def last_complete(folder: Path) -> tuple[Run | None, list[Run]]:
    """The last complete run of ``folder`` and the runs that finished after it."""
    runs = read_runs(folder)
    for index in range(len(runs) - 1, -1, -1):
        if runs[index].complete:
            return runs[index], runs[index + 1 :]
    return None, runs
