"""Check every fixture below FOLDER before CI does.

Each *.json must parse as a vcr_kit fixture, have a valid name, hold no key (a live
credential of this environment in any encoding, or a key-shaped string), be no link
out of the folder (nor in a folder that is one), and
have the shape its kind needs to replay as recorded (an HTTP answer with one body
and a real status, events only where the request asked for a stream, SDK tags
replay can load, a known format version). Temp files of killed writers and lock
files of deleted fixtures are reported too (vcr_kit prune removes them).
One line per problem; exit status 1 if there is any.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from .._core.answer_origin import foreign_answer
from .._core.fixture_names import validate_name
from .._core.paths import display_path
from .._core.provider_fixtures import provider_findings, provider_request
from .._core.schema import problems, stored_name
from .._store.files import read_fixture_bytes
from .._store.scan import Fixture, debris, links_out, scan
from .._store.secrets import find_secret
from ..errors import VCRError
from ._common import add_folder, folder_of, plural

#: How the shape check says the file's name is not its stored request's.
_MISNAMED: Final = "name: the stored request is named "

NAME = "check"
HELP = "check every fixture's shape, name and secrets; report debris"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_folder(parser)


def fixture_problems(fixture: Fixture) -> list[str]:
    """What is wrong with one fixture, each line without its path."""
    if fixture.doc is None:
        return [fixture.error or "unreadable"]
    found = []
    try:
        validate_name(fixture.name)
    except VCRError as exc:
        found.append(exc.message)
    found.extend(problems(fixture.doc, fixture.name))
    providers = provider_findings(
        fixture.doc, fixture.name, stored_name(provider_request_doc(fixture.doc), fixture.name)
    )
    if providers:  # they say why the name is not the request's, and that rekey fixes it
        found = [p for p in found if not p.startswith(_MISNAMED)]
    found.extend(providers)
    found.extend(origin_problems(fixture.doc))
    try:  # read again (the scan keeps documents, not bytes), as carefully as the first time
        data = read_fixture_bytes(fixture.path, within=fixture.folder)
    except VCRError as exc:
        return [*found, exc.message]
    except OSError as exc:
        return [*found, f"cannot be read: {exc.strerror or exc}"]
    secret = find_secret(data, document=fixture.doc)
    if secret is not None:
        what, where = secret
        found.append(f"contains {what} {where}; remove it and record again")
    return found


def provider_request_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its request as rekey would store it (``provider_request``)."""
    return {**doc, "request": provider_request(doc.get("request"))}


def origin_problems(doc: dict[str, Any]) -> list[str]:
    """Whether the answer was written for the stored request (the name says the file
    holds that request; the answer's model says whom it asked)."""
    finding = foreign_answer(doc)
    return [] if finding is None else [finding]


def check_folder(folder: Path) -> tuple[int, list[str]]:
    """(fixtures checked, one line per problem)."""
    lines: list[str] = []
    fixtures = scan(folder)
    for fixture in fixtures:
        lines.extend(f"{display_path(fixture.path)}: {p}" for p in fixture_problems(fixture))
    # A folder that is a link out: its fixtures are never walked, and said so.
    lines.extend(
        f"{display_path(path)}: {why}; its fixtures are not read (move them into the folder)"
        for path, why in links_out(folder)
    )
    lines.extend(d.describe() for d in debris(folder))
    return len(fixtures), lines


def run(args: argparse.Namespace) -> int:
    folder = folder_of(args)
    if folder is None:
        return 2
    count, lines = check_folder(folder)
    for line in lines:
        print(line)
    print(f"vcr_kit: {count} fixtures checked, {plural(len(lines), 'problem')}")
    return 1 if lines else 0
