"""Google Gemini (the Gemini Developer API, as ``google-genai`` reaches it): its
traffic's facts.

``generateContent``, ``streamGenerateContent`` (``alt=sse``, part of the key) and
``embedContent``. The key travels in ``x-goog-api-key`` (or ``?key=``, never
stored nor keyed); a bad key is a 400 ``API_KEY_INVALID``, never stored. An answer's
``responseId`` has no prefix: it is found by its field and given afresh on replay.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ..id_vocabulary import IdVocabulary
from .base import Provider, StoredEvents, Usage

__all__ = ["PROVIDER"]

#: Reasons in a 400's ``details`` that are about the key or the account, not the
#: request (the API answers them with 400, not 401/403).
_UNEARNED_REASONS: Final = {
    "API_KEY_INVALID": "the key",
    "API_KEY_SERVICE_BLOCKED": "the key",
    "API_KEY_HTTP_REFERRER_BLOCKED": "the key",
    "API_KEY_IP_ADDRESS_BLOCKED": "the key",
    "BILLING_DISABLED": "the account",
    "SERVICE_DISABLED": "the account",
}


def _error(body: Any) -> Mapping[str, Any] | None:
    if isinstance(body, list) and len(body) == 1:  # a stream's error comes as a list
        body = body[0]
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        error: Mapping[str, Any] = body["error"]
        return error
    return None


def _finished(chunk: Any) -> bool:
    candidates = chunk.get("candidates") if isinstance(chunk, Mapping) else None
    if isinstance(chunk, Mapping) and "promptFeedback" in chunk and not candidates:
        return True  # a blocked prompt: the API's whole answer
    return isinstance(candidates, list) and any(
        isinstance(c, Mapping) and c.get("finishReason") for c in candidates
    )


def stream_refusal(events: StoredEvents) -> str | None:
    """A stream is whole when a chunk gave its ``finishReason``; an error chunk is
    never stored."""
    finished = False
    for number, event in enumerate(events, 1):
        if not isinstance(event, dict) or "data" not in event:
            return f"the stream was cut mid-event (event {number} is not JSON)"
        data = event["data"]
        if _error(data) is not None:
            return f"the stream ended with an error (event {number}): it may depend on the moment"
        finished = finished or _finished(data)
    if finished:
        return None
    return f"the stream ended after {len(events)} events, before a chunk gave its finishReason"


def error_refusal(status: int, body: Any) -> str | None:
    """A 400 about the key or the account (``API_KEY_INVALID``) is never stored."""
    error = _error(body)
    if status != 400 or error is None:
        return None
    details = error.get("details")
    for detail in details if isinstance(details, list) else ():
        reason = detail.get("reason") if isinstance(detail, Mapping) else None
        if reason in _UNEARNED_REASONS:
            return f"a 400 {reason} depends on {_UNEARNED_REASONS[reason]}, not on the request"
    return None


def is_error_object(body: Any) -> bool:
    return _error(body) is not None


def _generated(body: Any) -> str | None:
    if isinstance(body, list):
        # ``streamGenerateContent`` without ``alt=sse``: the chunks as one JSON array,
        # whole only when a chunk gave its finishReason (as a stream's events).
        for number, chunk in enumerate(body):
            why = _generated(chunk) if isinstance(chunk, Mapping) else "it is not an object"
            if why is not None:
                return f"its item {number}: {why}"
        if not any(_finished(chunk) for chunk in body):
            return f"its {len(body)} chunks end before one gave its finishReason"
        return None
    if not isinstance(body, Mapping):
        return "it is not an object"
    if not isinstance(body.get("candidates"), list) and "promptFeedback" not in body:
        return 'it has neither "candidates" nor "promptFeedback"'
    return None


def _embedded(body: Any) -> str | None:
    if not isinstance(body, Mapping):
        return "it is not an object"
    if not isinstance(body.get("embedding"), Mapping) and not isinstance(
        body.get("embeddings"), list
    ):
        return 'it has no "embedding"'
    return None


_RULES: Final = (
    ("POST", re.compile(r"(?:/.*)?/models/[^/]+:(?:stream)?[Gg]enerateContent"),
     "a generated content", _generated),
    ("POST", re.compile(r"(?:/.*)?/models/[^/]+:(?:embedContent|batchEmbedContents)"),
     "an embedding", _embedded),
)  # fmt: skip


def shape_refusal(method: str, path: str, response: Mapping[str, Any]) -> tuple[str, str] | None:
    for rule_method, pattern, what, rule in _RULES:
        if rule_method == method.upper() and pattern.fullmatch(path):
            status = response.get("status")
            if "events" in response and isinstance(response["events"], list):
                for number, event in enumerate(response["events"]):
                    why = rule(event.get("data") if isinstance(event, dict) else None)
                    if why is not None:
                        return f"response.events[{number}]", f"a {status} that is not {what}: {why}"
                return None
            if "body" not in response:
                if response.keys() & {"text", "base64"}:
                    return "response", f"a {status} that is not {what}: not JSON"
                return None
            why = rule(response["body"])
            if why is None:
                return None
            return "response.body", f"a {status} that is not {what}: {why}"
    return None


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _usage_of(chunk: Any) -> Usage:
    metadata = chunk.get("usageMetadata") if isinstance(chunk, Mapping) else None
    if not isinstance(metadata, Mapping):
        return []
    cached = _count(metadata.get("cachedContentTokenCount"))
    thoughts = _count(metadata.get("thoughtsTokenCount"))
    counted: dict[str, Any] = {
        # Gemini counts cached tokens inside the prompt, and thinking apart from the
        # answer; both are billed as output (Google's pricing page).
        "input_tokens": max(_count(metadata.get("promptTokenCount")) - cached, 0),
        "output_tokens": _count(metadata.get("candidatesTokenCount")) + thoughts,
        "cache_read_input_tokens": cached,
    }
    if thoughts:
        counted["reasoning_tokens"] = thoughts
    return [{"provider": "gemini", "model": chunk.get("modelVersion"), "usage": counted}]


def usage(response: Mapping[str, Any]) -> Usage:
    """The usage of a stored answer; a stream's is its last chunk's (each chunk
    carries the running totals)."""
    if "events" in response and isinstance(response["events"], list):
        for event in reversed(response["events"]):
            found = _usage_of(event.get("data") if isinstance(event, dict) else None)
            if found:
                return found
        return []
    body = response.get("body")
    if isinstance(body, list):  # the chunks as one JSON array (no ``alt=sse``)
        for chunk in reversed(body):
            found = _usage_of(chunk)
            if found:
                return found
        return []
    return _usage_of(body)


_STATUS_NAMES: Final = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    name = _STATUS_NAMES.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return {"error": {"code": status, "message": message, "status": name}}


PROVIDER: Final = Provider(
    name="gemini",
    title="Google Gemini",
    host_pattern=r"generativelanguage\.googleapis\.com",
    default_url="https://generativelanguage.googleapis.com",
    base_url_variables=("GOOGLE_GEMINI_BASE_URL",),
    key_variables=(("GEMINI_API_KEY", "GOOGLE_API_KEY"),),
    secret_variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    credential_headers=("x-goog-api-key", "authorization"),
    credential_query=("key",),
    keyed_headers=(),
    path_pattern=re.compile(
        r"/models/[^/:]+:(?:generateContent|streamGenerateContent|embedContent"
        r"|batchEmbedContents|countTokens)$"
    ),
    proxy_prefix="/gemini",
    ids=IdVocabulary(
        tool_prefixes=(),
        other_prefixes=(),
        id_fields=(("responseId", "gresp_"),),
        fixed_fields=(),
        always_fresh=("gresp_",),
    ),
    stream_refusal=stream_refusal,
    error_refusal=error_refusal,
    is_error_object=is_error_object,
    shape_refusal=shape_refusal,
    usage=usage,
    error_body=error_body,
    docs_page="providers/gemini.md",
)
