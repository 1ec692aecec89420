"""Show what differs between two fixtures: a unified diff of their requests, then of
their answers (pretty JSON, sorted keys). Exit status 0 when they are the same,
1 when they differ, as diff(1) does.
"""

from __future__ import annotations

import argparse
import difflib
import json
from pathlib import Path
from typing import Any

from .._core.paths import display_path
from .._store.scan import read
from ._common import fail

NAME = "diff"
HELP = "a unified diff of two fixtures' requests and answers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="a fixture file")
    parser.add_argument("b", metavar="B", help="another fixture file")


def _lines(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def run(args: argparse.Namespace) -> int:
    a, b = read(Path(args.a)), read(Path(args.b))
    if a.doc is None or b.doc is None:
        bad = a if a.doc is None else b
        return fail(f"{display_path(bad.path)}: {bad.error}", 2)
    name_a, name_b = display_path(a.path), display_path(b.path)
    out: list[str] = []
    for part in ("request", "response", "usage"):
        out += difflib.unified_diff(
            _lines(a.doc.get(part)),
            _lines(b.doc.get(part)),
            f"{name_a} ({part})",
            f"{name_b} ({part})",
            lineterm="",
        )
    if a.doc.get("kind") != b.doc.get("kind"):
        out.insert(0, f"kind: {a.doc.get('kind')} != {b.doc.get('kind')}")
    print("\n".join(out) if out else f"vcr_kit: {name_a} and {name_b} are the same")
    return 1 if out else 0
