"""pytest integration (registered through the ``pytest11`` entry point).

``@pytest.mark.vcr`` (optionally ``@pytest.mark.vcr(mode="replay", fixtures_dir=..., proxy=True)``)
makes vcr_kit active for a test, exactly as ``VCRTestCase`` does: cassettes record and
replay, SDK clients built by the code under test are intercepted. The ``vcr`` fixture
does the same for tests that ask for it and returns the test's journal. Unmarked tests
are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._integrations.session import vcr_session
from ._ledger import journal as _journal
from ._ledger import runs, summary

_JOURNAL = pytest.StashKey[_journal.Journal]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "vcr(mode=None, fixtures_dir=None, hosts=(), proxy=False): record and replay the "
        "Anthropic API in this test (hosts: more hosts to intercept; proxy=True: also for "
        "child processes, through ANTHROPIC_BASE_URL)",
    )


@pytest.fixture(autouse=True)
def _vcr_kit_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    marker = request.node.get_closest_marker("vcr")
    if marker is None:
        yield
        return
    with vcr_session(**marker.kwargs, test_file=request.node.path) as journal:
        request.node.stash[_JOURNAL] = journal
        yield


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
# A run is complete (and may drive `vcr_kit prune`) only when the whole suite was
# selected, collected without error, and passed: see vcr_kit._ledger.runs.

_SELECTION = "vcr_kit_selection"
_WORKER_TOTALS = "vcr_kit_totals"
#: What this session saw that makes it a part of the suite (pytest_collectreport and
#: pytest_deselected get no session to stash it on; one session per process).
_partial: list[str] = []
_worker_folders: set[str] = set()


def _selection(config: pytest.Config) -> list[str]:
    """Why this session does not select the whole suite (empty: it does)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: its args are the controller's, resolved
        return list(workerinput.get(_SELECTION, []))
    reasons = []
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        reasons.append("test paths or node ids were given")
    if config.getoption("keyword", ""):
        reasons.append("-k was given")
    if config.getoption("markexpr", ""):
        reasons.append("-m was given")
    if config.getoption("lf", False):
        reasons.append("--lf was given")
    return reasons


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: tell each worker what the command line selected."""
    node.workerinput[_SELECTION] = _selection(node.config)


def pytest_sessionstart(session: pytest.Session) -> None:
    _partial.clear()
    _worker_folders.clear()
    runs.run_id()  # set before xdist starts its workers, which inherit it


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed and "collection failed" not in _partial:
        _partial.append("collection failed")


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items and "tests were deselected" not in _partial:
        _partial.append("tests were deselected")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: count a finished worker in the one summary line."""
    totals = getattr(node, "workeroutput", {}).get(_WORKER_TOTALS)
    if totals:
        summary.add_worker_totals(totals)
        _worker_folders.update(totals.get("folders", []))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    config = session.config
    reasons = [*_selection(config), *_partial]
    if session.shouldstop or session.shouldfail:
        reasons.append("the session stopped early")
    if int(exitstatus) != 0:
        reasons.append(f"pytest exited with status {int(exitstatus)}")
    complete = not reasons
    why = "the whole suite passed under pytest" if complete else "; ".join(reasons)
    runs.set_verdict(complete, why, also_in=[Path(f) for f in _worker_folders])
    runs.flush()
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_WORKER_TOTALS] = summary.worker_totals()
