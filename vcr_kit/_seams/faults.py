"""Faults injected in front of the replay engine, at the in-process seams.

``faults("overloaded*2")`` (a block), a test's ``faults=`` (the marker, the
``VCRTestCase`` attribute) and ``VCR_FAULTS`` (the whole run) all put a ``FaultPlan``
in force; the innermost wins. Each attempt of a request asks the plan first: a
fault is answered here (an API error in the API's shape, or the transport
library's own exception) and the recorder is never asked, so nothing reaches the
API or the disk; a stream fault takes the recorder's answer and cuts, breaks or
slows it on its way to the client. Each injected fault is one ``FAULT`` note in the
ledger, apart from replays.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.config import faults_from_environment
from .._core.faults import Fault, Kind, Schedule, Spec, facts_of, parse_spec
from .._core.http_request import request_key
from .._core.httplib import library_of
from .._engine.fault_answers import (
    error_answer,
    faulted_stream,
    is_faulted,
    new_request_id,
    read_timeout_of,
    transport_error,
)
from .._engine.live import to_local_proxy
from .._engine.recorder import AsyncLiveSend, HttpRecorder, LiveSend
from .._ledger.notes import Event, note

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "FaultPlan",
    "Injected",
    "Injection",
    "ahandle",
    "decide",
    "faults",
    "handle",
    "in_force",
    "reshaped",
]


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


_lock = threading.Lock()
_plans: list[FaultPlan] = []
#: VCR_FAULTS's plan, by its text: its schedule lasts the whole run.
_from_environment: dict[str, FaultPlan] = {}


def _coerce(spec: str | Spec, source: str) -> Spec:
    return parse_spec(spec, source) if isinstance(spec, str) else spec


@contextmanager
def faults(spec: str | Spec) -> Iterator[FaultPlan]:
    """Inject the faults of ``spec`` into every request vcr_kit handles in the block
    (a test, ``vcr_kit.client()``, a proxy of this process); yields the plan, whose
    ``count`` and ``injected`` say what the code under test was given."""
    plan = FaultPlan(_coerce(spec, "faults"))
    with _lock:
        _plans.append(plan)
    try:
        yield plan
    finally:
        with _lock:
            _plans.remove(plan)


def active_plan() -> FaultPlan | None:
    """The innermost plan in force, else ``VCR_FAULTS``'s, else None."""
    if _plans:
        with _lock:
            if _plans:
                return _plans[-1]
    spec = faults_from_environment()
    if not spec:
        return None
    with _lock:
        key = repr(spec)
        plan = _from_environment.get(key)
        if plan is None:
            plan = _from_environment[key] = FaultPlan(spec)
        return plan


def in_force() -> bool:
    """Whether a plan with faults is in force (a seam with none skips ``handle``)."""
    plan = active_plan()
    return plan is not None and bool(plan.spec)


@dataclass(frozen=True)
class Injection:
    """The fault one attempt gets, and where it is noted."""

    fault: Fault
    request_id: str
    path: Path | None


def decide(
    request: httpx2.Request, fixtures_dir: Path, plan: FaultPlan | None = None
) -> Injection | None:
    """The fault for this attempt of ``request``, noted in the ledger; None: no fault."""
    plan = plan or active_plan()
    if plan is None or not plan.spec:  # faults="" turns VCR_FAULTS off for a test
        return None
    if to_local_proxy(request):  # a proxy of this process answers it, faults and all
        return None
    try:
        body = bytes(request.content)
        name = request_key(request)[0]
    except Exception:  # a body not read yet, a request with no key: the recorder says why
        return None
    fault = plan.schedule.next_fault(facts_of(name, body))
    if fault is None:
        return None
    path = fixtures_dir / name
    injection = Injection(fault, new_request_id(), path)
    plan.injected.append(Injected(fault.name, injection.request_id, path))
    note(Event.FAULT, path, detail=f"{fault.name} ({injection.request_id})")
    return injection


def _before(injection: Injection, request: httpx2.Request) -> tuple[Any, float]:
    """What to do before the recorder is asked: (an answer or exception to give instead,
    or None; seconds to wait first)."""
    fault = injection.fault
    if fault.kind.kind is Kind.API:
        status, headers, body = error_answer(fault, injection.request_id)
        lib = library_of(request)
        return lib.Response(status, headers=headers, content=body, request=request), 0.0
    read_timeout = read_timeout_of(request)
    if fault.kind.kind is Kind.TRANSPORT:
        waited = ""
        if fault.name == "read_timeout":
            limit = f"{read_timeout:g} s" if read_timeout is not None else "none: it waits forever"
            waited = f"The read operation timed out (injected; the client's read timeout: {limit})"
        return transport_error(fault, request, waited), 0.0
    if fault.name == "slow_first":
        seconds = fault.value or 0.0
        if read_timeout is not None and seconds > read_timeout:
            # The client gives up before the answer starts: it does so now, unslept.
            message = (
                f"The read operation timed out (an injected wait of {seconds:g} s for the "
                f"first byte passed the client's read timeout of {read_timeout:g} s)"
            )
            return library_of(request).ReadTimeout(message, request=request), 0.0
        return None, seconds
    return None, 0.0


def reshaped(answer: httpx2.Response) -> bool:
    """Whether ``answer`` is a stream a fault reshaped (to be read as it comes)."""
    return is_faulted(answer)


def _after(injection: Injection, answer: httpx2.Response) -> httpx2.Response:
    if injection.fault.name in ("cut_after", "error_after", "delay"):
        return faulted_stream(answer, injection.fault, injection.request_id)
    return answer


def handle(recorder: HttpRecorder, request: httpx2.Request, live: LiveSend) -> httpx2.Response:
    """``recorder.handle``, behind the faults in force."""
    injection = decide(request, recorder.settings.fixtures_dir)
    if injection is None:
        return recorder.handle(request, live)
    instead, wait = _before(injection, request)
    if isinstance(instead, Exception):
        raise instead
    if instead is not None:
        response: httpx2.Response = instead
        return response
    if wait:
        time.sleep(wait)
    return _after(injection, recorder.handle(request, live))


async def ahandle(
    recorder: HttpRecorder, request: httpx2.Request, live: AsyncLiveSend
) -> httpx2.Response:
    """``recorder.ahandle``, behind the faults in force."""
    injection = decide(request, recorder.settings.fixtures_dir)
    if injection is None:
        return await recorder.ahandle(request, live)
    instead, wait = _before(injection, request)
    if isinstance(instead, Exception):
        raise instead
    if instead is not None:
        response: httpx2.Response = instead
        return response
    if wait:
        await asyncio.sleep(wait)
    return _after(injection, await recorder.ahandle(request, live))
