"""What is never stored: every answer the request did not earn.

A fixture must hold what the request itself earned, so that it replays the same for
everyone on every day. Three kinds of answer do not qualify:

- an answer about the key, the account or the moment rather than the request:
  authentication (401), billing (402), permission (403), time-outs (408, 504),
  conflicts the SDK retries (409), rate limits (429), overload (529), any other server
  failure (5xx), and an SSE ``error`` event of one of their types;
- a stream that did not complete: one is stored only when it reached the API's final
  event (``message_stop``), or an API ``error`` event that is itself storable;
- a body that is not the API's shape: an HTML page (a gateway's), JSON cut short, an
  error status without the API's error object, a success that is not the documented
  shape of its endpoint (``answer_shapes``: a Message, a token count, a batch...).

Each function returns why its answer is never stored, as a phrase that completes
"not recorded: ..." and "cannot be replayed: ...", or None when it may be stored.
Every place that decides asks here: the HTTP recorder and the cassettes while
recording, the fixture kinds (``check`` and replay) for files already on disk. A rule
applied in one place and not another would store an answer that replay then refuses,
or serve one that it should not. Pure: no SDK, no disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

from .answer_shapes import shape_refusal
from .aws_eventstream import CONTENT_TYPE as _EVENT_STREAM
from .providers import Provider, provider_named

__all__ = [
    "FINAL_EVENT",
    "Refusal",
    "answer_refusal",
    "error_refusal",
    "error_type_refusal",
    "status_refusal",
    "stream_refusal",
]

#: What each status that is never stored is, and what it depends on instead of the
#: request. Every status from 500 up is never stored either (``status_refusal``).
_UNEARNED_STATUSES: Final[Mapping[int, tuple[str, str]]] = {
    401: ("authentication failure", "the key"),
    402: ("billing failure", "the account"),
    403: ("permission failure", "the key or the account"),
    408: ("time-out", "the moment"),
    409: ("conflict the SDK retries", "the moment"),
    429: ("rate limit", "the moment"),
    502: ("bad gateway", "the moment"),
    503: ("service unavailable", "the moment"),
    504: ("time-out", "the moment"),
    529: ("overload", "the moment"),
}
#: The API's error types (``error.type`` of an error object or an SSE ``error`` event)
#: and the status each comes with.
_ERROR_TYPE_STATUS: Final[Mapping[str, int]] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
#: The last event of a Messages stream that completed.
FINAL_EVENT: Final = "message_stop"
#: Bedrock's exception frames (its event stream's ``error`` events) that the SDK retries:
#: about the moment, never the request.
_UNEARNED_FRAME_EXCEPTIONS: Final = frozenset(
    {
        "throttlingException",
        "serviceUnavailableException",
        "internalServerException",
        "modelStreamErrorException",
    }
)


class Refusal(NamedTuple):
    """Why a stored answer is one that is never stored: the field that shows it
    (``response.status``) and the reason."""

    field: str
    reason: str


def status_refusal(status: int) -> str | None:
    """Why an answer with this HTTP status is never stored, or None if it may be."""
    if status in _UNEARNED_STATUSES:
        what, depends_on = _UNEARNED_STATUSES[status]
    elif status >= 500:
        what, depends_on = "server error", "the moment"
    else:
        return None
    return f"a {status} ({what}) depends on {depends_on}, not on the request"


def error_type_refusal(error_type: Any) -> str | None:
    """Why an SSE ``error`` event of this type (a stream's end) is never stored."""
    status = _ERROR_TYPE_STATUS.get(error_type) if isinstance(error_type, str) else None
    if status is None:
        # Storing it would keep an answer that may be about the moment: the next run
        # asks again, which costs one call; a wrong fixture costs every run after.
        return f"an SSE error event of unknown type {error_type!r} may not depend on the request"
    reason = status_refusal(status)
    return None if reason is None else f"an SSE error event ({error_type}): {reason}"


def _error_type(body: Any) -> Any:
    error = body.get("error") if isinstance(body, Mapping) else None
    return error.get("type") if isinstance(error, Mapping) else None


def error_refusal(status: int, body: Any) -> str | None:
    """Why an API error (its status and body, as the SDK raised it) is never stored.
    A 2xx is an SSE ``error`` event the SDK raised mid-stream: its type decides."""
    if 200 <= status < 300:
        return error_type_refusal(_error_type(body))
    return status_refusal(status)


def stream_refusal(events: Iterable[tuple[Any, Any]]) -> str | None:
    """Why a stream (each event's name and parsed data, None where the data is not
    JSON) is never stored: cut mid-event, ended before its final event, or ended by an
    ``error`` event that is not storable."""
    seen = 0
    last: Any = None
    for seen, (name, data) in enumerate(events, 1):
        if not isinstance(data, dict):  # parsed JSON: a dict, never another mapping
            return f"the stream was cut mid-event (event {seen} is not JSON)"
        if name == "error":  # the API's last word on this stream
            return error_type_refusal(_error_type(data))
        last = name
    if last != FINAL_EVENT:
        ended = f"after {seen} events" if seen else "with no event"
        return f"the stream ended {ended}, before its final event ({FINAL_EVENT})"
    return None


def _is_error_object(body: Any) -> bool:
    return isinstance(body, Mapping) and isinstance(body.get("error"), Mapping)


def answer_refusal(response: Mapping[str, Any], request: Any = None) -> Refusal | None:
    """Why an HTTP answer, in its stored form (``status``, ``headers``, one of ``body``,
    ``events``, ``jsonl``, ``text``, ``base64``), is never stored. A form that is not
    even that (no status) is for the fixture kinds to report, not for this.
    ``request``: the stored request it answers (``method``, ``path``): a success must
    then be the documented shape of that endpoint."""
    provider = provider_named(request.get("provider")) if isinstance(request, Mapping) else None
    if provider is not None:
        return _provider_refusal(provider, response, request)
    refusal = _answer_refusal(response)
    status = response.get("status")
    if refusal is None and request is not None and type(status) is int and 200 <= status < 300:
        shape = shape_refusal(request, response)
        if shape is not None:
            return Refusal(*shape)
    return refusal


def _answer_refusal(response: Mapping[str, Any]) -> Refusal | None:
    status = response.get("status")
    if type(status) is not int:
        return None
    reason = status_refusal(status)
    if reason is not None:
        return Refusal("response.status", reason)
    headers = response.get("headers")
    content_type = str(headers.get("content-type", "")) if isinstance(headers, Mapping) else ""
    content_type = content_type.lower()
    if content_type.startswith("text/html"):
        return Refusal(
            "response.headers.content-type",
            "an HTML page is not an API answer (a gateway's or a proxy's)",
        )
    if "events" in response:
        events = response["events"]
        if isinstance(events, list):
            pairs = [(e.get("event"), e.get("data")) for e in events if isinstance(e, dict)]
            reason = stream_refusal(pairs)
            if reason is not None:
                return Refusal("response.events", reason)
    elif "frames" in response:
        reason = _frames_refusal(response["frames"])
        if reason is not None:
            return Refusal("response.frames", reason)
    elif "json" in content_type and ("text" in response or "base64" in response):
        return Refusal("response", "a JSON answer that does not parse (cut short?)")
    elif content_type.startswith(_EVENT_STREAM) and "frames" not in response:
        return Refusal("response", "an AWS event stream cut short or failing its CRC check")
    elif status >= 400 and not _is_error_object(response.get("body")):
        return Refusal("response.body", f"a {status} without the API's error object")
    return None


def _provider_refusal(
    provider: Provider, response: Mapping[str, Any], request: Mapping[str, Any]
) -> Refusal | None:
    """``answer_refusal`` for another provider's answer: the statuses every provider
    shares, then its own rules (its error object, its streams' end, its shapes)."""
    status = response.get("status")
    if type(status) is not int:
        return None
    reason = status_refusal(status) or provider.error_refusal(status, response.get("body"))
    if reason is not None:
        return Refusal("response.status", reason)
    headers = response.get("headers")
    content_type = str(headers.get("content-type", "")) if isinstance(headers, Mapping) else ""
    content_type = content_type.lower()
    if content_type.startswith("text/html"):
        return Refusal(
            "response.headers.content-type",
            "an HTML page is not an API answer (a gateway's or a proxy's)",
        )
    if "events" in response:
        events = response["events"]
        if isinstance(events, list):
            reason = provider.stream_refusal(events)
            if reason is not None:
                return Refusal("response.events", reason)
    elif "json" in content_type and ("text" in response or "base64" in response):
        return Refusal("response", "a JSON answer that does not parse (cut short?)")
    elif status >= 400 and not provider.is_error_object(response.get("body")):
        return Refusal("response.body", f"a {status} without {provider.title}'s error object")
    method, path = request.get("method"), request.get("path")
    if 200 <= status < 300 and isinstance(method, str) and isinstance(path, str):
        shape = provider.shape_refusal(method, path, response)
        if shape is not None:
            return Refusal(*shape)
    return None


def _frames_refusal(frames: Any) -> str | None:
    """Why a Bedrock event stream (its stored frames) is never stored: an exception frame
    about the moment, or a stream whose chunks never reached the final event."""
    if not isinstance(frames, list):
        return None  # not even a list: the fixture kinds report it
    pairs: list[tuple[Any, Any]] = []
    for frame in frames:
        headers = frame.get("headers") if isinstance(frame, dict) else None
        if not isinstance(headers, dict) or not frame.keys() & {"chunk", "body", "text"}:
            return None  # not even a frame: the fixture kinds report it
        if headers.get(":message-type") == "exception":
            kind = headers.get(":exception-type")
            if kind in _UNEARNED_FRAME_EXCEPTIONS:
                return f"a Bedrock {kind} frame depends on the moment, not on the request"
            return None  # an exception the request earned ends the stream
        chunk = frame.get("chunk")
        if chunk is not None:
            pairs.append((chunk.get("type") if isinstance(chunk, dict) else None, chunk))
    return stream_refusal(pairs)
