"""Injected faults in another provider's wire format (OpenAI, Gemini): its error object
and status, and its way of failing a stream that has begun.

Anthropic's are ``faults.error_answer`` and ``faults.error_event``; the fault names are
Anthropic's, and each becomes the provider's nearest: ``overloaded`` is Anthropic's
own 529, which no other provider sends, so it is their 503 (OpenAI's
``service_unavailable``, Gemini's ``UNAVAILABLE``); the other statuses (429, 500,
504, 408) are everyone's. The body is the provider's own (``Provider.error_body``), so
its SDK raises its own error for it: ``openai.RateLimitError`` for a 429,
google-genai's ``errors.ClientError`` with code 429 (``RESOURCE_EXHAUSTED``).

A stream broken mid-way (``error_after``) takes the stream's own form: a data-only SSE
stream (OpenAI Chat Completions, Gemini) gets a ``data:`` chunk holding the error
object, which both SDKs raise; a stream of typed events (OpenAI Responses) gets an
``error`` event, as the Responses API sends one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Final

from .._core.faults import Fault
from .._core.providers import Provider

__all__ = ["STREAM_ERROR_STATUS", "provider_error_answer", "provider_error_event", "status_for"]

#: The statuses only Anthropic sends, and each one's nearest elsewhere.
_NEAREST: Final = {529: 503}
#: The status of the error that breaks a stream (``error_after``): overloaded.
STREAM_ERROR_STATUS: Final = 503
_STREAM_ERROR_MESSAGE: Final = "Overloaded"


def status_for(status: int) -> int:
    """The status another provider answers for an Anthropic fault's ``status``."""
    return _NEAREST.get(status, status)


def provider_error_answer(
    fault: Fault, request_id: str, provider: Provider
) -> tuple[int, list[tuple[str, str]], bytes]:
    """The status, headers and body ``provider`` sends for ``fault`` (an API error)."""
    kind = fault.kind
    status = status_for(kind.status)
    body = provider.error_body(status, kind.message)
    # x-request-id: where the openai SDK reads an answer's request id from.
    headers = [("content-type", "application/json"), ("x-request-id", request_id)]
    retry_after = fault.value
    if retry_after is not None:
        # As for Anthropic: retry-after-ms keeps a short wait short (the openai SDK reads
        # it first); retry-after, whole seconds, is the standard one.
        headers.append(("retry-after-ms", str(round(retry_after * 1000))))
        headers.append(("retry-after", str(math.ceil(retry_after))))
    return status, headers, json.dumps(body).encode("utf-8")


def _typed(events: Sequence[bytes]) -> bool:
    """A stream of named events (``event: response.created``), not data-only chunks."""
    return any(line.startswith(b"event:") for event in events for line in event.split(b"\n"))


def provider_error_event(provider: Provider, events: Sequence[bytes], sent: int) -> bytes:
    """The chunk that breaks ``provider``'s stream of ``events`` after ``sent`` of them."""
    body: dict[str, Any] = provider.error_body(STREAM_ERROR_STATUS, _STREAM_ERROR_MESSAGE)
    if not _typed(events):
        return b"data: " + json.dumps(body).encode("utf-8") + b"\n\n"
    found = body.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    data = {
        "type": "error",
        "code": error.get("code") or error.get("type"),
        "message": error.get("message", _STREAM_ERROR_MESSAGE),
        "param": error.get("param"),
        "sequence_number": sent,
    }
    return b"event: error\ndata: " + json.dumps(data).encode("utf-8") + b"\n\n"
