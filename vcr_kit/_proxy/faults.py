"""Injected faults on the proxy's wire, for clients in other processes (Claude Code,
the TypeScript SDK, curl): the same spec and the same answers as in-process, sent
as bytes on the client's connection.

An API error is answered whole; a transport fault closes the connection (with a
reset for ``reset`` and ``refused``: a listening proxy has already accepted the
connection, so a refusal is the closest it can give, a reset before any answer);
``read_timeout`` holds the connection, answering nothing, until the client gives
up; a stream fault sends the recorded events cut, broken by an ``error`` event, or
spaced. Every wait ends early when the client hangs up (a client whose own timeout
ran out) or the proxy stops: the client's timeout is its own, as with a slow server.
A stream fault counts when the proxy reaches it with the client still there.

``serve`` and ``run`` hold one plan for their lifetime (``lifetime_spec``): each
distinct request meets its faults once per proxy, whichever process sends it.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import time
from typing import Any, Final

from .._core.config import faults_from_environment
from .._core.faults import parse_spec, render_spec
from .._engine.faults import (
    MET_WHEN_READ,
    FaultPlan,
    Injection,
    sse_events,
)

__all__ = [
    "STREAM_FAULTS",
    "answer_before",
    "lifetime_line",
    "lifetime_spec",
    "plan_for",
    "send_stream",
    "wait",
    "whole_answer",
]

#: Faults that need the whole answer first (the proxy then does not forward it live).
STREAM_FAULTS: Final = MET_WHEN_READ
#: The longest a held connection waits for its client to give up.
_LONGEST_HOLD: Final = 600.0
_TICK: Final = 0.05


def plan_for(faults: str | None) -> FaultPlan | None:
    """A proxy's own plan (``--faults``), or None: the plan in force when a request comes
    (a test's, ``VCR_FAULTS``'s). A bad ``VCR_FAULTS`` stops the proxy from starting."""
    faults_from_environment()
    return None if faults is None else FaultPlan(parse_spec(faults, "--faults"))


def lifetime_spec(faults: str | None) -> str | None:
    """The spec a long-lived proxy (``serve``, ``run``) holds for its lifetime: its
    ``--faults``, else ``VCR_FAULTS``'s (None: neither)."""
    if faults is not None:
        return faults
    spec = faults_from_environment()
    return render_spec(spec) if spec else None


def lifetime_line(plan: FaultPlan | None) -> str | None:
    """What ``serve`` and ``run`` say at start-up about the faults they inject."""
    if plan is None or not plan.spec:
        return None
    return (
        f"vcr_kit: injecting faults {render_spec(plan.spec)!r}; one schedule for this "
        "proxy's lifetime: each distinct request meets them once, whichever client sends "
        "it (restart the proxy to start afresh)"
    )


def whole_answer(client: Any, upstream: Any, request: Any, dropped: frozenset[str]) -> Any:
    """The live answer read whole, not forwarded: a stream fault sends it reshaped."""
    answer = client.send(upstream)
    kept = [(k, v) for k, v in answer.headers.multi_items() if k.lower() not in dropped]
    return type(answer)(answer.status_code, headers=kept, content=answer.content, request=request)


def _client_gone(connection: socket.socket) -> bool:
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def wait(handler: Any, seconds: float) -> bool:
    """Wait ``seconds`` on ``handler``'s connection; False if the client hung up or the
    proxy is stopping first."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if handler.server.stopping or _client_gone(handler.connection):
            return False
        time.sleep(min(_TICK, left))
    return True


def answer_before(handler: Any, injection: Injection) -> bool:
    """Answer ``injection`` if it replaces the recorded answer; whether it did. A
    ``slow_first`` waits here and lets the answer follow."""
    fault = injection.fault
    kind = fault.kind.kind.value
    if kind == "api":
        status, headers, body = injection.error_answer()
        handler.send_whole(status, headers, body)
        return True
    if kind == "transport":
        handler.close_connection = True
        if fault.name == "read_timeout":
            wait(handler, _LONGEST_HOLD)
        if fault.name in ("reset", "refused"):
            # Linger 0: closing sends a reset, not an orderly end.
            with contextlib.suppress(OSError):
                handler.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                handler.connection.close()
        return True
    if fault.name == "slow_first" and not wait(handler, fault.value or 0.0):
        handler.close_connection = True
        return True
    return False


def send_stream(handler: Any, injection: Injection, answer: Any) -> None:
    """Send the whole ``answer`` (a recorded stream) as ``injection`` has it."""
    fault, arg = injection.fault, injection.fault.value or 0
    headers = [
        (k, v)
        for k, v in answer.headers.items()
        if k.lower() not in ("content-length", "transfer-encoding", "content-encoding")
    ]
    handler.send_head(answer.status_code, headers, None)
    events = sse_events(answer.content)
    for index, event in enumerate(events):
        if fault.name in ("cut_after", "error_after") and index == int(arg):
            if not _client_gone(handler.connection):  # it read this far: it meets the fault
                injection.met()
            if fault.name == "cut_after":  # no last chunk: the client sees the body broken off
                handler.close_connection = True
                return
            handler.send_chunk(injection.error_event(events, index))
            break
        if fault.name == "delay" and index:
            if not _client_gone(handler.connection):
                injection.met()
            if not wait(handler, arg):
                handler.close_connection = True
                return
        handler.send_chunk(event)
    handler.end_chunks()
