"""A loopback MCP server on the Streamable HTTP transport (spec 2025-06-18), for tests.

It speaks the real wire format: JSON-RPC POSTed to ``/mcp``; ``initialize`` answered
with a fresh random ``Mcp-Session-Id`` that every later message must carry (400
without one, 404 for one it does not know); notifications and answers get 202;
requests are answered as ``application/json`` or, for ``tools/call``, as an SSE stream
that first carries a progress notification and a log message, then the answer; a
GET is 405; a DELETE ends the session. With ``token`` set, a message without
``Authorization: Bearer <token>`` is 401.

The tools answer differently on every call (``now``: the clock; ``dice``: a random
number; ``hang``: waits until the server stops; ``whoami``: echoes the token), so a
replay that reached the server would show. ``calls`` lists the tools called,
``session_ids`` every id given out, ``deleted`` the sessions ended by a DELETE,
``authorizations`` and ``api_keys`` the ``Authorization`` and ``X-Api-Key`` headers
of each POST.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["McpHttpServer"]

TOOLS = [
    {"name": "now", "description": "the time", "inputSchema": {"type": "object"}},
    {"name": "dice", "description": "a random number from 1 to sides",
     "inputSchema": {"type": "object", "properties": {"sides": {"type": "integer"}}}},
    {"name": "hang", "description": "never answers", "inputSchema": {"type": "object"}},
    {"name": "whoami", "description": "echoes the Authorization header",
     "inputSchema": {"type": "object"}},
]  # fmt: skip


class McpHttpServer:
    def __init__(self, *, token: str | None = None) -> None:
        self.token = token
        self.calls: list[str] = []
        self.session_ids: list[str] = []
        self.deleted: list[str] = []
        self.authorizations: list[str | None] = []
        self.api_keys: list[str | None] = []
        self.live_sessions: set[str] = set()
        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> McpHttpServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.stopping.is_set():
            return
        self.stopping.set()
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()

    def result(self, request: dict[str, Any], authorization: str | None) -> dict[str, Any]:
        method, params = request["method"], request.get("params") or {}
        if method == "initialize":
            return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "clock-http", "version": "1"}}  # fmt: skip
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            tool = params["name"]
            self.calls.append(tool)
            if tool == "now":
                text = f"time {time.time_ns()}"
            elif tool == "whoami":
                text = f"you are {authorization}"
            elif tool == "dice":
                sides = params.get("arguments", {}).get("sides", 6)
                text = f"rolled {random.randint(1, sides)} of {sides}"
            else:
                self.stopping.wait()
                text = "stopped"
            return {"content": [{"type": "text", "text": text}], "isError": False}
        if method == "ping":
            return {}
        raise LookupError(method)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def owner(self) -> McpHttpServer:
        return self.server.owner  # type: ignore[attr-defined, no-any-return]

    def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def allowed(self) -> bool:
        """The token checked; False (and answered) when the message may not pass."""
        authorization = self.headers.get("Authorization")
        self.owner.authorizations.append(authorization)
        self.owner.api_keys.append(self.headers.get("X-Api-Key"))
        if self.owner.token is not None and authorization != f"Bearer {self.owner.token}":
            self.reply(401, b'{"error":"unauthorized"}', {"Content-Type": "application/json"})
            return False
        return True

    def known_session(self, message: dict[str, Any]) -> bool:
        if message.get("method") == "initialize":
            return True
        session = self.headers.get("Mcp-Session-Id")
        if session is None:
            self.reply(400, b"Bad Request: Mcp-Session-Id header is required")
            return False
        if session not in self.owner.live_sessions:
            self.reply(404, b"Session not found")
            return False
        return True

    def do_GET(self) -> None:
        self.reply(405, headers={"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        session = self.headers.get("Mcp-Session-Id", "")
        self.owner.live_sessions.discard(session)
        self.owner.deleted.append(session)
        self.reply(200)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        accept = self.headers.get("Accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            self.reply(406, b"Not Acceptable: accept both application/json and text/event-stream")
            return
        if not self.allowed():
            return
        message = json.loads(body)
        if not self.known_session(message):
            return
        if "method" not in message or "id" not in message:
            self.reply(202)
            return
        try:
            result = self.owner.result(message, self.headers.get("Authorization"))
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except LookupError:
            answer = {"jsonrpc": "2.0", "id": message["id"],
                      "error": {"code": -32601, "message": "Method not found"}}  # fmt: skip
        headers = {}
        if message["method"] == "initialize":
            session = uuid.uuid4().hex
            self.owner.session_ids.append(session)
            self.owner.live_sessions.add(session)
            headers["Mcp-Session-Id"] = session
        if message["method"] != "tools/call":
            headers["Content-Type"] = "application/json"
            self.reply(200, json.dumps(answer).encode(), headers)
            return
        self.send_sse(message, answer, headers)

    def send_sse(self, request: dict[str, Any], answer: dict[str, Any],
                 headers: dict[str, str]) -> None:  # fmt: skip
        """The answer as a stream: the server's own messages first, then the answer,
        its JSON spread over several ``data:`` lines."""
        token = (request.get("params", {}).get("_meta") or {}).get("progressToken", 0)
        events = [
            {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": 1, "total": 2}},
            {"jsonrpc": "2.0", "method": "notifications/message",
             "params": {"level": "info", "data": "working"}},
        ]  # fmt: skip
        self.send_response(200)
        for name, value in {**headers, "Content-Type": "text/event-stream",
                            "Cache-Control": "no-cache"}.items():  # fmt: skip
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b": keep-alive\n\n")
        for number, event in enumerate(events):
            line = f"event: message\nid: {number}\ndata: {json.dumps(event)}\n\n"
            self.wfile.write(line.encode())
            self.wfile.flush()
        data = "".join(f"data: {line}\n" for line in json.dumps(answer, indent=1).splitlines())
        self.wfile.write(f"event: message\nid: 9\n{data}\n".encode())
        self.wfile.flush()
        self.close_connection = True
