"""What an injected fault looks like on the wire: the API's own error answers, the
transport library's own exceptions, and a recorded stream cut, broken or slowed.

Every piece is built for the request's own library (``httpx2`` or ``httpx``), so
the SDK converts it exactly as it converts a real failure: a status into its
``APIStatusError`` subclass, ``ConnectError``/``ReadError`` into
``APIConnectionError``, ``ReadTimeout`` into ``APITimeoutError``. The proxy sends
the same bytes (``error_answer``, ``sse_events``, ``error_event``) to its clients.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta, timezone
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from .._core.faults import Fault
from .._core.httplib import library_of

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "CUT_MESSAGE",
    "error_answer",
    "error_event",
    "faulted_stream",
    "is_faulted",
    "new_request_id",
    "read_timeout_of",
    "sse_events",
    "transport_error",
]

#: What h11 raises when a chunked answer ends before its last chunk: a real drop.
CUT_MESSAGE: Final = (
    "peer closed connection without sending complete message body (incomplete chunked read)"
)
#: The limits the rate-limit headers report (any plausible numbers: the SDK reads none).
_RATE_LIMITS: Final = (
    ("requests", 50),
    ("tokens", 40000),
    ("input-tokens", 30000),
    ("output-tokens", 8000),
)


def new_request_id() -> str:
    """An id for an injected error, told apart from a recorded one at a glance."""
    return "req_vcrfault_" + os.urandom(10).hex()


def error_answer(fault: Fault, request_id: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """The status, headers and body the API sends for ``fault`` (an API error)."""
    kind = fault.kind
    body = {
        "type": "error",
        "error": {"type": kind.error_type, "message": kind.message},
        "request_id": request_id,
    }
    headers = [("content-type", "application/json"), ("request-id", request_id)]
    retry_after = fault.value
    if retry_after is not None:
        # Both: retry-after-ms keeps a short wait short (the SDK reads it first),
        # retry-after (whole seconds) is what other clients read.
        headers.append(("retry-after-ms", str(round(retry_after * 1000))))
        headers.append(("retry-after", str(math.ceil(retry_after))))
    if kind.status == 429:
        reset = datetime.now(timezone.utc) + timedelta(seconds=retry_after or 0)
        stamp = reset.strftime("%Y-%m-%dT%H:%M:%SZ")
        for what, limit in _RATE_LIMITS:
            headers.append((f"anthropic-ratelimit-{what}-limit", str(limit)))
            headers.append((f"anthropic-ratelimit-{what}-remaining", "0"))
            headers.append((f"anthropic-ratelimit-{what}-reset", stamp))
    return kind.status, headers, json.dumps(body).encode("utf-8")


def error_event(request_id: str) -> bytes:
    """The SSE ``error`` event the API sends when it is overloaded mid-stream."""
    data = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": request_id,
    }
    return b"event: error\ndata: " + json.dumps(data).encode("utf-8") + b"\n\n"


def transport_error(fault: Fault, request: httpx2.Request, waited: str = "") -> Exception:
    """The exception the request's library raises for a transport fault."""
    lib = library_of(request)
    if fault.name == "refused":
        return lib.ConnectError("[Errno 111] Connection refused", request=request)  # type: ignore[no-any-return]
    if fault.name == "reset":
        return lib.ReadError("[Errno 104] Connection reset by peer", request=request)  # type: ignore[no-any-return]
    if fault.name == "empty":
        return lib.RemoteProtocolError(  # type: ignore[no-any-return]
            "Server disconnected without sending a response.", request=request
        )
    return lib.ReadTimeout(waited or "The read operation timed out", request=request)  # type: ignore[no-any-return]


def read_timeout_of(request: httpx2.Request) -> float | None:
    """The client's read timeout for ``request`` (None: it waits forever)."""
    timeout = request.extensions.get("timeout") or {}
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if read is not None else None


def sse_events(content: bytes) -> list[bytes]:
    """A stream's events, each with its blank line."""
    text = content.replace(b"\r\n", b"\n")
    return [part + b"\n\n" for part in text.split(b"\n\n") if part.strip()]


def faulted_stream(response: httpx2.Response, fault: Fault, request_id: str) -> httpx2.Response:
    """``response`` (a whole recorded stream) as the client would get it under ``fault``:
    cut after N events, an error event after N, or a delay between events."""
    lib = library_of(response)
    events = sse_events(response.content)
    stream = _stream_class(lib)(events, fault, request_id, response.request)
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-length"]
    faulted: httpx2.Response = lib.Response(
        response.status_code, headers=headers, stream=stream, request=response.request
    )
    return faulted


def is_faulted(response: httpx2.Response) -> bool:
    """Whether ``response`` is a stream reshaped by a fault (read as it comes, not whole)."""
    return isinstance(response.stream, _FaultedEvents)


class _FaultedEvents:
    """The events of a faulted stream, for sync and async readers alike."""

    _lib: ModuleType

    def __init__(self, events: list[bytes], fault: Fault, request_id: str, request: Any) -> None:
        self.events = events
        self.fault = fault
        self.request_id = request_id
        self.request = request

    def _plan(self) -> Iterator[tuple[float, bytes | Exception]]:
        """(seconds to wait first, then what to give: bytes, or an exception to raise)."""
        fault, arg = self.fault, self.fault.value or 0
        read_timeout = read_timeout_of(self.request)
        for index, event in enumerate(self.events):
            if fault.name in ("cut_after", "error_after") and index == int(arg):
                if fault.name == "cut_after":
                    yield 0.0, self._lib.RemoteProtocolError(CUT_MESSAGE, request=self.request)
                else:
                    yield 0.0, error_event(self.request_id)
                return
            wait = arg if fault.name == "delay" and index > 0 else 0.0
            if read_timeout is not None and wait > read_timeout:
                # The client would give up before the event came: it does, at once.
                yield (
                    0.0,
                    self._lib.ReadTimeout(
                        f"The read operation timed out (an injected delay of {wait:g} s "
                        f"passed the client's read timeout of {read_timeout:g} s)",
                        request=self.request,
                    ),
                )
                return
            yield wait, event

    def __iter__(self) -> Iterator[bytes]:
        for wait, piece in self._plan():
            if wait:
                time.sleep(wait)
            if isinstance(piece, Exception):
                raise piece
            yield piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for wait, piece in self._plan():
            if wait:
                await asyncio.sleep(wait)
            if isinstance(piece, Exception):
                raise piece
            yield piece

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


_classes: dict[str, type[_FaultedEvents]] = {}


def _stream_class(lib: ModuleType) -> type[_FaultedEvents]:
    cls = _classes.get(lib.__name__)
    if cls is None:
        cls = type(
            "FaultedStream",
            (_FaultedEvents, lib.SyncByteStream, lib.AsyncByteStream),
            {"_lib": lib},
        )
        _classes[lib.__name__] = cls
    return cls
