"""What one pytest session saw, and its verdict for the run record (``vcr_kit prune``).

Positive evidence only: the session is complete when its arguments leave the suite
whole (``run_scope``), collection had no error and skipped no module, every
test collected (before any selection) ran and passed, and pytest exited with 0.
A session that ran a part (``-k``, ``-x``, a shard, a failure) keeps the ids of the
suite and of what passed, so that the shards of one run can be judged on their
union. A pytest-xdist worker defers to its controller, which gets the suite from
the workers and every test's report. A session given test paths only
(``pytest tests/api``) that passed all it collected is complete over those paths
(``runs.Coverage``). A session that ran no test says so: it leaves no record unless
it used a fixture.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._ledger.runs import Coverage, Verdict
from .run_scope import Scope, judge_pytest_args

__all__ = ["SessionTally"]


@dataclass
class SessionTally:
    scope: Scope = field(default_factory=Scope)
    command: str = ""
    #: Node ids collected, before any selection; None: this process collected nothing
    #: (an xdist controller, or collection never ended).
    suite: list[str] | None = None
    passed: set[str] = field(default_factory=set)
    not_passed: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    deselected: int = 0
    collection_problems: list[str] = field(default_factory=list)
    crashed_workers: list[str] = field(default_factory=list)
    #: Where the command was run (test paths are relative to it) and pytest's rootdir
    #: (node ids are relative to it).
    cwd: Path = field(default_factory=Path.cwd)
    rootdir: Path = field(default_factory=Path.cwd)

    @classmethod
    def start(
        cls,
        args: Sequence[str],
        scope: Scope | None = None,
        cwd: Path | None = None,
        rootdir: Path | None = None,
    ) -> SessionTally:
        """A new session, started with ``args`` in ``cwd`` (``scope``: an xdist
        worker's, judged by its controller)."""
        judged = scope if scope is not None else judge_pytest_args(args)
        here = cwd or Path.cwd()
        return cls(scope=judged, command=shlex.join(["pytest", *args]), cwd=here,
                   rootdir=rootdir or here)  # fmt: skip

    @property
    def ran_tests(self) -> bool:
        """A test ran (or was skipped) in this session: ``--co`` and a selection of
        nothing run none."""
        return bool(self.passed or self.not_passed or self.skipped)

    def collected(self, node_ids: Iterable[str]) -> None:
        self.suite = list(node_ids)

    def collect_report(self, node_id: str, failed: bool, skipped: bool) -> None:
        where = node_id or "the session"
        if failed:
            self.collection_problems.append(f"collection failed ({where})")
        elif skipped:
            self.collection_problems.append(f"tests were skipped at collection ({where})")

    def test_report(self, node_id: str, when: str, passed: bool, skipped: bool) -> None:
        """One phase of one test: it passed only if its call passed and no phase
        failed or skipped (an ``xfail`` counts as skipped: it stopped part way)."""
        if skipped:
            self.skipped.add(node_id)
        if not passed:
            self.not_passed.add(node_id)
        elif when == "call":
            self.passed.add(node_id)

    def worker_suite(self, node_ids: Sequence[str] | None) -> None:
        """xdist controller: the suite one worker collected."""
        if node_ids is None:
            return
        if self.suite is None:
            self.suite = list(node_ids)
        elif set(self.suite) != set(node_ids):
            self.collection_problems.append("xdist workers collected different tests")

    def verdict(self, exit_status: int, stopped: bool, *, worker: bool) -> Verdict:
        hard = [*self.scope.collection, *_unique(self.collection_problems)]
        hard += [f"an xdist worker crashed ({name})" for name in self.crashed_workers]
        if exit_status not in (0, 1):
            hard.append(f"pytest exited with status {exit_status}")
        soft = list(self.scope.selection)
        if self.deselected:
            soft.append(f"{_tests(self.deselected)} {_was(self.deselected)} deselected")
        if self.skipped:
            soft.append(f"{_tests(len(self.skipped))} {_was(len(self.skipped))} skipped")
        failed = self.not_passed - self.skipped
        if failed:
            soft.append(f"{_tests(len(failed))} failed")
        if stopped:
            soft.append("the session stopped early")
        if exit_status == 1:
            soft.append("pytest exited with status 1")
        if worker:
            return Verdict(
                False,
                "; ".join(hard) if hard else "an xdist worker (its controller judges the run)",
                runner="pytest",
                command=self.command,
                hard=bool(hard),
                defers=True,
            )
        if self.suite is not None and not self.suite:
            hard.append("no tests were collected")
        elif self.suite is None:
            hard.append("no collection was seen")
        passed = self.passed - self.not_passed
        everything = bool(self.suite) and exit_status == 0 and set(self.suite or ()) <= passed
        why = f"every one of the {len(self.suite or ())} collected tests passed"
        if hard:
            place_only = self.scope.by_place and all(r in self.scope.place for r in hard)
            covers = self._coverage(why) if place_only and everything else None
            return Verdict(False, "; ".join([*hard, *soft]), "pytest", self.command, covers=covers)
        assert self.suite is not None
        if everything:
            return Verdict(True, why, "pytest", self.command, hard=False)
        return Verdict(
            False,
            "; ".join(soft) or "not every collected test passed",
            "pytest",
            self.command,
            hard=False,
            suite=tuple(self.suite),
            passed=frozenset(passed),
        )

    def _coverage(self, why: str) -> Coverage:
        """The part this session ran whole: its test paths, and its tests' files."""
        files = {(self.rootdir / node.partition("::")[0]).resolve() for node in self.suite or ()}
        paths = tuple((self.cwd / path).resolve() for path in self.scope.paths)
        return Coverage(paths, frozenset(files), testcase_only=False, why=why)


def _tests(count: int) -> str:
    return f"{count} test{'' if count == 1 else 's'}"


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def _unique(reasons: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(reasons))
