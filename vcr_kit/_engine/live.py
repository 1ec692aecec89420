"""vcr_kit's own traffic: its live calls to the API, and the loopback proxies of this process.

The seams must let both through untouched: a live call vcr_kit makes while recording
(or in mode ``off``) would otherwise be caught and recorded twice, and a request to
a vcr_kit proxy of this process is recorded by that proxy (locking its fixture
twice in one process would wait forever). The proxy registers itself here, so
nothing below the seams needs to know that a proxy exists.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

__all__ = [
    "OWN_TRAFFIC",
    "OwnTraffic",
    "add_local_proxy",
    "in_live_call",
    "is_local_proxy",
    "live_call",
    "live_calls_in_flight",
    "remove_local_proxy",
    "to_local_proxy",
]

#: Set while vcr_kit itself calls the API (recording, passing through), so that the
#: transport seam lets that call reach the network instead of recording it twice.
_live_call: ContextVar[bool] = ContextVar("vcr_kit_live_call", default=False)


class OwnTraffic:
    """vcr_kit's own traffic in this process, seen from any thread."""

    __slots__ = ("in_flight", "in_flight_lock", "proxies", "proxies_lock")

    #: How many live calls vcr_kit is making right now, in any thread: the connection
    #: guard lets their host look-ups through (asyncio resolves names in a thread pool,
    #: where the context variable above is not visible).
    in_flight: int
    #: host:port of every vcr_kit proxy running in this process.
    proxies: set[str]

    def __init__(self) -> None:
        self.in_flight_lock = threading.Lock()
        self.proxies_lock = threading.Lock()
        self.in_flight = 0
        self.proxies = set()

    def reset(self) -> None:
        """No live call in flight, no proxy listening."""
        with self.in_flight_lock:
            self.in_flight = 0
        with self.proxies_lock:
            self.proxies.clear()


OWN_TRAFFIC: Final = OwnTraffic()


def in_live_call() -> bool:
    return _live_call.get()


def live_calls_in_flight() -> int:
    return OWN_TRAFFIC.in_flight


@contextmanager
def live_call() -> Iterator[None]:
    """Mark the block as vcr_kit's own call to the API."""
    token = _live_call.set(True)
    with OWN_TRAFFIC.in_flight_lock:
        OWN_TRAFFIC.in_flight += 1
    try:
        yield
    finally:
        with OWN_TRAFFIC.in_flight_lock:
            OWN_TRAFFIC.in_flight -= 1
        _live_call.reset(token)


def add_local_proxy(host: str, port: int) -> None:
    """A vcr_kit proxy of this process now listens at ``host:port``."""
    with OWN_TRAFFIC.proxies_lock:
        OWN_TRAFFIC.proxies.add(f"{host}:{port}")


def remove_local_proxy(host: str, port: int) -> None:
    """The proxy at ``host:port`` has stopped."""
    with OWN_TRAFFIC.proxies_lock:
        OWN_TRAFFIC.proxies.discard(f"{host}:{port}")


def is_local_proxy(host: str, port: int | None) -> bool:
    """Whether a vcr_kit proxy of this process listens at ``host:port``."""
    if not OWN_TRAFFIC.proxies:  # the common case: no proxy, no lock
        return False
    with OWN_TRAFFIC.proxies_lock:
        return f"{host}:{port}" in OWN_TRAFFIC.proxies


def to_local_proxy(request: Any) -> bool:
    """Whether ``request`` goes to a vcr_kit proxy of this process, which records it."""
    if not OWN_TRAFFIC.proxies:  # before reading the URL: every request comes here
        return False
    return is_local_proxy(request.url.host, request.url.port)
