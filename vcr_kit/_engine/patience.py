"""How long a client waits: its own timeouts, as an injected wait meets them.

An injected wait (``slow_first``, ``delay``) stands for a server that is slow; the
client's own timeouts decide what it sees, as they would with a real one: a wait
within them passes, one past them ends at the timeout with the exception the client
raises for it. Each seam says what its client's timeouts are: ``httpx2``/``httpx``
carry them on the request (``read``, per read), aiohttp in its ``ClientTimeout``
(``sock_read`` per read, ``total`` for the whole exchange).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._core.httplib import library_of

if TYPE_CHECKING:
    import httpx2

__all__ = ["GiveUp", "Patience", "patience_of"]

#: Builds the exception a client raises when it gives up, from a message.
GiveUp = Callable[[str], BaseException]


@dataclass(frozen=True)
class Patience:
    """A client's timeouts for one exchange, counted from ``started``."""

    #: The longest the client waits for the next byte (None: for ever).
    read: float | None
    #: What it raises when a read times out.
    read_error: GiveUp
    #: The longest the whole exchange may take (None: no limit).
    total: float | None = None
    #: What it raises when the whole exchange times out.
    total_error: GiveUp | None = None
    #: The clock the timeouts run on, and when the exchange started on it.
    clock: Callable[[], float] = time.monotonic
    started: float = field(default_factory=time.monotonic)

    def wait(self, seconds: float, what: str) -> tuple[float, BaseException | None]:
        """How long the client waits for ``what``, due in ``seconds``, and what it raises
        then: None when it waits it out; else its timeout error, after its timeout."""
        limits: list[tuple[float, str, GiveUp]] = []
        if self.read is not None:
            limits.append((self.read, "read timeout", self.read_error))
        if self.total is not None:
            left = max(0.0, self.total - (self.clock() - self.started))
            limits.append((left, "total timeout", self.total_error or self.read_error))
        if not limits:
            return seconds, None
        limit, name, error = min(limits, key=lambda item: item[0])
        if seconds <= limit:
            return seconds, None
        message = (
            f"The read operation timed out (an injected wait of {seconds:g} s for {what} "
            f"passed the client's {name} of {self.limit_text(name)})"
        )
        return limit, error(message)

    def limit_text(self, name: str) -> str:
        value = self.read if name == "read timeout" else self.total
        return f"{value:g} s"

    def gives_up(self, message: str) -> BaseException:
        """The client's timeout error now (an injected ``read_timeout``): a read timeout,
        or the whole exchange's where the client has no read timeout but that one."""
        if self.read is None and self.total is not None and self.total_error is not None:
            return self.total_error(message)
        return self.read_error(message)


def patience_of(request: httpx2.Request) -> Patience:
    """An ``httpx2``/``httpx`` client's patience: the read timeout on ``request``, and
    its library's ``ReadTimeout`` (which the SDK turns into ``APITimeoutError``)."""
    timeout = request.extensions.get("timeout") or {}
    read = timeout.get("read") if isinstance(timeout, dict) else None
    lib = library_of(request)

    def read_error(message: str) -> BaseException:
        error: BaseException = lib.ReadTimeout(message, request=request)
        return error

    return Patience(float(read) if read is not None else None, read_error)
