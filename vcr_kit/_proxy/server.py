"""A loopback record/replay proxy: the Anthropic HTTP API for other processes.

In-process interception cannot see a child process (Claude Code, claude-agent-sdk,
a Node service, curl); all of them honour ``ANTHROPIC_BASE_URL``. This server
answers on 127.0.0.1 through the same ``HttpRecorder`` as the in-process client:
the same fixture names (``name_and_stored``), store, locks, single flight, secret scan,
journal and summary, so a fixture recorded here replays in-process and back.

Why ``http.server.ThreadingHTTPServer``: no new dependency, and a thread per
connection fits the recorder, whose store calls (file locks, single flight) are
blocking; concurrent requests are served concurrently. The upstream call uses
the HTTP library the installed SDK is built on (``httpx2`` or ``httpx``).

While recording, the upstream answer is forwarded to the client as it arrives
(one SSE event at a time) and buffered; when it ends, the buffer becomes the
fixture. Tool ids in what the client sees are already the fixture's stable ids,
so the client's next request (which quotes them) has the same key on replay.

OpenAI and Gemini answer under their own path prefixes (``provider_routes``): keyed
as their SDKs send them to the provider's default host, recorded from the base URL
the user had set (else the provider's own) with the client's own key, and refused
in the provider's error shape, so that its SDK raises its own error with vcr_kit's
message.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from .._core.config import Mode, base_url, base_url_set_to, variables_set_to
from .._core.credentials import (
    has_child_credentials,
    has_real_key,
    query_credentials,
    stand_in_key_while,
)
from .._core.http_request import name_and_stored
from .._core.httplib import sdk_library
from .._engine.faults import decide
from .._engine.live import add_local_proxy, remove_local_proxy
from .._engine.recorder import NOT_RECORDED, HttpRecorder
from .._engine.request_body import BODY_TIMEOUT, BadRequest, read_body
from .._engine.request_head import StrictRequestHandler
from .._ledger.notes import Event, note
from ..errors import VCRError
from .cloud_upstream import CloudUpstreams, without_client_credentials
from .faults import STREAM_FAULTS, answer_before, plan_for, send_stream, whole_answer
from .forwarding import BodyForwarder, EventStreamForwarder, SseForwarder
from .provider_routes import ProviderRoutes, Route, prefixed_provider

__all__ = ["DEFAULT_UPSTREAM", "Proxy", "ProxyError", "proxy", "proxy_for_test"]

DEFAULT_UPSTREAM: Final = "https://api.anthropic.com"
HOST: Final = "127.0.0.1"
#: The origin of the request the recorder keys (only its path and query count).
_KEY_ORIGIN: Final = "http://vcr-kit-proxy.invalid"
#: Headers that describe one connection, not the message: never forwarded.
_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
#: The body reaches the client decoded and re-framed, so these no longer apply.
_NOT_RETURNED: Final = _HOP_BY_HOP | {"content-encoding"}
#: How long ``stop()`` lets in-flight requests finish by default: a test's proxy stops
#: after its child process, which may still be streaming a long answer.
_STOP_WAIT: Final = 600.0
#: After the grace period, how long the handlers get to fail cleanly once their
#: connections are shut (no fixture is written for a request whose client is gone).
_STOP_CLEANUP: Final = 2.0


class ProxyError(OSError):
    """The proxy cannot start (the port is taken) or cannot reach its upstream."""


def _default_log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def error_body(error_type: str, message: str) -> bytes:
    """An Anthropic-style error object, which every SDK and the CLI show as it is."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def error_for(path: str, status: int, error_type: str, message: str) -> bytes:
    """The proxy's own error for a request for ``path``: in the shape of the provider
    whose prefix it is under (its SDK raises its own error with ``message``), else
    Anthropic's (``error_type``)."""
    provider = prefixed_provider(path)
    if provider is None:
        return error_body(error_type, message)
    return json.dumps(provider.error_body(status, message), ensure_ascii=False).encode("utf-8")


class _ClientGone(Exception):
    """The client hung up mid-answer: nothing may be recorded."""


class Proxy:
    """A record/replay proxy on ``127.0.0.1``; ``start()``/``stop()`` or ``with``."""

    def __init__(
        self,
        *,
        port: int = 0,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
        upstream: str | None = None,
        log: Callable[[str], None] = _default_log,
        body_timeout: float = BODY_TIMEOUT,
        faults: str | None = None,
        provider_upstreams: Mapping[str, str] | None = None,
    ) -> None:
        # Resolved now, before a caller points ANTHROPIC_BASE_URL at this proxy.
        self.upstream = upstream or base_url() or DEFAULT_UPSTREAM
        self.upstream = self.upstream.rstrip("/")
        #: The other providers' prefixes, and where each records from (by provider name;
        #: default: OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL as set now, else their own).
        self.routes = ProviderRoutes(
            ProviderRoutes.environment_upstreams()
            if provider_upstreams is None
            else provider_upstreams
        )
        #: Where Claude Code's Bedrock, Vertex and Foundry requests go, authenticated.
        self.clouds = CloudUpstreams()
        self.log = log
        self.body_timeout = body_timeout
        self.recorder = HttpRecorder(mode=mode, fixtures_dir=fixtures_dir)
        # A client without a real key can replay; a miss then says recording needs one.
        self.keyless_recorder = HttpRecorder(mode=mode, fixtures_dir=fixtures_dir, can_record=False)
        self.fault_plan = plan_for(faults)
        self.lib = sdk_library()
        try:
            self._httpd = _Server(self, port)
        except OSError as exc:
            raise ProxyError(
                exc.errno,
                f"vcr_kit proxy cannot listen on {HOST}:{port}: {exc.strerror or exc}. "
                "Choose another --port, or 0 for a free one.",
            ) from None
        self.port: int = self._httpd.server_address[1]
        self.url = f"http://{HOST}:{self.port}"
        #: Each provider's base-URL variable for a client of this proxy.
        self.provider_base_urls = ProviderRoutes.child_base_urls(self.url)
        self.client: Any = None
        self._thread: threading.Thread | None = None

    @property
    def settings(self) -> Any:
        return self.recorder.settings

    def needs_stand_in_key(self, environ: Mapping[str, str] | None = None) -> bool:
        """A child started with ``environ`` (default: this process's) must be given the
        stand-in key: this proxy replays, and the child has no credentials to log in."""
        if self.settings.mode is not Mode.REPLAY:  # recording may need the child's own login
            return False
        return not has_child_credentials(environ)

    def start(self) -> Proxy:
        self.client = self.lib.Client(
            timeout=self.lib.Timeout(600.0, connect=10.0), follow_redirects=False
        )
        add_local_proxy(HOST, self.port)  # this process's seams let its requests through
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"vcr_kit proxy {self.url}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, grace: float = _STOP_WAIT) -> None:
        """Stop accepting, let in-flight requests finish for up to ``grace`` seconds, then
        close every connection: a request still in flight fails, and records nothing."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        if not self._httpd.wait_idle(grace):
            self._httpd.close_connections()
            self._httpd.wait_idle(_STOP_CLEANUP)
        self._httpd.close_connections()
        self._httpd.server_close()
        remove_local_proxy(HOST, self.port)
        if self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog (5) resets connections when a test suite or an agent opens
    # many at once.
    request_queue_size = 128

    def __init__(self, owner: Proxy, port: int) -> None:
        self.owner = owner
        self.connections: set[socket.socket] = set()
        self.in_flight = 0
        self.stopping = False
        self.state = threading.Condition()
        super().__init__((HOST, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up is its business; anything else is a bug worth printing.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def wait_idle(self, timeout: float) -> bool:
        """Wait for in-flight requests to end; whether they all did."""
        with self.state:
            self.stopping = True
            return self.state.wait_for(lambda: self.in_flight == 0, timeout)

    def close_connections(self) -> None:
        """Unblock every handler thread: one waiting on a keep-alive connection, one
        reading a body or writing an answer (its read or write then fails)."""
        with self.state:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(StrictRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "vcr_kit-proxy"
    server: _Server
    #: How the body of the answer being sent is framed (``send_head``): "length",
    #: "chunked", "close" (an HTTP/1.0 client: the body ends when the connection
    #: does) or "none" (HEAD, 1xx, 204, 304: no body at all, RFC 9112 §6.3).
    framing = "length"

    def setup(self) -> None:
        super().setup()
        self.head_timeout = self.server.owner.body_timeout
        with self.server.state:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.state:
            self.server.connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request would drown the client's own output

    def do_GET(self) -> None:
        self._dispatch()

    # No do_HEAD: a HEAD gets the bodiless 501 of ``send_error`` and is never sent
    # upstream, recorded or counted. Claude Code probes its base URL with one; served as a
    # call, the probe would need a fixture (and a key to record one) in every session.

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """An answer of the proxy's own before any request is dispatched (a request head
        RFC 9112 refuses, a method not served): in the API's error shape, and the
        connection closed (where the next request starts is unknown)."""
        self.close_connection = True
        text = message or self.responses.get(code, ("",))[0]
        if code == 501 and self.command:
            text = f"the method {self.command} is not served"
        message = f"vcr_kit proxy cannot read the request: {text}. Nothing was sent upstream."
        self.server.owner.log(message)
        with contextlib.suppress(_ClientGone):
            body = error_for(getattr(self, "path", ""), code, "invalid_request_error", message)
            self.send_whole(code, [("content-type", "application/json")], body)

    def _dispatch(self) -> None:
        with self.server.state:
            self.server.in_flight += 1
        try:
            try:
                body = self.read_body()
            except BadRequest as bad:
                self.close_connection = True  # where the next request starts is unknown
                self.server.owner.log(f"vcr_kit proxy: {bad.message}")
                body_bytes = error_for(self.path, bad.status, bad.error_type, bad.message)
                self.send_whole(bad.status, [("content-type", "application/json")], body_bytes)
                return
            _Exchange(self, self.server.owner, body).run()
        except (_ClientGone, ConnectionError):
            self.close_connection = True
        finally:
            with self.server.state:
                self.server.in_flight -= 1
                if self.server.stopping:
                    self.close_connection = True
                self.server.state.notify_all()

    def read_body(self) -> bytes:
        """The request body (``request_body.read_body``), each read waiting at most the
        proxy's ``body_timeout``."""
        timeout = self.server.owner.body_timeout
        self.connection.settimeout(timeout)
        try:
            return read_body(self.rfile, self.headers, timeout,
                             http10=self.request_version == "HTTP/1.0")  # fmt: skip
        finally:
            with contextlib.suppress(OSError):
                self.connection.settimeout(None)  # idle keep-alive: closed by stop()

    # -- writing to the client -------------------------------------------------------

    def send_head(self, status: int, headers: list[tuple[str, str]], length: int | None) -> None:
        """The status line and headers, framed for the body to come (RFC 9112 §6):
        ``length`` bytes, or (None) a body of unknown length."""
        if self.command == "HEAD" or status < 200 or status in (204, 304):
            self.framing = "none"
        elif length is not None:
            self.framing = "length"
        elif self.request_version == "HTTP/1.0":  # no chunked for it (RFC 9112 §6.1)
            self.framing = "close"
            self.close_connection = True
        else:
            self.framing = "chunked"
        try:
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if self.framing == "length" or (self.command == "HEAD" and length is not None):
                self.send_header("content-length", str(length))  # HEAD: as a GET would
            elif self.framing == "chunked":
                self.send_header("transfer-encoding", "chunked")
            if self.close_connection:
                self.send_header("connection", "close")
            elif self.request_version == "HTTP/1.0":
                self.send_header("connection", "keep-alive")
            self.end_headers()
        except OSError as exc:
            raise _ClientGone from exc

    def send_chunk(self, data: bytes) -> None:
        if not data or self.framing == "none":
            return
        try:
            chunked = self.framing == "chunked"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def end_chunks(self) -> None:
        if self.framing != "chunked":
            return
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def send_whole(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_head(status, headers, len(body))
        if self.framing == "none":
            return
        try:
            self.wfile.write(body)
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc


class _Exchange:
    """One request through the proxy: replayed, recorded while forwarded, or passed on."""

    def __init__(self, handler: _Handler, proxy: Proxy, body: bytes) -> None:
        self.handler = handler
        self.proxy = proxy
        self.body = body
        self.headers = [
            (name, value)
            for name, value in handler.headers.items()
            if name.lower() not in _HOP_BY_HOP
        ]
        #: Whether the live answer already went to the client (then nothing more is sent).
        self.forwarded = False
        self.request: Any = None
        self.recorder: HttpRecorder | None = None
        #: Whether a live answer goes to the client as it comes (not when a fault reshapes it).
        self.forward_live = True
        #: The provider prefix the request came under (None: Anthropic's API, a cloud's).
        self.route: Route | None = proxy.routes.route(handler.path)

    def run(self) -> None:
        lib = self.proxy.lib
        route = self.route
        # A cloud request carries no key (CLAUDE_CODE_SKIP_*_AUTH), or a stand-in: the proxy
        # authenticates it with this machine's credentials when it records.
        cloud = route is None and self.proxy.clouds.serves(self.handler.path)
        if cloud:
            self.headers = without_client_credentials(self.headers)
        # Keyed on the path the client asked for, so names match the in-process client's;
        # not on this proxy's own address, which the recorder would leave to the proxy. A
        # provider's request on its default host, as its SDK sends it by default: the
        # provider is known by the host (GET /v1/models is several providers' path).
        request = lib.Request(
            self.handler.command,
            route.key_url if route is not None else _KEY_ORIGIN + self.handler.path,
            headers=self.headers,
            content=self.body,
        )
        # Gemini's key may come as ?key= (never keyed nor stored): a key all the same.
        in_query = (
            query_credentials(request.url.query.decode("ascii", "replace"),
                              route.provider.credential_query)
            if route is not None
            else []
        )  # fmt: skip
        real_key = cloud or has_real_key(request.headers, in_query)
        recorder = self.proxy.recorder if real_key else self.proxy.keyless_recorder
        self.request, self.recorder = request, recorder
        injection = decide(request, recorder.settings.fixtures_dir, self.proxy.fault_plan)
        if injection is not None and answer_before(self.handler, injection):
            return
        self.forward_live = injection is None or injection.fault.name not in STREAM_FAULTS
        try:
            answer = recorder.handle(request, self.live)
        except VCRError as exc:  # a missing fixture above all: the client shows the message
            if self.forwarded:  # refused after the answer went out (a secret): cut it short
                self.proxy.log(f"vcr_kit proxy: {exc.message}")
                self.handler.close_connection = True
                return
            self.fail(400, "invalid_request_error", exc.message)
            return
        except lib.TransportError as exc:
            if self.forwarded:  # the upstream broke mid-answer: the client sees it cut
                self.proxy.log(
                    f"vcr_kit proxy: {self.handler.command} {self.handler.path} not recorded: "
                    f"the upstream broke off its answer ({type(exc).__name__}: {exc})"
                )
                self.handler.close_connection = True
                return
            upstream = self.proxy.upstream if route is None else route.upstream_base
            self.fail(
                502,
                "api_error",
                f"vcr_kit proxy cannot reach the upstream {upstream}: "
                f"{type(exc).__name__}: {exc}",
            )
            return
        if recorder.settings.mode is Mode.OFF:
            note(Event.PASSED_THROUGH, None)
        why = answer.extensions.get(NOT_RECORDED)
        if why:  # a 401, a 529, a stream cut short: the client has it, the disk does not
            self.proxy.log(
                f"vcr_kit proxy: {self.handler.command} {self.handler.path} not recorded: {why}"
            )
        if self.forwarded:
            self.handler.end_chunks()
        elif injection is not None and injection.fault.name in STREAM_FAULTS:
            send_stream(self.handler, injection, answer)
        else:  # a replay
            headers = [(k, v) for k, v in answer.headers.items() if k not in _NOT_RETURNED]
            self.handler.send_whole(answer.status_code, headers, answer.content)

    def fail(self, status: int, error_type: str, message: str) -> None:
        self.proxy.log(f"vcr_kit proxy: {message}")
        body = error_for(self.handler.path, status, error_type, message)
        self.handler.send_whole(status, [("content-type", "application/json")], body)

    def fixture_name(self) -> str:
        """The name of the fixture being recorded, which seeds its stable tool ids;
        "" when passing through (mode off: the answer is forwarded as it is). Derived
        here, on a live call only: a replay never needs it."""
        if self.recorder is None or self.recorder.settings.mode is Mode.OFF:
            return ""
        return name_and_stored(self.request)[0]

    def live(self, request: Any) -> Any:
        """Send ``request`` upstream; forward the answer as it comes; return it whole."""
        lib = self.proxy.lib
        headers = [(k, v) for k, v in self.headers if k.lower() != "accept-encoding"]
        # Identity: each event is forwarded as it arrives, never held by a decompressor.
        headers.append(("accept-encoding", "identity"))
        # `request`, not the client's bytes: the recorder has put back the live ids that
        # the ids it gave out stand for (a thread's next turn, a batch's retrieve).
        path = request.url.raw_path.decode("ascii")
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        url = self.proxy.upstream + path
        if self.route is not None:
            url = self.route.upstream_url(path)
        elif self.proxy.clouds.serves(path):
            url, headers = self.proxy.clouds.upstream(
                request.method, path, headers, request.content
            )
        upstream = lib.Request(request.method, url, headers=headers, content=request.content)
        if not self.forward_live:  # a stream fault reshapes the whole answer: run sends it
            return whole_answer(self.proxy.client, upstream, request, _NOT_RETURNED)
        response = self.proxy.client.send(upstream, stream=True)
        try:
            kept = [
                (k, v) for k, v in response.headers.multi_items() if k.lower() not in _NOT_RETURNED
            ]
            self.forwarded = True
            self.handler.send_head(response.status_code, kept, None)
            content_type = response.headers.get("content-type", "")
            seed = self.fixture_name()
            ids = None if self.route is None else self.route.provider.ids
            transform: SseForwarder | EventStreamForwarder | BodyForwarder = BodyForwarder(
                seed, ids
            )
            if content_type.startswith("text/event-stream"):
                transform = SseForwarder(seed, ids)
            elif content_type.startswith("application/vnd.amazon.eventstream"):
                transform = EventStreamForwarder(seed)  # Bedrock: frames, not SSE events
            buffered: list[bytes] = []
            for chunk in response.iter_bytes():
                buffered.append(chunk)
                self.handler.send_chunk(transform.feed(chunk))
            self.handler.send_chunk(transform.flush())
            # The body's end is sent by `run` once the fixture is written: a client that
            # saw the whole answer may count on the recording (and the journal) being done.
        finally:
            response.close()
        return lib.Response(
            response.status_code, headers=kept, content=b"".join(buffered), request=request
        )


@contextlib.contextmanager
def proxy(
    *,
    port: int = 0,
    mode: str | Mode | None = None,
    fixtures_dir: str | Path | None = None,
    upstream: str | None = None,
) -> Iterator[str]:
    """A record/replay proxy for the block; yields its URL (``http://127.0.0.1:PORT``).

    Give the URL to another process as ``ANTHROPIC_BASE_URL``. ``upstream`` defaults
    to ``ANTHROPIC_BASE_URL``, else the real API; the client's key is forwarded
    upstream and never stored. In replay mode, with no key or login token in the
    environment, the block runs with the stand-in key set, so a child started in it
    (Claude Code will not start without one) replays; no request carrying it is ever
    sent upstream.
    """
    with Proxy(port=port, mode=mode, fixtures_dir=fixtures_dir, upstream=upstream) as running:
        with stand_in_key_while(running.needs_stand_in_key()):
            yield running.url


@contextlib.contextmanager
def proxy_for_test() -> Iterator[str]:
    """One proxy for one test, with the test's mode and fixtures folder, and
    ``ANTHROPIC_BASE_URL`` pointing at it while the test runs (child processes
    inherit it), ``OPENAI_BASE_URL`` and ``GOOGLE_GEMINI_BASE_URL`` at its prefixes;
    the old values are back afterwards (read first: where the proxy records from)."""
    with (
        Proxy() as running,
        base_url_set_to(running.url),
        variables_set_to(running.provider_base_urls),
    ):
        yield running.url
