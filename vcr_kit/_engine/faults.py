"""Faults on demand, in front of the replay engine: the plan in force and what an
injected fault looks like on the wire.

``faults("overloaded*2")`` (a block), a test's ``faults=`` (the marker, the
``VCRTestCase`` attribute) and ``VCR_FAULTS`` (every test, each with a schedule of its
own) all put a ``FaultPlan`` in force; the innermost wins. Each attempt of a request
asks the plan first: a fault is answered here (an API error in the API's shape, or the
transport library's own exception) and the recorder is never asked, so nothing
reaches the API or the disk; a stream fault takes the recorder's answer and cuts,
breaks or slows it on its way to the client. A wait ends at the client's own timeout
(``patience.py``). Each fault the client meets is one ``FAULT`` note in the ledger,
apart from replays: a stream fault only once the client reads up to it. The
in-process seams call ``handle``/``ahandle``; the proxy (``_proxy/faults.py``) sends
the same answers as bytes.

Every piece is built for the request's own library (``httpx2`` or ``httpx``), so
the SDK converts it exactly as it converts a real failure: a status into its
``APIStatusError`` subclass, ``ConnectError``/``ReadError`` into
``APIConnectionError``, ``ReadTimeout`` into ``APITimeoutError``.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from .._core.config import faults_from_environment
from .._core.faults import Fault, Kind, Schedule, Spec, facts_of, parse_spec
from .._core.http_request import name_and_stored
from .._core.httplib import library_of
from .._core.providers import Provider, provider_named
from .._ledger.notes import Event, note
from ..errors import ConfigError
from .fault_shapes import provider_error_answer, provider_error_event
from .live import to_local_proxy
from .patience import Patience, patience_of
from .recorder import AsyncLiveSend, HttpRecorder, LiveSend
from .steps import Pause, Steps, Thunk, run_awaiting, run_blocking

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "CUT_MESSAGE",
    "MET_WHEN_READ",
    "PLANS",
    "FaultPlan",
    "FaultPlans",
    "Injected",
    "Injection",
    "ahandle",
    "decide",
    "error_answer",
    "error_event",
    "faulted_stream",
    "faults",
    "faults_for_test",
    "handle",
    "in_force",
    "is_faulted",
    "new_request_id",
    "reshaped",
    "sse_events",
    "transport_error",
]

#: What h11 raises when a chunked answer ends before its last chunk: a real drop.
CUT_MESSAGE: Final = (
    "peer closed connection without sending complete message body (incomplete chunked read)"
)
#: Faults a stream meets on its way: given to the client, counted only when it has read
#: up to them (a client that stops reading first never met the fault).
MET_WHEN_READ: Final = frozenset({"cut_after", "error_after", "delay"})
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


def error_answer(
    fault: Fault, request_id: str, provider: Provider | None = None
) -> tuple[int, list[tuple[str, str]], bytes]:
    """The status, headers and body the API sends for ``fault`` (an API error);
    ``provider``: another provider's API (``fault_shapes``)."""
    if provider is not None:
        return provider_error_answer(fault, request_id, provider)
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


def error_event(
    request_id: str,
    provider: Provider | None = None,
    events: list[bytes] | None = None,
    sent: int = 0,
) -> bytes:
    """The SSE ``error`` event the API sends when it is overloaded mid-stream; for
    another ``provider``, its own way of failing its stream of ``events`` after
    ``sent`` of them (``fault_shapes``)."""
    if provider is not None:
        return provider_error_event(provider, events or [], sent)
    data = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": request_id,
    }
    return b"event: error\ndata: " + json.dumps(data).encode("utf-8") + b"\n\n"


def transport_error(fault: Fault, request: httpx2.Request) -> Exception:
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
    return lib.ReadTimeout("The read operation timed out", request=request)  # type: ignore[no-any-return]


def sse_events(content: bytes) -> list[bytes]:
    """A stream's events, each with its blank line."""
    text = content.replace(b"\r\n", b"\n")
    return [part + b"\n\n" for part in text.split(b"\n\n") if part.strip()]


def faulted_stream(
    response: httpx2.Response, injection: Injection, patience: Patience
) -> httpx2.Response:
    """``response`` (a whole recorded stream) as the client would get it under the
    injected fault: cut after N events, an error event after N, or a delay between
    events, each met (and counted) only when the client reads up to it."""
    lib = library_of(response)
    events = sse_events(response.content)
    stream = _stream_class(lib)(events, injection, patience)
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-length"]
    faulted: httpx2.Response = lib.Response(
        response.status_code, headers=headers, stream=stream, request=response.request
    )
    return faulted


def is_faulted(response: httpx2.Response) -> bool:
    """Whether ``response`` is a stream reshaped by a fault (read as it comes, not whole)."""
    return isinstance(response.stream, _FaultedEvents)


class _FaultedEvents:
    """The events of a faulted stream, for sync and async readers alike: each step is
    taken when the client asks for the next piece, so the fault is met when it is read."""

    _lib: ModuleType

    def __init__(self, events: list[bytes], injection: Injection, patience: Patience) -> None:
        self.events = events
        self.injection = injection
        self.patience = patience

    def _plan(self) -> Iterator[tuple[float, bytes | BaseException]]:
        """(seconds to wait first, then what to give: bytes, or an exception to raise)."""
        injection = self.injection
        fault, arg = injection.fault, injection.fault.value or 0
        request = injection.request
        for index, event in enumerate(self.events):
            if fault.name in ("cut_after", "error_after") and index == int(arg):
                injection.met()
                if fault.name == "cut_after":
                    yield 0.0, self._lib.RemoteProtocolError(CUT_MESSAGE, request=request)
                else:
                    yield 0.0, injection.error_event(self.events, index)
                return
            if fault.name == "delay" and index > 0:
                injection.met()
                wait, gave_up = self.patience.wait(arg, "the next event")
                if gave_up is not None:  # the client stops waiting at its timeout
                    yield wait, gave_up
                    return
                yield wait, event
            else:
                yield 0.0, event

    def __iter__(self) -> Iterator[bytes]:
        for wait, piece in self._plan():
            if wait:
                time.sleep(wait)
            if isinstance(piece, BaseException):
                raise piece
            yield piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        import anyio  # the SDK's own async layer: asyncio and trio alike, as steps.py

        for wait, piece in self._plan():
            if wait:
                await anyio.sleep(wait)
            if isinstance(piece, BaseException):
                raise piece
            yield piece

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


@cache
def _stream_class(lib: ModuleType) -> type[_FaultedEvents]:
    # Made once per library: a pure function of it, so a cache and not state to reset.
    return type(
        "FaultedStream",
        (_FaultedEvents, lib.SyncByteStream, lib.AsyncByteStream),
        {"_lib": lib},
    )


@dataclass(frozen=True)
class Injected:
    """One fault given to the code under test."""

    name: str
    request_id: str
    #: The fixture the fault stood in front of.
    path: Path | None


@dataclass
class FaultPlan:
    """A spec in force, its schedule, and the faults it gave."""

    spec: Spec
    schedule: Schedule = field(init=False)
    injected: list[Injected] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.schedule = Schedule(self.spec)

    @property
    def count(self) -> int:
        """How many faults were injected (the code under test absorbed or raised them)."""
        return len(self.injected)

    def names(self) -> list[str]:
        return [i.name for i in self.injected]


class FaultPlans:
    """The fault plans of this process: those in force (``faults(...)`` blocks, any
    thread) and ``VCR_FAULTS``'s."""

    __slots__ = ("from_environment", "lock", "stack")

    #: The plans of the blocks open now, innermost last.
    stack: list[FaultPlan]
    #: VCR_FAULTS's plan outside tests (``vcr_kit.client()`` in a script, FORCE_VCR), by
    #: its spec: its schedule lasts the process. A test has a plan of its own.
    from_environment: dict[str, FaultPlan]

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stack = []
        self.from_environment = {}

    def reset(self) -> None:
        """No block's plan in force, and ``VCR_FAULTS``'s schedule started afresh."""
        with self.lock:
            self.stack.clear()
            self.from_environment.clear()


PLANS: Final = FaultPlans()


def _coerce(spec: str | Spec, source: str) -> Spec:
    return parse_spec(spec, source) if isinstance(spec, str) else spec


@contextmanager
def faults_for_test(spec: str | None) -> Iterator[FaultPlan | None]:
    """A test's faults: its own ``spec``, else ``VCR_FAULTS``'s with a schedule of the
    test's own, so that what a test meets never depends on the tests that ran before it
    (in this process, on this xdist worker). None in force: no spec anywhere."""
    chosen: str | Spec
    if spec is None:
        try:
            chosen = faults_from_environment()
        except ConfigError:  # each request fails naming the value (active_plan), as before
            chosen = Spec()
        if not chosen:
            yield None
            return
    else:
        chosen = spec
    with faults(chosen) as plan:
        yield plan


@contextmanager
def faults(spec: str | Spec) -> Iterator[FaultPlan]:
    """Inject the faults of ``spec`` into every request vcr_kit handles in the block
    (a test, ``vcr_kit.client()``, a proxy of this process); yields the plan, whose
    ``count`` and ``injected`` say what the code under test was given."""
    plan = FaultPlan(_coerce(spec, "faults"))
    with PLANS.lock:
        PLANS.stack.append(plan)
    try:
        yield plan
    finally:
        with PLANS.lock:
            PLANS.stack.remove(plan)


def active_plan() -> FaultPlan | None:
    """The innermost plan in force, else ``VCR_FAULTS``'s, else None."""
    stack = PLANS.stack
    if stack:
        with PLANS.lock:
            if stack:
                return stack[-1]
    spec = faults_from_environment()
    if not spec:
        return None
    with PLANS.lock:
        key = repr(spec)
        plan = PLANS.from_environment.get(key)
        if plan is None:
            plan = PLANS.from_environment[key] = FaultPlan(spec)
        return plan


def in_force() -> bool:
    """Whether a plan with faults is in force (a seam with none skips ``handle``)."""
    plan = active_plan()
    return plan is not None and bool(plan.spec)


@dataclass
class Injection:
    """The fault one attempt gets, and where it is noted once the client meets it."""

    fault: Fault
    request_id: str
    path: Path | None
    plan: FaultPlan
    request: httpx2.Request
    #: The provider the request goes to (None: Anthropic): the shape of its errors.
    provider: Provider | None = None
    _met: bool = field(default=False, repr=False)

    def met(self) -> None:
        """The client met the fault: counted in its plan and noted in the ledger, once."""
        if self._met:
            return
        self._met = True
        self.plan.injected.append(Injected(self.fault.name, self.request_id, self.path))
        note(Event.FAULT, self.path, detail=f"{self.fault.name} ({self.request_id})")

    def error_answer(self) -> tuple[int, list[tuple[str, str]], bytes]:
        """The status, headers and body of this API error, in its provider's shape."""
        return error_answer(self.fault, self.request_id, self.provider)

    def error_event(self, events: list[bytes], sent: int) -> bytes:
        """What breaks the stream of ``events`` after ``sent`` of them (``error_after``)."""
        return error_event(self.request_id, self.provider, events, sent)


def decide(
    request: httpx2.Request, fixtures_dir: Path, plan: FaultPlan | None = None
) -> Injection | None:
    """The fault for this attempt of ``request``; None: no fault. A fault the client
    meets at once is counted now; one on a stream's way when the client reads up to it."""
    plan = plan or active_plan()
    if plan is None or not plan.spec:  # faults="" turns VCR_FAULTS off for a test
        return None
    if to_local_proxy(request):  # a proxy of this process answers it, faults and all
        return None
    try:
        body = bytes(request.content)
        name, stored = name_and_stored(request)
    except Exception:  # a body not read yet, a request with no key: the recorder says why
        return None
    target = request.url.raw_path.decode("ascii", "replace")  # Gemini's model and stream
    fault = plan.schedule.next_fault(facts_of(name, body, target))
    if fault is None:
        return None
    provider = provider_named(stored.get("provider")) if isinstance(stored, dict) else None
    injection = Injection(fault, new_request_id(), fixtures_dir / name, plan, request, provider)
    if fault.name not in MET_WHEN_READ:
        injection.met()
    return injection


def _before(injection: Injection, patience: Patience) -> tuple[Any, float]:
    """What to do before the recorder is asked: (an answer or exception to give instead,
    or None; seconds to wait first). An exception after a wait is the client's timeout."""
    fault, request = injection.fault, injection.request
    if fault.kind.kind is Kind.API:
        status, headers, body = injection.error_answer()
        lib = library_of(request)
        return lib.Response(status, headers=headers, content=body, request=request), 0.0
    if fault.kind.kind is Kind.TRANSPORT:
        if fault.name != "read_timeout":
            return transport_error(fault, request), 0.0
        limit = patience.read if patience.read is not None else patience.total
        said = f"{limit:g} s" if limit is not None else "none: it waits forever"
        return patience.gives_up(
            f"The read operation timed out (injected; the client's read timeout: {said})"
        ), 0.0
    if fault.name == "slow_first":
        wait, gave_up = patience.wait(fault.value or 0.0, "the first byte")
        return gave_up, wait
    return None, 0.0


def reshaped(answer: httpx2.Response) -> bool:
    """Whether ``answer`` is a stream a fault reshaped (to be read as it comes)."""
    return is_faulted(answer)


def _after(injection: Injection, answer: httpx2.Response, patience: Patience) -> httpx2.Response:
    if injection.fault.name in MET_WHEN_READ:
        return faulted_stream(answer, injection, patience)
    return answer


def _behind(injection: Injection, answer: Thunk, patience: Patience) -> Steps[httpx2.Response]:
    """The one body of ``handle`` and ``ahandle`` once a fault is decided: its answer
    given instead (after its wait: the client's timeout), or its wait, then the
    recorder's answer (``answer``) reshaped."""
    instead, wait = _before(injection, patience)
    if wait:
        yield Pause(wait)
    if isinstance(instead, BaseException):
        raise instead
    if instead is not None:
        response: httpx2.Response = instead
        return response
    recorded: httpx2.Response = yield answer
    return _after(injection, recorded, patience)


def handle(
    recorder: HttpRecorder,
    request: httpx2.Request,
    live: LiveSend,
    patience: Patience | None = None,
) -> httpx2.Response:
    """``recorder.handle``, behind the faults in force; ``patience``: the client's
    timeouts (default: those on ``request``)."""
    injection = decide(request, recorder.settings.fixtures_dir)
    if injection is None:
        return recorder.handle(request, live)
    waits = patience or patience_of(request)
    return run_blocking(_behind(injection, lambda: recorder.handle(request, live), waits))


async def ahandle(
    recorder: HttpRecorder,
    request: httpx2.Request,
    live: AsyncLiveSend,
    patience: Patience | None = None,
) -> httpx2.Response:
    """``recorder.ahandle``, behind the faults in force; ``patience`` as for ``handle``."""
    injection = decide(request, recorder.settings.fixtures_dir)
    if injection is None:
        return await recorder.ahandle(request, live)
    waits = patience or patience_of(request)
    return await run_awaiting(_behind(injection, lambda: recorder.ahandle(request, live), waits))
