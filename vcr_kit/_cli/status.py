"""What is in the fixtures folder: counts and sizes by kind, endpoint and model, the
largest files, the fixtures the last complete test run did not use, and debris
(temp files of killed writers, lock files of deleted fixtures).

Exit status 1 when a fixture is unreadable or there is debris (vcr_kit check says
why, vcr_kit prune removes debris), else 0.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any, Final

from .._core.paths import display_path
from .._store.scan import Fixture, debris, scan
from ._common import add_folder, folder_of, plural, size
from .unused import describe, find_unused

NAME = "status"
HELP = "counts and sizes by kind, endpoint and model; unused fixtures; debris"
_LARGEST: Final = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)
    parser.add_argument(
        "--largest", type=int, default=_LARGEST, metavar="N", help="list the N largest files"
    )


def endpoint(doc: dict[str, Any]) -> str:
    """``POST /v1/messages`` for the client's fixtures; the cassette kind otherwise."""
    request = doc.get("request")
    if doc.get("kind") == "http" and isinstance(request, dict):
        return f"{request.get('method')} {request.get('path')}"
    return f"({doc.get('kind')} cassette)"


def models(doc: dict[str, Any]) -> list[str]:
    """The models a fixture's answer came from (its usage), else the one its request
    names, else "-"."""
    usage = doc.get("usage")
    found = [
        u["model"] for u in usage if isinstance(u, dict) and isinstance(u.get("model"), str)
    ] if isinstance(usage, list) else []
    if not found:
        request = doc.get("request")
        body = request.get("body") if isinstance(request, dict) else None
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            found = [body["model"]]
    return sorted(set(found)) or ["-"]


def _table(title: str, rows: dict[str, list[int]]) -> list[str]:
    lines = [f"  by {title}:"]
    width = max(len(k) for k in rows)
    for key, (count, total) in sorted(rows.items(), key=lambda kv: (-kv[1][0], kv[0])):
        lines.append(f"    {key:<{width}}  {count:>6}  {size(total):>9}")
    return lines


def report(folder: Path, fixtures: list[Fixture], largest: int) -> tuple[list[str], bool]:
    """The status lines, and whether anything is wrong."""
    good = [f for f in fixtures if f.doc is not None]
    bad = [f for f in fixtures if f.doc is None]
    total = sum(f.size for f in fixtures)
    lines = [f"{display_path(folder)}/: {plural(len(fixtures), 'fixture')}, {size(total)}"]
    tables: dict[str, dict[str, list[int]]] = {
        "kind": defaultdict(lambda: [0, 0]),
        "endpoint": defaultdict(lambda: [0, 0]),
        "model": defaultdict(lambda: [0, 0]),
    }
    for fixture in good:
        doc = fixture.doc or {}
        keys = {"kind": [str(doc.get("kind"))], "endpoint": [endpoint(doc)], "model": models(doc)}
        for title, values in keys.items():
            for value in values:
                row = tables[title][value]
                row[0] += 1
                row[1] += fixture.size
    for title, rows in tables.items():
        if rows:
            lines.extend(_table(title, rows))
    if largest > 0 and fixtures:
        lines.append("  largest:")
        for fixture in sorted(fixtures, key=lambda f: (-f.size, f.path))[:largest]:
            lines.append(f"    {size(fixture.size):>9}  {display_path(fixture.path)}")
    found = find_unused(folder)
    if found.runs:
        lines.append(
            f"  unused: {len(found.files)} not used by the last complete run "
            f"({'; '.join(describe(run) for run in found.runs)})"
            f"{'; vcr_kit unused lists them' if found.files else ''}"
        )
    for unknown, why in found.unknown:
        lines.append(f"  unused: unknown for {display_path(unknown)}/ ({why})")
    junk = debris(folder)
    if junk:
        lines.append(
            f"  debris: {plural(len(junk), 'file')}, {size(sum(d.size for d in junk))} "
            "(vcr_kit prune moves them to the trash)"
        )
        lines.extend(f"    {d.describe()}" for d in junk)
    else:
        lines.append("  debris: none")
    if bad:
        lines.append(f"  unreadable: {len(bad)} (vcr_kit check says why)")
        lines.extend(f"    {display_path(f.path)}" for f in bad)
    return lines, bool(bad or junk)


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    lines, wrong = report(folder, scan(folder), args.largest)
    print("\n".join(lines))
    return 1 if wrong else 0
