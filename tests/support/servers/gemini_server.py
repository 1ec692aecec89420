"""A loopback HTTP server that speaks the Gemini Developer API wire format.

Tests point the real ``google-genai`` SDK at it (``GOOGLE_GEMINI_BASE_URL``, or
``genai.Client(http_options=types.HttpOptions(base_url=server.url))``) so that the SDK
parses every answer with its own code, without touching the network.  Answers are
deterministic in content (same request -> same parts, finish reason and usage) but,
like the real API, every answer carries a fresh random ``responseId``.

Endpoints, under ``/v1`` (where google-genai 3.x sends the Developer API's calls unless
``GOOGLE_GENAI_API_VERSION`` or ``HttpOptions.api_version`` says otherwise), ``/v1beta``
(where most other clients and the docs send them) and ``/v1alpha`` alike:

``POST /v1beta/models/{model}:generateContent``
    one ``GenerateContentResponse``, pretty-printed as Google sends it.
``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``
    the same answer as SSE ``data: {...}`` chunks (CRLF-framed, as Google frames them);
    only the last carries ``finishReason`` and the full ``usageMetadata``.
``POST /v1beta/models/{model}:embedContent`` / ``:batchEmbedContents``
    deterministic vectors (google-genai 3.6 always sends ``batchEmbedContents`` to the
    Developer API, even for one content; ``embedContent`` is what other clients send).
``POST /v1beta/models/{model}:countTokens``
    ``{"totalTokens": N}``.
``GET /v1beta/models`` / ``GET /v1beta/models/{model}``
    a page of models / one model.

The same model methods answer under Vertex AI's paths too (google-genai with
``vertexai=True``): ``/v1beta1/publishers/google/models/{model}:generateContent`` (express
mode, with an API key) and ``/v1beta1/projects/{p}/locations/{l}/publishers/google/...``.

Credentials are checked as Google checks them: the key comes in the ``x-goog-api-key``
header (what google-genai sends) or a ``key=`` query parameter (Vertex AI's OAuth access
token comes in ``Authorization: Bearer``; a refused one gets a 401).  No key: 403
``PERMISSION_DENIED`` ("Method doesn't allow unregistered callers ...").  A key in
``GeminiServer.refused_keys``: 400 ``INVALID_ARGUMENT`` with an ``ErrorInfo`` detail
whose reason is ``API_KEY_INVALID``, as a revoked or mistyped key gets.

Function calling: with ``tools`` holding ``functionDeclarations``, a last user text
asking about the weather ("weather in Tokyo") gets a ``functionCall`` part of the first
declared function with ``{"location": <place>}``; ``[[tool:NAME {json}]]`` asks for a
call of NAME with those args.  A last turn holding ``functionResponse`` parts gets the
final answer ``The tool said: <response JSON>``.

Thinking: a ``generationConfig.thinkingConfig`` with a non-zero ``thinkingBudget`` or a
``thinkingLevel`` counts ``thoughtsTokenCount``; with ``includeThoughts`` the answer
starts with a ``thought`` part.

Magic markers in the last user text steer the answer:

``[[error:NNN]]``
    an error in Google's shape (``{"error": {"code", "message", "status"}}``) for 400,
    401, 403, 404, 429, 500, 503 and 504.
``[[unavailable-once]]``
    503 the first time a given body is seen, a normal answer afterwards.
``[[stream-cut]]``
    (streaming only) the stream ends cleanly before its final chunk: no ``finishReason``.
``[[stream-drop]]``
    (streaming only) the connection closes in the middle of a chunk, without the
    chunked body's end.
``[[stream-error]]`` / ``[[stream-error:NNN]]``
    (streaming only) a 200 stream whose second chunk is ``{"error": {...}}`` (503 by
    default), as Google reports a failure after the stream has begun.
``[[html]]``
    a 200 ``text/html`` page, as a gateway or a captive portal answers.
``[[truncated-json]]``
    a 200 ``application/json`` answer cut in the middle of the JSON.
``[[secret]]``
    the answer's text holds an ``AIza...``-shaped Google API key.
``[[cache]]``
    fixed usage numbers with ``cachedContentTokenCount`` and ``thoughtsTokenCount``.
``[[slow]]``
    the answer is delayed by 0.3 s.

A model whose name does not start with ``gemini``, ``gemma``, ``embedding``,
``text-embedding`` or ``learnlm`` gets a 404 ``NOT_FOUND``, as an unknown model does.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import secrets
import socket
import string
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.servers.loopback_server import LoggedRequest

__all__ = [
    "API_KEY_INVALID_MESSAGE",
    "EMBEDDING_DIMENSIONS",
    "SECRET_TEXT",
    "UNREGISTERED_CALLER_MESSAGE",
    "GeminiServer",
    "LoggedRequest",
]

JSONObject = dict[str, Any]

_ID_ALPHABET = string.ascii_letters + string.digits + "-_"
_SLOW_SECONDS = 0.3
_TEXT_PIECE = 8
#: The dimension of an embedding when the request names none (the real models give 768
#: to 3072; a short vector keeps the fixtures small).
EMBEDDING_DIMENSIONS = 16
#: An ``AIza`` key is 39 characters: the prefix and 35 of ``[0-9A-Za-z_-]``.
SECRET_TEXT = "Echo: here is a key AIza" + "Sy" + "B" * 33
API_KEY_INVALID_MESSAGE = "API key not valid. Please pass a valid API key."
UNREGISTERED_CALLER_MESSAGE = (
    "Method doesn't allow unregistered callers (callers without established identity)."
    " Please use API Key or other form of API consumer identity to call this API."
)

# Status code -> the `error.status` (a google.rpc.Code name) and the message Google gives.
_ERRORS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: (
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token,"
        " login cookie or other valid authentication credential.",
    ),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "Requested entity was not found."),
    429: (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in"
        " https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}
_GATEWAY_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
    "<body><h1>Bad Gateway</h1><p>The upstream did not answer in time.</p></body></html>\n"
)
# Vertex AI's paths too (google-genai with ``vertexai=True``): ``/v1beta1`` and the
# publisher, under a project and location unless in express mode (an API key).
_MODEL_PATH = re.compile(
    r"/(v1|v1beta|v1alpha|v1beta1)(?:/projects/[^/]+/locations/[^/]+)?(?:/publishers/google)?"
    r"/models/([^/:]+):(\w+)"
)
_MODELS_PATH = re.compile(r"/(?:v1|v1beta|v1alpha)/models(?:/([^/:]+))?")
_MODEL_PREFIXES = ("gemini", "gemma", "embedding", "text-embedding", "learnlm")
_ERROR_TRIGGER = re.compile(r"\[\[error:(\d{3})\]\]")
_STREAM_ERROR_TRIGGER = re.compile(r"\[\[stream-error(?::(\d{3}))?\]\]")
_TOOL_TRIGGER = re.compile(r"\[\[tool:([\w-]+) (\{.*?\})\]\]")
_WEATHER = re.compile(r"\bweather\b", re.IGNORECASE)
_LOCATION = re.compile(r"\bin ([^\W\d_][\w'-]*)")

# (name, display name, input limit, output limit, methods) of the models listed.
_GENERATE = ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"]
_MODELS: list[tuple[str, str, int, int, list[str]]] = [
    ("gemini-2.5-pro", "Gemini 2.5 Pro", 1048576, 65536, _GENERATE),
    ("gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536, _GENERATE),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1048576, 65536, _GENERATE),
    ("gemini-embedding-001", "Gemini Embedding 001", 2048, 1, ["embedContent", "countTokens"]),
]


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #


def _response_id() -> str:
    """Google's ids are about 23 URL-safe characters, new for every answer."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(23))


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _token_estimate(value: object) -> int:
    """Key order and whitespace must not change token counts, so sort and compact."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return max(1, len(text.encode("utf-8")) // 4)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _parts(content: object) -> list[JSONObject]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []


def _text_of(content: object) -> str:
    return "".join(str(part["text"]) for part in _parts(content) if "text" in part)


def _last_user_content(body: JSONObject) -> JSONObject:
    """The last turn the caller sent (role ``user``, or no role as single-turn calls send)."""
    contents = body.get("contents")
    if not isinstance(contents, list):
        return {}
    for content in reversed(contents):
        if isinstance(content, dict) and content.get("role", "user") != "model":
            return cast(JSONObject, content)
    return {}


def _trigger_text(body: JSONObject) -> str:
    return _text_of(_last_user_content(body))


def _function_declarations(body: JSONObject) -> list[JSONObject]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    return [
        declaration
        for tool in tools
        if isinstance(tool, dict)
        for declaration in _field(tool, "functionDeclarations") or []
        if isinstance(declaration, dict)
    ]


def _field(message: JSONObject, name: str, default: Any = None) -> Any:
    """A field by its JSON name or its proto name: Google's proto JSON parsing takes
    both, and google-genai 3.6 sends some nested configs in snake case
    (``thinkingConfig: {"include_thoughts": ...}``)."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)
    return message.get(name, message.get(snake, default))


def _thinking(body: JSONObject) -> tuple[bool, bool]:
    """(whether the model thinks, whether it shows the thoughts), from thinkingConfig."""
    config = _field(body, "generationConfig")
    thinking = _field(config, "thinkingConfig") if isinstance(config, dict) else None
    if not isinstance(thinking, dict):
        return False, False
    thinks = (
        _field(thinking, "thinkingBudget", -1) != 0 or _field(thinking, "thinkingLevel") is not None
    )
    return thinks, bool(thinks and _field(thinking, "includeThoughts"))


# --------------------------------------------------------------------------- #
# Deciding the answer (pure functions of the request body)
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class _Reply:
    parts: list[JSONObject]
    finish_reason: str
    usage: JSONObject


def _answer_parts(body: JSONObject, text: str) -> list[JSONObject]:
    """The visible parts of the answer (thoughts aside)."""
    responses = [
        part["functionResponse"]
        for part in _parts(_last_user_content(body))
        if isinstance(part.get("functionResponse"), dict)
    ]
    if responses:
        said = " ".join(_compact(response.get("response")) for response in responses)
        return [{"text": f"The tool said: {said}"}]
    declarations = _function_declarations(body)
    asked = _TOOL_TRIGGER.search(text)
    if declarations and asked:
        call = {"name": asked.group(1), "args": json.loads(asked.group(2))}
        return [{"functionCall": call}]
    if declarations and _WEATHER.search(text):
        match = _LOCATION.search(text)
        args = {"location": match.group(1) if match else "Paris"}
        return [{"functionCall": {"name": str(declarations[0].get("name", "tool")), "args": args}}]
    return [{"text": SECRET_TEXT if "[[secret]]" in text else f"Echo: {text}"}]


def _candidates_tokens(parts: list[JSONObject]) -> int:
    return sum(10 if "functionCall" in part else len(str(part["text"]).split()) for part in parts)


def _usage(body: JSONObject, text: str, parts: list[JSONObject], thinks: bool) -> JSONObject:
    if "[[cache]]" in text:
        prompt, cached, thoughts = 1200, 1024, 64
    else:
        counted = {
            key: body[key] for key in ("contents", "systemInstruction", "tools") if key in body
        }
        prompt, cached = _token_estimate(counted), 0
        thoughts = 8 * len(text.split()) + 16 if thinks else 0
    answer = _candidates_tokens(parts)
    usage: JSONObject = {"promptTokenCount": prompt, "candidatesTokenCount": answer}
    # Google leaves zero counts out of usageMetadata.
    if cached:
        usage["cachedContentTokenCount"] = cached
    usage["totalTokenCount"] = prompt + answer + thoughts
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if cached:
        usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def _decide_reply(body: JSONObject) -> _Reply:
    text = _trigger_text(body)
    thinks, shows = _thinking(body)
    parts = _answer_parts(body, text)
    usage = _usage(body, text, parts, thinks or "[[cache]]" in text)
    if shows:
        parts = [{"text": f"Thinking about: {text[:40]}", "thought": True}, *parts]
    if thinks and "functionCall" in parts[-1]:
        # Thinking models sign their calls; the caller sends the signature back as is.
        digest = hashlib.sha256(_compact(parts[-1]).encode()).digest()
        parts[-1] = {**parts[-1], "thoughtSignature": base64.b64encode(digest).decode()}
    return _Reply(parts, "STOP", usage)


def _model_version(model: str) -> str:
    return model.removeprefix("models/")


def _response_json(model: str, reply: _Reply, response_id: str) -> JSONObject:
    candidate = {
        "content": {"parts": reply.parts, "role": "model"},
        "finishReason": reply.finish_reason,
        "index": 0,
    }
    return {
        "candidates": [candidate],
        "usageMetadata": reply.usage,
        "modelVersion": _model_version(model),
        "responseId": response_id,
    }


def _stream_chunks(model: str, reply: _Reply, response_id: str) -> Iterator[JSONObject]:
    """The answer as Google streams it: text in small pieces, each chunk a whole
    ``GenerateContentResponse``; the running usage carries the prompt count only, and
    the last chunk adds ``finishReason`` and the full usage."""
    pieces: list[JSONObject] = []
    for part in reply.parts:
        if "text" in part:
            pieces.extend({**part, "text": piece} for piece in _pieces(part["text"], _TEXT_PIECE))
        else:
            pieces.append(part)
    running = {
        "promptTokenCount": reply.usage["promptTokenCount"],
        "totalTokenCount": reply.usage["promptTokenCount"],
        "promptTokensDetails": reply.usage["promptTokensDetails"],
    }
    for number, piece in enumerate(pieces):
        last = number == len(pieces) - 1
        candidate: JSONObject = {"content": {"parts": [piece], "role": "model"}}
        if last:
            candidate["finishReason"] = reply.finish_reason
        candidate["index"] = 0
        yield {
            "candidates": [candidate],
            "usageMetadata": reply.usage if last else running,
            "modelVersion": _model_version(model),
            "responseId": response_id,
        }


def _error_json(status: int, message: str | None = None) -> JSONObject:
    name, default = _ERRORS.get(status, ("UNKNOWN", "Unknown error."))
    return {"error": {"code": status, "message": message or default, "status": name}}


def _api_key_invalid_json() -> JSONObject:
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }
    localized = {
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": API_KEY_INVALID_MESSAGE,
    }
    error = _error_json(400, API_KEY_INVALID_MESSAGE)
    error["error"]["details"] = [info, localized]
    return error


def _embedding(text: str, dimensions: int) -> JSONObject:
    """A deterministic vector for ``text``: SHA-256 bytes stretched to ``dimensions``."""
    seed = text.encode("utf-8")
    raw = b""
    counter = 0
    while len(raw) < dimensions:
        raw += hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return {"values": [round(byte / 127.5 - 1.0, 6) for byte in raw[:dimensions]]}


def _dimensions(request: JSONObject) -> int:
    wanted = _field(request, "outputDimensionality")
    return wanted if isinstance(wanted, int) and wanted > 0 else EMBEDDING_DIMENSIONS


def _model_json(
    name: str, display: str, inputs: int, outputs: int, methods: list[str]
) -> JSONObject:
    return {
        "name": f"models/{name}",
        "version": "001",
        "displayName": display,
        "description": f"{display}, served by the loopback test server.",
        "inputTokenLimit": inputs,
        "outputTokenLimit": outputs,
        "supportedGenerationMethods": methods,
    }


# --------------------------------------------------------------------------- #
# HTTP plumbing
# --------------------------------------------------------------------------- #


class _ApiError(Exception):
    """Raised while handling a request to answer with ``payload`` and ``status``."""

    def __init__(self, status: int, payload: JSONObject) -> None:
        super().__init__(payload["error"]["message"])
        self.status = status
        self.payload = payload


def _fail(status: int, message: str | None = None) -> _ApiError:
    return _ApiError(status, _error_json(status, message))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: GeminiServer) -> None:
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
    server_version = "loopback-gemini/1.0"
    server: _HTTPServer

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

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        request = self._read_request()
        self.server.owner.record(request)
        try:
            self._route(request)
        except _ApiError as error:
            self._send_json(error.status, error.payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

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
        self._check_key(request)
        path = unquote(request.path.rstrip("/"))
        listing = _MODELS_PATH.fullmatch(path)
        if request.method == "GET" and listing is not None:
            name = listing.group(1)
            page = {"models": [_model_json(*row) for row in _MODELS]}
            self._send_json(200, self._one_model(name) if name else page)
            return
        match = _MODEL_PATH.fullmatch(path)
        if request.method != "POST" or match is None:
            raise _fail(404, f"Not found: {request.method} {request.path}")
        version, model, method = match.groups()
        body = self._checked_body(request)
        if not model.startswith(_MODEL_PREFIXES):
            raise _fail(
                404,
                f"models/{model} is not found for API version {version}, or is not supported"
                f" for {method}. Call ListModels to see the list of available models and"
                " their supported methods.",
            )
        if method in ("generateContent", "streamGenerateContent"):
            self._generate(
                model, body, stream=method == "streamGenerateContent", query=request.query
            )
        elif method == "embedContent":
            self._send_json(
                200, {"embedding": _embedding(_text_of(body.get("content")), _dimensions(body))}
            )
        elif method == "batchEmbedContents":
            self._batch_embed(body)
        elif method == "countTokens":
            counted = {
                key: body[key] for key in ("contents", "systemInstruction", "tools") if key in body
            }
            self._send_json(200, {"totalTokens": _token_estimate(counted)})
        else:
            raise _fail(404, f"Method not found: {method}")

    def _check_key(self, request: LoggedRequest) -> None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():  # Vertex AI: an OAuth access token
            if token.strip() in self.server.owner.refused_keys:
                raise _fail(401)
            return
        key = (
            request.headers.get("x-goog-api-key") or (parse_qs(request.query).get("key") or [""])[0]
        )
        if not key:
            raise _fail(403, UNREGISTERED_CALLER_MESSAGE)
        if key in self.server.owner.refused_keys:
            raise _ApiError(400, _api_key_invalid_json())

    def _one_model(self, name: str) -> JSONObject:
        for row in _MODELS:
            if row[0] == name:
                return _model_json(*row)
        raise _fail(404, f"models/{name} is not found.")

    def _checked_body(self, request: LoggedRequest) -> JSONObject:
        try:
            body = request.json()
        except ValueError:
            raise _fail(400, "Invalid JSON payload received.") from None
        if not isinstance(body, dict):
            raise _fail(400, "Invalid JSON payload received. Expected an object.")
        text = _trigger_text(body) or _text_of(body.get("content")) or self._batch_text(body)
        self.server.owner.apply_triggers(request.body, text)
        return cast(JSONObject, body)

    @staticmethod
    def _batch_text(body: JSONObject) -> str:
        requests = body.get("requests")
        if not isinstance(requests, list):
            return ""
        return " ".join(
            _text_of(item.get("content")) for item in requests if isinstance(item, dict)
        )

    # -- endpoints --------------------------------------------------------- #

    def _generate(self, model: str, body: JSONObject, *, stream: bool, query: str) -> None:
        if not isinstance(body.get("contents"), list) or not body["contents"]:
            raise _fail(400, "* GenerateContentRequest.contents: contents is not specified\n")
        text = _trigger_text(body)
        reply = _decide_reply(body)
        response_id = _response_id()
        self.server.owner.issued(response_id)
        if "[[html]]" in text:
            self._send_bytes(200, "text/html; charset=utf-8", _GATEWAY_PAGE.encode())
        elif stream and parse_qs(query).get("alt") == ["sse"]:
            self._stream(model, reply, response_id, text)
        elif stream:
            # Without alt=sse Google streams one JSON array; google-genai always asks for SSE.
            chunks = list(_stream_chunks(model, reply, response_id))
            self._send_bytes(
                200, "application/json; charset=UTF-8", json.dumps(chunks, indent=2).encode()
            )
        elif "[[truncated-json]]" in text:
            whole = json.dumps(_response_json(model, reply, response_id), indent=2).encode()
            self._send_bytes(200, "application/json; charset=UTF-8", whole[: len(whole) // 2])
        else:
            self._send_json(200, _response_json(model, reply, response_id))

    def _stream(self, model: str, reply: _Reply, response_id: str, text: str) -> None:
        chunks = list(_stream_chunks(model, reply, response_id))
        broken = _STREAM_ERROR_TRIGGER.search(text)
        if broken:
            chunks = [chunks[0], _error_json(int(broken.group(1) or 503))]
        elif "[[stream-cut]]" in text or "[[stream-drop]]" in text:
            chunks = chunks[:-1] or chunks[:1]
        self._send_sse(chunks, drop="[[stream-drop]]" in text)

    def _batch_embed(self, body: JSONObject) -> None:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise _fail(400, "* BatchEmbedContentsRequest.requests: requests is not specified\n")
        embeddings = [
            _embedding(_text_of(item.get("content")), _dimensions(item))
            for item in requests
            if isinstance(item, dict)
        ]
        self._send_json(200, {"embeddings": embeddings})

    # -- writing responses ------------------------------------------------- #

    def _send_json(self, status: int, payload: JSONObject) -> None:
        # Google pretty-prints its JSON answers, errors included.
        self._send_bytes(
            status, "application/json; charset=UTF-8", json.dumps(payload, indent=2).encode()
        )

    def _send_bytes(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_sse(self, chunks: list[JSONObject], *, drop: bool) -> None:
        """One ``data:`` event per chunk, CRLF-framed; with ``drop`` the connection closes
        halfway through the event after the last of ``chunks``, without the body's end."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            event = f"data: {_compact(chunk)}\r\n\r\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        if drop:
            half = b'data: {"candidates": [{"content": {"parts": [{"te'
            self.wfile.write(b"%x\r\n%s\r\n" % (len(half), half))
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# --------------------------------------------------------------------------- #
# Public server object
# --------------------------------------------------------------------------- #


class GeminiServer:
    """A fake Gemini Developer API on 127.0.0.1 with a random free port.

    Use as a context manager, or call :meth:`start` / :meth:`stop`.  ``url`` is the base
    URL to give google-genai (it adds ``/v1/...`` itself).
    """

    url: str
    log: list[LoggedRequest]

    def __init__(self) -> None:
        self.log = []
        self._lock = threading.Lock()
        #: Keys answered with Google's 400 ``API_KEY_INVALID``.
        self.refused_keys: set[str] = set()
        #: Every ``responseId`` given so far.
        self.response_ids: list[str] = []
        self._seen_unavailable_bodies: set[bytes] = set()
        self._httpd = _HTTPServer(self)
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread: threading.Thread | None = None

    def issued(self, response_id: str) -> None:
        with self._lock:
            self.response_ids.append(response_id)

    # -- lifecycle --------------------------------------------------------- #

    def start(self) -> GeminiServer:
        # A short poll interval keeps stop() (which waits for the next poll) fast in tests.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"gemini-server {self.url}",
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

    def __enter__(self) -> GeminiServer:
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
        if match and int(match.group(1)) in _ERRORS:
            raise _fail(int(match.group(1)))
        if "[[unavailable-once]]" in text and self._first_sight(raw_body):
            raise _fail(503)

    def _first_sight(self, raw_body: bytes) -> bool:
        with self._lock:
            if raw_body in self._seen_unavailable_bodies:
                return False
            self._seen_unavailable_bodies.add(raw_body)
            return True
