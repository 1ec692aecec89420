"""The request side of an HTTP exchange: its fixture name and stored form, and the form
the API must receive while recording.

One request becomes one fixture, named by method, path and the whole dehydrated
JSON body (plus the ``anthropic-beta`` header, which changes what the API does);
headers that vary by machine or SDK version are not part of the key, and the
credentials are never stored. Pure: works on the request object it is handed
(``httpx2``'s or ``httpx``'s, the same API), never sends it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ..dehydrate import dehydrate_json, json_text_may_change
from .canonical_json import available as fast_json_available
from .canonical_json import quick_canonical, quick_loads
from .config import provider_base_urls
from .fixture_names import canonical_json, http_name, http_name_and_digest
from .httplib import library_of
from .ids import holds_quoted_ids, live_ids_in, quoted_tokens
from .providers import PROVIDERS, provider_of

if TYPE_CHECKING:  # at run time a request may be httpx2's or httpx's (anthropic 0.x): same API
    import httpx2

__all__ = [
    "RequestParts",
    "name_and_stored",
    "quick_name",
    "quick_parts",
    "request_parts",
    "undehydrated_bytes",
    "undehydrated_name",
    "with_live_ids",
]

#: Request headers that change what the API answers (and so belong in the key): Anthropic's
#: and every provider's (``openai-beta``); a provider's are never sent to another.
_KEYED_HEADERS: Final = (
    "anthropic-beta",
    *(header for provider in PROVIDERS.values() for header in provider.keyed_headers),
)
_KEYED_RAW: Final = {header.encode("ascii"): header for header in _KEYED_HEADERS}
_KEYED_LENGTHS: Final = frozenset(len(header) for header in _KEYED_HEADERS)


class _NotFinite(Exception):
    """Internal: the body holds NaN or an infinity (parsed the slow way instead)."""


def _refuse_constant(name: str) -> Any:
    raise _NotFinite(name)


class _FloatsSeen(threading.local):
    """Whether the decoder of this thread met a float in the body it is parsing."""

    seen = False


_floats = _FloatsSeen()


def _parse_float(spelled: str) -> float:
    _floats.seen = True
    return float(spelled)


#: One decoder for every request: ``json.loads`` with hooks builds a new one each call,
#: which costs as much as parsing a short request.
_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_parse_float)


class RequestParts(NamedTuple):
    """A request read once: its stored form before any dehydrate rule, whether its body
    is known to hold no NaN or infinity, and the body's text (None when not JSON)."""

    stored: dict[str, Any]
    finite: bool
    text: str | None
    #: Whether the body holds a float (the key's canonical JSON then checks its spelling).
    floats: bool = True


def request_parts(request: httpx2.Request) -> RequestParts:
    """``request`` parsed into its stored form, no rule applied yet (``name_and_stored``
    applies them; replay first tries the fixture of the form as it is)."""
    body_bytes = request.content
    body: Any
    finite = True
    text: str | None = None
    floats = False  # whether the parser met a float: most requests have none

    if not body_bytes:
        body = None
    else:
        try:
            text = quoted_tokens(body_bytes.decode("utf-8"))
            _floats.seen = False
            try:  # NaN refused here: the key's canonical JSON can then skip looking for it
                body = _DECODER.decode(text)
                floats = _floats.seen
            except _NotFinite:
                finite = False
                body = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError):
            # Not JSON (a file upload): key on the bytes, store only their hash.
            text = None
            body = {"sha1": hashlib.sha1(body_bytes, usedforsecurity=False).hexdigest()}
    return RequestParts(_stored(request, body), finite, text, floats=floats or not finite)


def quick_name(request: httpx2.Request) -> tuple[str, str] | None:
    """``undehydrated_name`` of ``request`` with its body parsed by orjson: the look-up of
    the common replay, about twice as fast on a long conversation. None where orjson is
    not in use, or refuses the body, or it is empty (the exact way costs nothing then).

    The name is the exact one except where orjson's parse differs: an integer beyond
    64 bits becomes a float, whose bytes then name no fixture recorded with the
    integer; a fixture whose request holds such a float (``holds_huge_float``) must not
    be served by this name, as the exact parse may name another one.
    """
    quick = quick_parts(request)
    if quick is None:
        return None
    stored, data = quick
    return http_name_and_digest(stored["method"], stored["path"], data, stored.get("provider"))


def quick_parts(request: httpx2.Request) -> tuple[dict[str, Any], bytes] | None:
    """The stored form of ``request`` as orjson parses its body, and its canonical bytes
    as orjson writes them (``quick_name`` hashes them), or None (see ``quick_name``)."""
    body_bytes = request.content
    if not body_bytes or not fast_json_available():
        return None
    try:
        if holds_quoted_ids(body_bytes):
            body = quick_loads(quoted_tokens(body_bytes.decode("utf-8")))
        else:  # most: orjson reads (and checks) the UTF-8 itself, with no string made
            body = quick_loads(body_bytes)
    except (UnicodeDecodeError, ValueError):
        return None
    stored = _stored(request, body)
    data = quick_canonical(stored)
    return None if data is None else (stored, data)


def _stored(request: httpx2.Request, body: Any) -> dict[str, Any]:
    """The stored form of ``request`` whose body parsed to ``body``."""
    if isinstance(body, dict) and "metadata" in body:
        # user and session ids (Claude Code sends a random session per run): noise to
        # the answer, so neither keyed nor stored.
        body = {k: v for k, v in body.items() if k != "metadata"}
    url = request.url
    path = quoted_tokens(url.path)  # GET /v1/messages/batches/<id>
    stored: dict[str, Any] = {"method": request.method, "path": path, "body": body}
    provider = provider_of(url.host, url.port, url.path, provider_base_urls)
    if provider is not None:  # Anthropic's requests name none: their names never changed
        stored["provider"] = provider.name
    if url.query:  # parsed only when there is one (a GET with a limit, say)
        # Pairs as lists, as the file holds them: replay compares the two with ``==``.
        # A credential in the query (Gemini's ``key=``) is neither stored nor keyed.
        hidden = provider.credential_query if provider is not None else ()
        pairs = sorted(pair for pair in url.params.multi_items() if pair[0] not in hidden)
        if pairs:
            stored["query"] = [list(pair) for pair in pairs]
    # Looked up by name only when the raw names hold it: a look-up of a header that
    # is not there (the common case) costs more than the rest of this function, as the
    # HTTP library first works out the encoding of every header of a new request.
    # A raw name of another length is not one of them (most of the SDK's 19): not
    # lowered at all.
    for key, _ in request.headers.raw:
        if len(key) in _KEYED_LENGTHS:
            header = _KEYED_RAW.get(key.lower())
            if header is not None:
                stored[header] = request.headers[header]
    return stored


def undehydrated_name(parts: RequestParts) -> tuple[str, str]:
    """The name ``parts`` would have if no rule changed it, and the whole SHA1 of the
    canonical bytes it was hashed from (``undehydrated_bytes``): what a fixture's stored
    request is compared with, standing for those bytes."""
    stored = parts.stored
    return http_name_and_digest(
        stored["method"], stored["path"], undehydrated_bytes(parts), stored.get("provider")
    )


def undehydrated_bytes(parts: RequestParts) -> bytes:
    """The canonical bytes of ``parts`` with no rule applied."""
    return canonical_json(parts.stored, finite=parts.finite, floats=parts.floats)


def name_and_stored(
    request: httpx2.Request,
    parts: RequestParts | None = None,
    undehydrated: tuple[str, str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The fixture name and the stored (dehydrated) form of ``request`` (``parts``:
    the request already parsed by ``request_parts``; ``undehydrated``: its
    ``undehydrated_name``, if the caller has it, whose name is the answer when no rule
    can change the request)."""
    if parts is None:
        parts = request_parts(request)
    stored = parts.stored
    if parts.text is not None and json_text_may_change(parts.text):  # most: one scan, no walk
        stored = {**stored, "body": dehydrate_json(stored["body"])}
    elif undehydrated is not None:  # nothing to change: the same bytes, named already
        return undehydrated[0], stored
    name = http_name(
        stored["method"], stored["path"], stored, finite=parts.finite, floats=parts.floats
    )
    return name, stored


def with_live_ids(request: httpx2.Request) -> httpx2.Request:
    """``request`` as the API must receive it: ids vcr_kit gave out (fresh on replay,
    stored tool ids) replaced by the live ids they stand for, in the path and body."""
    path = request.url.path
    live_path = live_ids_in(path)
    body = request.content
    live_body = body
    if body:
        with contextlib.suppress(UnicodeDecodeError):  # an upload: no ids to translate
            live_body = live_ids_in(body.decode("utf-8")).encode("utf-8")
    if live_path == path and live_body == body:
        return request
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
    rewritten: httpx2.Request = library_of(request).Request(
        request.method,
        request.url.copy_with(path=live_path),
        headers=headers,
        content=live_body,
        extensions=request.extensions,
    )
    return rewritten
