"""The suite's tiers (``tests/tiers.py``) and, at the end of a pytest run, the fault suite's
figures (``tests/support/helpers/fault_report.py``): under pytest-xdist each worker hands its
lines to the controller, which prints them all."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests import tiers
from tests.support.helpers import fault_report

_guard = pytest.StashKey[tiers.InProcessGuard]()
_from_workers = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    tiers.register(config)
    config.stash[_guard] = tiers.InProcessGuard()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tiers.check_collected(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[Any]:
    guard = item.config.stash[_guard]
    guard.enter(item)
    try:
        return (yield)
    finally:
        guard.leave()


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # an xdist worker's, to its controller
    if output is not None:
        output["fault_report"] = fault_report.lines()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: a worker's fault figures, printed with the controller's own."""
    lines = getattr(node, "workeroutput", {}).get("fault_report", [])
    node.config.stash.setdefault(_from_workers, []).extend(lines)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    found = fault_report.lines() + terminalreporter.config.stash.get(_from_workers, [])
    if found:
        terminalreporter.section("vcr_kit fault suite")
        for line in found:
            terminalreporter.write_line(line)
