"""The answer side of an HTTP exchange: a live answer into its stored form, and a stored
form back into a response of the request's own HTTP library.

A JSON answer is stored parsed; an SSE answer as the list of its events, one object
each; an AWS event stream (Bedrock) as the list of its frames, each chunk's event
parsed and its per-call values (random padding, latency figures) dropped; JSON Lines
(batch results) as a list of objects; anything else as text or base64. On replay
the bytes are rebuilt and parsed by the SDK itself, so replay goes through exactly
the code a live answer goes through. Ids are given out as ``_core.ids`` says. Which
answers are never stored (a 401, a 529, a stream cut short, a Bedrock throttling
frame, a gateway's HTML page) is ``_core.storable``'s to say, on the stored form made
here.
"""

from __future__ import annotations

import base64
import io
import json
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .._core.aws_eventstream import CONTENT_TYPE as _EVENT_STREAM
from .._core.aws_eventstream import HeaderValue, decode_frames, encode_frames
from .._core.httplib import library_of
from .._core.ids import (
    IdPieces,
    IdVocabulary,
    give_ids_bytes,
    give_ids_pieces,
    ids_giver,
    stabilizer,
)
from .._core.json_pieces import Unusual, write_json
from .._core.providers import provider_named
from .._core.storable import answer_refusal
from .._ledger.cost import usage_entries
from ..dehydrate import dehydrate, dehydrate_json, hydrate_json, placeholders
from .loaded_response import loaded_response
from .sdk_codec import RECORDED_REQUEST_ID, fresh_request_id
from .stream_pieces import has_joined_pieces, join_pieces, split_pieces

if TYPE_CHECKING:  # at run time a response may be httpx2's or httpx's (anthropic 0.x)
    import httpx2

__all__ = [
    "AnswerHead",
    "head_of",
    "parse_frames",
    "parse_sse",
    "passthrough",
    "rebuild_large_response",
    "rebuild_response",
    "render_frames",
    "render_sse",
    "rendered_answer",
    "response_from_head",
    "response_of",
    "store_response",
    "store_response_with_ids",
    "usage_of",
]

#: Response headers worth keeping; every other one is volatile or re-derived.
_KEPT_HEADERS: Final = ("content-type", "request-id")
#: The headers that carry a request id: Anthropic's, and OpenAI's (kept for its answers).
_REQUEST_ID_HEADERS: Final = ("request-id", "x-request-id")
_SSE: Final = "text/event-stream"
#: Figures Bedrock adds to ``message_stop`` that differ on every call.
_PER_CALL_METRICS: Final = ("invocationLatency", "firstByteLatency")


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


def store_response(response: httpx2.Response, seed: str) -> dict[str, Any] | None:
    """The stored form of a live response (already read), or None if it is one that is
    never stored (see ``_core.storable``)."""
    stored = store_response_with_ids(response, seed)[0]
    return None if answer_refusal(stored) else stored


def store_response_with_ids(
    response: httpx2.Response, seed: str, vocabulary: IdVocabulary | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The stored form of a live response (already read), whatever it is (whether to
    keep it is ``_core.storable.answer_refusal``'s call), and the map from each stored
    id to the live one it replaced (the ids the caller gets while recording).
    ``vocabulary``: the ids of another provider's answers (Anthropic's by default)."""
    content_type = response.headers.get("content-type", "")
    stored: dict[str, Any] = {"status": response.status_code}
    stabilize, stored_to_live = stabilizer(seed, vocabulary=vocabulary)
    if content_type.startswith(_SSE):
        # Joined before dehydrating: a path split across pieces is then seen whole.
        stored["events"] = join_pieces(stabilize(parse_sse(response.text)), dehydrate)
    elif (
        content_type.startswith(_EVENT_STREAM)
        and (frames := _frames_or_none(response.content)) is not None
    ):
        stored["frames"] = stabilize(frames)
    elif "json" in content_type and (body := _json_or_none(response.content)) is not None:
        stored["body"] = stabilize(body[0])
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
    if vocabulary is not None and "x-request-id" in response.headers:
        # OpenAI's request id (its SDK's ``_request_id``, and its exceptions').
        headers["x-request-id"] = response.headers["x-request-id"]
    for name in _REQUEST_ID_HEADERS:
        if response.is_success and name in headers:
            # A success's request id differs on every call; an error's is what you would
            # quote to the provider, and the caller's exception carries it: keep that one.
            headers[name] = RECORDED_REQUEST_ID
    stored["headers"] = headers
    dehydrated: dict[str, Any] = dehydrate_json(stored)
    return dehydrated, stored_to_live


def _json_or_none(content: bytes) -> tuple[Any] | None:
    """``(value,)`` of a JSON body (null when empty), or None if it does not parse: a
    body cut short is kept as text, for ``storable`` to refuse by its content type."""
    try:
        return (json.loads(content or b"null"),)
    except ValueError:  # UnicodeDecodeError is one too
        return None


def parse_frames(content: bytes) -> list[dict[str, Any]]:
    """An AWS event stream as ``[{"headers": {...}, "chunk": event}, ...]``: a chunk's
    base64 ``bytes`` decoded to its JSON event, its ``p`` padding dropped; any other
    frame (an exception) with its payload as ``body`` (JSON) or ``text``."""
    frames: list[dict[str, Any]] = []
    for headers, payload in decode_frames(content):
        frame: dict[str, Any] = {"headers": {k: _header_json(v) for k, v in headers.items()}}
        try:
            body = json.loads(payload) if payload else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
            frame["text"] = payload.decode("utf-8", "replace")
        if headers.get(":event-type") == "chunk" and isinstance(body, dict) and "bytes" in body:
            frame["chunk"] = _without_per_call_metrics(json.loads(base64.b64decode(body["bytes"])))
        elif "text" not in frame:
            frame["body"] = body
        frames.append(frame)
    return frames


def _header_json(value: HeaderValue) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    return value


def _header_value(value: Any) -> HeaderValue:
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    header: HeaderValue = value
    return header


def _without_per_call_metrics(event: Any) -> Any:
    metrics = event.get("amazon-bedrock-invocationMetrics") if isinstance(event, dict) else None
    if isinstance(metrics, dict):
        kept = {k: v for k, v in metrics.items() if k not in _PER_CALL_METRICS}
        event = {**event, "amazon-bedrock-invocationMetrics": kept}
    return event


def render_frames(frames: list[dict[str, Any]]) -> bytes:
    """The stored frames framed again, for the SDK's own event-stream decoder."""
    framed = []
    for frame in frames:
        headers = {k: _header_value(v) for k, v in frame.get("headers", {}).items()}
        if "chunk" in frame:
            event = json.dumps(frame["chunk"], separators=(",", ":"), ensure_ascii=False)
            wrapped = {"bytes": base64.b64encode(event.encode("utf-8")).decode("ascii")}
            payload = json.dumps(wrapped, separators=(",", ":")).encode("utf-8")
        elif "text" in frame:
            payload = str(frame["text"]).encode("utf-8")
        elif frame.get("body") is None:
            payload = b""
        else:
            payload = json.dumps(frame["body"], separators=(",", ":")).encode("utf-8")
        framed.append((headers, payload))
    return encode_frames(framed)


def _frames_or_none(content: bytes) -> list[dict[str, Any]] | None:
    """The frames of an AWS event stream, or None if one is cut short or fails its CRC:
    the body is then kept as bytes, for ``storable`` to refuse by its content type."""
    try:
        return parse_frames(content)
    except ValueError:
        return None


def _json_lines(content: bytes) -> list[Any] | None:
    """The objects of a JSON Lines body, or None if it is anything else."""
    try:
        lines = [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return lines if lines and all(isinstance(line, dict) for line in lines) else None


def _render(stored: dict[str, Any]) -> str | bytes:
    if "frames" in stored:  # framed after the ids are given out (see rebuild_response)
        return json.dumps(stored["frames"], separators=(",", ":"), ensure_ascii=False)
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
    # Not bound to a name here: ``response_of`` drops the rendered text as soon as its
    # bytes are made.
    return response_of(
        stored, rendered_answer(stored)[0], request, fixture_stem=fixture_stem, live_ids=live_ids
    )


def rebuild_large_response(
    stored: dict[str, Any],
    request: httpx2.Request,
    *,
    fixture_stem: str = "",
    live_ids: dict[str, str] | None = None,
) -> httpx2.Response:
    """``rebuild_response``, the body written straight to bytes: a JSON answer piece by
    piece, a stream event by event, each with its ids given as it goes. The same bytes
    and ids; what it holds besides ``stored`` is the bytes alone, not also the rendered
    text (for a large answer: one just recorded, or a file too large to be kept)."""
    if "frames" in stored or "jsonl" in stored or ("body" not in stored and "events" not in stored):
        return rebuild_response(stored, request, fixture_stem=fixture_stem, live_ids=live_ids)
    out = io.BytesIO()
    give = ids_giver(fixture_stem, live_ids)

    def sink(text: str) -> None:
        out.write(text.encode("utf-8"))

    # Hydrated whatever the text holds: without a placeholder that changes nothing.
    if "events" in stored:
        events: list[Any] = stored["events"]
        if has_joined_pieces(events):  # split after hydrating, as rendered_answer does
            events = split_pieces(hydrate_json(events))
        tokens = placeholders()
        for event in events:
            text = render_sse([event])
            if any(token in text for token in tokens):  # else hydrating changes nothing
                text = render_sse([hydrate_json(event)])
            sink(give(text))
    else:
        body = hydrate_json(stored["body"])
        try:
            write_json(body, sink, on_string=give)
        except (Unusual, ValueError, RecursionError):  # what json.dumps alone writes
            out = io.BytesIO()
            sink(give(json.dumps(body, separators=(",", ":"), ensure_ascii=False)))
    return response_of(stored, out.getvalue(), request)


def rendered_answer(stored: dict[str, Any]) -> tuple[str | bytes, bool]:
    """The body of a stored answer as the wire had it, before the ids are given out,
    and whether it was hydrated (then it holds this machine's paths: not to be kept
    beyond this call). Otherwise it depends on ``stored`` alone, and may be kept for as
    long as ``stored`` is unchanged."""
    content = _render(stored)
    hydrated = False
    if isinstance(content, str) and any(token in content for token in placeholders()):
        stored = hydrate_json(stored)
        content = _render(stored)
        hydrated = True
    if "events" in stored and has_joined_pieces(stored["events"]):
        # Split after hydrating: a placeholder split across pieces would not be seen.
        content = render_sse(split_pieces(stored["events"]))
    return content, hydrated


def response_of(
    stored: dict[str, Any],
    content: str | bytes | IdPieces,
    request: httpx2.Request,
    *,
    fixture_stem: str = "",
    live_ids: dict[str, str] | None = None,
) -> httpx2.Response:
    """The response for ``stored`` whose body ``rendered_answer`` gave as ``content``
    (or its text cut at the ids by ``split_at_ids``: a replay then only joins bytes)."""
    if isinstance(content, IdPieces):
        content = give_ids_pieces(content, fixture_stem)
    elif isinstance(content, str):
        # Written as bytes piece by piece: the rendered text and its bytes are all a
        # large answer costs here, not also a second text with the ids in it.
        content = give_ids_bytes(content, fixture_stem, live_ids)
    return _response(head_of(stored), content, request)


class AnswerHead(NamedTuple):
    """What ``response_of`` reads of a stored answer besides its body, made ready once
    for answers replayed again and again (``head_of``): its headers already as the
    HTTP library holds them, the request id's place among them (given afresh on each
    replay), and the ``Content-Length`` the library would add (added here, with the
    others: the library's own look-up of a header not there costs more)."""

    status: int
    before: tuple[tuple[bytes, bytes], ...]
    after: tuple[tuple[bytes, bytes], ...]
    #: The name of the header to give a fresh request id in, or b"" for none.
    fresh_request_id: bytes
    framed: bool
    sized: bool
    #: No ``Content-Encoding``: the body can be handed over as it is, unread
    #: (``loaded_response``). A stored answer never has one; a hand-edited fixture may,
    #: and fails in the library's decoder as it always did.
    plain: bool = True


def head_of(stored: dict[str, Any]) -> AnswerHead:
    """``stored``'s ``AnswerHead``; raises what ``response_of`` would raise on it."""
    before: list[tuple[bytes, bytes]] = []
    after: list[tuple[bytes, bytes]] = []
    fresh = b""
    for name, value in (stored.get("headers") or {}).items():
        if name in _REQUEST_ID_HEADERS and value == RECORDED_REQUEST_ID:
            fresh = name.encode("ascii")
            continue
        (after if fresh else before).append((name.encode("ascii"), value.encode("ascii")))
    names = [name.lower() for name, _ in before + after]
    sized = b"content-length" not in names and b"transfer-encoding" not in names
    return AnswerHead(
        int(stored["status"]),
        tuple(before),
        tuple(after),
        fresh,
        "frames" in stored,
        sized,
        b"content-encoding" not in names,
    )


def response_from_head(
    head: AnswerHead, content: str | bytes | IdPieces, request: httpx2.Request, fixture_stem: str
) -> httpx2.Response:
    """``response_of`` for an answer whose head ``head_of`` made ready."""
    if isinstance(content, IdPieces):
        content = give_ids_pieces(content, fixture_stem)
    elif isinstance(content, str):  # hydrated: rendered for this replay alone
        content = give_ids_bytes(content, fixture_stem)
    return _response(head, content, request)


def _response(head: AnswerHead, content: bytes, request: httpx2.Request) -> httpx2.Response:
    if head.framed:
        content = render_frames(json.loads(content))
    headers = list(head.before)
    if head.fresh_request_id:
        headers.append((head.fresh_request_id, fresh_request_id().encode("ascii")))
        headers.extend(head.after)
    if head.sized:
        headers.append((b"Content-Length", b"%d" % len(content)))
    return loaded_response(
        library_of(request), head.status, headers, content, request, encoded=not head.plain
    )


def usage_of(stored: dict[str, Any], request: Any = None) -> list[dict[str, Any]]:
    """The usage entries of a stored answer to ``request`` (its stored form: another
    provider's answer is read by that provider's rule)."""
    provider = provider_named(request.get("provider")) if isinstance(request, dict) else None
    if provider is not None:
        return provider.usage(stored)
    if "frames" in stored:
        return usage_entries([frame.get("chunk") for frame in stored["frames"]])
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
    """A live answer handed back to the SDK unsaved (one never stored: the SDK retries
    a transient one, and raises or returns the others as it would without vcr_kit).
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
