"""A record/replay relay for a stdio MCP server: ``vcr_kit mcp -- SERVER_CMD ARGS...``.

An MCP client (Claude Code, claude-agent-sdk) starts a stdio server as a child and
speaks JSON-RPC to it, one JSON message per line. The relay stands in its place:
each request the client sends is a fixture (``mcp-<hash>.json``, see
``mcp_fixtures.py``: the same as through ``vcr_kit mcp --url``), keyed by the
server's name, the method and the dehydrated params, whose answer is the server's
``result`` or ``error``. A hit is answered from the fixture, the server untouched; the server is
started only for the first request that must be recorded, and is first given the
client's ``initialize`` handshake, so it may start mid-session. On replay the server
never starts (its command need not exist); a miss is answered with a JSON-RPC error
that names the fixture, so the client shows it.

Each line is handled as ``jsonrpc.py`` says (one answer per request, none for a
notification, ``-32600`` for what is not JSON-RPC, batches by the negotiated protocol
version). Notifications and the server's own requests to the client (sampling, roots)
are relayed while a server runs and dropped otherwise: they are not part of an answer.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from queue import Queue
from typing import IO, Any, Final

from .._core.config import Mode
from .fixtures import HANDSHAKE, Unanswered, answer_from_fixtures
from .jsonrpc import (
    DEFAULT_VERSION,
    PARSE_ERROR,
    encode,
    handle,
    is_response,
    negotiated,
    parse,
    valid_id,
)

__all__ = ["McpRelay"]


#: What the client reader puts in the inbox when the client's input has ended.
_END: Final = object()


class _ServerGone(Unanswered):
    """The server exited (or never started) before answering."""


class McpRelay:
    """Relays one client's JSON-RPC lines (``client_in`` to ``client_out``) through the
    fixtures, starting ``command`` only to record."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        name: str,
        mode: Mode,
        fixtures_dir: str | Path | None,
        client_in: IO[bytes],
        client_out: IO[bytes],
    ) -> None:
        self.command = list(command)
        self.name = name
        self.mode = mode
        self.fixtures_dir = fixtures_dir
        self.client_in = client_in
        self.client_out = client_out
        self.write_lock = threading.Lock()
        self.server: subprocess.Popen[bytes] | None = None
        self.pending: dict[Any, Queue[dict[str, Any] | None]] = {}
        self.pending_lock = threading.Lock()
        #: Set (under ``pending_lock``) once the server's output has ended: a request
        #: sent after that must not wait for an answer that can no longer come.
        self.server_ended = False
        self.server_reader: threading.Thread | None = None
        #: The client's handshake, given again to a server started mid-session.
        self.handshake: list[dict[str, Any]] = []
        #: The MCP protocol version ``initialize`` settled (None before): it says
        #: whether a batch is answered or refused.
        self.version: str | None = None

    # -- the client side ---------------------------------------------------------

    def serve(self) -> int:
        """Relay until the client closes its input; stop the server, if one ran.

        The client's lines are read on a thread of their own: its answers to the
        server's requests (roots, sampling) must reach the server while a request of
        the client's waits for the server. Its requests are answered one at a time.
        """
        inbox: Queue[Any] = Queue()
        reader = threading.Thread(target=self.read_client, args=(inbox,), daemon=True,
                                  name="vcr_kit mcp client")  # fmt: skip
        reader.start()
        try:
            while (payload := inbox.get()) is not _END:
                self.from_client(payload)
        finally:
            self.stop_server()
        return 0

    def read_client(self, inbox: Queue[Any]) -> None:
        try:
            for line in self.client_in:
                if not line.strip():
                    continue
                try:
                    payload = parse(line)
                except ValueError:
                    self.to_client({"jsonrpc": "2.0", "id": None, "error": PARSE_ERROR})
                    continue
                if is_response(payload):  # the client's answer to a request of the server's
                    self.to_server(payload)  # now: a request of the client's may wait on it
                else:
                    inbox.put(payload)
        finally:
            inbox.put(_END)

    def from_client(self, payload: Any) -> None:
        """Answer one message or batch of the client's (``jsonrpc.handle``)."""
        reply = handle(payload, version=self.version or DEFAULT_VERSION,
                       answer=self.answer, tell=self.tell)  # fmt: skip
        if reply.body is not None:
            self.to_client(reply.body)

    def tell(self, message: dict[str, Any]) -> None:
        """A notification, or an answer of the client's: the server's, if one runs."""
        if message.get("method") in HANDSHAKE:
            self.handshake.append(message)
        self.to_server(message)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The ``result`` or ``error`` of ``request``: replayed, else recorded."""
        if request["method"] in HANDSHAKE:
            self.handshake.append(request)
        answer = answer_from_fixtures(
            request, server=self.name, mode=self.mode, fixtures_dir=self.fixtures_dir,
            ask=self.ask_server,
        )  # fmt: skip
        self.version = negotiated(request, answer) or self.version
        return answer

    def to_client(self, message: Any) -> None:
        with self.write_lock:
            self.client_out.write(encode(message) + b"\n")
            self.client_out.flush()

    # -- the server side ---------------------------------------------------------

    def ask_server(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send ``request`` to the server (started if need be); its whole response."""
        self.start_server(request)
        return self.exchange(request)

    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        waiting: Queue[dict[str, Any] | None] = Queue(maxsize=1)
        with self.pending_lock:
            if self.server_ended:  # it exited before this request was registered
                waiting.put(None)
            else:
                self.pending[request["id"]] = waiting
        try:
            self.to_server(request)
            answer = waiting.get()
        finally:
            with self.pending_lock:
                self.pending.pop(request["id"], None)
        if answer is None:
            raise _ServerGone(f"the MCP server {self.name!r} exited before answering "
                              f"{request['method']!r}; its output is on stderr")  # fmt: skip
        return answer

    def start_server(self, current: dict[str, Any]) -> None:
        """Start the server if it is not running, and give it the client's handshake
        (but ``current``, the request about to be sent)."""
        if self.server is not None:
            if self.server.poll() is None:
                return
            status = self.server.returncode
            raise _ServerGone(f"the MCP server {self.name!r} exited (status {status}); "
                              "its output is on stderr")  # fmt: skip
        try:
            self.server = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        except OSError as exc:
            raise _ServerGone(
                f"cannot start the MCP server {self.command[0]!r}: {exc.strerror or exc}. "
                "Install it to record; replaying needs only the fixtures."
            ) from None
        self.server_reader = threading.Thread(
            target=self.from_server, name="vcr_kit mcp server", daemon=True
        )
        self.server_reader.start()
        for message in self.handshake:  # the server must know the client first
            if message is current:
                continue
            if "id" in message:
                self.exchange(message)
            else:
                self.to_server(message)

    def to_server(self, message: dict[str, Any]) -> None:
        server = self.server
        if server is None or server.stdin is None or server.poll() is not None:
            return  # replaying: nobody to tell
        try:
            server.stdin.write(encode(message) + b"\n")
            server.stdin.flush()
        except OSError:
            pass  # it exited: the reader answers every waiting request

    def from_server(self) -> None:
        server = self.server
        if server is None or server.stdout is None:
            return
        for line in server.stdout:
            try:
                message = parse(line)
            except ValueError:
                continue  # not a message: MCP servers must log to stderr, some do not
            if not isinstance(message, dict):
                continue
            # An id that is no JSON-RPC id (an object) can answer nothing of the client's.
            if "method" not in message and valid_id(message.get("id")):
                with self.pending_lock:
                    waiting = self.pending.get(message["id"])
                if waiting is not None:
                    waiting.put(message)
                    continue
            self.to_client(message)  # a notification, or a request to the client
        with self.pending_lock:
            self.server_ended = True
            for waiting in self.pending.values():
                waiting.put(None)

    def stop_server(self) -> None:
        server, self.server = self.server, None
        if server is None:
            return
        if server.stdin is not None:
            # The server may have exited with a request still buffered: nobody to read it.
            with contextlib.suppress(BrokenPipeError):
                server.stdin.close()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.terminate()
            server.wait()
        reader, self.server_reader = self.server_reader, None
        if reader is not None:
            reader.join(timeout=5)  # the server has exited: its output ends at once
        if server.stdout is not None and (reader is None or not reader.is_alive()):
            server.stdout.close()
