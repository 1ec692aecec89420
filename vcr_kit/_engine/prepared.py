"""Replay by the request as it is: what is derived from a fixture once per process.

Most requests hold nothing a dehydrate rule changes (no machine path, no date, no git
status). For those, the fixture's name is the hash of the request as it is, so replay
can look that file up before scanning the request for rule literals at all; it then
serves it only when that gives exactly what the full way would:

- the fixture's stored request has the live request's canonical bytes (the key's own
  bytes, compared by their whole SHA1, as git compares objects: this is also the check
  that the file answers this request; the name holds 12 of its 40 hex digits);
- the rules in force leave that stored request as it is (``dehydrate_json`` of it is
  itself). Then the live request, equal to it, is left as it is too, its key is the
  hash of those bytes, and that is the file's name.

Anything else (no such file, another request in it, a rule that would change it, a
fixture that would not replay) returns None, and the full way runs as before, saying
what is wrong where something is. What is derived from a fixture (its request's
canonical bytes' SHA1, whether the rules leave it alone, whether it replays, its answer
rendered) is kept in the cached fixture's memo, valid as long as the file is unchanged
(``_store.cache``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from .._core.canonical_json import holds_huge_float
from .._core.fixture_names import canonical_json, sha1_hex
from .._core.ids import IdPieces, split_at_ids
from .._core.schema import Document
from .._ledger.cost import priced_usage, prices_state
from .._ledger.notes import ReplayNote, replay_note
from .._store.cache import CachedFixture, cached_fixture_in
from ..dehydrate import dehydrate_json, json_text_may_change, placeholders, rules_in_force
from ..errors import VCRError
from .http_codec import AnswerHead, head_of, rendered_answer
from .policy import served

__all__ = ["Prepared", "answer_head", "fixture_note", "prepared_replay", "rendered"]

Prepared = tuple[Path, CachedFixture]


def prepared_replay(
    folder: Path, undehydrated: tuple[str, str], *, quick: bool = False
) -> Prepared | None:
    """The fixture that answers a request whose ``undehydrated_name`` is
    ``undehydrated`` when the request holds nothing a rule changes, or None when that
    is not certain (the full way decides then). ``quick``: the key is ``quick_name``'s,
    from orjson's parse, which is the exact parse unless the bytes hold a float that
    may have been a huge integer: a fixture whose request holds one is left to the
    exact way."""
    name, digest = undehydrated
    fixture = cached_fixture_in(folder, name)
    if fixture is None:
        return None
    facts = _facts(fixture.path, fixture)
    if facts is None or facts["request_sha1"] != digest or not _left_as_is(fixture):
        return None
    if quick and facts["huge_float"]:
        return None
    return fixture.path, fixture


def answer_head(fixture: CachedFixture) -> AnswerHead:
    """The stored answer's status and headers made ready (``head_of``): what rebuilding
    a response takes besides ``rendered``."""
    head: AnswerHead = fixture.memo["facts"]["head"]
    return head


def fixture_note(fixture: CachedFixture) -> ReplayNote:
    """The ledger's note of a replay of the fixture, its usage priced, made once per
    fixture while the price table stays the same (``set_price`` changes it)."""
    kept: ReplayNote | None = fixture.memo.get("note")
    if kept is None or kept.priced.state != prices_state():
        priced = priced_usage(fixture.memo["facts"]["usage"])
        kept = fixture.memo["note"] = replay_note(fixture.path, priced)
    return kept


def rendered(fixture: CachedFixture, doc: Document | None = None) -> str | bytes | IdPieces:
    """The fixture's answer rendered (before the ids are given out), once per fixture
    unless it holds placeholders (this machine's paths go in on every replay). Kept as
    its bytes cut at the ids a replay gives out, so a replay joins them with fresh ids
    instead of searching the text again. ``doc``: the fixture parsed already."""
    tokens = placeholders()  # the same tuple while the rules stay the same
    kept = fixture.memo.get("rendered")
    if kept is not None and kept[0] is tokens:
        pieces: bytes | IdPieces = kept[1]
        return pieces
    content, hydrated = rendered_answer((doc or fixture.doc)["response"])
    if hydrated:
        return content
    kept_form = split_at_ids(content) if isinstance(content, str) else content
    fixture.memo["rendered"] = (tokens, kept_form)
    return kept_form


def _facts(path: Path, fixture: CachedFixture) -> dict[str, Any] | None:
    """What replay needs of a fixture besides its answer's body, found in one parse:
    its request's canonical bytes, its answer's head, its usage; None when the policy
    would not serve it (its shape does not fit an HTTP replay). The first time, the
    same parse also fills in ``_left_as_is``'s and ``rendered``'s memos: a suite
    replays most fixtures once, and each parse of a fixture cost as much as a step."""
    memo = fixture.memo
    if "facts" not in memo:
        doc = fixture.doc
        try:
            served(path, doc, "http", live_request=doc["request"])
            response = doc["response"]
            request_bytes = canonical_json(doc["request"])
            memo["facts"] = {
                # Its canonical bytes' whole SHA1, which stands for them: comparing the
                # bytes themselves (tens of KB for a long conversation, kept per fixture)
                # cost more through the SDK than the parse saved by the quick key.
                "request_sha1": sha1_hex(request_bytes),
                # Its bytes are the request's (compared above): a float in them is in the
                # request as orjson parsed it (see ``prepared_replay``).
                "huge_float": holds_huge_float(doc["request"]),
                "head": head_of(response),
                "usage": doc.get("usage") or [],
            }
        except (VCRError, KeyError, TypeError, ValueError, AttributeError, RecursionError):
            memo["facts"] = None
        else:
            # What fails here fails again where it is asked for, and says so there.
            with contextlib.suppress(KeyError, TypeError, ValueError, RecursionError):
                _left_as_is(fixture, doc, request_bytes)
                rendered(fixture, doc)
    facts: dict[str, Any] | None = memo["facts"]
    return facts


def _left_as_is(
    fixture: CachedFixture, doc: Document | None = None, request_bytes: bytes | None = None
) -> bool:
    """Whether the rules in force leave the stored request's body as it is (kept per
    set of rules and paths: a test may chdir, or add a rule). ``doc``: the fixture
    parsed already; ``request_bytes``: its request's canonical JSON."""
    state = rules_in_force()
    kept = fixture.memo.get("left_as_is")
    if kept is not None and kept[0] == state:
        result: bool = kept[1]
        return result
    request = (doc or fixture.doc)["request"]
    body: Any = request.get("body")
    try:
        if request_bytes is None:
            request_bytes = canonical_json(request)
        # Most requests hold no rule's literal at all: a few searches of the text say
        # so, as they do for a live request (``json_text_may_change``); else the walk.
        text = request_bytes.decode("utf-8")
        result = not json_text_may_change(text) or dehydrate_json(body) == body
    except RecursionError:
        result = False
    fixture.memo["left_as_is"] = (state, result)
    return result
