"""Prints the fault suite's figures (``tests/support/fault_report.py``) at the end of a pytest
run."""

from __future__ import annotations

from typing import Any

from tests.support import fault_report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    found = fault_report.lines()
    if found:
        terminalreporter.section("vcr_kit fault suite")
        for line in found:
            terminalreporter.write_line(line)
