"""The fault suite's figures: each fault test notes what it tried, and the run prints them.

Under pytest, ``tests/conftest.py`` prints them in the terminal summary; under
``python -m unittest`` each fault module prints its own at the end of the module.
The docs' Reliability page (docs/reliability.md) quotes these lines.
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()
_lines: list[str] = []


def note(line: str) -> None:
    with _lock:
        _lines.append(line)


def lines() -> list[str]:
    with _lock:
        return list(_lines)


def print_for_unittest(prefix: str) -> None:
    """``tearDownModule`` of a fault module: print its lines when pytest is not running
    (pytest prints them all once, in its summary)."""
    if "pytest" in sys.modules:
        return
    for line in lines():
        if line.startswith(prefix):
            print(f"fault suite: {line}", file=sys.stderr)
