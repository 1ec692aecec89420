"""A loopback HTTP server that speaks the Anthropic Messages API wire format.

Tests point the real ``anthropic`` SDK at it (``base_url=server.url``) to record
real-looking traffic without touching the network.  Answers are deterministic in
content (same request -> same blocks, stop reason and usage) but, like the real
API, every id (message, tool use, request) is freshly random.

Magic markers in the text of the last message steer the answer:

``[[error:400]]`` / ``[[error:401]]`` / ``[[error:404]]`` (and a few more codes)
    a JSON error with that status.
``[[overloaded-once]]``
    529 the first time a given body is seen, a normal answer afterwards.
``[[overloaded-always]]``
    always 529.
``[[stream-error]]`` / ``[[stream-error:TYPE]]``
    (streaming only) a 200 stream that breaks with an ``error`` event (of ``TYPE``,
    ``overloaded_error`` by default).
``[[stream-cut]]``
    (streaming only) a 200 stream whose body ends cleanly in the middle of an event,
    as a gateway that gives up would send it.
``[[stream-drop]]``
    (streaming only) like ``[[stream-cut]]``, but the connection is closed there,
    without the chunked body's end: the client sees the body broken off.
``[[stream-no-stop]]``
    (streaming only) a 200 stream that ends cleanly after a whole event, before
    ``message_delta`` and ``message_stop``.
``[[html]]``
    a 200 ``text/html`` page, as a gateway or a captive portal answers.
``[[truncated-json]]``
    a 200 ``application/json`` answer cut in the middle of the JSON.
``[[secret]]``
    the answer contains an API-key-shaped string.
``[[cache]]``
    fixed usage numbers with prompt-cache fields filled in.
``[[slow]]``
    the answer is delayed by 0.3 s.
``[[slow-stream]]``
    (streaming only) 0.05 s between events; ``stream_finished[text]`` keeps the
    ``time.monotonic()`` at which the last byte was written.
``[[tool:NAME {json}]]``
    (with tools) a ``tool_use`` of tool NAME with that input: Claude Code runs it.
``[[drift:reword]]`` / ``[[drift:field]]`` / ``[[drift:tool]]`` / ``[[drift:truncate]]`` /
``[[drift:event]]`` / ``[[drift:count]]``
    ignored, until the API "moves": while ``LoopbackServer.drifting`` is set, or for a
    request whose model is in ``LoopbackServer.drift_models``, the answer has other
    wording; a new envelope field; a tool call with another input; ``max_tokens``
    truncation; a ``ping`` event renamed; another token count; (``[[drift:secret]]``)
    an API-key-shaped string in the text (see ``_drifted``).

A key in ``LoopbackServer.refused_keys`` gets a 401 ``authentication_error``, as a
revoked or mistyped key does.

Claude Code wraps context in ``<system-reminder>`` text blocks and appends
``system``-role messages; the answer ignores both, as it would a real user's.

Run as a script (``python tests/support/servers/loopback_server.py [--log FILE]``)
it serves in the foreground and prints ``LISTENING <url>`` once ready.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import secrets
import signal
import socket
import string
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

__all__ = ["LoggedRequest", "LoopbackServer", "main", "message_for", "stream_events_for"]

JSONObject = dict[str, Any]

_ALNUM = string.ascii_letters + string.digits
_SLOW_SECONDS = 0.3
_TEXT_PIECE = 8
_JSON_PIECE = 10
_SECRET_TEXT = "Echo: here is a key sk-ant-api03-" + "A" * 36

# Status code -> the `error.type` the real API uses for it.
_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "api_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_STREAM_ERROR_TRIGGER = re.compile(r"\[\[stream-error(?::(\w+))?\]\]")
_GATEWAY_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
    "<body><h1>Bad Gateway</h1><p>The upstream did not answer in time.</p></body></html>\n"
)
_BATCH_PATH = re.compile(r"/v1/messages/batches/([A-Za-z0-9_]+)(/results)?")
_ERROR_TRIGGER = re.compile(r"\[\[error:(\d{3})\]\]")
_WEATHER = re.compile(r"\bweather\b", re.IGNORECASE)
_TOOL_TRIGGER = re.compile(r"\[\[tool:([\w-]+) (\{.*?\})\]\]")
_SLOW_STREAM_SECONDS = 0.05
_DRIFT_TRIGGER = re.compile(r"\[\[drift:(\w+)\]\]")
_LOCATION = re.compile(r"\bin ([^\W\d_][\w'-]*)")

# (id, display name, release date) of the models `GET /v1/models` lists.
_MODELS: list[tuple[str, str, str]] = [
    ("claude-opus-4-7", "Claude Opus 4.7", "2026-01-01T00:00:00Z"),
    ("claude-sonnet-4-6", "Claude Sonnet 4.6", "2025-11-01T00:00:00Z"),
    ("claude-haiku-4-5", "Claude Haiku 4.5", "2025-10-01T00:00:00Z"),
]


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #


def _random_alnum(length: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(length))


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _canonical_bytes(value: object) -> bytes:
    """Key order and whitespace must not change token counts, so sort and compact."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def _token_estimate(value: object) -> int:
    return max(1, len(_canonical_bytes(value)) // 4)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _blocks_text(content: object) -> str:
    """Text of a message/tool_result ``content``: a string, or the text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and not str(block.get("text", "")).startswith("<system-reminder>")
    )


def _tool_results(content: object) -> list[JSONObject]:
    if not isinstance(content, list):
        return []
    return [
        block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


# --------------------------------------------------------------------------- #
# Request log
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server received it."""

    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


# --------------------------------------------------------------------------- #
# Deciding the answer (pure functions of the request body)
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class _Reply:
    content: list[JSONObject]
    stop_reason: str
    usage: JSONObject


def _last_message(body: JSONObject) -> JSONObject:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return {}
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") != "system":
            return cast(JSONObject, message)
    return {}


def _trigger_text(body: JSONObject) -> str:
    return _blocks_text(_last_message(body).get("content"))


def _thinking_requested(body: JSONObject) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _thinking_block(text: str) -> JSONObject:
    # The signature only has to look opaque and be stable for a given prompt.
    signature = "sig_" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    thinking = f"Let me think about: {text[:40]}"
    return {"type": "thinking", "thinking": thinking, "signature": signature}


def _tool_use_block(body: JSONObject, text: str) -> JSONObject:
    tools = body.get("tools")
    first = tools[0] if isinstance(tools, list) and tools and isinstance(tools[0], dict) else {}
    match = _LOCATION.search(text)
    return {
        "type": "tool_use",
        "id": "toolu_01" + _random_alnum(22),
        "name": str(first.get("name", "tool")),
        "input": {"location": match.group(1) if match else "Paris", "unit": "celsius"},
    }


def _answer_blocks(body: JSONObject, text: str) -> tuple[list[JSONObject], str]:
    """The non-thinking part of the answer, and its stop reason."""
    results = _tool_results(_last_message(body).get("content"))
    if results:
        said = " ".join(_blocks_text(result.get("content")) for result in results)
        return [{"type": "text", "text": f"The tool said: {said}"}], "end_turn"
    asked = _TOOL_TRIGGER.search(text)
    if body.get("tools") and asked:
        call = {
            "type": "tool_use",
            "id": "toolu_01" + _random_alnum(22),
            "name": asked.group(1),
            "input": json.loads(asked.group(2)),
        }
        return [{"type": "text", "text": "Running it."}, call], "tool_use"
    if body.get("tools") and _WEATHER.search(text):
        return [{"type": "text", "text": "Let me check."}, _tool_use_block(body, text)], "tool_use"
    answer = _SECRET_TEXT if "[[secret]]" in text else f"Echo: {text}"
    return [{"type": "text", "text": answer}], "end_turn"


def _output_tokens(content: list[JSONObject]) -> int:
    total = 0
    for block in content:
        if block["type"] == "tool_use":
            total += 10
        else:
            total += len(str(block.get("text", block.get("thinking", ""))).split())
    return total


def _usage(body: JSONObject, text: str, output_tokens: int) -> JSONObject:
    if "[[cache]]" in text:
        input_tokens, created, read, five_minutes, one_hour = 1200, 3000, 5000, 1000, 2000
    else:
        # `stream` is left out so a streamed answer reports the same usage as a plain one.
        canonical = {key: value for key, value in body.items() if key != "stream"}
        input_tokens, created, read, five_minutes, one_hour = _token_estimate(canonical), 0, 0, 0, 0
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": five_minutes,
            "ephemeral_1h_input_tokens": one_hour,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def _decide_reply(body: JSONObject) -> _Reply:
    text = _trigger_text(body)
    content = [_thinking_block(text)] if _thinking_requested(body) else []
    blocks, stop_reason = _answer_blocks(body, text)
    content.extend(blocks)
    return _Reply(content, stop_reason, _usage(body, text, _output_tokens(content)))


def _message_json(body: JSONObject, reply: _Reply) -> JSONObject:
    return {
        "id": "msg_01" + _random_alnum(22),
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": reply.content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": reply.usage,
    }


# --------------------------------------------------------------------------- #
# Server-sent events, in the order the real API sends them
# --------------------------------------------------------------------------- #

_SSE = tuple[str, JSONObject]


def _empty_block(block: JSONObject) -> JSONObject:
    """How a block looks in ``content_block_start``: its deltas fill it in later."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {**block, "input": {}}


def _block_deltas(block: JSONObject) -> Iterator[JSONObject]:
    if block["type"] == "text":
        for piece in _pieces(block["text"], _TEXT_PIECE):
            yield {"type": "text_delta", "text": piece}
    elif block["type"] == "thinking":
        for piece in _pieces(block["thinking"], _TEXT_PIECE):
            yield {"type": "thinking_delta", "thinking": piece}
        yield {"type": "signature_delta", "signature": block["signature"]}
    else:
        for piece in _pieces(_compact(block["input"]), _JSON_PIECE):
            yield {"type": "input_json_delta", "partial_json": piece}


def _event(name: str, **fields: Any) -> _SSE:
    """An SSE event whose data repeats its name as ``type``, as every API event does."""
    return name, {"type": name, **fields}


def _message_start(message: JSONObject) -> _SSE:
    # The opening snapshot has no content yet and counts one output token, as the API does.
    usage = {**message["usage"], "output_tokens": 1}
    start = {**message, "content": [], "stop_reason": None, "usage": usage}
    return _event("message_start", message=start)


def _message_delta(message: JSONObject, with_cache: bool) -> _SSE:
    usage = message["usage"]
    delta_usage: JSONObject = {"output_tokens": usage["output_tokens"]}
    if with_cache:
        # Cumulative totals may be repeated here, but never the `cache_creation` breakdown.
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            delta_usage[key] = usage[key]
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    return _event("message_delta", delta=delta, usage=delta_usage)


def _stream_events(message: JSONObject, with_cache: bool) -> Iterator[_SSE]:
    yield _message_start(message)
    yield _event("ping")
    for index, block in enumerate(message["content"]):
        yield _event("content_block_start", index=index, content_block=_empty_block(block))
        for delta in _block_deltas(block):
            yield _event("content_block_delta", index=index, delta=delta)
        yield _event("content_block_stop", index=index)
    yield _message_delta(message, with_cache)
    yield _event("message_stop")


def _broken_stream_events(message: JSONObject, error_type: str) -> Iterator[_SSE]:
    yield _message_start(message)
    message = "Overloaded" if error_type == "overloaded_error" else f"Stream broke: {error_type}"
    yield _event("error", error={"type": error_type, "message": message})


def _encode_event(name: str, data: JSONObject) -> bytes:
    return f"event: {name}\ndata: {_compact(data)}\n\n".encode()


# --------------------------------------------------------------------------- #
# Drift: the same request answered as a moved API (or another model) would
# --------------------------------------------------------------------------- #


def _drifted(message: JSONObject, drifts: set[str]) -> JSONObject:
    """``message`` changed as each of ``drifts`` (the ``[[drift:...]]`` markers) asks."""
    content = [dict(block) for block in message["content"]]
    message = {**message, "content": content}
    if "reword" in drifts:
        for block in content:
            if block["type"] == "text":
                block["text"] = block["text"].replace("Echo: ", "You said: ", 1)
    if "secret" in drifts:
        for block in content:
            if block["type"] == "text":
                block["text"] = _SECRET_TEXT
    if "field" in drifts:  # an envelope field the recorded answers never had
        message["context_management"] = {"applied_edits": []}
    if "tool" in drifts:
        for block in content:
            if block["type"] == "tool_use":
                block["input"] = {"city": "Paris", "days": 3}
    if "truncate" in drifts:
        for block in content:
            if block["type"] == "text":
                block["text"] = block["text"][: max(1, len(block["text"]) // 2)]
        message["stop_reason"] = "max_tokens"
    return message


def _drifted_events(events: Iterator[_SSE], drifts: set[str]) -> Iterator[_SSE]:
    for name, data in events:
        if "event" in drifts and name == "ping":
            yield "heartbeat", {**data, "type": "heartbeat"}
        else:
            yield name, data


# --------------------------------------------------------------------------- #
# HTTP plumbing
# --------------------------------------------------------------------------- #


def message_for(body: JSONObject) -> JSONObject:
    """The message this server answers ``body`` with (fresh ids): for the servers of the
    cloud platforms' wire formats (``tests/support/servers/cloud_server.py``)."""
    return _message_json(body, _decide_reply(body))


def stream_events_for(message: JSONObject) -> list[tuple[str, JSONObject]]:
    """The stream events (name, data) that deliver ``message``."""
    return list(_stream_events(message, with_cache=False))


class _ApiError(Exception):
    """Raised while handling a request to answer with an API error body."""

    def __init__(self, status: int, message: str, error_type: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or _ERROR_TYPES.get(status, "api_error")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: LoopbackServer) -> None:
        self.owner = owner
        self.open_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-answer is normal in tests; anything else is a bug worth printing.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def close_open_connections(self) -> None:
        """Unblock handler threads idling on keep-alive connections, so stop() really stops."""
        with self.connections_lock:
            connections = list(self.open_connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the other side
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked responses
    server_version = "loopback-anthropic/1.0"
    server: _HTTPServer

    # -- connection bookkeeping ------------------------------------------- #

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.open_connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.open_connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet; the owner's log records everything

    # -- dispatch ---------------------------------------------------------- #

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        request = self._read_request()
        self.server.owner.record(request)
        self.request_id = "req_" + _random_alnum(24)
        self.server.owner.entered()
        try:
            self._route(request)
        except _ApiError as error:
            self._send_error_json(error)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            self.server.owner.left()

    def _read_request(self) -> LoggedRequest:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or (length == 0 and "Transfer-Encoding" in self.headers):
            # Only Content-Length bodies are understood; without a usable one we cannot
            # find where the next request on this connection starts, so answer and close.
            self.close_connection = True
            length = 0
        body = self.rfile.read(length) if length else b""
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        parts = urlsplit(self.path)
        return LoggedRequest(self.command, parts.path, parts.query, headers, body)

    def _route(self, request: LoggedRequest) -> None:
        if not _has_credentials(request.headers):
            raise _ApiError(401, "x-api-key header is required")
        if _key_of(request.headers) in self.server.owner.refused_keys:
            raise _ApiError(401, "invalid x-api-key")
        route = (request.method, request.path.rstrip("/"))
        batch = _BATCH_PATH.fullmatch(request.path.rstrip("/"))
        if route == ("POST", "/v1/messages"):
            self._messages(request)
        elif route == ("POST", "/v1/messages/batches"):
            self._create_batch(request)
        elif batch is not None and request.method == "GET":
            self._batch(batch.group(1), results=bool(batch.group(2)))
        elif route == ("POST", "/v1/messages/count_tokens"):
            self._count_tokens(request)
        elif route == ("GET", "/v1/models"):
            self._send_json(200, _models_page())
        else:
            raise _ApiError(404, f"Not found: {request.method} {request.path}")

    # -- endpoints --------------------------------------------------------- #

    def _messages(self, request: LoggedRequest) -> None:
        body = self._checked_body(request, need_max_tokens=True)
        self._check_thread(body)
        if "[[html]]" in _trigger_text(body):
            self._send_bytes(200, "text/html; charset=utf-8", _GATEWAY_PAGE.encode())
        elif body.get("stream") is True:
            self._stream_message(body)
        elif "[[truncated-json]]" in _trigger_text(body):
            whole = _compact(_message_json(body, _decide_reply(body))).encode("utf-8")
            self._send_bytes(200, "application/json", whole[: len(whole) // 2])
        else:
            message = self.server.owner.drift(body, _message_json(body, _decide_reply(body)))
            self.server.owner.issued(message["id"])
            self._send_json(200, message)

    def _check_thread(self, body: JSONObject) -> None:
        """Like the real API, a thread's next turn must name a message this server gave:
        the history lives here, so a made-up id is an error."""
        thread = body.get("thread")
        if isinstance(thread, dict) and thread.get("type") == "continue":
            previous = thread.get("previous_message_id")
            if not self.server.owner.was_issued(str(previous)):
                raise _ApiError(404, f"thread message {previous} not found")

    def _create_batch(self, request: LoggedRequest) -> None:
        try:
            body = request.json()
        except ValueError:
            raise _ApiError(400, "Request body is not valid JSON") from None
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise _ApiError(400, "requests: a non-empty list is required")
        batch_id = "msgbatch_01" + _random_alnum(22)
        results = []
        for item in requests:
            params = item.get("params") or {}
            message = self.server.owner.drift(params, _message_json(params, _decide_reply(params)))
            result = {"type": "succeeded", "message": message}
            results.append({"custom_id": item.get("custom_id"), "result": result})
        self.server.owner.batches[batch_id] = results
        self._send_json(200, self._batch_json(batch_id))

    def _batch_json(self, batch_id: str) -> JSONObject:
        count = len(self.server.owner.batches[batch_id])
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended",
            "request_counts": {
                "processing": 0,
                "succeeded": count,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-11-30T00:00:00Z",
            "ended_at": "2026-11-30T00:00:01Z",
            "expires_at": "2026-12-01T00:00:00Z",
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.server.owner.url}/v1/messages/batches/{batch_id}/results",
        }

    def _batch(self, batch_id: str, *, results: bool) -> None:
        if batch_id not in self.server.owner.batches:
            raise _ApiError(404, f"batch {batch_id} not found")
        if not results:
            self._send_json(200, self._batch_json(batch_id))
            return
        lines = "".join(_compact(r) + "\n" for r in self.server.owner.batches[batch_id])
        data = lines.encode("utf-8")
        self._start_response(200, "application/binary", None)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _count_tokens(self, request: LoggedRequest) -> None:
        body = self._checked_body(request, need_max_tokens=False)
        counted = {key: body[key] for key in ("messages", "system", "tools") if key in body}
        extra = 5 if "count" in self.server.owner.drifts_of(body) else 0
        self._send_json(200, {"input_tokens": _token_estimate(counted) + extra})

    def _stream_message(self, body: JSONObject) -> None:
        message = self.server.owner.drift(body, _message_json(body, _decide_reply(body)))
        self.server.owner.issued(message["id"])
        text = _trigger_text(body)
        broken = _STREAM_ERROR_TRIGGER.search(text)
        if broken:
            events = _broken_stream_events(message, broken.group(1) or "overloaded_error")
        else:
            events = _stream_events(message, with_cache="[[cache]]" in text)
        if "[[stream-no-stop]]" in text:
            events = (e for e in events if e[0] not in ("message_delta", "message_stop"))
        events = _drifted_events(events, self.server.owner.drifts_of(body))
        slow = "[[slow-stream]]" in text
        drop = "[[stream-drop]]" in text
        cut = drop or "[[stream-cut]]" in text
        self._send_sse(events, pause=_SLOW_STREAM_SECONDS if slow else 0.0, cut=cut, drop=drop)
        if slow:
            self.server.owner.stream_finished[text] = time.monotonic()

    def _checked_body(self, request: LoggedRequest, *, need_max_tokens: bool) -> JSONObject:
        """Parse and minimally validate a messages body, then apply its trigger markers."""
        try:
            body = request.json()
        except ValueError:
            raise _ApiError(400, "Request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise _ApiError(400, "Request body must be a JSON object")
        required: list[tuple[str, type]] = [("model", str), ("messages", list)]
        if need_max_tokens:
            required.append(("max_tokens", int))
        for field, kind in required:
            if not isinstance(body.get(field), kind):
                raise _ApiError(400, f"{field}: Field required")
        self.server.owner.apply_triggers(request.body, _trigger_text(body))
        return body

    # -- writing responses ------------------------------------------------- #

    def _start_response(
        self, status: int, content_type: str, extra: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("request-id", self.request_id)
        self.send_header("content-type", content_type)
        for name, value in (extra or {}).items():
            self.send_header(name, value)

    def _send_json(
        self, status: int, payload: JSONObject, extra: Mapping[str, str] | None = None
    ) -> None:
        data = _compact(payload).encode("utf-8")
        self._start_response(status, "application/json", extra)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_bytes(self, status: int, content_type: str, data: bytes) -> None:
        self._start_response(status, content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error_json(self, error: _ApiError) -> None:
        payload = {
            "type": "error",
            "error": {"type": error.error_type, "message": error.message},
            "request_id": self.request_id,
        }
        extra: dict[str, str] = {}
        if error.status == 529:
            # Tell the SDK to retry, and quickly, so tests stay fast.
            extra = {"x-should-retry": "true", "retry-after-ms": "10"}
        self._send_json(error.status, payload, extra)

    def _send_sse(
        self, events: Iterator[_SSE], pause: float = 0.0, cut: bool = False, drop: bool = False
    ) -> None:
        """The events, one per chunk; with ``cut``, the body ends (cleanly: the chunked
        framing is whole) halfway through the first text delta; with ``drop`` too, the
        connection closes there instead, before the chunked body's end."""
        self._start_response(200, "text/event-stream; charset=utf-8", {"cache-control": "no-cache"})
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for number, (name, data) in enumerate(events):
            if pause and number:
                time.sleep(pause)
            # One event per chunk, written straight to the socket, like a live stream.
            chunk = _encode_event(name, data)
            cutting = cut and name == "content_block_delta"
            if cutting:
                chunk = chunk[: len(chunk) // 2]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            if cutting:
                break
        if drop:
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _key_of(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return headers.get("x-api-key") or (token.strip() if scheme.lower() == "bearer" else "")


def _has_credentials(headers: Mapping[str, str]) -> bool:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return bool(headers.get("x-api-key")) or (scheme.lower() == "bearer" and bool(token.strip()))


def _models_page() -> JSONObject:
    # `lifecycle` is not optional in the SDK's ModelInfo, so the page must carry it.
    data: list[JSONObject] = [
        {
            "type": "model",
            "id": model_id,
            "display_name": name,
            "created_at": created,
            "lifecycle": "active",
        }
        for model_id, name, created in _MODELS
    ]
    return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


# --------------------------------------------------------------------------- #
# Public server object
# --------------------------------------------------------------------------- #


class LoopbackServer:
    """A fake Anthropic API on 127.0.0.1 with a random free port.

    Use as a context manager, or call :meth:`start` / :meth:`stop`.
    """

    url: str
    log: list[LoggedRequest]

    def __init__(self) -> None:
        self.log = []
        self._lock = threading.Lock()
        #: The batches created here: id -> the result of each request.
        self.batches: dict[str, list[JSONObject]] = {}
        self._issued: set[str] = set()
        self._seen_overloaded_bodies: set[bytes] = set()
        #: Keys answered with a 401, as the API answers a revoked or mistyped key.
        self.refused_keys: set[str] = set()
        self.stream_finished: dict[str, float] = {}
        #: The API has "moved": the ``[[drift:...]]`` markers take effect (for every
        #: request while set; for a request of a model in ``drift_models`` always).
        self.drifting = False
        self.drift_models: set[str] = set()
        #: Requests being answered now, and the most there were at once; with a
        #: ``meet`` barrier, each request waits there for as many others as it has
        #: parties: a client that sends fewer at once fails on its timeout.
        self.in_flight = 0
        self.most_in_flight = 0
        self.meet: threading.Barrier | None = None
        self._httpd = _HTTPServer(self)
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread: threading.Thread | None = None

    def issued(self, message_id: str) -> None:
        with self._lock:
            self._issued.add(message_id)

    def was_issued(self, message_id: str) -> bool:
        with self._lock:
            return message_id in self._issued

    def entered(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if self.meet is not None:
            self.meet.wait()

    def left(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def drifts_of(self, body: JSONObject) -> set[str]:
        """The ``[[drift:...]]`` markers that take effect for ``body``."""
        if not (self.drifting or body.get("model") in self.drift_models):
            return set()
        return set(_DRIFT_TRIGGER.findall(_trigger_text(body)))

    def drift(self, body: JSONObject, message: JSONObject) -> JSONObject:
        """``message``, the answer to ``body``, as the moved API answers it."""
        drifts = self.drifts_of(body)
        return _drifted(message, drifts) if drifts else message

    # -- lifecycle --------------------------------------------------------- #

    def start(self) -> LoopbackServer:
        # A short poll interval keeps stop() (which waits for the next poll) fast in tests.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"loopback-server {self.url}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.close_open_connections()
        self._httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- request log ------------------------------------------------------- #

    def record(self, request: LoggedRequest) -> None:
        """Called by the handler for every request, before it is answered."""
        with self._lock:
            self.log.append(request)

    def requests_to(self, path: str) -> list[LoggedRequest]:
        with self._lock:
            return [request for request in self.log if request.path == path]

    def reset_log(self) -> None:
        with self._lock:
            self.log.clear()

    # -- trigger markers --------------------------------------------------- #

    def apply_triggers(self, raw_body: bytes, text: str) -> None:
        """Delay or fail the request as its markers ask; return normally to answer it."""
        if "[[slow]]" in text:
            time.sleep(_SLOW_SECONDS)
        match = _ERROR_TRIGGER.search(text)
        if match and int(match.group(1)) in _ERROR_TYPES:
            raise _ApiError(int(match.group(1)), f"messages: trigger asked for a {match.group(1)}")
        if "[[overloaded-always]]" in text:
            raise _ApiError(529, "Overloaded")
        if "[[overloaded-once]]" in text and self._first_sight(raw_body):
            raise _ApiError(529, "Overloaded")

    def _first_sight(self, raw_body: bytes) -> bool:
        with self._lock:
            if raw_body in self._seen_overloaded_bodies:
                return False
            self._seen_overloaded_bodies.add(raw_body)
            return True


# --------------------------------------------------------------------------- #
# Command line
# --------------------------------------------------------------------------- #


class _FileLoggingServer(LoopbackServer):
    """Also appends one JSON line per request to a file, flushed at once for a watching parent."""

    def __init__(self, log_path: str) -> None:
        super().__init__()
        self._log_path = log_path
        self._file_lock = threading.Lock()

    def record(self, request: LoggedRequest) -> None:
        super().record(request)
        body = request.body.decode("utf-8", "replace")
        line = {"method": request.method, "path": request.path, "body": body}
        with self._file_lock, open(self._log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a fake Anthropic API on 127.0.0.1.")
    parser.add_argument("--log", metavar="FILE", help="append one JSON line per request to FILE")
    args = parser.parse_args(argv)

    server = _FileLoggingServer(args.log) if args.log else LoopbackServer()
    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with server:
            print(f"LISTENING {server.url}", flush=True)
            # A timed wait lets the signal handler run promptly on every platform.
            while not stopping.wait(0.2):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
