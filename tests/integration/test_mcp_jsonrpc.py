"""Both MCP relays handle every message as JSON-RPC 2.0 and the negotiated MCP protocol
version say (issue 29.5), driven in-process over any JSON value.

The stdio relay is ``McpRelay.serve`` over in-memory lines; the HTTP front is
``McpHttpFront.handle_post``, the function that maps one POST body to its reply. Each
session is: ``initialize`` (replayed from a fixture that settles the protocol
version), the message under test, then a ``ping`` that must still be answered. The
oracle below is written from the JSON-RPC 2.0 spec, not from vcr_kit's code.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import entries
from tests.support.helpers.examples import examples
from vcr_kit._core.config import Mode
from vcr_kit._engine.cassette import fixture
from vcr_kit._mcp.fixtures import FIXTURE_NAME, answer_from_fixtures, mcp_stored_request
from vcr_kit._mcp.http import McpHttpFront
from vcr_kit._mcp.stdio import McpRelay

pytestmark = pytest.mark.inprocess

#: Protocol versions and whether each takes JSON-RPC batches (in from 2025-03-26 on
#: the JSON-RPC side, out from 2025-06-18).
VERSIONS = {"2024-11-05": True, "2025-03-26": True, "2025-06-18": False, "2025-11-25": False}
NAME = "props"
NEXT = {"jsonrpc": "2.0", "id": "next", "method": "ping"}

SCALARS = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=6)
    | st.floats(allow_nan=False, allow_infinity=False)
)  # fmt: skip
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip
METHODS = st.sampled_from(["tools/list", "tools/call", "ping", "notifications/progress", "x"])
PARAMS = st.one_of(st.just({}), st.fixed_dictionaries({"params": JSON}))


def _request(request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **params}


def _notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, **params}


def _response(request_id: Any, member: str, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, member: value}


ERRORS = st.fixed_dictionaries({"code": st.integers(-32768, 32767), "message": st.text(max_size=5)})
MESSAGES = st.one_of(
    st.builds(_request, JSON, METHODS, PARAMS),  # any id: of any JSON type
    st.builds(_notification, METHODS, PARAMS),
    st.builds(_response, JSON, st.just("result"), JSON),
    st.builds(_response, JSON, st.just("error"), ERRORS | JSON),
    st.builds(lambda m, k, v: {**m, k: v}, st.builds(_request, SCALARS, METHODS, PARAMS),
              st.sampled_from(["jsonrpc", "method", "params"]), JSON),  # one member spoilt
    JSON,  # any JSON value at all
)  # fmt: skip
PAYLOADS = MESSAGES | st.lists(MESSAGES, max_size=4)


# -- the oracle: JSON-RPC 2.0 as its spec reads --------------------------------------


def is_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def is_request_object(m: Any) -> bool:
    return (isinstance(m, dict) and m.get("jsonrpc") == "2.0"
            and isinstance(m.get("method"), str)
            and ("params" not in m or isinstance(m["params"], (dict, list)))
            and ("id" not in m or is_id(m["id"])))  # fmt: skip


def is_response_object(m: Any) -> bool:
    if not (isinstance(m, dict) and m.get("jsonrpc") == "2.0" and "method" not in m):
        return False
    if "id" not in m or not is_id(m["id"]) or ("result" in m) == ("error" in m):
        return False
    error = m.get("error", {"code": 0, "message": ""})
    code = error.get("code") if isinstance(error, dict) else None
    return (isinstance(code, int) and not isinstance(code, bool)
            and isinstance(error.get("message"), str))  # fmt: skip


def expected_one(m: Any) -> tuple[str, Any] | None:
    """("answer", id) for a request, ("invalid", id) for what is none of the three,
    None for a notification or a response."""
    if is_request_object(m):
        return ("answer", m["id"]) if "id" in m else None
    if is_response_object(m):
        return None
    request_id = m.get("id") if isinstance(m, dict) else None
    return ("invalid", request_id if is_id(request_id) else None)


def expected(payload: Any, version: str) -> Any:
    """What must come back for ``payload``: one ``expected_one``, a list of them, or None."""
    if not isinstance(payload, list):
        return expected_one(payload)
    if not payload or not VERSIONS[version]:
        return ("invalid", None)  # an empty batch, or batches not allowed: one error
    answers = [e for e in map(expected_one, payload) if e is not None]
    return answers or None


def same_id(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def assert_answer(answer: Any, want: tuple[str, Any]) -> None:
    """``answer`` is one well-formed JSON-RPC response, with the id and kind wanted."""
    assert isinstance(answer, dict), answer
    assert answer.get("jsonrpc") == "2.0", answer
    assert ("result" in answer) != ("error" in answer), answer
    assert set(answer) <= {"jsonrpc", "id", "result", "error"}, answer
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error.get("code"), int), answer
        assert isinstance(error.get("message"), str), answer
    kind, request_id = want
    assert "id" in answer, answer
    assert same_id(answer["id"], request_id), (answer, want)
    if kind == "invalid":
        assert answer["error"]["code"] == -32600, answer


def assert_reply(body: Any, want: Any) -> None:
    if isinstance(want, list):
        assert isinstance(body, list), body
        assert len(body) == len(want), (body, want)
        for answer, one in zip(body, want, strict=True):
            assert_answer(answer, one)
    else:
        assert_answer(body, want)


# -- the relays, in-process ----------------------------------------------------------


def initialize(version: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "props", "version": "1"}}}  # fmt: skip


@pytest.fixture(scope="module")
def handshakes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fixtures folder holding the ``initialize`` answer of each protocol version."""
    folder = tmp_path_factory.mktemp("mcp-jsonrpc") / "fixtures"
    for version in VERSIONS:
        answer = answer_from_fixtures(
            initialize(version), server=NAME, mode=Mode.RECORD, fixtures_dir=folder,
            ask=lambda request, v=version: {"jsonrpc": "2.0", "id": request["id"], "result": {
                "protocolVersion": v, "capabilities": {},
                "serverInfo": {"name": "props", "version": "1"}}},
        )  # fmt: skip
        assert "result" in answer, answer
    return folder


@pytest.fixture(scope="module")
def front(handshakes: Path) -> Iterator[McpHttpFront]:
    """The HTTP front, replaying: one for every example (each begins its own session)."""
    running = McpHttpFront("http://127.0.0.1:9/mcp", name=NAME, mode=Mode.REPLAY,
                           fixtures_dir=handshakes)  # fmt: skip
    yield running
    running.stop()


def stdio_session(folder: Path, lines: list[bytes]) -> list[Any]:
    """What the stdio relay writes for ``lines``, replaying (the server never starts)."""
    out = io.BytesIO()
    relay = McpRelay(["/nonexistent/mcp-server"], name=NAME, mode=Mode.REPLAY,
                     fixtures_dir=folder, client_in=io.BytesIO(b"".join(lines)),
                     client_out=out)  # fmt: skip
    done: list[int] = []
    serving = threading.Thread(target=lambda: done.append(relay.serve()), daemon=True)
    serving.start()
    serving.join(timeout=30)
    assert done == [0], "the relay died or hung"
    return [json.loads(line) for line in out.getvalue().splitlines()]


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


@settings(max_examples=examples(150), deadline=None)
@given(payload=PAYLOADS, version=st.sampled_from(sorted(VERSIONS)))
@example(payload=_request({"a": 1}, "tools/list", {}), version="2025-06-18")  # killed the relay
@example(payload=[_request(1, "ping", {}), _notification("x", {})], version="2025-03-26")
@example(payload=[_request(1, "ping", {})], version="2025-06-18")  # a batch got no answer
@example(payload=[], version="2025-03-26")
@example(payload=_request(True, "ping", {}), version="2025-06-18")
@example(payload=[_request([1], "ping", {}), {"jsonrpc": "2.0", "id": 7, "result": {}}, 5],
         version="2024-11-05")  # fmt: skip
def test_stdio_answers_every_request_once_and_stays_alive(
    handshakes: Path, payload: Any, version: str
) -> None:
    got = stdio_session(handshakes, [line(initialize(version)), line(payload), line(NEXT)])
    first, *middle, last = got
    assert first["result"]["protocolVersion"] == version
    assert_answer(last, ("answer", "next"))  # alive for the next request
    want = expected(payload, version)
    if want is None:
        assert middle == [], middle
    else:
        (body,) = middle
        assert_reply(body, want)


@settings(max_examples=examples(150), deadline=None)
@given(payload=PAYLOADS, version=st.sampled_from(sorted(VERSIONS)))
@example(payload=_request({"a": 1}, "tools/list", {}), version="2025-06-18")
@example(payload=[_request(1, "ping", {}), _notification("x", {})], version="2025-03-26")
@example(payload=[_request(1, "ping", {})], version="2025-06-18")
@example(payload=[{"jsonrpc": "2.0", "method": "notifications/initialized"}], version="2025-03-26")
def test_http_answers_every_request_once_and_stays_alive(
    front: McpHttpFront, payload: Any, version: str
) -> None:
    headers = {"mcp-protocol-version": version}
    status, given_headers, body = front.handle_post(line(initialize(version)), headers)
    assert status == 200, body
    headers["mcp-session-id"] = dict(given_headers)["mcp-session-id"]
    status, _, body = front.handle_post(line(payload), headers)
    want = expected(payload, version)
    if want is None:
        assert (status, body) == (202, b""), body
    else:
        invalid_whole = not isinstance(want, list) and want[0] == "invalid"
        assert status == (400 if invalid_whole else 200), (status, body)
        assert_reply(json.loads(body), want)
    status, _, body = front.handle_post(line(NEXT), headers)
    assert status == 200
    assert_answer(json.loads(body), ("answer", "next"))


# Nesting 100,000 deep: Python 3.13's json reads 5,000 levels, every version refuses this.
@pytest.mark.parametrize("text", [b"NaN", b'{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}',
                                  b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe"])  # fmt: skip
def test_what_json_cannot_echo_is_a_parse_error_and_the_relay_lives(
    handshakes: Path, text: bytes
) -> None:
    parse_error = {"jsonrpc": "2.0", "id": None,
                   "error": {"code": -32700, "message": "Parse error"}}  # fmt: skip
    got = stdio_session(handshakes, [text + b"\n", line(NEXT)])
    assert got[0] == parse_error
    assert_answer(got[1], ("answer", "next"))


# -- only valid responses are stored -------------------------------------------------

REQUEST = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
           "params": {"name": "now", "arguments": {}}}  # fmt: skip
RESPONSES = st.one_of(
    st.builds(_response, st.just(5), st.sampled_from(["result", "error"]), JSON),
    st.builds(_response, st.just(5), st.just("error"), ERRORS),
    st.builds(lambda r, k, v: {**r, k: v},
              st.builds(_response, st.just(5), st.just("result"), JSON),
              st.sampled_from(["jsonrpc", "id", "error"]), JSON),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i}, JSON),  # neither result nor error
    JSON,
)  # fmt: skip


def valid_response_to(response: Any, request_id: Any) -> bool:
    return is_response_object(response) and same_id(response["id"], request_id)


@settings(max_examples=examples(100), deadline=None)
@given(response=RESPONSES)
@example(response={"jsonrpc": "2.0", "id": 5})  # neither result nor error: once stored
@example(response={"jsonrpc": "2.0", "id": 5, "result": {}, "error": {"code": 1, "message": ""}})
@example(response={"jsonrpc": "2.0", "id": True, "result": {}})
@example(response={"jsonrpc": "2.0", "id": 5, "error": "boom"})
def test_only_a_valid_response_is_stored(tmp_path_factory: pytest.TempPathFactory,
                                         response: Any) -> None:  # fmt: skip
    folder = tmp_path_factory.mktemp("mcp-store") / "fixtures"

    def ask(request: dict[str, Any]) -> Any:
        return response

    answer = answer_from_fixtures(REQUEST, server=NAME, mode=Mode.RECORD, fixtures_dir=folder,
                                  ask=ask)  # fmt: skip
    stored = [name for name in entries(folder) if name.endswith(".json")] if folder.exists() else []
    if valid_response_to(response, 5):
        assert answer == {k: v for k, v in response.items() if k in ("result", "error")}
        assert len(stored) == 1
        replayed = answer_from_fixtures(REQUEST, server=NAME, mode=Mode.REPLAY,
                                        fixtures_dir=folder, ask=ask)  # fmt: skip
        assert replayed == answer
    else:
        assert set(answer) == {"error"}, answer
        assert answer["error"]["code"] == -32000, answer
        assert "no valid JSON-RPC response" in answer["error"]["message"]
        assert stored == []


class _Upstream(BaseHTTPRequestHandler):
    """A Streamable HTTP MCP server whose answer to a request is ``server.answer``."""

    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if "id" not in message:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = json.dumps(self.server.answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHttpFront]:
    """The HTTP front, recording from an upstream that answers ``upstream.answer``."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    upstream.daemon_threads = True
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    folder = tmp_path_factory.mktemp("mcp-record") / "fixtures"
    front = McpHttpFront(f"http://127.0.0.1:{upstream.server_address[1]}/mcp", name=NAME,
                         mode=Mode.RECORD, fixtures_dir=folder)  # fmt: skip
    front.upstream_server = upstream  # type: ignore[attr-defined]
    yield front
    front.stop()
    upstream.shutdown()
    upstream.server_close()


@settings(max_examples=examples(40), deadline=None)
@given(response=RESPONSES, number=st.integers())
@example(response={"jsonrpc": "2.0", "id": 5}, number=0)  # neither result nor error: once stored
def test_the_http_front_stores_only_a_valid_response(
    recording: McpHttpFront, response: Any, number: int
) -> None:
    request = {**REQUEST, "params": {"name": "now", "arguments": {"n": number}}}
    recording.upstream_server.answer = response  # type: ignore[attr-defined]
    path = fixture(mcp_stored_request(NAME, request), FIXTURE_NAME, mode=Mode.RECORD,
                   fixtures_dir=recording.fixtures_dir).path  # fmt: skip
    path.unlink(missing_ok=True)
    status, _, body = recording.handle_post(line(request), {})
    assert status == 200
    answer = json.loads(body)
    assert_answer(answer, ("answer", 5))
    if valid_response_to(response, 5):
        assert answer == {"jsonrpc": "2.0", "id": 5, **{k: v for k, v in response.items()
                                                         if k in ("result", "error")}}  # fmt: skip
        assert path.exists()
    else:
        assert answer["error"]["code"] == -32000, answer
        assert not path.exists(), response
    if response == {"jsonrpc": "2.0", "id": 5}:
        assert answer["error"]["message"] == (
            f"vcr_kit: the MCP server {NAME!r} answered 'tools/call' with no valid JSON-RPC "
            'response (it has neither "result" nor "error"); nothing was stored'
        )


def test_a_fixture_holding_no_valid_answer_is_an_error_not_replayed(tmp_path: Path) -> None:
    """A fixture written by an earlier version with neither ``result`` nor ``error``."""
    folder = tmp_path / "fixtures"
    key = mcp_stored_request(NAME, REQUEST)
    with fixture(key, FIXTURE_NAME, mode=Mode.RECORD, fixtures_dir=folder) as f:
        f.play(lambda: {})
        path = f.path
    got = stdio_session(folder, [line(REQUEST), line(NEXT)])
    assert got[0] == {"jsonrpc": "2.0", "id": 5, "error": {"code": -32000, "message":
        f"vcr_kit: fixture {path} holds no valid JSON-RPC answer (it has neither "
        '"result" nor "error"); delete it and record again'}}  # fmt: skip
    assert_answer(got[1], ("answer", "next"))
