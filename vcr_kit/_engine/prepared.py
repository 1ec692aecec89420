"""Replay by the request as it is: what is derived from a fixture once per process.

Most requests hold nothing a dehydrate rule changes (no machine path, no date, no git
status). For those, the fixture's name is the hash of the request as it is, so replay
can look that file up before scanning the request for rule literals at all; it then
serves it only when that gives exactly what the full way would:

- the fixture's stored request has the live request's canonical bytes (the key's own
  bytes, compared byte for byte: this is also the check that the file answers this
  request);
- the rules in force leave that stored request as it is (``dehydrate_json`` of it is
  itself). Then the live request, equal to it, is left as it is too, its key is the
  hash of those bytes, and that is the file's name.

Anything else (no such file, another request in it, a rule that would change it, a
fixture that would not replay) returns None, and the full way runs as before, saying
what is wrong where something is. What is derived from a fixture (its request's
canonical bytes, whether the rules leave it alone, whether it replays, its answer
rendered) is kept in the cached fixture's memo, valid as long as the file is unchanged
(``_store.cache``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._core.http_request import RequestParts, undehydrated_key
from .._core.keys import canonical_json
from .._store.cache import CachedFixture, cached_fixture
from ..dehydrate import dehydrate_json, placeholders, rules_in_force
from ..errors import VCRError
from .http_codec import rendered_answer
from .policy import served

__all__ = ["Prepared", "prepared_replay", "rendered"]

Prepared = tuple[Path, CachedFixture]


def prepared_replay(folder: Path, parts: RequestParts) -> Prepared | None:
    """The fixture that answers ``parts`` when the request holds nothing a rule
    changes, or None when that is not certain (the full way decides then)."""
    name, data = undehydrated_key(parts)
    path = folder / name
    fixture = cached_fixture(path)
    if fixture is None or _request_bytes(fixture) != data:
        return None
    if not _left_as_is(fixture) or not _replays(path, fixture):
        return None
    return path, fixture


def rendered(fixture: CachedFixture) -> str | bytes:
    """The fixture's answer rendered (before the ids are given out), once per fixture
    unless it holds placeholders (this machine's paths go in on every replay)."""
    tokens = placeholders()  # the same tuple while the rules stay the same
    kept = fixture.memo.get("rendered")
    if kept is not None and kept[0] is tokens:
        content: str | bytes = kept[1]
        return content
    content, hydrated = rendered_answer(fixture.doc["response"])
    if not hydrated:
        fixture.memo["rendered"] = (tokens, content)
    return content


def _request_bytes(fixture: CachedFixture) -> bytes | None:
    memo = fixture.memo
    if "request_bytes" not in memo:
        try:
            memo["request_bytes"] = canonical_json(fixture.doc.get("request"))
        except (TypeError, ValueError, RecursionError):
            memo["request_bytes"] = None
    data: bytes | None = memo["request_bytes"]
    return data


def _left_as_is(fixture: CachedFixture) -> bool:
    """Whether the rules in force leave the stored request's body as it is (kept per
    set of rules and paths: a test may chdir, or add a rule)."""
    state = rules_in_force()
    kept = fixture.memo.get("left_as_is")
    if kept is not None and kept[0] == state:
        result: bool = kept[1]
        return result
    body: Any = fixture.doc["request"].get("body")
    try:
        result = dehydrate_json(body) == body
    except RecursionError:
        result = False
    fixture.memo["left_as_is"] = (state, result)
    return result


def _replays(path: Path, fixture: CachedFixture) -> bool:
    """Whether the policy serves the fixture (its shape fits an HTTP replay)."""
    if "replays" not in fixture.memo:
        try:
            served(path, fixture.doc, "http", fixture.doc["request"])
            fixture.memo["replays"] = True
        except (VCRError, KeyError, TypeError, AttributeError):
            fixture.memo["replays"] = False
    ok: bool = fixture.memo["replays"]
    return ok
