"""One body for the sync and the async twin of every path that calls out.

The replay-or-record policy, the HTTP recorder and the cassettes each have a sync
and an async caller, which differ only where they wait: a live call (``fn()`` or
``await fn()``) and the pause between two tries of a lock. Each is written once,
as a generator that yields what it needs done (a *thunk*: a function of no
arguments, or a ``Pause``) and receives the result; ``run_blocking`` and
``run_awaiting`` are the two thin drivers. An exception raised by a thunk is thrown
back into the body at the ``yield``, so its ``try``/``finally`` blocks (a lock's
release) work as in plain code. A fix lands once, in the body.

Cost on the replay path: one generator per layer, a few hundred nanoseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Pause", "Steps", "Thunk", "once", "run_awaiting", "run_blocking"]

T = TypeVar("T")


@dataclass(frozen=True)
class Pause:
    """Yielded to wait a while: ``time.sleep`` or ``anyio.sleep``, as the driver is."""

    seconds: float


#: A thunk is called by the blocking driver and awaited (``await thunk()``) by the other.
Thunk = Callable[[], Any]
Steps = Generator[Thunk | Pause, Any, T]


def once(thunk: Thunk) -> Steps[Any]:
    """The steps of one call: ``yield from once(fn)`` is ``fn()`` or ``await fn()``."""
    result = yield thunk
    return result


def _advance(steps: Steps[T], value: Any, error: BaseException | None) -> tuple[bool, Any]:
    """Resume ``steps`` with a thunk's result (or its error): (finished, result or next step)."""
    try:
        step = steps.send(value) if error is None else steps.throw(error)
    except StopIteration as done:
        return True, done.value
    return False, step


# The two drivers are the one pair of twins left on purpose: a loop that blocks and a
# loop that awaits cannot be one function without making every sync caller a coroutine.
def run_blocking(steps: Steps[T]) -> T:
    """Drive ``steps`` in this thread, blocking on each thunk."""
    value: Any = None
    error: BaseException | None = None
    while True:
        finished, step = _advance(steps, value, error)
        if finished:
            result: T = step
            return result
        value, error = None, None
        try:
            if isinstance(step, Pause):
                time.sleep(step.seconds)
            else:
                value = step()
        except BaseException as exc:  # thrown into the body, which may handle it
            error = exc


async def run_awaiting(steps: Steps[T]) -> T:
    """Drive ``steps`` on the running event loop, awaiting each thunk."""
    import anyio  # the SDK's own async layer: works under asyncio and trio alike

    value: Any = None
    error: BaseException | None = None
    while True:
        finished, step = _advance(steps, value, error)
        if finished:
            result: T = step
            return result
        value, error = None, None
        try:
            value = await (anyio.sleep(step.seconds) if isinstance(step, Pause) else step())
        except BaseException as exc:  # thrown into the body, which may handle it
            error = exc
