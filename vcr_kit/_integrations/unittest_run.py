"""The verdict of a unittest run for the run record (``vcr_kit prune``).

unittest has no collection hook, so the evidence is what ``VCRMixin.run`` sees:
the command line (``python -m unittest`` with the default start folder and
pattern, no test names, ``-k`` or ``-f``: ``run_scope``), and the results
its tests were run with: nothing failed, errored, was skipped (a ``skipIf``, a
``SkipTest`` in ``setUpClass``), failed as expected, or stopped the run. A test
that never returned (an interruption) makes the run partial too. Judged when the
record is written, at the end of the process, when the results are final.

``python -m unittest`` runs ``TestCase`` classes only: in a project set up for
pytest (``conftest.py``, ``pytest.ini``, a ``[tool.pytest...]`` section) it may not
see the tests written for pytest, so such a run is not the whole suite unless
``VCR_RUN_COMPLETE=1`` says so. Such a run, and one given a start folder
(``discover -s examples``), that passed everything is complete over the part it
could run (``runs.Coverage``): the ``TestCase`` tests below its start folder.
"""

from __future__ import annotations

import shlex
import sys
import threading
import unittest
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .._ledger import runs
from .run_scope import judge_unittest_argv

__all__ = ["judged_test"]

_PYTEST_CONFIGS: Final = (
    ("pytest.ini", ""),
    ("conftest.py", ""),
    ("pyproject.toml", "[tool.pytest"),
    ("setup.cfg", "[tool:pytest]"),
    ("tox.ini", "[pytest]"),
)
_VOUCHING_WORDS: Final = frozenset({"1", "true", "yes"})


@dataclass(eq=False)
class UnittestRun:
    """What this process's unittest tests were run with: one instance, ``UNITTEST``.
    Its fields change only under its ``lock``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The results the tests were run with, each once.
    results: list[unittest.TestResult] = field(default_factory=list)
    #: Tests inside ``judged_test`` now.
    running: int = 0
    #: A test did not return (an exception through ``run``: an interruption).
    interrupted: bool = False
    #: A test was given None for a result: run by hand, outside any runner.
    outside_runner: bool = False

    def reset(self) -> None:
        """Forget the tests seen (for tests). Kept: ``running`` (each ``judged_test``
        block counts itself out, and the test calling this is inside one)."""
        with self.lock:
            self.results = []
            self.interrupted = False
            self.outside_runner = False


UNITTEST = UnittestRun()


@contextmanager
def judged_test(result: unittest.TestResult | None) -> Iterator[None]:
    """Around one test's ``run(result)``: remember its result, and whether it returned."""
    with UNITTEST.lock:
        if not isinstance(result, unittest.TestResult):
            # pytest's unittest support passes its own object (and judges the run
            # itself); None: a test run by hand, outside any runner.
            UNITTEST.outside_runner = UNITTEST.outside_runner or result is None
        elif not any(seen is result for seen in UNITTEST.results):
            UNITTEST.results.append(result)
        UNITTEST.running += 1
    runs.add_judge(verdict)
    try:
        yield
    except BaseException:
        with UNITTEST.lock:
            UNITTEST.interrupted = True
        raise
    finally:
        with UNITTEST.lock:
            UNITTEST.running -= 1


def verdict(explicit: str) -> runs.Verdict:
    """This process's verdict (``explicit``: ``VCR_RUN_COMPLETE``, lower-cased)."""
    reasons: list[str] = []
    scope = None
    if explicit not in _VOUCHING_WORDS:
        scope = judge_unittest_argv(sys.argv)
        reasons += [*scope.collection, *scope.selection]
        if not reasons:
            reasons += _pytest_project(Path.cwd())
    problems = []
    with UNITTEST.lock:
        if UNITTEST.interrupted or UNITTEST.running:
            problems.append("the run was interrupted")
        if UNITTEST.outside_runner:
            problems.append("a test was run outside a test runner")
        for result in UNITTEST.results:
            problems += _result_problems(result)
    reasons = list(dict.fromkeys([*reasons, *problems]))
    passed = "every test of python -m unittest passed"
    command = shlex.join(sys.argv)
    if not reasons:
        return runs.Verdict(True, passed, "unittest", command)
    covers = None
    # A start folder, or a project set up for pytest: complete over the TestCase tests.
    if scope and not problems and not scope.selection and (scope.by_place or not scope.collection):
        start = tuple(Path(p) for p in scope.paths) or (Path.cwd().resolve(),)
        covers = runs.Coverage(start, runs.files_of_tests(), testcase_only=True, why=passed)
    return runs.Verdict(False, "; ".join(reasons), "unittest", command, covers=covers)


def _result_problems(result: unittest.TestResult) -> list[str]:
    found = []
    if result.shouldStop:
        found.append("the run stopped early")
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    if failed:
        found.append(f"{_count(failed)} failed or errored")
    if result.skipped:
        found.append(f"{_count(len(result.skipped))} skipped")
    if result.expectedFailures:
        expected = _count(len(result.expectedFailures))
        found.append(f"{expected} failed as expected (stopped part way)")
    return found


def _pytest_project(folder: Path) -> list[str]:
    for name, section in _PYTEST_CONFIGS:
        path = folder / name
        try:
            if path.is_file() and (not section or section in path.read_text("utf-8", "replace")):
                return [
                    f"the project is set up for pytest ({name}): python -m unittest may not run "
                    f"all its tests (set {runs.COMPLETE_VAR}=1 if it does)"
                ]
        except OSError:
            continue
    return []


def _count(count: int) -> str:
    return f"{count} test{'' if count == 1 else 's'}"
