"""The connection guard: what the seams cannot see, the network still can.

A client that does not send through ``httpx2``/``httpx``'s own network transport or
aiohttp (a custom transport, ``urllib``, another HTTP library) escapes the seams.
While a test runs, two places every such client passes are watched: the name
look-up (``socket.getaddrinfo``) for Anthropic host names, and the connection itself
(``socket.socket.connect`` and ``connect_ex``, which asyncio's ``sock_connect`` and
every blocking client call) for addresses: a numeric host (``127.0.0.1:PORT`` or
``[::1]`` as ``ANTHROPIC_BASE_URL``, a gateway at ``10.0.0.5``) is never looked up
by asyncio or aiohttp, so only the connection shows it. In replay mode the
look-up or the connection fails with ``FixtureMissingError`` (no request ever
reaches the network); in the other modes it is noted in the journal as a live
call, so the summary and ``assertNoLiveCalls()`` show it. vcr_kit's own live calls
(recording, mode ``off``) and a test's own servers on other ports pass untouched.
A connection may carry many requests, so this is a net under the seams, not a
seam.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Callable
from typing import Any, Protocol

from .._core.config import Mode
from .._engine.live import in_live_call, is_local_proxy, live_calls_in_flight
from .._engine.recorder import HttpRecorder
from .._ledger.notes import Event, note
from ..errors import FixtureMissingError
from .hosts import HostSet
from .patches import PATCHES, Patch, patch
from .sdk_errors import deliver


class Interception(Protocol):
    """What the guard needs of the running test's interception (see ``intercept``)."""

    @property
    def recorder(self) -> HttpRecorder: ...

    def hosts(self) -> HostSet: ...


__all__ = ["install", "unwrapped_client_message"]

#: Modules between a client and the socket: the one that asked is the first other one.
_PLUMBING = frozenset(
    {
        "socket", "ssl", "asyncio", "selectors", "concurrent", "threading", "contextlib",
        "functools", "http", "httpcore", "anyio", "sniffio", "h11", "vcr_kit",
    }
)  # fmt: skip


def unwrapped_client_message(host: str, port: object, opener: str | None = None) -> str:
    """What a refused connection says: which client opened it, when that can be told
    from the stack, and the way out that fits that client."""
    who = f"{opener}, an HTTP client" if opener else "an HTTP client"
    top = (opener or "").split(".", 1)[0]
    if top in ("httpx", "httpx2"):
        way_out = (
            f"It came from {who} vcr_kit could not wrap (one built on its own transport, "
            f"not {top}'s), so no fixture could be looked up for it. Give that client a "
            "vcr_kit.VCRTransport or build it with vcr_kit.client(), or run the process "
            "through the proxy (python -m vcr_kit run -- ...)."
        )
    else:
        way_out = (
            f"It came from {who} vcr_kit could not wrap (one that does not send "
            "through httpx2's or httpx's own transport or through aiohttp), so no fixture "
            "could be looked up for it. Send it through httpx2, httpx or aiohttp (e.g. "
            "build it with vcr_kit.client()), or run the process through the proxy "
            "(python -m vcr_kit run -- ...), which records any client."
        )
    return (
        f"Fixture missing: vcr_kit refused a connection to {host}:{port} in replay mode. " + way_out
    )


def _opener() -> str | None:
    """The module that asked for the connection: the first one up the stack that is
    not socket, TLS, event-loop or HTTP plumbing."""
    frame = sys._getframe(2)
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name and name.split(".", 1)[0] not in _PLUMBING:
            return name
        frame = frame.f_back  # type: ignore[assignment]
    return None


def install(group: str, current: Callable[[], Interception | None]) -> None:
    """Watch the look-up and the connection until ``group`` is put back (idempotent).
    ``connect`` and ``connect_ex`` are inherited from ``_socket.socket``: putting them
    back removes ``socket.socket``'s own."""
    PATCHES.apply(group, PATCHES.made_once(_patches, current))


def _patches(current: Callable[[], Interception | None]) -> tuple[Patch, ...]:
    return (
        patch(socket.socket, "connect", _watched_connect, current),
        patch(socket.socket, "connect_ex", _watched_connect, current),
        patch(socket, "getaddrinfo", _watched_getaddrinfo, current),
    )


def _watched_getaddrinfo(
    original: Callable[..., Any], current: Callable[[], Interception | None]
) -> Callable[..., Any]:
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        session = current()
        if session is not None and host and not in_live_call() and not live_calls_in_flight():
            name = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
            number = _port_number(port)
            # A vcr_kit proxy of this process (a test's vcr_proxy) records what reaches it;
            # an address (no name to look up) is the connection's to judge, once.
            if (
                not _is_address(name)
                and not is_local_proxy(name, number)
                and session.hosts().matches(name, number, "https" if number == 443 else "http")
            ):
                _refuse_or_note(session, name, port)
        return original(host, port, *args, **kwargs)

    return getaddrinfo


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _port_number(port: Any) -> int | None:
    try:
        return int(port)
    except (TypeError, ValueError):
        return {"https": 443, "http": 80}.get(str(port))


def _watched_connect(
    original: Callable[..., Any], current: Callable[[], Interception | None]
) -> Callable[..., Any]:
    def connect(sock: socket.socket, address: Any, /) -> Any:
        session = current()
        if (
            session is not None
            and sock.family in (socket.AF_INET, socket.AF_INET6)
            and isinstance(address, tuple)
            and not in_live_call()
            and not live_calls_in_flight()
        ):
            host, number = str(address[0]).lower(), _port_number(address[1])
            if not is_local_proxy(host, number) and session.hosts().matches(
                host, number, "https" if number == 443 else "http"
            ):
                shown = f"[{host}]" if ":" in host else host
                try:
                    _refuse_or_note(session, shown, number)
                except BaseException:
                    sock.close()  # the caller closes its socket on OSError only
                    raise
        return original(sock, address)

    connect.__name__ = original.__name__
    return connect


def _refuse_or_note(session: Interception, host: str, port: Any) -> None:
    if session.recorder.settings.mode is Mode.REPLAY:
        note(Event.MISSING, None, detail=f"connection to {host}:{port}")
        raise deliver(FixtureMissingError(unwrapped_client_message(host, port, _opener())))
    note(
        Event.LIVE,
        None,
        detail=f"connection to {host}:{port} from a client vcr_kit could not wrap",
    )
