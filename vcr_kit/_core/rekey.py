"""A fixture's name recomputed from its stored request, with today's rules.

The stored request was dehydrated with the rules of its day. After a rule is added
(or the key format changes) the same request maps to another name; ``rekeyed``
dehydrates the stored request again with the current rules and names it the way
the recording code would, so a fixture can be renamed instead of re-recorded.
Pure: no disk, no SDK (SDK objects never reach a stored request).
"""

from __future__ import annotations

from typing import Any

from ..dehydrate import dehydrate_json
from .keys import cassette_name, fixture_name, http_name, token_count_name
from .schema import KINDS


class CannotRekey(ValueError):
    """The stored request does not say enough to name the fixture."""


def rekeyed(doc: dict[str, Any], name: str) -> tuple[str, Any]:
    """(the name the current rules give ``doc``, its request dehydrated with them)."""
    kind = doc.get("kind")
    request = doc.get("request")
    if kind not in KINDS:
        raise CannotRekey(f"unknown kind {kind!r}")
    try:
        request = dehydrate_json(request)
        if kind == "http":
            if not isinstance(request, dict):
                raise CannotRekey("request: not an object")
            return http_name(str(request["method"]), str(request["path"]), request), request
        if kind in ("message", "stream"):
            messages = request["messages"]
            # The stored messages are {"role", "content"}: the content is what is hashed.
            suffix = "-stream" if kind == "stream" else ""
            return cassette_name(messages, suffix), request
        if kind == "token_count":
            return token_count_name(request["messages"], request.get("tools", [])), request
        prefix, dash, digest = name.removesuffix(".json").rpartition("-")
        if not dash or len(digest) != 12:
            raise CannotRekey("a generic fixture's name must end in -<12 hex>")
        return fixture_name(request, prefix), request
    except (KeyError, TypeError) as exc:
        raise CannotRekey(f"request: {type(exc).__name__} {exc}") from None
