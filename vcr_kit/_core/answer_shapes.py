"""The documented shape of each endpoint's success: one rule per endpoint, one table.

A 2xx whose JSON parses but is not what its endpoint answers (a Message from
``POST /v1/messages``, ``{"input_tokens": N}`` from a token count, a batch, a page of
models...) is not the API's answer: a gateway's, a mock's, a proxy's own. Stored, it
would replay forever as if the API had said it, and the SDK would build a wrong object
from it, or fail inside the caller's test. ``shape_refusal`` says why such an answer
is never stored; ``storable.answer_refusal`` asks it for every HTTP answer, so the
recorder, ``drift``, ``check`` and replay apply the same table.

Each rule checks what the SDK reads (the fields it needs to build its object, the order
of a stream's events that its accumulation relies on), not every field the API
documents: an answer the API sends with a field more, or a new block or event type,
still passes. An endpoint with no rule (the Files API, Bedrock's token count) is not
judged. Pure: plain JSON in, a reason or None out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["RULES", "shape_refusal"]

#: A problem with a value: where below the checked field, and what is wrong ("" on the
#: value itself).
_Problem = tuple[str, str]


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def _object_of_type(value: Any, wanted: str) -> _Problem | None:
    if not isinstance(value, Mapping):
        return "", f"{_kind(value)}, not an object"
    if value.get("type") != wanted:
        return ".type", f"{value.get('type')!r}, not {wanted!r}"
    return None


def _string(value: Mapping[str, Any], field: str) -> _Problem | None:
    if not isinstance(value.get(field), str):
        return f".{field}", f"{_kind(value.get(field))}, not a string"
    return None


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


#: The fields of content blocks the SDK reads when it builds or joins one.
_BLOCK_STRINGS: Final[Mapping[str, tuple[str, ...]]] = {
    "text": ("text",),
    "thinking": ("thinking",),
    "redacted_thinking": ("data",),
    "tool_use": ("id", "name"),
    "server_tool_use": ("id", "name"),
}


def _block(value: Any) -> _Problem | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        return "", "not a content block (an object with a string type)"
    for field in _BLOCK_STRINGS.get(value["type"], ()):
        problem = _string(value, field)
        if problem is not None:
            return problem
    return None


def message(value: Any) -> _Problem | None:
    """A Message (also the one a stream's ``message_start`` opens, its content joined
    from the events that follow)."""
    problem = _object_of_type(value, "message") or _string(value, "id") or _string(value, "model")
    if problem is not None:
        return problem
    if value.get("role") != "assistant":
        return ".role", f"{value.get('role')!r}, not 'assistant'"
    content = value.get("content")
    if not isinstance(content, list):
        return ".content", f"{_kind(content)}, not a list"
    for i, block in enumerate(content):
        problem = _block(block)
        if problem is not None:
            return f".content[{i}]{problem[0]}", problem[1]
    usage = value.get("usage")
    if not isinstance(usage, Mapping):
        return ".usage", f"{_kind(usage)}, not an object"
    for field in ("input_tokens", "output_tokens"):  # required: the SDK's Usage has them
        if not _count(usage.get(field)):
            return f".usage.{field}", f"{usage.get(field)!r}, not a token count"
    return _stop_fields(value) or _usage(usage)


def _stop_fields(value: Mapping[str, Any]) -> _Problem | None:
    for field in ("stop_reason", "stop_sequence"):
        if not isinstance(value.get(field), (str, type(None))):
            return f".{field}", f"{_kind(value.get(field))}, not a string or null"
    return None


def _usage(usage: Mapping[str, Any], where: str = ".usage") -> _Problem | None:
    """Every count of a usage object (``*_tokens``, ``*_requests``, in its nested
    objects too) a whole number or null: the SDK types them so."""
    for field, value in usage.items():
        if field.endswith(("_tokens", "_requests")) and value is not None and not _count(value):
            return f"{where}.{field}", f"{value!r}, not a count"
        if isinstance(value, Mapping):
            problem = _usage(value, f"{where}.{field}")
            if problem is not None:
                return problem
    return None


def token_count(value: Any) -> _Problem | None:
    if not isinstance(value, Mapping):
        return "", f"{_kind(value)}, not an object"
    if not _count(value.get("input_tokens")):
        return ".input_tokens", f"{value.get('input_tokens')!r}, not a token count"
    return None


_BATCH_COUNTS: Final = ("processing", "succeeded", "errored", "canceled", "expired")


def batch(value: Any) -> _Problem | None:
    problem = (
        _object_of_type(value, "message_batch")
        or _string(value, "id")
        or _string(value, "processing_status")
        or _string(value, "created_at")
        or _string(value, "expires_at")
    )
    if problem is not None:
        return problem
    counts = value.get("request_counts")
    if not isinstance(counts, Mapping):
        return ".request_counts", f"{_kind(counts)}, not an object"
    for field in _BATCH_COUNTS:
        if not _count(counts.get(field)):
            return f".request_counts.{field}", f"{counts.get(field)!r}, not a count"
    return None


def batch_deleted(value: Any) -> _Problem | None:
    return _object_of_type(value, "message_batch_deleted") or _string(value, "id")


def batch_result(value: Any) -> _Problem | None:
    if not isinstance(value, Mapping):
        return "", f"{_kind(value)}, not an object"
    problem = _string(value, "custom_id")
    if problem is not None:
        return problem
    result = value.get("result")
    if not isinstance(result, Mapping) or not isinstance(result.get("type"), str):
        return ".result", "not an object with a string type"
    return None


def model(value: Any) -> _Problem | None:
    return (
        _object_of_type(value, "model")
        or _string(value, "id")
        or _string(value, "display_name")
        or _string(value, "created_at")
    )


def _page(item: Callable[[Any], _Problem | None]) -> Callable[[Any], _Problem | None]:
    def page(value: Any) -> _Problem | None:
        if not isinstance(value, Mapping):
            return "", f"{_kind(value)}, not an object"
        data = value.get("data")
        if not isinstance(data, list):
            return ".data", f"{_kind(data)}, not a list"
        if not isinstance(value.get("has_more"), bool):
            return ".has_more", f"{_kind(value.get('has_more'))}, not a boolean"
        for i, entry in enumerate(data):
            problem = item(entry)
            if problem is not None:
                return f".data[{i}]{problem[0]}", problem[1]
        return None

    return page


# -- a stream of Messages events ---------------------------------------------------------


def message_stream(events: list[Any]) -> tuple[int, _Problem] | None:
    """The first event (its position, and the problem) of a stream the SDK's
    accumulation could not follow: every event an object with a string ``type`` (its
    SSE name), ``message_start`` first and once, each block started at the next index
    before its deltas and stop, each delta of the kind its block takes. Event types
    the SDK does not know are left alone (it skips them too)."""
    started: list[str] | None = None
    for number, event in enumerate(events):
        problem = _event_problem(event, started)
        if problem is not None:
            return number, problem
        data = event["data"]
        if data["type"] == "message_start":
            started = []
        elif data["type"] == "content_block_start" and started is not None:
            started.append(data["content_block"]["type"])
    return None


#: The delta kinds and the block each one joins (None: any block).
_DELTA_BLOCKS: Final[Mapping[str, tuple[str, ...] | None]] = {
    "text_delta": ("text",),
    "thinking_delta": ("thinking",),
    "signature_delta": ("thinking",),
    "citations_delta": ("text",),
    "input_json_delta": ("tool_use", "server_tool_use", "mcp_tool_use"),
}
_DELTA_FIELDS: Final[Mapping[str, str]] = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "input_json_delta": "partial_json",
}


def _event_problem(event: Any, started: list[str] | None) -> _Problem | None:
    if not isinstance(event, Mapping) or not isinstance(event.get("data"), Mapping):
        return "", "not an event with a JSON object"
    data = event["data"]
    kind = data.get("type")
    if not isinstance(kind, str):
        return ".data.type", f"{_kind(kind)}, not a string"
    if event.get("event") not in (None, kind) and kind != "error":
        return ".event", f"{event.get('event')!r}, but its data is a {kind!r} event"
    if kind in ("ping", "error"):
        return None
    if kind == "message_start":
        if started is not None:
            return ".data.type", "a second message_start"
        problem = message(data.get("message"))
        return None if problem is None else (f".data.message{problem[0]}", problem[1])
    if started is None and kind in _AFTER_START:
        return ".data.type", f"{kind} before message_start"
    if kind == "content_block_start":
        following = len(started or ())
        if type(data.get("index")) is not int or data["index"] != following:
            return ".data.index", f"{data.get('index')!r}, not the next block ({following})"
        problem = _block(data.get("content_block"))
        return None if problem is None else (f".data.content_block{problem[0]}", problem[1])
    if kind in ("content_block_delta", "content_block_stop"):
        index = data.get("index")
        if type(index) is not int or not 0 <= index < len(started or ()):
            return ".data.index", f"{index!r}, not a block started before it"
        if kind == "content_block_delta":
            return _delta_problem(data.get("delta"), (started or [])[index])
    if kind == "message_delta":
        if not isinstance(data.get("delta"), Mapping):
            return ".data.delta", f"{_kind(data.get('delta'))}, not an object"
        if not isinstance(data.get("usage"), Mapping):
            return ".data.usage", f"{_kind(data.get('usage'))}, not an object"
        problem = _stop_fields(data["delta"])
        if problem is not None:
            return f".data.delta{problem[0]}", problem[1]
        problem = _usage(data["usage"])
        return None if problem is None else (f".data{problem[0]}", problem[1])
    return None


_AFTER_START: Final = frozenset(
    {"content_block_start", "content_block_delta", "content_block_stop", "message_delta",
     "message_stop"}
)  # fmt: skip


def _delta_problem(delta: Any, block: str) -> _Problem | None:
    if not isinstance(delta, Mapping) or not isinstance(delta.get("type"), str):
        return ".data.delta", "not an object with a string type"
    kind = delta["type"]
    blocks = _DELTA_BLOCKS.get(kind)
    if blocks is not None and block not in blocks:
        return ".data.delta.type", f"a {kind} to a {block} block"
    field = _DELTA_FIELDS.get(kind)
    if field is not None and not isinstance(delta.get(field), str):
        return f".data.delta.{field}", f"{_kind(delta.get(field))}, not a string"
    return None


# -- the table ---------------------------------------------------------------------------

#: (method, path as stored, what the answer is, its rule; None: a stream's rule, or a
#: JSON Lines file's rule for each line). The first whose method and path match is the
#: endpoint's. A path may carry a platform's prefix (Foundry's ``/anthropic``).
RULES: Final[tuple[tuple[str, re.Pattern[str], str, Callable[[Any], _Problem | None]], ...]] = (
    ("POST", re.compile(r"(?:/[^/]+)*/v1/messages/count_tokens"), "a token count", token_count),
    ("POST", re.compile(r"/v1/projects/.+/models/count-tokens:rawPredict"), "a token count",
     token_count),
    ("POST", re.compile(r"(?:/[^/]+)*/v1/messages"), "a Message", message),
    ("POST", re.compile(r"/v1/projects/.+/models/[^/]+:(?:stream)?[Rr]awPredict"), "a Message",
     message),
    ("POST", re.compile(r"/model/[^/]+/invoke(?:-with-response-stream)?"), "a Message", message),
    ("POST", re.compile(r"(?:/[^/]+)*/v1/messages/batches"), "a message batch", batch),
    ("GET", re.compile(r"(?:/[^/]+)*/v1/messages/batches"), "a page of message batches",
     _page(batch)),
    ("GET", re.compile(r"(?:/[^/]+)*/v1/messages/batches/[^/]+/results"), "a batch result",
     batch_result),
    ("GET", re.compile(r"(?:/[^/]+)*/v1/messages/batches/[^/]+"), "a message batch", batch),
    ("POST", re.compile(r"(?:/[^/]+)*/v1/messages/batches/[^/]+/cancel"), "a message batch",
     batch),
    ("DELETE", re.compile(r"(?:/[^/]+)*/v1/messages/batches/[^/]+"), "a deleted message batch",
     batch_deleted),
    ("GET", re.compile(r"(?:/[^/]+)*/v1/models"), "a page of models", _page(model)),
    ("GET", re.compile(r"(?:/[^/]+)*/v1/models/[^/]+"), "a model", model),
)  # fmt: skip


def shape_refusal(request: Any, response: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, reason) when the 2xx ``response`` (its stored form) is not the documented
    shape of the endpoint ``request`` (its stored form: ``method``, ``path``) asked;
    None when it is, or when no rule knows the endpoint."""
    if not isinstance(request, Mapping):
        return None
    method, path = request.get("method"), request.get("path")
    if not isinstance(method, str) or not isinstance(path, str):
        return None
    for rule_method, pattern, what, rule in RULES:
        if rule_method == method.upper() and pattern.fullmatch(path):
            return _judge(f"{method.upper()} {path}", what, rule, response)
    return None


def _judge(
    endpoint: str, what: str, rule: Callable[[Any], _Problem | None], response: Mapping[str, Any]
) -> tuple[str, str] | None:
    status = response.get("status")
    said = f"a {status} from {endpoint} that is not {what}"
    if "events" in response:
        if rule is not message or not isinstance(response["events"], list):
            return None  # not a stream's endpoint, or no list: the fixture kinds say so
        found = message_stream(response["events"])
        if found is None:
            return None
        number, (where, why) = found
        return f"response.events[{number}]{where}", f"{said} stream: {why}"
    if "frames" in response:
        return None  # Bedrock's event stream: its frames are checked by storable
    if "jsonl" in response:
        lines = response["jsonl"]
        if rule is not batch_result or not isinstance(lines, list):
            return ("response", f"{said}: JSON Lines") if rule is not batch_result else None
        for i, line in enumerate(lines):
            problem = rule(line)
            if problem is not None:
                return f"response.jsonl[{i}]{problem[0]}", f"{said}: {problem[1]}"
        return None
    if "body" not in response:  # text or bytes; no body at all is the fixture kinds' to say
        return ("response", f"{said}: not JSON") if response.keys() & {"text", "base64"} else None
    found_in_body = rule(response["body"])
    if found_in_body is None:
        return None
    return f"response.body{found_in_body[0]}", f"{said}: {found_in_body[1]}"
