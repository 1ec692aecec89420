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
from .kinds import KINDS, CannotRekey, check_usage

__all__ = [
    "FORMAT_KEY",
    "FORMAT_VERSION",
    "KNOWN_FORMATS",
    "CannotRekey",
    "Document",
    "problems",
    "rekeyed",
]

#: The field every fixture starts with, and the format this vcr_kit writes.
FORMAT_KEY: Final = "vcr_kit_format"
FORMAT_VERSION: Final = 1
KNOWN_FORMATS: Final = frozenset({1})

Document = dict[str, Any]


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
    kind = KINDS.get(doc.get("kind"))  # type: ignore[arg-type]
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
    return found


def rekeyed(doc: Mapping[str, Any], name: str) -> tuple[str, Any]:
    """(the name the current rules give ``doc``, its request dehydrated with them)."""
    kind = KINDS.get(doc.get("kind"))  # type: ignore[arg-type]
    if kind is None:
        raise CannotRekey(f"unknown kind {doc.get('kind')!r}")
    try:
        request = dehydrate_json(doc.get("request"))
        return kind.rekey(request, name), request
    except (KeyError, TypeError) as exc:
        raise CannotRekey(f"request: {type(exc).__name__} {exc}") from None
