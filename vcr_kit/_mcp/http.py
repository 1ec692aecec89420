"""A record/replay stand-in for a remote MCP server: ``vcr_kit mcp --url URL``.

An MCP client (Claude Code, claude-agent-sdk, the ``mcp`` SDK) reaches a remote
server over Streamable HTTP: JSON-RPC POSTed to one endpoint URL. This front listens
on 127.0.0.1 in the server's place and answers each request from the fixtures that
``vcr_kit mcp -- CMD`` uses (``mcp_fixtures.py``: the key has no word of the
transport); to record, it asks the server (``mcp_upstream.py``). On replay the server
is never contacted.

What the client sees, whatever the server did: each request's answer as one JSON
body (a client accepts JSON or SSE alike), 202 for notifications and answers, 405 for
a GET (no server-to-client stream: what a server says unasked is not part of an
answer), and on ``initialize`` a session id of vcr_kit's own, ``vcr-kit-session-<n>``
(the server's is kept in memory while recording, never stored nor shown). Each body is
handled as ``jsonrpc.py`` says: a batch gets a list of answers up to protocol
2025-03-26 and a 400 with ``-32600`` from 2025-06-18 on; a body that holds no
message (not JSON, an invalid message) a 400 with the JSON-RPC error.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from collections.abc import Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

from .._core.config import Mode
from .._engine.request_body import BODY_TIMEOUT, BadRequest, read_body
from .._engine.request_head import StrictRequestHandler
from .fixtures import HANDSHAKE, answer_from_fixtures
from .jsonrpc import (
    DEFAULT_VERSION,
    INVALID_REQUEST,
    PARSE_ERROR,
    encode,
    handle,
    is_request,
    negotiated,
    parse,
    refusal,
)
from .upstream import McpUpstream, UpstreamSession

__all__ = ["HOST", "SESSION_PREFIX", "McpHttpFront"]

HOST: Final = "127.0.0.1"
#: The session ids the front gives out, numbered from 1 in each process.
SESSION_PREFIX: Final = "vcr-kit-session-"
_JSON: Final = ("content-type", "application/json")

#: What ``handle_post`` answers: a status, headers and a body.
Reply = tuple[int, list[tuple[str, str]], bytes]


def _rpc_error(error: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": dict(error)}


class McpHttpFront:
    """Serves ``http://127.0.0.1:PORT/mcp`` (any path) in place of the server at
    ``upstream_url``, its requests named ``name`` in the fixtures' keys."""

    def __init__(
        self,
        upstream_url: str,
        *,
        name: str,
        mode: Mode,
        fixtures_dir: str | Path | None,
        port: int = 0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.mode = mode
        self.fixtures_dir = fixtures_dir
        self.upstream = McpUpstream(upstream_url, headers or {})
        self.sessions: dict[str | None, UpstreamSession] = {}
        self.sessions_lock = threading.Lock()
        self.numbers = itertools.count(1)
        self.httpd = _Server(self, port)
        self.port: int = self.httpd.server_address[1]
        self.url = f"http://{HOST}:{self.port}/mcp"
        self.thread: threading.Thread | None = None

    def start(self) -> McpHttpFront:
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05},
                                       name=f"vcr_kit mcp {self.url}", daemon=True)  # fmt: skip
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting and close the listening socket; a request in flight (a
        recording waiting on the server) is cut, its handler thread a daemon."""
        if self.thread is not None:
            self.httpd.shutdown()
            self.thread.join()
            self.thread = None
        self.httpd.server_close()
        self.upstream.close()

    # -- sessions ------------------------------------------------------------------

    def session(self, session_id: str | None) -> UpstreamSession:
        """The session the client names (one it began before this front started, as
        after a restart, is taken as it comes)."""
        with self.sessions_lock:
            return self.sessions.setdefault(session_id, UpstreamSession())

    def new_session(self) -> tuple[str, UpstreamSession]:
        with self.sessions_lock:
            session_id = f"{SESSION_PREFIX}{next(self.numbers)}"
            session = self.sessions[session_id] = UpstreamSession()
            return session_id, session

    def end_session(self, session_id: str | None, client_headers: Mapping[str, str]) -> None:
        with self.sessions_lock:
            session = self.sessions.pop(session_id, None)
        if session is not None:
            self.upstream.end(session, client_headers)

    # -- one POST --------------------------------------------------------------------

    def handle_post(self, body: bytes, client_headers: Mapping[str, str]) -> Reply:
        """The reply to one POSTed JSON-RPC message or batch of them (``jsonrpc.handle``)
        under the session's negotiated protocol version, else the client's
        ``MCP-Protocol-Version``, else 2025-03-26 (the spec's assumption)."""
        try:
            payload = parse(body)
        except ValueError:
            return 400, [_JSON], encode(_rpc_error(PARSE_ERROR))
        session_id = client_headers.get("mcp-session-id")
        with self.sessions_lock:
            known = self.sessions.get(session_id)
        version = ((known.version if known else None)
                   or client_headers.get("mcp-protocol-version") or DEFAULT_VERSION)  # fmt: skip
        refused = refusal(payload, version)
        if refused is not None:  # before a session is given out for it
            return 400, [_JSON], encode(refused)
        headers = [_JSON]
        messages = payload if isinstance(payload, list) else [payload]
        if any(is_request(m) and m["method"] == "initialize" for m in messages):
            session_id, session = self.new_session()
            headers.append(("mcp-session-id", session_id))
        else:
            session = self.session(session_id)
        reply = handle(
            payload, version=version,
            answer=lambda request: self.answer(session, request, client_headers),
            tell=lambda message: self.tell(session, message, client_headers),
        )  # fmt: skip
        if reply.refused:
            return 400, [_JSON], encode(reply.body)
        if reply.body is None:
            return 202, [], b""
        return 200, headers, encode(reply.body)

    def answer(
        self, session: UpstreamSession, request: dict[str, Any], client_headers: Mapping[str, str]
    ) -> dict[str, Any]:
        """A request's ``result`` or ``error``: replayed, else recorded."""
        if request["method"] in HANDSHAKE:
            session.handshake.append(request)
        answer = answer_from_fixtures(
            request, server=self.name, mode=self.mode, fixtures_dir=self.fixtures_dir,
            ask=lambda request: self.upstream.ask(session, request, client_headers),
        )  # fmt: skip
        session.version = negotiated(request, answer) or session.version
        return answer

    def tell(
        self, session: UpstreamSession, message: dict[str, Any], client_headers: Mapping[str, str]
    ) -> None:
        """A notification, or an answer of the client's: the server's, if recording
        started its session."""
        if message.get("method") in HANDSHAKE:
            session.handshake.append(message)
        self.upstream.tell(session, message, client_headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a client may open many connections at once

    def __init__(self, front: McpHttpFront, port: int) -> None:
        self.front = front
        super().__init__((HOST, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up is its business; anything else is a bug worth printing.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(StrictRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "vcr_kit-mcp"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request would drown the client's own output

    def client_headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def do_POST(self) -> None:
        self.connection.settimeout(BODY_TIMEOUT)
        try:
            body = read_body(self.rfile, self.headers, BODY_TIMEOUT,
                             http10=self.request_version == "HTTP/1.0")  # fmt: skip
        except BadRequest as bad:
            self.close_connection = True  # where the next request starts is unknown
            error = {"code": INVALID_REQUEST["code"], "message": f"vcr_kit: {bad.message}"}
            self.reply(bad.status, [_JSON], encode(_rpc_error(error)))
            return
        finally:
            with contextlib.suppress(OSError):
                self.connection.settimeout(None)
        self.reply(*self.server.front.handle_post(body, self.client_headers()))

    def do_GET(self) -> None:
        self.reply(405, [("allow", "POST, DELETE")], b"")

    def do_DELETE(self) -> None:
        headers = self.client_headers()
        self.server.front.end_session(headers.get("mcp-session-id"), headers)
        self.reply(200, [], b"")

    def reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
