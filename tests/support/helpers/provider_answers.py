"""Every provider's answers in their stored form, as hypothesis strategies: the
requests and answers the guarantees' properties run over (the secrets gate, what is
never stored, drift's rules, the ids).

One entry of ``PROVIDERS`` per provider vcr_kit records (Anthropic, OpenAI, Gemini),
each with its endpoints (a stored request), the answers the request earned (plain and
streamed, as the API documents them) and the answers it did not: a transient status in
the provider's own error shape, a cut stream, an HTML page, JSON cut short, a body not
of the endpoint's documented shape. Shapes follow the API references (the same as
``tests/support/servers``' loopback servers answer); values are drawn.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from hypothesis import strategies as st

__all__ = [
    "ENDPOINTS",
    "PROVIDER_NAMES",
    "UNEARNED_CASES",
    "Endpoint",
    "earned_answers",
    "endpoints",
    "error_object",
    "gemini_bad_key",
    "good_answers",
    "stored_request",
    "transient_answers",
    "unearned_classes",
]

PROVIDER_NAMES = ("anthropic", "openai", "gemini")
#: Statuses about the key, the account or the moment: never stored, at every provider.
TRANSIENT_STATUSES = st.sampled_from([401, 402, 403, 408, 409, 429]) | st.integers(500, 599)
JSON_CT = {"content-type": "application/json"}
SSE_CT = {"content-type": "text/event-stream"}

words = st.text("abcdefghij klmnop.,", min_size=0, max_size=12)
counts = st.integers(0, 5000)
hexish = st.text("0123456789abcdefABCDEFxyzXYZ", min_size=24, max_size=30)


class Endpoint(NamedTuple):
    """One endpoint of a provider: its stored request for a body, and its answers."""

    provider: str
    name: str
    method: str
    path: str
    streams: bool
    #: A good answer the request earned (stored form), drawn.
    answer: Callable[[], st.SearchStrategy[dict[str, Any]]]


def stored_request(endpoint: Endpoint, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stored request of ``endpoint`` (the provider named, as the recorder stores it)."""
    request: dict[str, Any] = {
        "method": endpoint.method,
        "path": endpoint.path,
        "body": {"model": "m", **(body or {})},
    }
    if endpoint.provider != "anthropic":
        request["provider"] = endpoint.provider
    if endpoint.streams and endpoint.provider != "gemini":
        request["body"]["stream"] = True
    if endpoint.streams and endpoint.provider == "gemini":
        request["query"] = [["alt", "sse"]]
    return request


# --------------------------------------------------------------------------- #
# Anthropic
# --------------------------------------------------------------------------- #


def _anthropic_message() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda text, i, o: {
            "id": "msg_01" + "A" * 22,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-7",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": i, "output_tokens": o},
        },
        words,
        counts,
        counts,
    )


def _anthropic_plain() -> st.SearchStrategy[dict[str, Any]]:
    return _anthropic_message().map(lambda m: {"status": 200, "headers": JSON_CT, "body": m})


def _anthropic_stream() -> st.SearchStrategy[dict[str, Any]]:
    def events(message: dict[str, Any], pieces: list[str]) -> dict[str, Any]:
        out: list[dict[str, Any]] = [
            {"event": "message_start", "data": {"type": "message_start", "message": message}},
            {
                "event": "content_block_start",
                "data": {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            },
        ]
        out += [
            {
                "event": "content_block_delta",
                "data": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": p},
                },
            }
            for p in pieces
        ]
        out += [
            {"event": "content_block_stop", "data": {"type": "content_block_stop", "index": 0}},
            {
                "event": "message_delta",
                "data": {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 1},
                },
            },
            {"event": "message_stop", "data": {"type": "message_stop"}},
        ]
        return {"status": 200, "headers": SSE_CT, "events": out}

    return st.builds(events, _anthropic_message(), st.lists(words, max_size=3))


# --------------------------------------------------------------------------- #
# OpenAI
# --------------------------------------------------------------------------- #


def _tool_calls() -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(
        st.builds(
            lambda ident, name: {
                "id": "call_" + ident,
                "type": "function",
                "function": {"name": name, "arguments": "{}"},
            },
            hexish,
            st.sampled_from(["get_weather", "lookup"]),
        ),
        max_size=2,
        unique_by=lambda call: call["id"],
    )


def _chat_completion() -> st.SearchStrategy[dict[str, Any]]:
    def build(
        ident: str,
        created: int,
        text: str,
        calls: list[dict[str, Any]],
        *,
        p: int,
        c: int,
        fingerprint: str,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": "chatcmpl-" + ident,
            "object": "chat.completion",
            "created": created,
            "model": "gpt-4.1-2025-04-14",
            "system_fingerprint": fingerprint,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": p,
                "completion_tokens": c,
                "total_tokens": p + c,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        }

    fingerprint = st.text("0123456789abcdef", min_size=10, max_size=10).map("fp_".__add__)
    return st.builds(
        build,
        hexish,
        st.integers(1_600_000_000, 1_900_000_000),
        words,
        _tool_calls(),
        p=counts,
        c=counts,
        fingerprint=fingerprint,
    )


def _chat_plain() -> st.SearchStrategy[dict[str, Any]]:
    return _chat_completion().map(lambda b: {"status": 200, "headers": JSON_CT, "body": b})


def _chat_stream() -> st.SearchStrategy[dict[str, Any]]:
    def events(body: dict[str, Any], pieces: list[str]) -> dict[str, Any]:
        head = {k: body[k] for k in ("id", "created", "model", "system_fingerprint")}
        chunk = {"object": "chat.completion.chunk", **head}
        out = [
            {
                "data": {
                    **chunk,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": ""},
                            "finish_reason": None,
                        }
                    ],
                    "obfuscation": "x1",
                }
            }
        ]
        out += [
            {
                "data": {
                    **chunk,
                    "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}],
                    "obfuscation": "abc",
                }
            }
            for p in pieces
        ]
        out += [
            {"data": {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}},
            {"data": {**chunk, "choices": [], "usage": body["usage"]}},
            {"data_text": "[DONE]"},
        ]
        return {"status": 200, "headers": SSE_CT, "events": out}

    return st.builds(events, _chat_completion(), st.lists(words, max_size=3))


def _response() -> st.SearchStrategy[dict[str, Any]]:
    def build(
        ident: str, message: str, created: int, text: str, *, call: str | None, i: int, o: int
    ) -> dict[str, Any]:
        output: list[dict[str, Any]] = [
            {
                "type": "message",
                "id": "msg_" + message,
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        ]
        if call is not None:
            output.append(
                {
                    "type": "function_call",
                    "id": "fc_" + call,
                    "call_id": "call_" + call,
                    "name": "lookup",
                    "arguments": "{}",
                    "status": "completed",
                }
            )
        return {
            "id": "resp_" + ident,
            "object": "response",
            "created_at": created,
            "status": "completed",
            "model": "gpt-4.1-2025-04-14",
            "output": output,
            "previous_response_id": None,
            "usage": {
                "input_tokens": i,
                "output_tokens": o,
                "total_tokens": i + o,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    return st.builds(
        build,
        hexish,
        hexish,
        st.integers(1_600_000_000, 1_900_000_000),
        words,
        call=st.none() | hexish,
        i=counts,
        o=counts,
    )


def _responses_plain() -> st.SearchStrategy[dict[str, Any]]:
    return _response().map(lambda b: {"status": 200, "headers": JSON_CT, "body": b})


def _responses_stream(final: str = "response.completed") -> Callable[[], Any]:
    def events(body: dict[str, Any], pieces: list[str]) -> dict[str, Any]:
        started = {**body, "status": "in_progress", "output": [], "usage": None}
        item = body["output"][0]
        out = [
            {
                "event": "response.created",
                "data": {"type": "response.created", "sequence_number": 0, "response": started},
            }
        ]
        out += [
            {
                "event": "response.output_text.delta",
                "data": {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": p,
                    "sequence_number": n,
                },
            }
            for n, p in enumerate(pieces, 1)
        ]
        out.append(
            {
                "event": final,
                "data": {"type": final, "sequence_number": len(pieces) + 1, "response": body},
            }
        )
        return {"status": 200, "headers": SSE_CT, "events": out}

    return lambda: st.builds(events, _response(), st.lists(words, max_size=3))


def _embeddings() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda vectors, p: {
            "status": 200,
            "headers": JSON_CT,
            "body": {
                "object": "list",
                "model": "text-embedding-3-small",
                "data": [
                    {"object": "embedding", "index": n, "embedding": v}
                    for n, v in enumerate(vectors)
                ],
                "usage": {"prompt_tokens": p, "total_tokens": p},
            },
        },
        st.lists(
            st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=4), min_size=1, max_size=2
        ),
        counts,
    )


# --------------------------------------------------------------------------- #
# Gemini
# --------------------------------------------------------------------------- #


def _gemini_chunk(text: str, finish: str | None, ident: str, p: int, c: int) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"parts": [{"text": text}], "role": "model"},
        "index": 0,
    }
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "modelVersion": "gemini-2.5-flash",
        "responseId": ident,
        "usageMetadata": {
            "promptTokenCount": p,
            "candidatesTokenCount": c,
            "totalTokenCount": p + c,
        },
    }


def _gemini_plain() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda text, finish, ident, p, c: {
            "status": 200,
            "headers": JSON_CT,
            "body": _gemini_chunk(text, finish, ident, p, c),
        },
        words,
        st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY"]),
        hexish,
        counts,
        counts,
    )


def _gemini_stream() -> st.SearchStrategy[dict[str, Any]]:
    def events(pieces: list[str], last: str, ident: str, p: int, c: int) -> dict[str, Any]:
        out = [{"data": _gemini_chunk(t, None, ident, p, c)} for t in pieces]
        out.append({"data": _gemini_chunk(last, "STOP", ident, p, c)})
        return {"status": 200, "headers": SSE_CT, "events": out}

    return st.builds(events, st.lists(words, max_size=3), words, hexish, counts, counts)


def _gemini_embedding() -> st.SearchStrategy[dict[str, Any]]:
    return st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=4).map(
        lambda v: {"status": 200, "headers": JSON_CT, "body": {"embedding": {"values": v}}}
    )


GEMINI = "/v1beta/models/gemini-2.5-flash"
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("anthropic", "messages", "POST", "/v1/messages", False, _anthropic_plain),
    Endpoint("anthropic", "messages stream", "POST", "/v1/messages", True, _anthropic_stream),
    Endpoint("openai", "chat", "POST", "/v1/chat/completions", False, _chat_plain),
    Endpoint("openai", "chat stream", "POST", "/v1/chat/completions", True, _chat_stream),
    Endpoint("openai", "responses", "POST", "/v1/responses", False, _responses_plain),
    Endpoint("openai", "responses stream", "POST", "/v1/responses", True, _responses_stream()),
    Endpoint("openai", "embeddings", "POST", "/v1/embeddings", False, _embeddings),
    Endpoint("gemini", "generate", "POST", f"{GEMINI}:generateContent", False, _gemini_plain),
    Endpoint(
        "gemini", "generate stream", "POST", f"{GEMINI}:streamGenerateContent", True, _gemini_stream
    ),
    Endpoint(
        "gemini",
        "embed",
        "POST",
        "/v1beta/models/gemini-embedding-001:embedContent",
        False,
        _gemini_embedding,
    ),
)
endpoints = st.sampled_from(ENDPOINTS)


def error_object(provider: str, status: int, message: str = "nope") -> dict[str, Any]:
    """The provider's own error body for ``status``, as its API answers it."""
    if provider == "openai":
        kind = "server_error" if status >= 500 else "invalid_request_error"
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}
    if provider == "gemini":
        names = {
            400: "INVALID_ARGUMENT",
            401: "UNAUTHENTICATED",
            403: "PERMISSION_DENIED",
            404: "NOT_FOUND",
            429: "RESOURCE_EXHAUSTED",
            503: "UNAVAILABLE",
        }
        return {
            "error": {"code": status, "message": message, "status": names.get(status, "INTERNAL")}
        }
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}


#: Gemini's answer to a bad key: a 400, whose reason says it is about the key.
def gemini_bad_key(reason: str = "API_KEY_INVALID") -> dict[str, Any]:
    body = error_object("gemini", 400, "API key not valid. Please pass a valid API key.")
    body["error"]["details"] = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        }
    ]
    return {"status": 400, "headers": JSON_CT, "body": body}


def good_answers(endpoint: Endpoint) -> st.SearchStrategy[dict[str, Any]]:
    """Answers ``endpoint``'s request earned, as the API documents them."""
    return endpoint.answer()


def earned_answers(endpoint: Endpoint) -> st.SearchStrategy[dict[str, Any]]:
    """Good answers, and the errors the request itself earned (a 400, a 404, a 413)."""
    errors = st.sampled_from([400, 404, 413, 422]).map(
        lambda status: {
            "status": status,
            "headers": JSON_CT,
            "body": error_object(endpoint.provider, status),
        }
    )
    return good_answers(endpoint) | errors


def _cut(answer: dict[str, Any], data: st.DataObject, provider: str) -> dict[str, Any]:
    """``answer`` (a whole stream) cut before its end: the provider's final event (the
    ``[DONE]``, ``response.completed``, the chunk with ``finishReason``,
    ``message_stop``) and all after it gone, or an event's JSON cut mid-way."""
    events = answer["events"]
    cut = copy.deepcopy(answer)
    if data.draw(st.booleans(), label="mid-event"):
        at = data.draw(st.integers(0, len(events) - 1), label="event cut mid-way")
        cut["events"][at] = {k: v for k, v in events[at].items() if k != "data"}
        cut["events"][at]["data_text"] = '{"cut": "mid-ev'
        return cut
    final = max(n for n, e in enumerate(events) if _is_final(e, provider))
    kept = data.draw(st.integers(0, final), label="events kept")
    cut["events"] = cut["events"][:kept]
    return cut


def _is_final(event: dict[str, Any], provider: str) -> bool:
    if provider == "anthropic":
        return event.get("event") == "message_stop"
    if provider == "gemini":
        return any("finishReason" in c for c in event["data"].get("candidates", []))
    return event.get("data_text") == "[DONE]" or event.get("event") in (
        "response.completed",
        "response.incomplete",
    )


def _stream_error(endpoint: Endpoint) -> dict[str, Any]:
    """An error event that ends a stream: the moment's, never the request's."""
    if endpoint.provider == "gemini":
        event: dict[str, Any] = {"data": error_object("gemini", 503)}
    elif endpoint.provider == "anthropic":
        event = {"event": "error", "data": error_object("anthropic", 529)}
    elif endpoint.name == "responses stream":
        event = {
            "event": "response.failed",
            "data": {
                "type": "response.failed",
                "response": {"status": "failed", "error": {"code": "server_error"}},
            },
        }
    else:
        event = {"data": error_object("openai", 500)}
    return event


def unearned_classes(endpoint: Endpoint) -> list[str]:
    """The classes of answer ``endpoint``'s request never earns (``transient_answers``)."""
    return (
        ["status", "page", "html", "cut json", "shape"]
        + (["cut stream", "stream error"] if endpoint.streams else [])
        + (["bad key"] if endpoint.provider == "gemini" else [])
    )


#: Every (endpoint, class of unearned answer): a property that checks each of them in
#: every example cannot miss a class that one provider's rule stopped refusing.
UNEARNED_CASES = [(e, how) for e in ENDPOINTS for how in unearned_classes(e)]


@st.composite
def transient_answers(
    draw: st.DrawFn, endpoint: Endpoint, how: str | None = None
) -> tuple[str, dict[str, Any]]:
    """(what, an answer) that ``endpoint``'s request did not earn: never stored, never
    compared by drift. ``how``: one of ``unearned_classes(endpoint)``, else any."""
    if how is None:
        how = draw(st.sampled_from(unearned_classes(endpoint)))
    if how == "status":
        status = draw(TRANSIENT_STATUSES)
        return how, {
            "status": status,
            "headers": JSON_CT,
            "body": error_object(endpoint.provider, status),
        }
    if how == "page":  # an error status without the provider's error object
        status = draw(st.sampled_from([400, 404, 413]))
        text = draw(st.sampled_from(["Not Found", "Bad Request", ""]))
        return how, {"status": status, "headers": {"content-type": "text/plain"}, "text": text}
    if how == "html":  # a gateway's page, whatever its status
        status = draw(st.sampled_from([200, 400, 404]))
        return how, {
            "status": status,
            "headers": {"content-type": "text/html; charset=utf-8"},
            "text": "<html><body>Bad gateway</body></html>",
        }
    if how == "cut json":
        status = draw(st.sampled_from([200, 400]))
        return how, {"status": status, "headers": JSON_CT, "text": '{"id": "x", "obj'}
    if how == "bad key":
        reason = draw(
            st.sampled_from(["API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "BILLING_DISABLED"])
        )
        return how, gemini_bad_key(reason)
    if how == "stream error":
        answer = draw(good_answers(endpoint))
        events = answer["events"]
        at = draw(st.integers(0, len(events) - 1))
        answer["events"] = [*events[:at], _stream_error(endpoint)]
        return how, answer
    if how == "cut stream":
        return how, _cut(draw(good_answers(endpoint)), draw(st.data()), endpoint.provider)
    # A 200 that is not the endpoint's documented answer: any JSON object of another shape.
    body = draw(
        st.sampled_from(
            [
                {"ok": True},
                {"object": "thing"},
                {"data": {}},
                [1, 2],
                {"candidates": "no"},
                {"object": "response", "output": {}},
            ]
        )
    )
    if endpoint.streams:
        return how, {"status": 200, "headers": JSON_CT, "body": body}
    return how, {"status": 200, "headers": JSON_CT, "body": body}
