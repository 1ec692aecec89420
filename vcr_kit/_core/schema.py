"""The fixture document: its format version, and the shape it must have to replay as it
was recorded, checked kind by kind (see ``kinds``).

``problems(doc, name)`` takes a parsed fixture and its file name and returns one line
per problem, each naming the field (``response.status: ...``). ``rekeyed(doc, name)``
names a fixture's stored request with today's dehydrate rules. Both are pure.

What is refused is what replay would serve wrongly or crash on: a ``response`` of the
wrong type, an HTTP answer with no body or with two, an SSE answer under a request
that did not ask for a stream (the SDK would parse the events as JSON), a status the
SDK retries (replay would loop on it), an SDK tag replay refuses to load, a format
version this vcr_kit does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..dehydrate import dehydrate_json
from .kinds import KINDS, CannotRekey, FixtureKind, check_usage

__all__ = [
    "FORMAT_KEY",
    "FORMAT_VERSION",
    "KNOWN_FORMATS",
    "MAX_DEPTH",
    "CannotRekey",
    "Document",
    "kind_of",
    "misnamed",
    "nested_deeper_than",
    "problems",
    "rekeyed",
    "stored_name",
]

#: The field every fixture starts with, and the format this vcr_kit writes.
FORMAT_KEY: Final = "vcr_kit_format"
FORMAT_VERSION: Final = 1
KNOWN_FORMATS: Final = frozenset({1})

Document = dict[str, Any]

#: How deep a fixture's JSON may nest. The API's own answers and requests stay within a
#: few dozen levels; each level is a frame or two in the walks that check, show and
#: re-key a fixture, so a deeper (hand-made) file is refused instead of overflowing.
MAX_DEPTH: Final = 200


def nested_deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON) nests more than ``limit`` levels deep. Walks
    without recursion, so it answers for any depth."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth >= limit:
            return True
        pending.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


def kind_of(doc: Mapping[str, Any]) -> FixtureKind | None:
    """The kind ``doc`` says it is, or None (no kind, an unknown one, or not even a
    string: a hand-edited ``"kind": []`` is reported, never looked up)."""
    name = doc.get("kind")
    return KINDS.get(name) if isinstance(name, str) else None


def problems(doc: Mapping[str, Any], name: str, *, replay: bool = False) -> list[str]:
    """Every reason why ``doc`` (the fixture file ``name``) would not replay faithfully.

    ``replay``: only what replay itself reads (the response, its usage, the request's
    ``stream`` flag), for the served path; the name and the stored request (``check``
    and a miss's diff use them) are left to ``check``.
    """
    found: list[str] = []
    version = doc.get(FORMAT_KEY)
    if type(version) is not int or version not in KNOWN_FORMATS:
        known = ", ".join(str(v) for v in sorted(KNOWN_FORMATS))
        found.append(f"{FORMAT_KEY}: {version!r} is not a format this vcr_kit reads ({known})")
    kind = kind_of(doc)
    if kind is None:
        found.append(f"kind: {doc.get('kind')!r} is not one of {', '.join(KINDS)}")
        return found
    if "request" not in doc and not replay:
        found.append("request: missing (it names the fixture and shows a miss's diff)")
    if "response" not in doc:
        found.append("response: missing")
        return found
    check_usage(doc.get("usage", []), found)
    kind.check(doc.get("request"), doc["response"], name, replay, found)
    # Whether the file holds the request its name says: asked of a sound file only (a
    # broken one is reported for what is broken), and by replay itself (``policy``).
    if not found and not replay and (other := misnamed(doc, name)) is not None:
        found.append(other)
    return found


def rekeyed(doc: Mapping[str, Any], name: str) -> tuple[str, Any]:
    """(the name the current rules give ``doc``, its request dehydrated with them)."""
    kind = kind_of(doc)
    if kind is None:
        raise CannotRekey(f"unknown kind {doc.get('kind')!r}")
    try:
        request = dehydrate_json(doc.get("request"))
        return kind.rekey(request, name), request
    except CannotRekey:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CannotRekey(f"request: {type(exc).__name__} {exc}") from None


def stored_name(doc: Mapping[str, Any], name: str) -> str | None:
    """The file name ``doc``'s stored request has (hashed as it is stored, with no rule
    applied again: a rule change is ``rekey``'s business), or None if it cannot say."""
    kind = kind_of(doc)
    if kind is None or "request" not in doc:
        return None
    try:
        return kind.rekey(doc["request"], name)
    except (CannotRekey, KeyError, TypeError, ValueError, AttributeError, RecursionError):
        return None


def misnamed(doc: Mapping[str, Any], name: str) -> str | None:
    """The finding when the file ``name`` holds a request of another name (a copy, a
    rename, a hand edit), else None. A stored request that cannot be named is the
    other checks' to report."""
    other = stored_name(doc, name)
    if other is None or other == name:
        return None
    return (
        f"name: the stored request is named {other}, not {name}: this file answers another "
        "request (copied, renamed or edited by hand). Delete it and record again, or rename "
        "it if it is the right answer"
    )
