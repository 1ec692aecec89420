"""Real streamed answers of the Messages API, as lists of event data (``{"type": ...}``).

Two sources: the stream fixtures committed in ``fixtures/`` (recorded through the SDK,
raw events and, for the stream helper's, its own events too), and the real API
answers in ``../shared/real_answers/cassettes/`` beside the clone (vcrpy cassettes
copied from a public repository, present where shared/ is: on CI and the
developers' machines; never edited). Of those, the SSE bodies written as YAML literal
blocks (``string: |+``) are read, a ``data:`` line at a time: no YAML library needed.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from tests.support.helpers.paths import ROOT

REAL_ANSWERS = ROOT.parent / "shared" / "real_answers" / "cassettes"
_LITERAL = re.compile(r"^( *)string: \|[+-]?$")


@functools.cache
def shared_streams() -> tuple[tuple[str, list[dict[str, Any]]], ...]:
    """(cassette and answer number, its events) for each real stream in shared/; none
    where shared/ is not beside the clone."""
    if not REAL_ANSWERS.is_dir():
        return ()
    found: list[tuple[str, list[dict[str, Any]]]] = []
    for path in sorted(REAL_ANSWERS.glob("*.yaml")):
        for number, events in enumerate(_literal_streams(path)):
            found.append((f"{path.name}#{number}", events))
    return tuple(found)


@functools.cache
def fixture_streams() -> tuple[tuple[str, list[dict[str, Any]]], ...]:
    """(fixture path, its events' data) for each stream fixture in ``fixtures/``."""
    found: list[tuple[str, list[dict[str, Any]]]] = []
    for path in sorted((ROOT / "fixtures").rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        response = doc.get("response")
        if isinstance(response, dict) and "events" in response:
            events = [e.get("data") for e in response["events"]]
        elif doc.get("kind") == "stream" and isinstance(response, list):
            events = [e.get("data") for e in response]  # {"$sdk": ..., "data": ...}
        else:
            continue
        found.append((str(path.relative_to(ROOT)), events))
    return tuple(found)


def _literal_streams(path: Path) -> list[list[dict[str, Any]]]:
    """The SSE bodies of a cassette held in literal blocks, as their events' data."""
    lines = path.read_text(encoding="utf-8").splitlines()
    streams = []
    at = 0
    while at < len(lines):
        start = _LITERAL.match(lines[at])
        at += 1
        if start is None:
            continue
        indent = len(start.group(1))
        events = []
        # The block is every line after it indented deeper than its key, blank ones too.
        while at < len(lines) and (
            not lines[at].strip() or len(lines[at]) - len(lines[at].lstrip(" ")) > indent
        ):
            text = lines[at].strip()
            if text.startswith("data: "):
                events.append(json.loads(text[len("data: ") :]))
            at += 1
        if any(event.get("type") == "message_start" for event in events):
            streams.append(events)
    return streams
