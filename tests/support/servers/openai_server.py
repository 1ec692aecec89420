"""A loopback HTTP server that speaks the OpenAI API wire format.

Tests point the real ``openai`` SDK at it (``base_url=server.url + "/v1"``, or
``OPENAI_BASE_URL``) to record real-looking traffic without the network. Content is
deterministic (the same request gets the same text, tool calls, vectors and usage);
like the real API, every id (``chatcmpl-``, ``resp_``, ``msg_``, ``fc_``, ``rs_``,
``call_``), ``created``, the ``obfuscation`` padding of stream events and the
request id are fresh on every answer.

Endpoints, under ``/v1`` (OpenAI), ``/api/v1`` (an OpenRouter-like gateway),
``/openai`` and ``/openai/deployments/<deployment>`` (Azure, with ``api-version``):

``POST .../chat/completions``
    plain, ``stream: true`` (``data:`` chunks, a usage chunk when
    ``stream_options.include_usage``, then ``data: [DONE]``), tools (``tool_calls``
    with ``call_`` ids; a later request answering with ``role: tool`` messages gets
    an answer quoting the tool's result).
``POST .../responses``
    plain, streamed (typed events with ``sequence_number``), chained by
    ``previous_response_id`` (which must name a response this server gave, else the
    API's 400 ``previous_response_not_found``); function calls (``fc_`` items with a
    ``call_id``) answered by ``function_call_output`` items; ``rs_`` reasoning items
    when ``reasoning`` is asked.
``POST .../embeddings``
    floats, or base64 of little-endian float32 when ``encoding_format: base64`` (the
    SDK asks that by default and decodes it).
``GET .../models`` and ``GET .../models/<id>``.

Credentials are checked as OpenAI checks them: ``Authorization: Bearer <key>`` (Azure:
an ``api-key`` header). No key is a 401 "You didn't provide an API key..."; a key in
``OpenAIServer.refused_keys`` (by default vcr_kit's replay stand-in, which the real
API refuses too) is a 401 ``invalid_api_key`` "Incorrect API key provided: ...".

Markers in the text of the last user input steer the answer:

``[[error:NNN]]``
    the API's error body for 400, 401, 403, 404, 429 (``rate_limit_exceeded``), 500
    and 503 (the 429/5xx tell the SDK to retry after 10 ms).
``[[stream-cut]]``
    (streaming) the body ends cleanly after the first text delta: no ``[DONE]``,
    no ``response.completed``.
``[[stream-error]]``
    (streaming) a ``data: {"error": ...}`` chunk (Responses: an ``error`` event) in
    the middle of a 200 stream.
``[[incomplete]]``
    the answer stops at the token limit: ``finish_reason: length`` / Responses
    ``status: incomplete`` (streamed: ending with ``response.incomplete``).
``[[html]]``
    a 200 ``text/html`` page, as a gateway or a captive portal answers.
``[[truncated-json]]``
    a 200 ``application/json`` answer cut in the middle of the JSON.
``[[secret]]``
    the answer's text holds an ``sk-proj-`` shaped key.
``[[cache]]``
    fixed usage numbers with cached and reasoning tokens (and, for Responses, tokens
    written to the cache) filled in.
``[[tool:NAME {json}]]``
    (with tools) a call of tool NAME with those arguments; without the marker, a
    text mentioning the weather calls the first tool with ``{"location": ...}``.
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
import struct
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "REPLAY_STAND_IN_KEY",
    "SECRET_TEXT",
    "LoggedRequest",
    "OpenAIServer",
    "embedding_of",
]

JSONObject = dict[str, Any]

_ALNUM = string.ascii_letters + string.digits
_TEXT_PIECE = 8
_JSON_PIECE = 10
#: What vcr_kit puts in an unset key variable while a test runs: the real API refuses it.
REPLAY_STAND_IN_KEY = "vcr-kit-replay-no-key"
#: The answer to ``[[secret]]``: a project key shape the secrets gate must catch.
SECRET_TEXT = "Echo: here is a key sk-proj-" + "A" * 48 + "T3BlbkFJ" + "B" * 20
_EMBEDDING_DIMENSIONS = 8
_GATEWAY_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
    "<body><h1>Bad Gateway</h1><p>The upstream did not answer in time.</p></body></html>\n"
)
_ERROR_TRIGGER = re.compile(r"\[\[error:(\d{3})\]\]")
_TOOL_TRIGGER = re.compile(r"\[\[tool:([\w-]+) (\{.*?\})\]\]")
_WEATHER = re.compile(r"\bweather\b", re.IGNORECASE)
_LOCATION = re.compile(r"\bin ([^\W\d_][\w'-]*)")
# The prefixes an OpenAI-compatible path may sit under: OpenAI itself, an
# OpenRouter-like gateway, Azure's deployments and its v1 and deployment-less paths.
_PREFIX = re.compile(r"^(?:/v1|/api/v1|/openai/v1|/openai/deployments/([^/]+)|/openai)(?=/)")

# (id, created, owned_by) of the models `GET /v1/models` lists.
_MODELS: list[tuple[str, int, str]] = [
    ("gpt-5.2", 1765000000, "system"),
    ("gpt-5-mini", 1754000000, "system"),
    ("gpt-4.1", 1744000000, "system"),
    ("gpt-4o-mini", 1721000000, "system"),
    ("text-embedding-3-small", 1705948997, "system"),
]


# --------------------------------------------------------------------------- #
# Errors, in OpenAI's shape
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class _ErrorShape:
    message: str
    type: str
    code: str | None
    param: str | None = None


# Status -> the body the real API sends for the commonest cause of that status.
_ERRORS: dict[int, _ErrorShape] = {
    400: _ErrorShape(
        "Invalid value for 'temperature': expected a number between 0 and 2.",
        "invalid_request_error",
        "invalid_value",
        "temperature",
    ),
    401: _ErrorShape(
        "Incorrect API key provided: sk-proj-****...****. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
    ),
    403: _ErrorShape(
        "Country, region, or territory not supported",
        "request_forbidden",
        "unsupported_country_region_territory",
    ),
    404: _ErrorShape(
        "The model `gpt-unknown` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    429: _ErrorShape(
        "Rate limit reached for gpt-5-mini in organization org-loopback on requests per min "
        "(RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
        "requests",
        "rate_limit_exceeded",
    ),
    500: _ErrorShape(
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
    ),
    503: _ErrorShape(
        "The engine is currently overloaded, please try again later.", "server_error", None
    ),
}


class _ApiError(Exception):
    """Raised while handling a request to answer with an error body."""

    def __init__(self, status: int, shape: _ErrorShape, *, azure: bool = False) -> None:
        super().__init__(shape.message)
        self.status = status
        self.shape = shape
        self.azure = azure

    def body(self) -> JSONObject:
        if self.azure and self.status == 401:
            # Azure's gateway answers a bad key in its own shape, not OpenAI's.
            return {"error": {"code": "401", "message": self.shape.message}}
        error = {
            "message": self.shape.message,
            "type": self.shape.type,
            "param": self.shape.param,
            "code": self.shape.code,
        }
        return {"error": error}


def _bad_request(message: str, param: str | None = None, code: str | None = None) -> _ApiError:
    return _ApiError(400, _ErrorShape(message, "invalid_request_error", code, param))


def _masked(key: str) -> str:
    """How OpenAI quotes a refused key: its start and its last four characters."""
    return key[:3] + "*" * max(0, len(key) - 7) + key[-4:] if len(key) > 8 else key


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #


def _random_alnum(length: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(length))


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _token_estimate(value: object) -> int:
    """Key order and whitespace must not change token counts, so sort and compact."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return max(1, len(text.encode("utf-8")) // 4)


def _words(text: str) -> int:
    return max(1, len(text.split()))


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _content_text(content: object) -> str:
    """The text of a message ``content``: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
    )


def _tool_argument(body: JSONObject, text: str) -> tuple[str, str]:
    """(name, JSON arguments) of the tool call ``text`` asks for, or ("", "")."""
    asked = _TOOL_TRIGGER.search(text)
    if asked:
        return asked.group(1), _compact(json.loads(asked.group(2)))
    if _WEATHER.search(text):
        match = _LOCATION.search(text)
        location = match.group(1) if match else "Paris"
        return _first_tool_name(body), _compact({"location": location})
    return "", ""


def _first_tool_name(body: JSONObject) -> str:
    tools = body.get("tools")
    first = tools[0] if isinstance(tools, list) and tools and isinstance(tools[0], dict) else {}
    # Chat nests the function (`{"type": "function", "function": {"name": ...}}`);
    # Responses does not (`{"type": "function", "name": ...}`).
    function = first.get("function")
    named = function if isinstance(function, dict) else first
    return str(named.get("name", "tool"))


def _call_id() -> str:
    return "call_" + _random_alnum(24)


def _usage_numbers(prompt: int, completion: int, text: str, reasoning: bool) -> JSONObject:
    """(prompt, cached, completion, reasoning) tokens, the same for plain and streamed."""
    if "[[cache]]" in text:
        return {"prompt": 2006, "cached": 1920, "completion": 300, "reasoning": 192}
    reasoning_tokens = 64 if reasoning else 0
    return {
        "prompt": prompt,
        "cached": 0,
        "completion": completion + reasoning_tokens,
        "reasoning": reasoning_tokens,
    }


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
# Chat Completions
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class _ChatReply:
    content: str | None
    tool_calls: list[JSONObject]
    finish_reason: str
    usage: JSONObject


def _chat_messages(body: JSONObject) -> list[JSONObject]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad_request(
            "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    return [message for message in messages if isinstance(message, dict)]


def _check_tool_messages(messages: list[JSONObject]) -> None:
    """As the API does: a ``tool`` message must answer a call of an earlier assistant message."""
    called: set[str] = set()
    for index, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                called.add(str(call.get("id")))
        if message.get("role") == "tool" and message.get("tool_call_id") not in called:
            raise _bad_request(
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.",
                f"messages.[{index}].role",
            )


def _chat_trigger_text(messages: list[JSONObject]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _chat_reply(body: JSONObject, messages: list[JSONObject]) -> _ChatReply:
    text = _chat_trigger_text(messages)
    reasoning = bool(body.get("reasoning_effort"))
    prompt = _token_estimate(
        {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    )
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.insert(0, _content_text(message.get("content")))
    tool_calls: list[JSONObject] = []
    content: str | None
    finish = "stop"
    name, arguments = _tool_argument(body, text) if body.get("tools") else ("", "")
    if results:
        content = "The tool said: " + "; ".join(results)
    elif name:
        content = None
        function = {"name": name, "arguments": arguments}
        tool_calls = [{"id": _call_id(), "type": "function", "function": function}]
        finish = "tool_calls"
    elif "[[secret]]" in text:
        content = SECRET_TEXT
    else:
        content = f"Echo: {text}"
    if "[[incomplete]]" in text and content is not None:
        content, finish = content[: max(1, len(content) // 2)], "length"
    completion = 10 * len(tool_calls) + (_words(content) if content else 0)
    numbers = _usage_numbers(prompt, completion, text, reasoning)
    usage = {
        "prompt_tokens": numbers["prompt"],
        "completion_tokens": numbers["completion"],
        "total_tokens": numbers["prompt"] + numbers["completion"],
        "prompt_tokens_details": {"cached_tokens": numbers["cached"], "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": numbers["reasoning"],
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    return _ChatReply(content, tool_calls, finish, usage)


def _chat_envelope(body: JSONObject, object_type: str, completion_id: str) -> JSONObject:
    return {
        "id": completion_id,
        "object": object_type,
        "created": int(time.time()),
        "model": str(body.get("model")),
        "service_tier": "default",
        "system_fingerprint": "fp_" + secrets.token_hex(5),
    }


def _chat_completion(body: JSONObject, reply: _ChatReply) -> JSONObject:
    message: JSONObject = {
        "role": "assistant",
        "content": reply.content,
        "refusal": None,
        "annotations": [],
    }
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": reply.finish_reason,
    }
    envelope = _chat_envelope(body, "chat.completion", "chatcmpl-" + _random_alnum(29))
    return {**envelope, "choices": [choice], "usage": reply.usage}


def _chat_deltas(reply: _ChatReply) -> Iterator[JSONObject]:
    """The ``delta`` of each chunk, in the order the API sends them."""
    yield {
        "role": "assistant",
        "content": "" if reply.content is not None else None,
        "refusal": None,
    }
    if reply.content is not None:
        for piece in _pieces(reply.content, _TEXT_PIECE):
            yield {"content": piece}
    for index, call in enumerate(reply.tool_calls):
        function = call["function"]
        opening = {"name": function["name"], "arguments": ""}
        yield {
            "tool_calls": [
                {"index": index, "id": call["id"], "type": "function", "function": opening}
            ]
        }
        for piece in _pieces(function["arguments"], _JSON_PIECE):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def _chat_chunks(body: JSONObject, reply: _ChatReply) -> Iterator[JSONObject]:
    options = body.get("stream_options")
    options = options if isinstance(options, dict) else {}
    with_usage = options.get("include_usage") is True
    padded = options.get("include_obfuscation") is not False
    # Every chunk of one completion shares its id, created and fingerprint.
    envelope = _chat_envelope(body, "chat.completion.chunk", "chatcmpl-" + _random_alnum(29))

    def chunk(choices: list[JSONObject], usage: JSONObject | None = None) -> JSONObject:
        data = {**envelope, "choices": choices}
        if with_usage:
            data["usage"] = usage
        if padded:  # the API pads every chunk with random text to hide its size
            data["obfuscation"] = _random_alnum(secrets.randbelow(12) + 1)
        return data

    for delta in _chat_deltas(reply):
        yield chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])
    yield chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reply.finish_reason}])
    if with_usage:
        yield chunk([], reply.usage)


# --------------------------------------------------------------------------- #
# Responses
# --------------------------------------------------------------------------- #


@dataclass
class _Turn:
    """What the server keeps of a response, for the requests that chain on it."""

    texts: list[str]  # the user texts of the chain, oldest first
    calls: set[str] = field(default_factory=set)  # the call_ids it asked for


def _input_items(body: JSONObject) -> list[JSONObject]:
    given = body.get("input")
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": given}]
    if isinstance(given, list):
        return [item for item in given if isinstance(item, dict)]
    raise _bad_request(
        "Missing required parameter: 'input'.", "input", "missing_required_parameter"
    )


def _user_texts(items: list[JSONObject]) -> list[str]:
    return [
        _content_text(item.get("content"))
        for item in items
        if item.get("role") == "user" and item.get("type", "message") == "message"
    ]


def _function_outputs(items: list[JSONObject]) -> list[JSONObject]:
    return [item for item in items if item.get("type") == "function_call_output"]


def _message_item(text: str, status: str) -> JSONObject:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {
        "id": "msg_" + secrets.token_hex(24),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [part],
    }


def _reasoning_item(body: JSONObject, text: str) -> JSONObject:
    reasoning = body.get("reasoning")
    summary = []
    if isinstance(reasoning, dict) and reasoning.get("summary"):
        summary = [{"type": "summary_text", "text": f"Thinking about: {text[:40]}"}]
    return {"id": "rs_" + secrets.token_hex(24), "type": "reasoning", "summary": summary}


def _function_item(name: str, arguments: str) -> JSONObject:
    return {
        "id": "fc_" + secrets.token_hex(24),
        "type": "function_call",
        "status": "completed",
        "arguments": arguments,
        "call_id": _call_id(),
        "name": name,
    }


def _responses_text(texts: list[str], outputs: list[JSONObject]) -> str:
    if outputs:
        return "The tool said: " + "; ".join(str(item.get("output", "")) for item in outputs)
    text = texts[-1] if texts else ""
    if "[[secret]]" in text:
        return SECRET_TEXT
    if len(texts) > 1:
        # The answer depends on the chain: it quotes what came first and counts the turns.
        return f"Echo: {text} (turn {len(texts)}, first: {texts[0]})"
    return f"Echo: {text}"


def _response_object(
    body: JSONObject, output: list[JSONObject], status: str, usage: JSONObject | None
) -> JSONObject:
    reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else None
    text_config = body.get("text") if isinstance(body.get("text"), dict) else None
    incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
    return {
        "id": "resp_" + secrets.token_hex(24),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "background": False,
        "completed_at": int(time.time()) if status == "completed" else None,
        "error": None,
        "incomplete_details": incomplete,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": str(body.get("model")),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": None,
        "reasoning": reasoning or {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": body.get("store", True),
        "temperature": 1.0,
        "text": text_config or {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _responses_usage(body: JSONObject, text: str, output: list[JSONObject]) -> JSONObject:
    prompt = _token_estimate({k: v for k, v in body.items() if k != "stream"})
    completion = sum(
        _words(_content_text(item["content"])) if item["type"] == "message" else 10
        for item in output
        if item["type"] != "reasoning"
    )
    numbers = _usage_numbers(prompt, completion, text, isinstance(body.get("reasoning"), dict))
    details: JSONObject = {"cached_tokens": numbers["cached"], "cache_write_tokens": 0}
    if "[[cache]]" in text:  # Responses also reports the prompt tokens written to the cache
        written = {"ttl_30m_tokens": 40, "ttl_12h_tokens": 0}
        details.update(cache_write_tokens=40, cache_write_tokens_details=written)
    return {
        "input_tokens": numbers["prompt"],
        "input_tokens_details": details,
        "output_tokens": numbers["completion"],
        "output_tokens_details": {"reasoning_tokens": numbers["reasoning"]},
        "total_tokens": numbers["prompt"] + numbers["completion"],
    }


def _sequenced(events: Iterator[JSONObject]) -> Iterator[tuple[str, JSONObject]]:
    for number, data in enumerate(events):
        yield data["type"], {**data, "sequence_number": number}


def _opened(item: JSONObject) -> JSONObject:
    """How an output item looks in ``response.output_item.added``: its deltas fill it in."""
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    if item["type"] == "function_call":
        return {**item, "status": "in_progress", "arguments": ""}
    return item


def _item_events(index: int, item: JSONObject, padded: bool) -> Iterator[JSONObject]:
    yield {"type": "response.output_item.added", "output_index": index, "item": _opened(item)}
    where = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        part = item["content"][0]
        empty = {**part, "text": ""}
        yield {"type": "response.content_part.added", **where, "content_index": 0, "part": empty}
        for piece in _pieces(part["text"], _TEXT_PIECE):
            delta = {"type": "response.output_text.delta", **where, "content_index": 0}
            delta.update(delta=piece, logprobs=[])
            if padded:
                delta["obfuscation"] = _random_alnum(secrets.randbelow(12) + 1)
            yield delta
        done = {"type": "response.output_text.done", **where, "content_index": 0}
        yield {**done, "text": part["text"], "logprobs": []}
        yield {"type": "response.content_part.done", **where, "content_index": 0, "part": part}
    elif item["type"] == "function_call":
        for piece in _pieces(item["arguments"], _JSON_PIECE):
            yield {"type": "response.function_call_arguments.delta", **where, "delta": piece}
        yield {
            "type": "response.function_call_arguments.done",
            **where,
            "name": item["name"],
            "arguments": item["arguments"],
        }
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def _response_events(response: JSONObject, padded: bool) -> Iterator[JSONObject]:
    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    opening.update(completed_at=None, incomplete_details=None)
    yield {"type": "response.created", "response": opening}
    yield {"type": "response.in_progress", "response": opening}
    for index, item in enumerate(response["output"]):
        yield from _item_events(index, item, padded)
    yield {"type": f"response.{response['status']}", "response": response}


# --------------------------------------------------------------------------- #
# Embeddings and models
# --------------------------------------------------------------------------- #


def embedding_of(text: str, dimensions: int = _EMBEDDING_DIMENSIONS) -> list[float]:
    """The vector this server gives ``text``: float32 values (so the base64 and the float
    answers agree exactly), from the text's hash."""
    seed = hashlib.sha256(text.encode("utf-8")).digest()
    while len(seed) < 2 * dimensions:
        seed += hashlib.sha256(seed).digest()
    raw = [
        int.from_bytes(seed[2 * i : 2 * i + 2], "little") / 32767.5 - 1.0 for i in range(dimensions)
    ]
    return list(struct.unpack(f"<{dimensions}f", struct.pack(f"<{dimensions}f", *raw)))


def _embedding_inputs(body: JSONObject) -> list[str]:
    given = body.get("input")
    if isinstance(given, str):
        return [given]
    if isinstance(given, list) and given:
        # Token arrays are allowed too; their JSON stands for the text.
        return [item if isinstance(item, str) else _compact(item) for item in given]
    raise _bad_request("'input' is a required property", "input")


def _embeddings(body: JSONObject) -> JSONObject:
    inputs = _embedding_inputs(body)
    dimensions = body.get("dimensions")
    size = dimensions if isinstance(dimensions, int) and dimensions > 0 else _EMBEDDING_DIMENSIONS
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    for index, text in enumerate(inputs):
        vector = embedding_of(text, size)
        encoded: object = (
            base64.b64encode(struct.pack(f"<{size}f", *vector)).decode("ascii")
            if as_base64
            else vector
        )
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(_words(text) for text in inputs)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": data, "model": str(body.get("model")), "usage": usage}


def _model_json(model_id: str, created: int, owner: str) -> JSONObject:
    return {"id": model_id, "object": "model", "created": created, "owned_by": owner}


def _models_page() -> JSONObject:
    return {"object": "list", "data": [_model_json(*model) for model in _MODELS]}


# --------------------------------------------------------------------------- #
# HTTP plumbing
# --------------------------------------------------------------------------- #

#: (event name, or None for a bare ``data:`` line; the data: a JSON object, or ``[DONE]``)
_SSE = tuple[str | None, "JSONObject | str"]


def _is_text_delta(event: _SSE) -> bool:
    name, data = event
    if name is not None:
        return name == "response.output_text.delta"
    choices = data.get("choices") if isinstance(data, dict) else None
    delta = choices[0].get("delta", {}) if choices else {}
    return bool(delta.get("content"))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: OpenAIServer) -> None:
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
    server_version = "loopback-openai/1.0"
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

    def do_DELETE(self) -> None:
        self._dispatch()

    # -- dispatch ---------------------------------------------------------- #

    def _dispatch(self) -> None:
        request = self._read_request()
        self.server.owner.record(request)
        self.request_id = "req_" + secrets.token_hex(16)
        try:
            self._route(request)
        except _ApiError as error:
            self._send_error(error)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _read_request(self) -> LoggedRequest:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or (length == 0 and "Transfer-Encoding" in self.headers):
            # Only Content-Length bodies are understood; without a usable one the next
            # request on this connection cannot be found, so answer and close.
            self.close_connection = True
            length = 0
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        parts = urlsplit(self.path)
        return LoggedRequest(self.command, parts.path, parts.query, headers, body)

    def _route(self, request: LoggedRequest) -> None:
        prefix = _PREFIX.match(request.path)
        if prefix is None:
            raise _ApiError(
                404,
                _ErrorShape(
                    f"Invalid URL ({request.method} {request.path})", "invalid_request_error", None
                ),
            )
        azure = prefix.group(0).startswith("/openai")
        self._check_credentials(request.headers, azure=azure)
        if azure and "api-version" not in parse_qs(request.query):
            raise _ApiError(404, _ErrorShape("Resource not found", "invalid_request_error", "404"))
        rest = request.path[prefix.end() :].rstrip("/")
        deployment = prefix.group(1)
        route = (request.method, rest)
        if route == ("POST", "/chat/completions"):
            self._chat(self._body(request, deployment))
        elif route == ("POST", "/responses"):
            self._responses(self._body(request, deployment))
        elif route == ("POST", "/embeddings"):
            self._send_json(200, _embeddings(self._body(request, deployment)))
        elif route == ("GET", "/models"):
            self._send_json(200, _models_page())
        elif request.method == "GET" and rest.startswith("/models/"):
            self._model(rest.removeprefix("/models/"))
        else:
            message = f"Invalid URL ({request.method} {request.path})"
            raise _ApiError(404, _ErrorShape(message, "invalid_request_error", None))

    def _check_credentials(self, headers: Mapping[str, str], *, azure: bool) -> None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else ""
        if azure:
            key = headers.get("api-key", "") or key
        if azure and (not key or key in self.server.owner.refused_keys):
            message = (
                "Access denied due to invalid subscription key or wrong API endpoint. Make sure "
                "to provide a valid key for an active subscription and use a correct regional "
                "API endpoint for your resource."
            )
            raise _ApiError(401, _ErrorShape(message, "", "401"), azure=True)
        if not key:
            message = (
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), "
                "or as the password field (with blank username) if you're accessing the API "
                "from your browser and are prompted for a username. You can obtain an API key "
                "from https://platform.openai.com/account/api-keys."
            )
            raise _ApiError(401, _ErrorShape(message, "invalid_request_error", None))
        if key in self.server.owner.refused_keys:
            message = (
                f"Incorrect API key provided: {_masked(key)}. You can find your API key at "
                "https://platform.openai.com/account/api-keys."
            )
            raise _ApiError(401, _ErrorShape(message, "invalid_request_error", "invalid_api_key"))

    def _body(self, request: LoggedRequest, deployment: str | None) -> JSONObject:
        try:
            body = request.json()
        except ValueError:
            message = (
                "We could not parse the JSON body of your request. (HINT: This likely means "
                "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
                "payload, but what was sent was not valid JSON."
            )
            raise _bad_request(message) from None
        if not isinstance(body, dict):
            raise _bad_request("Invalid type for request body: expected an object.")
        if deployment is not None:
            # Azure names the model by its deployment; the body may leave it out.
            body.setdefault("model", deployment)
        if not isinstance(body.get("model"), str):
            raise _bad_request(
                "you must provide a model parameter", "model", "missing_required_parameter"
            )
        return cast(JSONObject, body)

    # -- endpoints --------------------------------------------------------- #

    def _steer(self, text: str) -> bool:
        """Apply the error and body-shape markers; True when the answer is already sent."""
        match = _ERROR_TRIGGER.search(text)
        if match and int(match.group(1)) in _ERRORS:
            status = int(match.group(1))
            raise _ApiError(status, _ERRORS[status])
        if "[[html]]" in text:
            self._send_bytes(200, "text/html; charset=utf-8", _GATEWAY_PAGE.encode())
            return True
        return False

    def _chat(self, body: JSONObject) -> None:
        messages = _chat_messages(body)
        _check_tool_messages(messages)
        text = _chat_trigger_text(messages)
        if self._steer(text):
            return
        reply = _chat_reply(body, messages)
        if body.get("stream") is True:
            chunks: Iterator[_SSE] = ((None, chunk) for chunk in _chat_chunks(body, reply))
            self._send_sse(self._cut_or_break(chunks, text, done=True))
        else:
            self._send_answer(_chat_completion(body, reply), text)

    def _responses(self, body: JSONObject) -> None:
        items = _input_items(body)
        turn = self._previous_turn(body)
        texts = [*turn.texts, *_user_texts(items)]
        outputs = _function_outputs(items)
        for output in outputs:
            if output.get("call_id") not in turn.calls:
                call_id = output.get("call_id")
                message = f"No tool call found for function call output with call_id {call_id}."
                raise _bad_request(message, "input")
        text = texts[-1] if texts else ""
        if self._steer(text):
            return
        output_items: list[JSONObject] = []
        if isinstance(body.get("reasoning"), dict):
            output_items.append(_reasoning_item(body, text))
        name, arguments = (
            _tool_argument(body, text) if body.get("tools") and not outputs else ("", "")
        )
        status = "completed"
        if name:
            output_items.append(_function_item(name, arguments))
        else:
            answer = _responses_text(texts, outputs)
            if "[[incomplete]]" in text:
                answer, status = answer[: max(1, len(answer) // 2)], "incomplete"
            output_items.append(_message_item(answer, status))
        usage = _responses_usage(body, text, output_items)
        response = _response_object(body, output_items, status, usage)
        calls = {item["call_id"] for item in output_items if item["type"] == "function_call"}
        self.server.owner.remember(response["id"], _Turn(texts, calls))
        if body.get("stream") is True:
            padded = (body.get("stream_options") or {}).get("include_obfuscation") is not False
            events: Iterator[_SSE] = _sequenced(_response_events(response, padded))
            self._send_sse(self._cut_or_break(events, text, done=False))
        else:
            self._send_answer(response, text)

    def _previous_turn(self, body: JSONObject) -> _Turn:
        previous = body.get("previous_response_id")
        if previous is None:
            return _Turn([])
        turn = self.server.owner.turn(str(previous))
        if turn is None:
            raise _bad_request(
                f"Previous response with id '{previous}' not found.",
                "previous_response_id",
                "previous_response_not_found",
            )
        return turn

    def _model(self, model_id: str) -> None:
        for model in _MODELS:
            if model[0] == model_id:
                self._send_json(200, _model_json(*model))
                return
        message = f"The model '{model_id}' does not exist"
        raise _ApiError(
            404, _ErrorShape(message, "invalid_request_error", "model_not_found", "model")
        )

    def _cut_or_break(self, events: Iterator[_SSE], text: str, *, done: bool) -> Iterator[_SSE]:
        """The stream as the markers shape it: cut after the first text delta, or broken
        there by an error; else ended by ``[DONE]`` when the API ends it so (chat)."""
        for event in events:
            yield event
            if not _is_text_delta(event):
                continue
            if "[[stream-cut]]" in text:
                return
            if "[[stream-error]]" in text:
                error = _ApiError(500, _ERRORS[500]).body()
                if event[0] is None:  # chat: the error object as a bare data line
                    yield None, error
                else:
                    yield "error", {"type": "error", **error["error"], "sequence_number": 99}
                return
        if done:
            yield None, "[DONE]"

    # -- writing responses ------------------------------------------------- #

    def _start_response(
        self, status: int, content_type: str, extra: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("x-request-id", self.request_id)
        # Headers the real API sends that a recorder must never keep.
        self.send_header("openai-organization", "org-loopback0000000000000000")
        self.send_header("openai-project", "proj_loopback00000000000000")
        self.send_header("openai-processing-ms", str(secrets.randbelow(900) + 100))
        self.send_header("openai-version", "2020-10-01")
        self.send_header("set-cookie", f"__cf_bm={_random_alnum(43)}; path=/; HttpOnly; Secure")
        for name, value in (extra or {}).items():
            self.send_header(name, value)

    def _send_json(
        self, status: int, payload: JSONObject, extra: Mapping[str, str] | None = None
    ) -> None:
        self._send_bytes(status, "application/json", _compact(payload).encode("utf-8"), extra)

    def _send_bytes(
        self, status: int, content_type: str, data: bytes, extra: Mapping[str, str] | None = None
    ) -> None:
        self._start_response(status, content_type, extra)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_answer(self, payload: JSONObject, text: str) -> None:
        if "[[truncated-json]]" in text:
            whole = _compact(payload).encode("utf-8")
            self._send_bytes(200, "application/json", whole[: len(whole) // 2])
        else:
            self._send_json(200, payload)

    def _send_error(self, error: _ApiError) -> None:
        extra: dict[str, str] = {}
        if error.status == 429 or error.status >= 500:
            # Tell the SDK to retry, and quickly, so tests stay fast.
            extra = {"x-should-retry": "true", "retry-after-ms": "10"}
        self._send_json(error.status, error.body(), extra)

    def _send_sse(self, events: Iterator[_SSE]) -> None:
        self._start_response(200, "text/event-stream; charset=utf-8", {"cache-control": "no-cache"})
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for name, data in events:
            # One event per chunk, written straight to the socket, like a live stream.
            head = f"event: {name}\n" if name is not None else ""
            line = data if isinstance(data, str) else _compact(data)
            chunk = f"{head}data: {line}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# --------------------------------------------------------------------------- #
# Public server object
# --------------------------------------------------------------------------- #


class OpenAIServer:
    """A fake OpenAI API on 127.0.0.1 with a random free port.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``url`` is the
    origin; the SDK's ``base_url`` is ``url + "/v1"`` (``base_url_for`` gives the others).
    """

    url: str
    log: list[LoggedRequest]

    def __init__(self) -> None:
        self.log = []
        self._lock = threading.Lock()
        self._turns: dict[str, _Turn] = {}
        #: Keys answered with a 401 ``invalid_api_key``, as a revoked or made-up key is.
        self.refused_keys: set[str] = {REPLAY_STAND_IN_KEY}
        self._httpd = _HTTPServer(self)
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """What ``OPENAI_BASE_URL`` is set to for this server."""
        return self.url + "/v1"

    @property
    def gateway_url(self) -> str:
        """An OpenRouter-like gateway's base URL on this server."""
        return self.url + "/api/v1"

    def remember(self, response_id: str, turn: _Turn) -> None:
        with self._lock:
            self._turns[response_id] = turn

    def turn(self, response_id: str) -> _Turn | None:
        with self._lock:
            return self._turns.get(response_id)

    def issued_responses(self) -> list[str]:
        with self._lock:
            return list(self._turns)

    # -- lifecycle --------------------------------------------------------- #

    def start(self) -> OpenAIServer:
        # A short poll interval keeps stop() (which waits for the next poll) fast in tests.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-server {self.url}",
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

    def __enter__(self) -> OpenAIServer:
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
        with self._lock:
            self.log.append(request)

    def requests_to(self, path: str) -> list[LoggedRequest]:
        with self._lock:
            return [request for request in self.log if request.path == path]

    def reset_log(self) -> None:
        with self._lock:
            self.log.clear()
