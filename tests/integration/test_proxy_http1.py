"""The proxy speaks HTTP/1.1 (RFC 9110/9112) to every client, not only to the SDKs
(issue 29.6): every answer parses under h11, a strict parser, as a client reads it.

Two proxies run in this process on loopback: one passing requests through to a
small upstream of this file's own (``/status/N`` answers N, ``/stream`` a chunked
body, ``x-got`` the length of the body it received), one replaying from an empty
folder (every request a miss: a 400 in the API's error shape). Requests come
serialized by h11 as a client (chunked bodies with trailers included), by hand where
h11 will not (HTTP/1.0, chunk extensions), one per connection or several (pipelined
too); malformed heads and bodies come as raw bytes. Each must get a well-framed
answer, a malformed one a 4xx (501/505 where the RFC says) and the connection closed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import h11
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._proxy.server import Proxy

pytestmark = pytest.mark.inprocess

BODY = b'{"ok": true}'
STREAM = [b"data: one\n\n", b"data: two\n\n"]
TIMEOUT = 0.5  # the replaying proxy's: a stalled head or body is a 408 this soon


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        got = self.rfile.read(length) if length else b""
        if self.path == "/stream":
            self.send_response(200)
            self.send_header("transfer-encoding", "chunked")
            self.send_header("x-got", str(len(got)))
            self.end_headers()
            if self.command != "HEAD":
                for piece in STREAM:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            return
        status = int(self.path.rsplit("/", 1)[1])
        self.send_response(status)
        self.send_header("x-got", str(len(got)))
        if status not in (204, 304):
            self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(BODY)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = answer


@pytest.fixture(scope="module")
def proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Proxy]]:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    upstream.daemon_threads = True
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    folder = tmp_path_factory.mktemp("proxy-http1")
    logged: list[str] = []
    live = Proxy(mode="off", fixtures_dir=folder / "off", log=logged.append,
                 upstream=f"http://127.0.0.1:{upstream.server_address[1]}").start()  # fmt: skip
    replay = Proxy(mode="replay", fixtures_dir=folder / "none", log=logged.append,
                   upstream="http://127.0.0.1:9", body_timeout=TIMEOUT).start()  # fmt: skip
    yield {"live": live, "replay": replay}
    live.stop(grace=1)
    replay.stop(grace=1)
    upstream.shutdown()
    upstream.server_close()


# -- requests ------------------------------------------------------------------------


@dataclass
class Req:
    method: str = "GET"
    path: str = "/status/200"
    body: bytes | None = None  # None: no body and no length
    chunked: bool = False
    extensions: bool = False  # chunk extensions: written by hand (h11 writes none)
    trailers: bool = False
    expect: bool = False  # Expect: 100-continue
    version: str = "1.1"
    connection: str | None = None  # "close", "keep-alive" or none
    absolute: bool = False  # absolute-form target
    extra: list[tuple[str, str]] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"http://127.0.0.1{self.path}" if self.absolute else self.path

    def headers(self) -> list[tuple[str, str]]:
        headers = [("host", "127.0.0.1"), *self.extra]
        if self.body is not None:
            headers.append(("transfer-encoding", "chunked") if self.chunked
                           else ("content-length", str(len(self.body))))  # fmt: skip
        if self.expect:
            headers.append(("expect", "100-continue"))
        if self.connection:
            headers.append(("connection", self.connection))
        return headers

    def closes(self, live: bool) -> bool:
        """Whether the proxy closes the connection after answering this."""
        if self.connection == "close" or self.method == "HEAD":  # HEAD: the proxy's 501
            return True
        if self.version == "1.0":
            if self.connection != "keep-alive":
                return True
            # A live answer's length is known only once it has all gone out: to an
            # HTTP/1.0 client (no chunked) its end is the connection's (RFC 9112 §6.3).
            bodiless = self.method == "HEAD" or self.path in ("/status/204", "/status/304")
            return live and not bodiless
        return False

    def wire(self) -> bytes:
        if self.version == "1.1" and not self.extensions:
            client = h11.Connection(h11.CLIENT)
            data = client.send(h11.Request(method=self.method, target=self.target,
                                           headers=self.headers())) or b""  # fmt: skip
            if self.body:
                half = len(self.body) // 2
                for piece in (self.body[:half], self.body[half:]):
                    if piece:
                        data += client.send(h11.Data(data=piece)) or b""
            trailers = [("x-trailer", "t")] if self.trailers and self.chunked else []
            return data + (client.send(h11.EndOfMessage(headers=trailers)) or b"")
        head = f"{self.method} {self.target} HTTP/{self.version}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in self.headers()) + "\r\n"
        body = self.body or b""
        if self.chunked:
            ext = b";name=value;flag" if self.extensions else b""
            body = (b"%x%s\r\n%s\r\n" % (len(body), ext, body) if body else b"") + b"0\r\n"
            body += b"x-trailer: t\r\n\r\n" if self.trailers else b"\r\n"
        return head.encode("ascii") + body


PATHS = ["/status/200", "/status/201", "/status/204", "/status/304", "/status/404", "/stream"]


@st.composite
def requests(draw: st.DrawFn) -> Req:
    version = draw(st.sampled_from(["1.1", "1.1", "1.0"]))
    method = draw(st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE"]))
    with_body = method in ("POST", "PUT") and draw(st.booleans())
    chunked = with_body and version == "1.1" and draw(st.booleans())
    return Req(
        method=method,
        path=draw(st.sampled_from(PATHS)),
        body=draw(st.binary(max_size=40)) if with_body else None,
        chunked=chunked,
        extensions=chunked and draw(st.booleans()),
        trailers=chunked and draw(st.booleans()),
        expect=with_body and version == "1.1" and draw(st.booleans()),
        version=version,
        connection=draw(st.sampled_from([None, "close", "keep-alive"])),
        absolute=draw(st.booleans()),
    )


def until_closing(reqs: list[Req], live: bool) -> list[Req]:
    """The requests up to the first one the proxy closes the connection after."""
    for index, req in enumerate(reqs):
        if req.closes(live):
            return reqs[: index + 1]
    return reqs


# -- answers, read by h11 as a client -------------------------------------------------


def connect(proxy: Proxy) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    return sock


def read_answer(sock: socket.socket, parser: h11.Connection, method: str) -> list[Any]:
    """One answer's events, read with ``parser`` after a ``method`` request of its own
    (h11 must know the method: a HEAD's answer has no body)."""
    parser.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
    parser.send(h11.EndOfMessage())
    events: list[Any] = []
    while True:
        event = parser.next_event()
        if event is h11.NEED_DATA:
            parser.receive_data(sock.recv(65536))
            continue
        assert not isinstance(event, h11.ConnectionClosed), f"closed mid-answer: {events}"
        events.append(event)
        if isinstance(event, h11.EndOfMessage):
            return events


def closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def headers_of(response: Any) -> dict[str, str]:
    return {k.decode().lower(): v.decode() for k, v in response.headers}


def check_answer(req: Req, events: list[Any], *, live: bool) -> None:
    """The framing RFC 9112 asks for ``req``'s answer, and the answer itself."""
    informational = [e for e in events if isinstance(e, h11.InformationalResponse)]
    (response,) = [e for e in events if isinstance(e, h11.Response)]
    body = b"".join(e.data for e in events if isinstance(e, h11.Data))
    headers = headers_of(response)
    assert [e.status_code for e in informational] == ([100] if req.expect else [])
    if req.version == "1.0":
        assert "transfer-encoding" not in headers, headers  # RFC 9112 §6.1
    if req.connection == "close":
        assert headers.get("connection") == "close", headers
    status = response.status_code
    if req.method == "HEAD":  # not a call: the proxy's own 501, with no body
        assert (status, body) == (501, b""), (status, body)
        assert "transfer-encoding" not in headers, headers
        return
    if status in (204, 304):
        assert body == b""
        assert "transfer-encoding" not in headers, headers
    if status == 204:
        assert "content-length" not in headers, headers  # RFC 9110 §8.6
    if not live:  # a miss: the API's error, with its body unless HEAD
        assert status == 400
        if req.method == "HEAD":
            assert body == b""
        else:
            assert body.startswith(b'{"type": "error"'), body
        return
    expected = 200 if req.path == "/stream" else int(req.path.rsplit("/", 1)[1])
    assert status == expected, (status, req)
    assert headers["x-got"] == str(len(req.body or b"")), (headers, req)  # the body, unframed
    if req.method != "HEAD" and status not in (204, 304):
        assert body == (b"".join(STREAM) if req.path == "/stream" else BODY)


def exchange(proxy: Proxy, reqs: list[Req], pipelined: bool, live: bool) -> None:
    sock = connect(proxy)
    parser = h11.Connection(h11.CLIENT)
    try:
        if pipelined:
            sock.sendall(b"".join(req.wire() for req in reqs))
        for index, req in enumerate(reqs):
            if not pipelined:
                sock.sendall(req.wire())
            check_answer(req, read_answer(sock, parser, req.method), live=live)
            if index < len(reqs) - 1:
                parser.start_next_cycle()
        if reqs[-1].closes(live):
            assert closed(sock), "the proxy kept open a connection it had to close"
    finally:
        sock.close()


@settings(max_examples=examples(100), deadline=None)
@given(reqs=st.lists(requests(), min_size=1, max_size=4), pipelined=st.booleans(),
       live=st.booleans())  # fmt: skip
@example(reqs=[Req("HEAD")], pipelined=False, live=True)  # HEAD: a bodiless 501
@example(reqs=[Req(path="/status/204"), Req()], pipelined=True, live=True)  # chunked 204
@example(reqs=[Req(version="1.0", path="/stream")], pipelined=False, live=True)  # chunked to 1.0
@example(reqs=[Req(absolute=True)], pipelined=False, live=False)  # absolute-form: no answer
@example(reqs=[Req("POST", body=b"abc", chunked=True, extensions=True, trailers=True),
               Req("POST", body=b"xyz", expect=True), Req(connection="close")],
         pipelined=True, live=True)  # fmt: skip
def test_every_answer_is_well_framed(
    proxies: dict[str, Proxy], reqs: list[Req], pipelined: bool, live: bool
) -> None:
    exchange(proxies["live" if live else "replay"], until_closing(reqs, live), pipelined, live)


# -- malformed requests: a 4xx, and the connection closed ----------------------------

HEAD = "POST /status/200 HTTP/1.1\r\nhost: 127.0.0.1\r\n"
MALFORMED: dict[str, tuple[bytes, int]] = {
    "content-length and transfer-encoding": (
        (HEAD + "content-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        .encode(), 400),
    "transfer-encoding not ending in chunked": (
        (HEAD + "transfer-encoding: chunked, gzip\r\n\r\n").encode(), 400),
    "transfer-encoding gzip, chunked": (
        (HEAD + "transfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n").encode(), 501),
    "chunked twice": ((HEAD + "transfer-encoding: chunked, chunked\r\n\r\n").encode(), 400),
    "transfer-encoding from an HTTP/1.0 client": (
        b"POST /status/200 HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    "content-length not a number": ((HEAD + "content-length: 1x\r\n\r\n").encode(), 400),
    "content-length as a list": ((HEAD + "content-length: 3, 3\r\n\r\nabc").encode(), 400),
    "conflicting content-lengths": (
        (HEAD + "content-length: 3\r\ncontent-length: 4\r\n\r\nabcd").encode(), 400),
    "obs-fold": ((HEAD + "x-a: one\r\n two\r\n\r\n").encode(), 400),
    "space before the colon": ((HEAD + "x-a : one\r\n\r\n").encode(), 400),
    "no colon": ((HEAD + "x-a one\r\n\r\n").encode(), 400),
    "bare CR in a value": ((HEAD + "x-a: one\rx-b: two\r\n\r\n").encode(), 400),
    "NUL in a value": ((HEAD + "x-a: o\x00ne\r\n\r\n").encode(), 400),
    "no Host": (b"GET /status/200 HTTP/1.1\r\n\r\n", 400),
    "two Hosts": ((HEAD + "host: other\r\n\r\n").encode(), 400),
    "a target that is no path": (b"GET status HTTP/1.1\r\nhost: h\r\n\r\n", 400),
    "a fragment in the target": (b"GET /a#b HTTP/1.1\r\nhost: h\r\n\r\n", 400),
    "HTTP/0.9": (b"GET /status/200\r\n", 400),
    "two spaces": (b"GET  /status/200 HTTP/1.1\r\nhost: h\r\n\r\n", 400),
    "a method that is no token": (b"G(T /status/200 HTTP/1.1\r\nhost: h\r\n\r\n", 400),
    "an unknown method": (b"BREW /status/200 HTTP/1.1\r\nhost: h\r\n\r\n", 501),
    "asterisk-form (OPTIONS, not served)": (b"OPTIONS * HTTP/1.1\r\nhost: h\r\n\r\n", 501),
    "authority-form (CONNECT, not served)": (b"CONNECT h:443 HTTP/1.1\r\nhost: h:443\r\n\r\n",
                                              501),
    "asterisk-form with GET": (b"GET * HTTP/1.1\r\nhost: h\r\n\r\n", 400),
    "HTTP/2.0": (b"GET /status/200 HTTP/2.0\r\nhost: h\r\n\r\n", 505),
    "a version that is none": (b"GET /status/200 HTTP/1.1x\r\nhost: h\r\n\r\n", 400),
    "a request line too long": (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
    "a header line too long": ((HEAD + "x-a: " + "a" * 70000 + "\r\n\r\n").encode(), 431),
    "too many header lines": ((HEAD + "x-a: 1\r\n" * 101 + "\r\n").encode(), 431),
    "a head cut short": (HEAD.encode(), 400),
    "a chunk size that is no number": ((HEAD + "transfer-encoding: chunked\r\n\r\nzz\r\n").encode(),
                                       400),
}  # fmt: skip


def answer_to_raw(proxy: Proxy, data: bytes) -> list[Any] | None:
    """The answer to ``data`` (the client then done sending), read by h11; None when
    the proxy closed the connection without one."""
    sock = connect(proxy)
    try:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        parser = h11.Connection(h11.CLIENT)
        parser.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
        parser.send(h11.EndOfMessage())
        events: list[Any] = []
        received = 0
        while True:
            event = parser.next_event()
            if event is h11.NEED_DATA:
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if not chunk and not received:
                    return None  # closed without a byte of answer
                received += len(chunk)
                parser.receive_data(chunk)
                continue
            events.append(event)
            if isinstance(event, h11.EndOfMessage):
                rest = parser.trailing_data[0]
                assert rest == b"", f"more than one answer to {data[:300]!r}: {rest[:300]!r}"
                assert closed(sock), f"the proxy kept the connection after {data[:300]!r}"
                return events
    finally:
        sock.close()


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_request_gets_its_4xx_and_the_connection_closed(
    proxies: dict[str, Proxy], name: str
) -> None:
    data, status = MALFORMED[name]
    events = answer_to_raw(proxies["live"], data)
    assert events is not None, "no answer"
    response = events[0]
    assert response.status_code == status, name
    assert headers_of(response).get("connection") == "close"
    assert headers_of(response)["content-type"] == "application/json"
    exchange(proxies["live"], [Req()], pipelined=False, live=True)  # still serving


def test_a_refused_head_request_gets_no_body(proxies: dict[str, Proxy]) -> None:
    sock = connect(proxies["live"])
    try:
        sock.sendall(b"HEAD /status/200 HTTP/1.1\r\nhost: h\r\nx-a : b\r\n\r\n")
        parser = h11.Connection(h11.CLIENT)
        events = read_answer(sock, parser, "HEAD")
        assert closed(sock)
        assert parser.trailing_data[0] == b"", "a body after the head of a HEAD's answer"
    finally:
        sock.close()
    assert events[0].status_code == 400
    assert [e for e in events if isinstance(e, h11.Data)] == []


@pytest.mark.parametrize("data", [b"POST /status/200 HTTP/1.1\r\nhost: h\r\n",
                                  HEAD.encode() + b"content-length: 5\r\n\r\nab"])  # fmt: skip
def test_a_request_that_stops_arriving_gets_a_408(proxies: dict[str, Proxy], data: bytes) -> None:
    sock = connect(proxies["replay"])
    try:
        sock.sendall(data)  # and nothing more, the connection left open
        parser = h11.Connection(h11.CLIENT)
        events = read_answer(sock, parser, "GET")
    finally:
        sock.close()
    assert events[0].status_code == 408


SPOILERS = st.one_of(
    st.builds(lambda name: f"{name}: v", st.text(min_size=1, max_size=6).filter(
        # No colon nor line end: those would make a valid head (or end it) instead.
        lambda n: not any(c in n for c in ":\r\n")
        and (any(c in n for c in ' \t"(),/;<=>?@[\\]{}') or not n.isascii()))),
    st.builds(lambda c: f"x-a: a{c}b", st.sampled_from([chr(i) for i in range(32) if i != 9])),
    st.builds(lambda v: f"content-length: {v}", st.text(max_size=6).filter(
        lambda v: "\r" not in v and "\n" not in v
        and not (v.strip(" \t").isascii() and v.strip(" \t").isdigit()))),
    st.builds(lambda v: f"transfer-encoding: {v}", st.sampled_from(
        ["gzip", "chunked, gzip", "identity", "chunked;x=1, chunked", ", ", "xchunked"])),
)  # fmt: skip


@settings(max_examples=examples(50), deadline=None)
@given(line=SPOILERS, garbage=st.binary(max_size=48))
def test_any_spoilt_head_or_garbage_gets_a_well_framed_refusal(
    proxies: dict[str, Proxy], line: str, garbage: bytes
) -> None:
    spoilt = (HEAD + line + "\r\n\r\n").encode("utf-8")
    for data in (spoilt, garbage):
        events = answer_to_raw(proxies["replay"], data)
        if events is None:  # closed unanswered: only for nothing but blank lines
            assert data.strip(b"\r\n") == b"", data
            continue
        status = events[0].status_code
        assert 400 <= status < 500 or status in (501, 505), (status, data)
