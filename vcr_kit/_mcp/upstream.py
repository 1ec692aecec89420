"""The remote MCP server behind ``vcr_kit mcp --url URL``, asked only to record.

It speaks MCP's Streamable HTTP transport (spec 2025-03-26 and 2025-06-18) as a
client: each JSON-RPC message is a POST to the one endpoint URL with
``Accept: application/json, text/event-stream``; a request's answer is either a JSON
body or an SSE stream whose events carry JSON-RPC messages (the answer among them);
a notification gets 202. The session id the server gives on ``initialize``
(``Mcp-Session-Id``) is sent back on every later message and kept here, in memory
only: it never reaches a fixture, nor the client, which gets vcr_kit's own.

A session of the client's that began on replayed answers starts the server's session
the first time a request must be recorded: the server hears the client's
``initialize`` handshake first, as with stdio.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._core.httplib import sdk_library
from .fixtures import Unanswered
from .jsonrpc import encode, parse

__all__ = ["ACCEPT", "McpUpstream", "UpstreamSession", "sse_messages"]

ACCEPT: Final = "application/json, text/event-stream"
#: The client's headers that describe its connection or its session with vcr_kit:
#: never sent upstream (the upstream's own session id and framing replace them).
_NOT_FORWARDED: Final = frozenset(
    {"host", "content-length", "content-type", "accept", "accept-encoding", "connection",
     "keep-alive", "transfer-encoding", "te", "upgrade", "mcp-session-id", "last-event-id"}
)  # fmt: skip


@dataclass
class UpstreamSession:
    """One client session's state with the server: its handshake as the client gave it,
    and, once recording started it, the server's session id."""

    handshake: list[dict[str, Any]] = field(default_factory=list)
    started: bool = False
    upstream_id: str | None = None
    #: The MCP protocol version the session's ``initialize`` settled (None before).
    version: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def sse_messages(lines: Iterable[str]) -> Iterator[Any]:
    """The JSON of each event's ``data`` in an SSE stream's lines (comments, event
    names and ids skipped; an event whose data is not JSON skipped too)."""
    data: list[str] = []
    for line in [*lines, ""]:
        if line.strip() == "":
            if data:
                try:
                    message = parse("\n".join(data))
                except ValueError:
                    message = None  # not JSON-RPC: a keep-alive, a server's own note
                if message is not None:
                    yield message
                data = []
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)


class McpUpstream:
    """Sends a client's messages to the server at ``url`` with ``headers`` (the user's
    ``--header`` values: a bearer token, an API key) added to each."""

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        self.url = url
        self.headers = dict(headers)
        self.lib = sdk_library()
        self.client = self.lib.Client(
            timeout=self.lib.Timeout(600.0, connect=10.0), follow_redirects=False
        )

    def close(self) -> None:
        self.client.close()

    def ask(
        self, session: UpstreamSession, request: dict[str, Any], client_headers: Mapping[str, str]
    ) -> dict[str, Any]:
        """The server's whole response to ``request`` (``Unanswered`` when the server
        cannot be reached or fails); the server's session started first."""
        with session.lock:
            if not session.started:
                for message in session.handshake:  # the server must know the client first
                    if message is request:
                        continue
                    self.send(session, message, client_headers)
                session.started = True
        answer = self.send(session, request, client_headers)
        if answer is None:
            raise Unanswered(f"the MCP server at {self.url} answered {request['method']!r} "
                             "with no JSON-RPC answer")  # fmt: skip
        return answer

    def tell(
        self, session: UpstreamSession, message: dict[str, Any], client_headers: Mapping[str, str]
    ) -> None:
        """Pass a notification, or the client's answer to a request of the server's, to a
        server session that recording started; nobody to tell otherwise."""
        if not session.started:
            return
        with contextlib.suppress(Unanswered):  # nothing waits: the next request says why
            self.send(session, message, client_headers)

    def end(self, session: UpstreamSession, client_headers: Mapping[str, str]) -> None:
        """End the server's session (a DELETE), if recording started one."""
        if session.upstream_id is None:
            return
        # A server may refuse to end sessions on request (405): it lets them expire.
        with contextlib.suppress(self.lib.HTTPError):
            self.client.delete(self.url, headers=self.headers_for(session, client_headers))
        session.upstream_id = None

    def headers_for(
        self, session: UpstreamSession, client_headers: Mapping[str, str]
    ) -> dict[str, str]:
        headers = {k: v for k, v in client_headers.items() if k.lower() not in _NOT_FORWARDED}
        headers.update({"accept": ACCEPT, "content-type": "application/json"})
        if session.upstream_id is not None:
            headers["mcp-session-id"] = session.upstream_id
        headers.update(self.headers)
        return headers

    def send(
        self, session: UpstreamSession, message: dict[str, Any], client_headers: Mapping[str, str]
    ) -> dict[str, Any] | None:
        """POST ``message``; the server's answer to it, or None (a notification's 202)."""
        method = message.get("method", "an answer")
        body = encode(message)
        headers = self.headers_for(session, client_headers)
        try:
            with self.client.stream("POST", self.url, content=body, headers=headers) as response:
                if message.get("method") == "initialize":
                    session.upstream_id = response.headers.get("mcp-session-id")
                if response.status_code >= 400:
                    raise Unanswered(f"the MCP server at {self.url} answered HTTP "
                                     f"{response.status_code} to {method!r}")  # fmt: skip
                if "id" not in message or "method" not in message:
                    return None  # 202: nothing to read
                return self.read_answer(response, message)
        except self.lib.HTTPError as exc:
            raise Unanswered(f"cannot reach the MCP server at {self.url}: {exc}") from None

    def read_answer(self, response: Any, request: dict[str, Any]) -> dict[str, Any]:
        """The message answering ``request`` in a JSON body or an SSE stream; the
        server's notifications and requests in the stream are not part of it."""
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            messages: Iterable[Any] = sse_messages(response.iter_lines())
        else:
            try:
                payload = parse(response.read())
            except ValueError:
                raise Unanswered(f"the MCP server at {self.url} answered {request['method']!r} "
                                 f"with a body that is not JSON ({content_type or 'no type'})"
                                 ) from None  # fmt: skip
            messages = payload if isinstance(payload, list) else [payload]
        for message in messages:
            if not isinstance(message, dict) or "method" in message:
                continue  # the server's notification or request: not the answer
            if message.get("id") == request["id"]:  # its validity is judged by the caller
                return message
        raise Unanswered(f"the MCP server at {self.url} ended its answer to "
                         f"{request['method']!r} without a JSON-RPC answer")  # fmt: skip
