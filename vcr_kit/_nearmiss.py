"""On a miss, point at the nearest recorded fixture and show what differs.

Only runs when a fixture is missing (a failing test), so it may list the folder;
the replay path never comes here.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any, Final

from ._store import display_path, read_document

_MAX_CANDIDATES: Final = 500
_MAX_DIFF_LINES: Final = 40


def _family(stem: str) -> str:
    """``post-v1-messages-<hash>`` -> ``post-v1-messages-``; ``a1b2c3-d4e5f6`` -> ``a1b2c3-``."""
    head, _, _ = stem.rpartition("-")
    return head + "-" if head else stem


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def nearest_fixture(path: Path) -> Path | None:
    stem = path.stem
    family = stem.split("-", 1)[0] + "-" if _is_cassette_name(stem) else _family(stem)
    try:
        names = [
            entry.name
            for entry in os.scandir(path.parent)
            if entry.name.endswith(".json") and entry.name.startswith(family)
        ][:_MAX_CANDIDATES]
    except OSError:
        return None
    if not names:
        return None
    best = max(names, key=lambda name: (_common_prefix(name, path.name), name))
    return path.parent / best


def _is_cassette_name(stem: str) -> bool:
    first = stem.split("-", 1)[0]
    return len(first) == 6 and all(c in "0123456789abcdef" for c in first)


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def describe_near_miss(path: Path, request: Any) -> str:
    near = nearest_fixture(path)
    if near is None:
        return ""
    doc = read_document(near)
    if doc is None:
        return ""
    lines = [f"Nearest recorded fixture: {display_path(near)}."]
    if request is not None and "request" in doc:
        diff = list(
            difflib.unified_diff(
                _pretty(doc["request"]),
                _pretty(request),
                fromfile=f"recorded ({near.name})",
                tofile="this request",
                lineterm="",
                n=2,
            )
        )
        if diff:
            shown = diff[:_MAX_DIFF_LINES]
            if len(diff) > len(shown):
                shown.append(f"... ({len(diff) - len(shown)} more diff lines)")
            lines.append("What differs:")
            lines.extend(shown)
    return "\n".join(lines)
