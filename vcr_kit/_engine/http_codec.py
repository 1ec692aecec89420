"""The answer side of an HTTP exchange: a live answer into its stored form, and a stored
form back into a response of the request's own HTTP library.

A JSON answer is stored parsed; an SSE answer as the list of its events, one object
each; JSON Lines (batch results) as a list of objects; anything else as text or
base64. On replay the bytes are rebuilt and parsed by the SDK itself, so replay
goes through exactly the code a live answer goes through. Ids are given out as
``_core.ids`` says; a transient answer (see ``_core.transient``) is never stored.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any, Final

from .._core.httplib import library_of
from .._core.ids import give_ids_text, stabilizer
from .._core.transient import TRANSIENT_ERROR_TYPES, is_transient
from .._ledger.cost import usage_entries
from ..dehydrate import dehydrate, dehydrate_json, hydrate_json, placeholders
from .sdk_codec import RECORDED_REQUEST_ID, fresh_request_id
from .stream_pieces import has_joined_pieces, join_pieces, split_pieces

if TYPE_CHECKING:  # at run time a response may be httpx2's or httpx's (anthropic 0.x)
    import httpx2

__all__ = [
    "parse_sse",
    "passthrough",
    "rebuild_response",
    "render_sse",
    "store_response",
    "store_response_with_ids",
    "usage_of",
]

#: Response headers worth keeping; every other one is volatile or re-derived.
_KEPT_HEADERS: Final = ("content-type", "request-id")
_SSE: Final = "text/event-stream"


def parse_sse(text: str) -> list[dict[str, Any]]:
    """SSE text as ``[{"event": name, "data": json}, ...]``, in order, nothing dropped."""
    events: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event: dict[str, Any] = {}
        data_lines = []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "data":
                data_lines.append(value)
            elif field in ("event", "id", "retry"):
                event[field] = value
        if not event and not data_lines:
            continue
        data = "\n".join(data_lines)
        try:
            event["data"] = json.loads(data)
        except json.JSONDecodeError:
            event["data_text"] = data
        events.append(event)
    return events


def render_sse(events: list[dict[str, Any]]) -> str:
    parts = []
    for event in events:
        lines = [f"{field}: {event[field]}" for field in ("event", "id", "retry") if field in event]
        if "data" in event:
            data = json.dumps(event["data"], separators=(",", ":"), ensure_ascii=False)
        else:
            data = str(event.get("data_text", ""))
        lines.extend(f"data: {line}" for line in data.split("\n"))
        parts.append("\n".join(lines) + "\n\n")
    return "".join(parts)


def _stream_failed(events: list[dict[str, Any]]) -> bool:
    for event in events:
        data = event.get("data")
        if event.get("event") == "error" and isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict) and error.get("type") in TRANSIENT_ERROR_TYPES:
                return True
    return False


def store_response(response: httpx2.Response, seed: str) -> dict[str, Any] | None:
    """The stored form of a live response (already read), or None if it is transient."""
    return store_response_with_ids(response, seed)[0]


def store_response_with_ids(
    response: httpx2.Response, seed: str
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """``store_response``, and the map from each stored id to the live one it replaced
    (the ids the caller gets while recording)."""
    if is_transient(response.status_code):
        return None, {}
    content_type = response.headers.get("content-type", "")
    stored: dict[str, Any] = {"status": response.status_code}
    stabilize, stored_to_live = stabilizer(seed)
    if content_type.startswith(_SSE):
        events = parse_sse(response.text)
        if _stream_failed(events):
            return None, {}
        # Joined before dehydrating: a path split across pieces is then seen whole.
        stored["events"] = join_pieces(stabilize(events), dehydrate)
    elif "json" in content_type:
        stored["body"] = stabilize(json.loads(response.content or b"null"))
    elif (lines := _json_lines(response.content)) is not None:
        # Batch results: one JSON object per line. Kept as objects, so the ids in them
        # are stabilized like any answer's, and a review diff is readable.
        stored["jsonl"] = stabilize(lines)
    else:
        try:
            stored["text"] = response.content.decode("utf-8")
        except UnicodeDecodeError:
            stored["base64"] = base64.b64encode(response.content).decode("ascii")
    headers = {h: response.headers[h] for h in _KEPT_HEADERS if h in response.headers}
    if response.is_success and "request-id" in headers:
        # A success's request id differs on every call; an error's is what you would
        # quote to Anthropic, and the caller's exception carries it: keep that one.
        headers["request-id"] = RECORDED_REQUEST_ID
    stored["headers"] = headers
    dehydrated: dict[str, Any] = dehydrate_json(stored)
    return dehydrated, stored_to_live


def _json_lines(content: bytes) -> list[Any] | None:
    """The objects of a JSON Lines body, or None if it is anything else."""
    try:
        lines = [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return lines if lines and all(isinstance(line, dict) for line in lines) else None


def _render(stored: dict[str, Any]) -> str | bytes:
    if "events" in stored:
        return render_sse(stored["events"])
    if "jsonl" in stored:
        return "".join(
            json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"
            for line in stored["jsonl"]
        )
    if "body" in stored:
        return json.dumps(stored["body"], separators=(",", ":"), ensure_ascii=False)
    if "base64" in stored:
        return base64.b64decode(stored["base64"])
    return str(stored.get("text", ""))


def rebuild_response(
    stored: dict[str, Any],
    request: httpx2.Request,
    *,
    fixture_stem: str = "",
    live_ids: dict[str, str] | None = None,
) -> httpx2.Response:
    """A fresh response (of the request's own library) for a stored one: hydrated,
    with the ids the caller gets (see ``_core.ids``); ``live_ids`` (stored -> live id) when
    the answer was just recorded, so that later recordings can quote the live ones.

    Works on the serialized text: one ``json.dumps``, a substring check for
    placeholders (most answers have none), one regex for the ids.
    """
    content = _render(stored)
    if isinstance(content, str) and any(token in content for token in placeholders()):
        stored = hydrate_json(stored)
        content = _render(stored)
    if "events" in stored and has_joined_pieces(stored["events"]):
        # Split after hydrating: a placeholder split across pieces would not be seen.
        content = render_sse(split_pieces(stored["events"]))
    if isinstance(content, str):
        content = give_ids_text(content, fixture_stem, live_ids).encode("utf-8")
    headers = dict(stored.get("headers") or {})
    if headers.get("request-id") == RECORDED_REQUEST_ID:
        headers["request-id"] = fresh_request_id()
    response: httpx2.Response = library_of(request).Response(
        int(stored["status"]), headers=headers, content=content, request=request
    )
    return response


def usage_of(stored: dict[str, Any]) -> list[dict[str, Any]]:
    if "events" in stored:
        return usage_entries([e.get("data") for e in stored["events"]])
    if "jsonl" in stored:  # batch results: each succeeded request's message, at batch rates
        messages = [
            line["result"].get("message")
            for line in stored["jsonl"]
            if isinstance(line, dict) and isinstance(line.get("result"), dict)
        ]
        return [{**entry, "batch": True} for entry in usage_entries(messages)]
    return usage_entries(stored.get("body"))


def passthrough(response: httpx2.Response, request: httpx2.Request) -> httpx2.Response:
    """A transient live answer handed back to the SDK (which retries it), unsaved.
    The body was decoded when read, so the encoding headers must go."""
    headers = [
        (k, v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    passed: httpx2.Response = library_of(request).Response(
        response.status_code, headers=headers, content=response.content, request=request
    )
    return passed
