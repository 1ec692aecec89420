"""The connection guard: what the transport seam cannot see, the network still can.

A client that does not send through ``httpx2``/``httpx``'s own network transport (a
custom transport, ``urllib``, another HTTP library) escapes the seam. While a test
runs, ``socket.getaddrinfo``, which every such client calls before it connects,
is watched for Anthropic hosts: in replay mode the look-up fails with
``FixtureMissingError`` (no request ever reaches the network), in the other modes
it is noted in the journal as a live call, so the summary and
``assertNoLiveCalls()`` show it. vcr_kit's own live calls (recording, mode
``off``) pass untouched. A connection is looked up once and may carry many
requests, so this is a net under the seam, not a second seam.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any, Protocol

from .._core.config import Mode
from .._engine.live import in_live_call, is_local_proxy, live_calls_in_flight
from .._engine.recorder import HttpRecorder
from .._ledger.notes import Event, note
from ..errors import FixtureMissingError
from .hosts import HostSet
from .sdk_errors import deliver


class Interception(Protocol):
    """What the guard needs of the running test's interception (see ``intercept``)."""

    @property
    def recorder(self) -> HttpRecorder: ...

    def hosts(self) -> HostSet: ...

__all__ = ["install", "uninstall", "unwrapped_client_message"]

_lock = threading.Lock()
_original: list[Callable[..., Any]] = []


def unwrapped_client_message(host: str, port: object) -> str:
    return (
        f"Fixture missing: vcr_kit refused a connection to {host}:{port} in replay mode. "
        "It came from an HTTP client vcr_kit could not wrap (one that does not send "
        "through httpx2's or httpx's own transport), so no fixture could be looked up "
        "for it. Build that client with vcr_kit.client() or give it a vcr_kit.VCRTransport, "
        "or run the process through the proxy (python -m vcr_kit run -- ...)."
    )


def install(current: Callable[[], Interception | None]) -> None:
    with _lock:
        if _original:
            return
        original = socket.getaddrinfo
        _original.append(original)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        session = current()
        if session is not None and host and not in_live_call() and not live_calls_in_flight():
            name = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
            number = _port_number(port)
            # A vcr_kit proxy of this process (a test's vcr_proxy) records what reaches it.
            if not is_local_proxy(name, number) and session.hosts().matches(
                name, number, "https" if number == 443 else "http"
            ):
                _refuse_or_note(session, name, port)
        return original(host, port, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo


def _port_number(port: Any) -> int | None:
    try:
        return int(port)
    except (TypeError, ValueError):
        return {"https": 443, "http": 80}.get(str(port))


def _refuse_or_note(session: Interception, host: str, port: Any) -> None:
    if session.recorder.settings.mode is Mode.REPLAY:
        note(Event.MISSING, None, detail=f"connection to {host}:{port}")
        raise deliver(FixtureMissingError(unwrapped_client_message(host, port)))
    note(
        Event.LIVE,
        None,
        detail=f"connection to {host}:{port} from a client vcr_kit could not wrap",
    )


def uninstall() -> None:
    with _lock:
        if _original:
            socket.getaddrinfo = _original.pop()
