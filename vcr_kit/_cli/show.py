"""Show fixtures as a person reads them: the request (parameters, system prompt,
tools, messages with their roles) and the answer (text, tool calls, thinking, a
stream joined into its final message, an error), then usage and cost.
--json prints the file as it is. A FIXTURE that is not a file here is looked for in
the fixtures folder (--fixtures DIR, default: VCR_FIXTURES_DIR, else fixtures/).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .._core.paths import display_path
from .._core.schema import problems
from .._store.scan import read_named
from ._common import UsageError, add_fixtures_option, fail, fixtures_folder
from ._render import render

NAME = "show"
HELP = "show fixtures as a person reads them (--json: the raw file)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="FIXTURE", help="fixture files")
    parser.add_argument("--json", action="store_true", help="print the raw JSON document")
    add_fixtures_option(
        parser, help="where to look for a FIXTURE that is not a file here (default: "
        "VCR_FIXTURES_DIR, else fixtures/ at the project root)"
    )  # fmt: skip


def fixture_paths(args: argparse.Namespace) -> list[Path]:
    """The files the FIXTURE arguments name: as given, else in the fixtures folder (read
    only when one is needed, or named). ``UsageError`` for a folder; a missing file is
    reported as any bad file is."""
    folder = fixtures_folder(args) if args.fixtures else None
    found = []
    for name in args.names:
        path = Path(name)
        if not path.exists() and not path.is_absolute():
            folder = folder or fixtures_folder(args)
            path = folder / name if (folder / name).exists() else path
        if path.is_dir():
            raise UsageError(
                f"{display_path(path)} is a folder; show takes fixture files: vcr_kit show "
                f"{display_path(path)}/NAME.json (vcr_kit status {display_path(path)} sums a "
                "folder up)"
            )
        found.append(path)
    return found


def run(args: argparse.Namespace) -> int:
    status = 0
    for number, path in enumerate(fixture_paths(args)):
        fixture = read_named(path)
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
