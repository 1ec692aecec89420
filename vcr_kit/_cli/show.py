"""Show fixtures as a person reads them: the request (parameters, system prompt,
tools, messages with their roles) and the answer (text, tool calls, thinking, a
stream joined into its final message, an error), then usage and cost.
--json prints the file as it is.
"""

from __future__ import annotations

import argparse
import json

from .._core.paths import display_path
from .._core.schema import problems
from .._store.scan import read_named
from ._common import fail
from ._render import render

NAME = "show"
HELP = "show fixtures as a person reads them (--json: the raw file)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fixtures", nargs="+", metavar="FIXTURE", help="fixture files")
    parser.add_argument("--json", action="store_true", help="print the raw JSON document")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    status = 0
    for number, name in enumerate(args.fixtures):
        fixture = read_named(Path(name))
        if fixture.doc is None:
            status = fail(f"{display_path(fixture.path)}: {fixture.error}")
            continue
        if number:
            print()
        if args.json:
            print(json.dumps(fixture.doc, indent=2, ensure_ascii=False))
            continue
        print(f"=== {display_path(fixture.path)}")
        shape = problems(fixture.doc, fixture.name)
        if shape:  # shown as far as it goes, then said what is wrong with it
            status = 1
        try:
            lines = render(fixture.doc)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            lines = [f"(cannot render: {type(exc).__name__}: {exc})"]
            status = 1
        print("\n".join(lines))
        for problem in shape:
            print(f"problem: {problem}")
    return status
