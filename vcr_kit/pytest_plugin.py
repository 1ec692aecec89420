"""pytest integration (registered through the ``pytest11`` entry point).

``@pytest.mark.vcr`` (optionally ``@pytest.mark.vcr(mode="replay", fixtures_dir=..., proxy=True)``)
makes vcr_kit active for a test, exactly as ``VCRTestCase`` does: cassettes record and
replay, SDK clients built by the code under test are intercepted. The ``vcr`` fixture
does the same for tests that ask for it and returns the test's journal. Unmarked tests
are left alone.
"""

from __future__ import annotations

import difflib
import shlex
import unittest
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ._core.config import extra_pytest_args, load_settings, mark_xdist_worker, parse_mode
from ._core.faults import parse_spec
from ._integrations.pytest_run import SessionTally
from ._integrations.run_scope import Scope, judge_pytest_args
from ._integrations.session import vcr_session
from ._ledger import journal as _journal
from ._ledger import runs, summary
from ._ledger.runs import Verdict
from .errors import VCRError

_JOURNAL = pytest.StashKey[_journal.Journal]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "vcr(mode=None, fixtures_dir=None, hosts=(), proxy=False, faults=None): record and "
        "replay the Anthropic API in this test (hosts: more hosts to intercept; proxy=True: "
        "also for child processes, through ANTHROPIC_BASE_URL; faults: a fault spec such as "
        "'overloaded*2' injected in front of the recorded answers)",
    )
    config.stash[_RUN_SESSION] = _RunSession()
    config.pluginmanager.register(_ReportHooks(config), "vcr_kit-report-hooks")
    if hasattr(config, "workerinput"):  # this very process is an xdist worker
        mark_xdist_worker()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # The run record names the tests that used each fixture (``vcr_kit drift`` shows them).
    cls = getattr(item, "cls", None)
    testcase = isinstance(cls, type) and issubclass(cls, unittest.TestCase)
    with runs.testing(item.nodeid, str(item.path), testcase):
        yield


@pytest.fixture(autouse=True)
def _vcr_kit_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    marker = request.node.get_closest_marker("vcr")
    if marker is None:
        yield
        return
    problem = marker_problem(marker.args, marker.kwargs)
    if problem is not None:  # the test's own words and the valid ones; no traceback
        pytest.fail(problem, pytrace=False)
    with vcr_session(**marker.kwargs, test_file=request.node.path) as journal:
        request.node.stash[_JOURNAL] = journal
        yield


#: The keywords ``@pytest.mark.vcr`` takes: ``vcr_session``'s, but ``test_file``.
MARKER_KEYWORDS = ("mode", "fixtures_dir", "hosts", "proxy", "faults")


def marker_problem(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    """What is wrong with ``@pytest.mark.vcr(*args, **kwargs)``, said with what the test
    wrote and what it may write; None when nothing is. A positional argument would be
    ignored (``vcr("replay")`` would record, and pay): it is refused, as is a keyword
    the marker does not know."""
    written = (
        "@pytest.mark.vcr("
        + ", ".join([*(repr(a) for a in args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        + ")"
    )
    valid = "; its keywords are " + ", ".join(f"{k}=" for k in MARKER_KEYWORDS)
    if args:
        hint = f" (mode={args[0]!r}?)" if isinstance(args[0], str) and len(args) == 1 else ""
        return f"{written}: the marker takes keywords only{hint}{valid}"
    unknown = [k for k in kwargs if k not in MARKER_KEYWORDS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], MARKER_KEYWORDS, n=1)
        hint = f" (did you mean {close[0]}=?)" if close else ""
        return f"{written}: unknown keyword {unknown[0]}={hint}{valid}"
    try:  # a value refused in the test's own words (mode=, not vcr_mode=)
        if kwargs.get("mode") is not None:
            parse_mode(kwargs["mode"], "mode")
        if isinstance(kwargs.get("faults"), str):
            parse_spec(kwargs["faults"], "faults")
    except VCRError as exc:
        return f"{written}: {exc.message}"
    return None


@pytest.fixture
def vcr(request: pytest.FixtureRequest) -> Iterator[_journal.Journal]:
    """vcr_kit active for this test; the journal of what it replayed, recorded or missed."""
    journal = request.node.stash.get(_JOURNAL, None)
    if journal is not None:  # already active through the marker
        yield journal
        return
    with vcr_session(test_file=request.node.path) as journal:
        yield journal


# -- the run record and the summary -------------------------------------------------
# A run is complete (and may drive `vcr_kit prune`) only on positive evidence: the
# arguments leave the suite whole and every collected test passed. See
# vcr_kit._integrations.pytest_run and vcr_kit._ledger.run_records.

_SCOPE = "vcr_kit_scope"
_SUITE = "vcr_kit_suite"
_WORKER_TOTALS = "vcr_kit_totals"


@dataclass
class _RunSession:
    """What this session saw, for the run record: ``config.stash[_RUN_SESSION]``, so
    that each session (a pytest run inside a test's, too) counts its own."""

    tally: SessionTally = field(default_factory=SessionTally)
    #: xdist controller: the fixtures folders its workers used.
    worker_folders: set[str] = field(default_factory=set)


_RUN_SESSION = pytest.StashKey[_RunSession]()


class _ReportHooks:
    """The tally's hooks that pytest calls without the config (reports, deselected
    items): registered for each config, which it carries."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        tally = self._config.stash[_RUN_SESSION].tally
        tally.collect_report(report.nodeid, report.failed, report.skipped)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self._config.stash[_RUN_SESSION].tally.deselected += len(items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        tally = self._config.stash[_RUN_SESSION].tally
        tally.test_report(report.nodeid, report.when, report.passed, report.skipped)


def _arguments(config: pytest.Config) -> list[str]:
    """Every argument pytest was given: the ini's ``addopts``, ``PYTEST_ADDOPTS``, the
    command line (pytest reads them in this order)."""
    addopts = config.getini("addopts")
    return [
        *(addopts if isinstance(addopts, list) else shlex.split(str(addopts))),
        *shlex.split(extra_pytest_args()),
        *config.invocation_params.args,
    ]


def _scope(config: pytest.Config) -> Scope | None:
    """An xdist worker's scope, as its controller judged it (None: not a worker)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    collection, selection = workerinput.get(_SCOPE, (["no scope from the controller"], []))
    return Scope(tuple(collection), tuple(selection))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: tell each worker what the command line selected."""
    scope = judge_pytest_args(_arguments(node.config))
    node.workerinput[_SCOPE] = (list(scope.collection), list(scope.selection))


def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    tally = SessionTally.start(
        _arguments(config), _scope(config), config.invocation_params.dir, config.rootpath
    )
    config.stash[_RUN_SESSION] = _RunSession(tally)
    runs.run_id()  # set before xdist starts its workers, which inherit it


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Iterator[None]:
    """The suite as collected, before -k, -m, --deselect or a shard plugin chose."""
    config.stash[_RUN_SESSION].tally.collected(item.nodeid for item in items)
    yield


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: a worker's totals for the summary line, and its suite."""
    run_session = node.config.stash[_RUN_SESSION]
    output = getattr(node, "workeroutput", {})
    totals = output.get(_WORKER_TOTALS)
    if totals:
        summary.add_worker_totals(totals)
        run_session.worker_folders.update(totals.get("folders", []))
    run_session.tally.worker_suite(output.get(_SUITE))
    if error:
        run_session.tally.crashed_workers.append(str(getattr(node, "gateway", node).id))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    stopped = bool(session.shouldstop or session.shouldfail)
    run_session = config.stash[_RUN_SESSION]
    tally = run_session.tally
    verdict = tally.verdict(int(exitstatus), stopped, worker=workeroutput is not None)
    also_in = [Path(f) for f in run_session.worker_folders]
    if not verdict.complete:  # a shard's part of a union, even if it used no fixture here
        also_in += _default_folder()
    if not tally.ran_tests:
        # No test ran (--co, a selection of nothing): no record, unless a fixture was
        # used all the same (then what used it must be kept).
        verdict = Verdict(False, "no test was run", "pytest", tally.command)
        also_in = []
    runs.set_verdict(verdict, also_in=also_in)
    runs.flush()
    if workeroutput is not None:
        workeroutput[_WORKER_TOTALS] = summary.worker_totals()
        workeroutput[_SUITE] = tally.suite


def _default_folder() -> list[Path]:
    """The project's default fixtures folder. A partial record goes there even when
    this process used none of its fixtures, so that a shard which ran only other tests
    still counts in the union; a complete one never does (it would say that every
    fixture there went unused, of a folder this run may not own)."""
    try:
        return [load_settings().fixtures_dir]
    except VCRError:
        return []
