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

from .._core.paths import display_path
from .._store.files import read_document
from ..errors import VCRError

_MAX_CANDIDATES: Final = 500
#: A request of a few MB (a long prompt, a document) is a fair candidate; a larger file
#: is skipped, and the hint reads no more than this in all.
_MAX_CANDIDATE_BYTES: Final = 8 * 1024 * 1024
_MAX_TOTAL_BYTES: Final = 64 * 1024 * 1024
_MAX_DIFF_LINES: Final = 40
#: A diff line longer than this is cut: a 2 MB prompt is one JSON line, and a miss
#: message must stay readable (and small) in a terminal and a CI log.
_MAX_LINE: Final = 200
#: Characters kept before the first difference of a cut line (a system prompt's
#: difference is deep inside one 20 KB line: its start says nothing).
_CONTEXT: Final = 60


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


def _candidates(path: Path) -> list[Path]:
    """Fixtures of the same family: same first message, or same endpoint, or same name.

    Bounded, whatever the folder holds: at most ``_MAX_CANDIDATES`` regular files of at
    most ``_MAX_CANDIDATE_BYTES`` each and ``_MAX_TOTAL_BYTES`` in all (a hint is not
    worth reading a 1 GB file, or waiting on a named pipe).
    """
    stem = path.stem
    family = stem.split("-", 1)[0] + "-" if _is_cassette_name(stem) else _family(stem)
    try:
        entries = sorted(
            (entry.name, entry)
            for entry in os.scandir(path.parent)
            if entry.name.endswith(".json")
            and entry.name.startswith(family)
            and entry.name != path.name
        )
    except OSError:
        return []
    found: list[Path] = []
    budget = _MAX_TOTAL_BYTES
    for name, entry in entries:
        if len(found) == _MAX_CANDIDATES:
            break
        try:
            if not entry.is_file():
                continue
            size = entry.stat().st_size
        except OSError:
            continue
        if size <= min(_MAX_CANDIDATE_BYTES, budget):
            budget -= size
            found.append(path.parent / name)
    return found


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def nearest_fixture(path: Path, request: Any = None) -> tuple[Path, Any] | None:
    """The recorded fixture whose request shares the longest start with ``request``
    (the same conversation prefix, the same model and parameters), and its document."""
    wanted = _canonical(request)
    best: tuple[int, Path, Any] | None = None
    for candidate in _candidates(path):
        try:
            doc = read_document(candidate)
        except (VCRError, OSError, RecursionError):  # a bad neighbour is not a hint
            continue
        if doc is None:
            continue
        try:
            score = _common_prefix(_canonical(doc.get("request")), wanted)
        except (ValueError, RecursionError):  # nested too deeply to print
            continue
        if best is None or score > best[0]:
            best = (score, candidate, doc)
    return None if best is None else (best[1], best[2])


def _is_cassette_name(stem: str) -> bool:
    first = stem.split("-", 1)[0]
    return len(first) == 6 and all(c in "0123456789abcdef" for c in first)


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _cut(line: str, differs_at: int = 0) -> str:
    """``line`` cut to about ``_MAX_LINE`` characters around ``differs_at`` (where it
    first differs from the line it replaces), with ``_CONTEXT`` characters before;
    each cut says how much it left out. The line's head (the diff's ``-``/``+`` mark,
    the indent and the JSON key) is always kept."""
    if len(line) <= _MAX_LINE:
        return line
    key_end = line.find('": "', 0, _CONTEXT)
    head = key_end + 4 if key_end > 0 else 1
    start = min(max(head, differs_at - _CONTEXT), len(line) - _MAX_LINE + head)
    end = start + _MAX_LINE - head
    before = f"({start - head} characters) ..." if start > head else ""
    after = f"... ({len(line) - end} more characters)" if end < len(line) else ""
    return f"{line[:head]}{before}{line[start:end]}{after}"


def _cut_lines(diff: list[str]) -> list[str]:
    """The diff's lines, each cut around where it differs from its pair (the n-th
    removed line of a change and its n-th added line)."""
    cut: list[str] = []
    i = 0
    while i < len(diff):
        removed = _run(diff, i, "-")
        added = _run(diff, i + len(removed), "+")
        if not removed and not added:
            cut.append(_cut(diff[i]))
            i += 1
            continue
        for n, line in enumerate(removed):
            pair = added[n] if n < len(added) else ""
            cut.append(_cut(line, _common_prefix(line[1:], pair[1:]) + 1))
        for n, line in enumerate(added):
            pair = removed[n] if n < len(removed) else ""
            cut.append(_cut(line, _common_prefix(line[1:], pair[1:]) + 1))
        i += len(removed) + len(added)
    return cut


def _run(diff: list[str], start: int, mark: str) -> list[str]:
    """The lines from ``start`` on that begin with ``mark`` (not the file headers)."""
    run: list[str] = []
    for line in diff[start:]:
        if not line.startswith(mark) or line.startswith(mark * 3 + " "):
            break
        run.append(line)
    return run


def describe_near_miss(path: Path, request: Any) -> str:
    found = nearest_fixture(path, request)
    if found is None:
        return ""
    near, doc = found
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
            shown = _cut_lines(diff)[:_MAX_DIFF_LINES]
            if len(diff) > len(shown):
                shown.append(f"... ({len(diff) - len(shown)} more diff lines)")
            lines.append("What differs:")
            lines.extend(shown)
    return "\n".join(lines)
