"""What one pytest session saw, and its verdict for the run record (``vcr_kit prune``).

Positive evidence only: the session is complete when its arguments leave the suite
whole (``run_scope``), collection had no error and skipped no module, every
test collected (before any selection) ran and passed, and pytest exited with 0.
A session that ran a part (``-k``, ``-x``, a shard, a failure) keeps the ids of the
suite and of what passed, so that the shards of one run can be judged on their
union. A pytest-xdist worker defers to its controller, which gets the suite from
the workers and every test's report.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .._ledger.runs import Verdict
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

    @classmethod
    def start(cls, args: Sequence[str], scope: Scope | None = None) -> SessionTally:
        """A new session, started with ``args`` (``scope``: an xdist worker's, judged
        by its controller)."""
        judged = scope if scope is not None else judge_pytest_args(args)
        return cls(scope=judged, command=shlex.join(["pytest", *args]))

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
        if hard:
            return Verdict(False, "; ".join([*hard, *soft]), "pytest", self.command)
        assert self.suite is not None
        passed = self.passed - self.not_passed
        if exit_status == 0 and set(self.suite) <= passed:
            why = f"every one of the {len(self.suite)} collected tests passed"
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


def _tests(count: int) -> str:
    return f"{count} test{'' if count == 1 else 's'}"


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def _unique(reasons: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(reasons))
