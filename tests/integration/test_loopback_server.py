"""Drive the real ``anthropic`` SDK against :mod:`tests.support.servers.loopback_server`.

These tests prove the fake speaks the wire format well enough that the SDK parses
its answers, retries its 529s and assembles its streams exactly as it would the
real API's.  Plain ``unittest`` so they run under pytest and ``python -m unittest``.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic import Stream
from anthropic.types import Message, MessageParam, RawMessageStreamEvent, ToolParam

from tests.support.helpers.paths import ROOT
from tests.support.servers.loopback_server import LoopbackServer

#: 529's class (exported at the top level only since anthropic 1.0).
OVERLOADED = anthropic._exceptions.OverloadedError

MODEL = "claude-opus-4-7"
API_KEY = "sk-ant-test-0000"
WEATHER_TOOL: ToolParam = {
    "name": "get_weather",
    "description": "Current weather at a place.",
    "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}},
}
SERVER_SCRIPT = ROOT / "tests" / "support" / "servers" / "loopback_server.py"


def user(text: str) -> list[MessageParam]:
    return [{"role": "user", "content": text}]


def canonical_tokens(value: object) -> int:
    """The server's documented token estimate, recomputed independently."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return max(1, len(text.encode("utf-8")) // 4)


def without_ids(value: Any) -> Any:
    """A JSON value with every ``id`` dropped: ids are random, everything else is not."""
    if isinstance(value, dict):
        return {key: without_ids(item) for key, item in value.items() if key != "id"}
    if isinstance(value, list):
        return [without_ids(item) for item in value]
    return value


def text_of(message: Message) -> str:
    """The text of the message's (single) text block."""
    (text,) = [block.text for block in message.content if block.type == "text"]
    return text


def tool_input_of(message: Message) -> object:
    (tool_input,) = [block.input for block in message.content if block.type == "tool_use"]
    return tool_input


def dump(message: Message) -> Any:
    # Nones left out: SDK releases differ in the None fields their stream snapshots
    # carry (``parsed_output``, ``stop_details``), which the wire answer does not have.
    return without_ids(message.to_dict(mode="json", exclude_none=True))


class ServerTestCase(unittest.TestCase):
    """Starts one server per test and stops it last, after any client is closed."""

    def setUp(self) -> None:
        self.server = LoopbackServer().start()
        self.addCleanup(self.server.stop)


class SyncClientTestCase(ServerTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client = anthropic.Anthropic(api_key=API_KEY, base_url=self.server.url, max_retries=2)
        self.addCleanup(self.client.close)

    # `**kwargs: Any` defeats the SDK's overloads, hence the annotated locals.
    def create(self, text: str, **kwargs: Any) -> Message:
        message: Message = self.client.messages.create(
            model=MODEL, max_tokens=1024, messages=user(text), stream=False, **kwargs
        )
        return message

    def create_stream(self, text: str, **kwargs: Any) -> Stream[RawMessageStreamEvent]:
        stream: Stream[RawMessageStreamEvent] = self.client.messages.create(
            model=MODEL, max_tokens=1024, messages=user(text), stream=True, **kwargs
        )
        return stream


@pytest.mark.inprocess
class MessagesTest(SyncClientTestCase):
    def test_create_echoes_the_last_user_text(self) -> None:
        message = self.create("hello there")

        self.assertEqual(message.type, "message")
        self.assertEqual(message.role, "assistant")
        self.assertEqual(message.model, MODEL)
        self.assertEqual([block.type for block in message.content], ["text"])
        self.assertEqual(text_of(message), "Echo: hello there")
        self.assertEqual(message.stop_reason, "end_turn")
        self.assertIsNone(message.stop_sequence)
        self.assertEqual(message.usage.output_tokens, 3)
        self.assertEqual(message.usage.cache_creation_input_tokens, 0)
        self.assertEqual(message.usage.cache_read_input_tokens, 0)
        self.assertEqual(message.usage.service_tier, "standard")
        self.assertIsNotNone(message._request_id)
        self.assertTrue(str(message._request_id).startswith("req_"))

    def test_ids_are_random_but_content_and_usage_are_not(self) -> None:
        first, second = self.create("same question"), self.create("same question")

        for message in (first, second):
            self.assertRegex(message.id, r"^msg_01[A-Za-z0-9]{22}$")
            self.assertRegex(str(message._request_id), r"^req_[A-Za-z0-9]{24}$")
        self.assertNotEqual(first.id, second.id)
        self.assertNotEqual(first._request_id, second._request_id)
        self.assertEqual(dump(first), dump(second))

    def test_input_tokens_come_from_the_canonical_request(self) -> None:
        message = self.create("count me", system="Be terse.")

        sent = self.server.requests_to("/v1/messages")[-1].json()
        self.assertIn("stream", sent)  # the helper sends stream=false ...
        del sent["stream"]  # ... which is left out so streamed and plain usage agree
        self.assertIsInstance(message.usage.input_tokens, int)
        self.assertEqual(message.usage.input_tokens, canonical_tokens(sent))

    def test_tool_use_turn_then_tool_result_turn(self) -> None:
        question = user("What's the weather in Tokyo?")
        first = self.client.messages.create(
            model=MODEL, max_tokens=1024, messages=question, tools=[WEATHER_TOOL]
        )

        self.assertEqual(first.stop_reason, "tool_use")
        text, tool = first.content
        assert text.type == "text"
        assert tool.type == "tool_use"
        self.assertEqual(text.text, "Let me check.")
        self.assertEqual(tool.name, "get_weather")
        self.assertEqual(tool.input, {"location": "Tokyo", "unit": "celsius"})
        self.assertRegex(tool.id, r"^toolu_01[A-Za-z0-9]{22}$")
        self.assertEqual(first.usage.output_tokens, 3 + 10)  # "Let me check." + one tool_use

        answer = self.client.messages.create(
            model=MODEL,
            max_tokens=1024,
            tools=[WEATHER_TOOL],
            messages=[
                *question,
                # Not first.to_param(): anthropic 1.0 (the oldest we support) lacks it.
                {"role": "assistant", "content": [b.to_dict() for b in first.content]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": tool.id, "content": "18C, sunny"}
                    ],
                },
            ],
        )
        self.assertEqual(answer.stop_reason, "end_turn")
        self.assertEqual(text_of(answer), "The tool said: 18C, sunny")

    def test_weather_without_a_place_defaults_to_paris(self) -> None:
        message = self.create("how is the weather", tools=[WEATHER_TOOL])

        self.assertEqual(tool_input_of(message), {"location": "Paris", "unit": "celsius"})

    def test_thinking_block_comes_first_with_a_stable_signature(self) -> None:
        for thinking in ({"type": "enabled", "budget_tokens": 512}, {"type": "adaptive"}):
            with self.subTest(thinking=thinking["type"]):
                first = self.create("ponder this", thinking=thinking)
                second = self.create("ponder this", thinking=thinking)

                block = first.content[0]
                assert block.type == "thinking"
                self.assertEqual(block.thinking, "Let me think about: ponder this")
                self.assertRegex(block.signature, r"^sig_[0-9a-f]+$")
                self.assertEqual(second.content[0], block)
                self.assertEqual(text_of(first), "Echo: ponder this")

    def test_count_tokens(self) -> None:
        result = self.client.messages.count_tokens(
            model=MODEL, messages=user("how long am I?"), system="Be terse.", tools=[WEATHER_TOOL]
        )

        sent = self.server.requests_to("/v1/messages/count_tokens")[0].json()
        counted = {key: sent[key] for key in ("messages", "system", "tools")}
        self.assertEqual(result.input_tokens, canonical_tokens(counted))

    def test_models_list(self) -> None:
        page = self.client.models.list()

        self.assertEqual([model.id for model in page.data][0:1], ["claude-opus-4-7"], "first model")
        self.assertEqual(len(page.data), 3)
        self.assertEqual(page.data[0].display_name, "Claude Opus 4.7")
        self.assertEqual(page.data[0].created_at.year, 2026)
        self.assertFalse(page.has_more)
        self.assertEqual(page.first_id, page.data[0].id)
        self.assertEqual(page.last_id, page.data[-1].id)
        self.assertEqual(len(list(page)), 3)  # auto-pagination stops at has_more=false

    def test_secret_trigger_puts_a_key_in_the_answer(self) -> None:
        message = self.create("[[secret]] please")

        self.assertRegex(text_of(message), r"sk-ant-api03-[A-Za-z0-9]{20,}")

    def test_cache_trigger_sets_cache_usage(self) -> None:
        usage = self.create("[[cache]] long prompt").usage

        self.assertEqual(usage.input_tokens, 1200)
        self.assertEqual(usage.output_tokens, 4)
        self.assertEqual(usage.cache_creation_input_tokens, 3000)
        self.assertEqual(usage.cache_read_input_tokens, 5000)
        assert usage.cache_creation is not None
        self.assertEqual(usage.cache_creation.ephemeral_5m_input_tokens, 1000)
        self.assertEqual(usage.cache_creation.ephemeral_1h_input_tokens, 2000)

    def test_slow_requests_are_served_in_parallel(self) -> None:
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=4) as pool:
            messages = list(pool.map(lambda n: self.create(f"[[slow]] {n}"), range(4)))
        elapsed = time.monotonic() - started

        self.assertEqual(len({message.id for message in messages}), 4)
        self.assertGreaterEqual(elapsed, 0.3)
        self.assertLess(elapsed, 4 * 0.3, "four 0.3 s answers must overlap")

    def test_log_records_each_request(self) -> None:
        self.create("log me")
        self.client.models.list()

        self.assertEqual(
            [(r.method, r.path) for r in self.server.log][-2:],
            [
                ("POST", "/v1/messages"),
                ("GET", "/v1/models"),
            ],
        )
        request = self.server.requests_to("/v1/messages")[0]
        self.assertEqual(request.json()["messages"], user("log me"))
        # 2.x sends the key as a bearer token, 1.x as x-api-key.
        sent = request.headers.get("authorization") or f"Bearer {request.headers['x-api-key']}"
        self.assertEqual(sent, f"Bearer {API_KEY}")
        self.assertTrue(all(name == name.lower() for name in request.headers))
        self.server.reset_log()
        self.assertEqual(self.server.log, [])


@pytest.mark.inprocess
class ErrorTest(SyncClientTestCase):
    def test_error_triggers_raise_typed_errors(self) -> None:
        cases: list[tuple[int, type[anthropic.APIStatusError], str]] = [
            (400, anthropic.BadRequestError, "invalid_request_error"),
            (401, anthropic.AuthenticationError, "authentication_error"),
            (404, anthropic.NotFoundError, "not_found_error"),
        ]
        for status, error_class, error_type in cases:
            with self.subTest(status=status):
                self.server.reset_log()
                with self.assertRaises(error_class) as caught:
                    self.create(f"[[error:{status}]]")

                error = caught.exception
                self.assertEqual(error.status_code, status)
                self.assertRegex(str(error.request_id), r"^req_[A-Za-z0-9]{24}$")
                assert isinstance(error.body, dict)
                self.assertEqual(error.body["request_id"], error.request_id)
                self.assertEqual(error.type, error_type)
                self.assertEqual(
                    error.body["error"]["message"], f"messages: trigger asked for a {status}"
                )
                self.assertEqual(len(self.server.log), 1, "4xx must not be retried")

    def test_overloaded_once_succeeds_after_one_retry(self) -> None:
        message = self.create("[[overloaded-once]] hi")

        self.assertEqual(text_of(message), "Echo: [[overloaded-once]] hi")
        attempts = self.server.requests_to("/v1/messages")
        self.assertEqual(len(attempts), 2)
        self.assertEqual(attempts[0].body, attempts[1].body)
        self.assertEqual([a.headers["x-stainless-retry-count"] for a in attempts], ["0", "1"])

    def test_overloaded_always_exhausts_the_retries(self) -> None:
        with self.assertRaises(OVERLOADED) as caught:
            self.create("[[overloaded-always]]")

        self.assertEqual(caught.exception.status_code, 529)
        self.assertEqual(caught.exception.type, "overloaded_error")
        self.assertEqual(len(self.server.requests_to("/v1/messages")), 3)

    def test_errors_before_a_stream_are_plain_json(self) -> None:
        with self.assertRaises(anthropic.BadRequestError) as caught:
            self.create_stream("[[error:400]]")

        self.assertEqual(caught.exception.response.headers["content-type"], "application/json")

    def test_stream_error_event_raises(self) -> None:
        with self.assertRaises(anthropic.APIStatusError) as caught:
            with self.client.messages.stream(
                model=MODEL, max_tokens=1024, messages=user("[[stream-error]] hi")
            ) as stream:
                stream.get_final_message()

        self.assertEqual(
            caught.exception.body,
            {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
            },
        )


@pytest.mark.inprocess
class StreamingTest(SyncClientTestCase):
    def test_create_stream_yields_events_in_api_order(self) -> None:
        with self.create_stream("hello there") as stream:
            events = list(stream)

        kinds = [event.type for event in events]
        self.assertEqual(kinds[:2], ["message_start", "content_block_start"])
        self.assertEqual(kinds[-3:], ["content_block_stop", "message_delta", "message_stop"])
        self.assertEqual(set(kinds[2:-3]), {"content_block_delta"})
        deltas = [
            event.delta.text
            for event in events
            if event.type == "content_block_delta" and event.delta.type == "text_delta"
        ]
        self.assertGreater(len(deltas), 1)
        self.assertEqual("".join(deltas), "Echo: hello there")
        start = events[0]
        assert start.type == "message_start"
        self.assertEqual(start.message.content, [])
        self.assertIsNone(start.message.stop_reason)
        self.assertEqual(start.message.usage.output_tokens, 1)

    def test_tool_input_arrives_as_json_pieces(self) -> None:
        with self.create_stream("weather in Oslo?", tools=[WEATHER_TOOL]) as stream:
            events = list(stream)

        pieces = [
            event.delta.partial_json
            for event in events
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta"
        ]
        self.assertGreater(len(pieces), 1)
        self.assertEqual(json.loads("".join(pieces)), {"location": "Oslo", "unit": "celsius"})
        signature_deltas = [
            event
            for event in events
            if event.type == "content_block_delta" and event.delta.type == "signature_delta"
        ]
        self.assertEqual(signature_deltas, [])

    def test_final_stream_message_equals_the_plain_answer(self) -> None:
        cases: dict[str, dict[str, Any]] = {
            "echo": {"messages": user("hello there, general")},
            "tool_use": {"messages": user("weather in Lima?"), "tools": [WEATHER_TOOL]},
            "thinking": {"messages": user("think hard"), "thinking": {"type": "adaptive"}},
            "cache": {"messages": user("[[cache]] cached prompt")},
        }
        for name, params in cases.items():
            with self.subTest(name):
                plain = self.client.messages.create(model=MODEL, max_tokens=1024, **params)
                with self.client.messages.stream(model=MODEL, max_tokens=1024, **params) as stream:
                    final = stream.get_final_message()

                self.assertNotEqual(final.id, plain.id)
                self.assertEqual(dump(final), dump(plain))

    def test_text_stream_joins_to_the_text(self) -> None:
        with self.client.messages.stream(
            model=MODEL, max_tokens=1024, messages=user("a somewhat longer sentence to split")
        ) as stream:
            pieces = list(stream.text_stream)

        self.assertGreater(len(pieces), 1)
        self.assertEqual("".join(pieces), "Echo: a somewhat longer sentence to split")


@pytest.mark.inprocess
class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.server = LoopbackServer().start()
        self.addCleanup(self.server.stop)

    async def asyncSetUp(self) -> None:
        self.client = anthropic.AsyncAnthropic(
            api_key=API_KEY, base_url=self.server.url, max_retries=2
        )
        self.addAsyncCleanup(self.client.close)

    async def test_async_create(self) -> None:
        message = await self.client.messages.create(
            model=MODEL, max_tokens=1024, messages=user("async hello")
        )

        self.assertEqual(text_of(message), "Echo: async hello")
        self.assertTrue(str(message._request_id).startswith("req_"))
        self.assertEqual(
            self.server.requests_to("/v1/messages")[0].headers["x-stainless-async"], "async:asyncio"
        )

    async def test_async_stream(self) -> None:
        params: dict[str, Any] = {
            "messages": user("async stream"),
            "thinking": {"type": "adaptive"},
        }
        async with self.client.messages.stream(model=MODEL, max_tokens=1024, **params) as stream:
            pieces = [piece async for piece in stream.text_stream]
            final = await stream.get_final_message()
        plain = await self.client.messages.create(model=MODEL, max_tokens=1024, **params)

        self.assertEqual("".join(pieces), "Echo: async stream")
        self.assertEqual(dump(final), dump(plain))


@pytest.mark.inprocess
class WireTest(ServerTestCase):
    """What the SDK hides: raw status codes, chunking, keep-alive."""

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> urllib.request.Request:
        return urllib.request.Request(
            self.server.url + path, data=body, headers=headers, method="POST"
        )

    def assert_error(self, request: urllib.request.Request, status: int, error_type: str) -> None:
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        with caught.exception as response:
            self.assertEqual(response.code, status)
            body = json.loads(response.read())
            self.assertEqual(body["type"], "error")
            self.assertEqual(body["error"]["type"], error_type)
            self.assertEqual(body["request_id"], response.headers["request-id"])
            self.assertIsNotNone(response.headers["content-length"])

    def test_missing_auth_gets_401(self) -> None:
        body = json.dumps({"model": MODEL, "max_tokens": 5, "messages": user("hi")}).encode()
        request = self.post("/v1/messages", body, {"content-type": "application/json"})

        self.assert_error(request, 401, "authentication_error")
        self.assertEqual(len(self.server.log), 1, "rejected requests are logged too")

    def test_unknown_path_gets_404(self) -> None:
        request = self.post("/v1/nope", b"{}", {"x-api-key": API_KEY})

        self.assert_error(request, 404, "not_found_error")

    def test_invalid_json_gets_400(self) -> None:
        request = self.post("/v1/messages", b"{not json", {"x-api-key": API_KEY})

        self.assert_error(request, 400, "invalid_request_error")

    def test_query_is_logged_apart_from_path(self) -> None:
        request = urllib.request.Request(
            self.server.url + "/v1/models?limit=5", headers={"x-api-key": API_KEY}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            self.assertEqual(json.loads(response.read())["data"][0]["id"], MODEL)

        logged = self.server.log[0]
        self.assertEqual(
            (logged.method, logged.path, logged.query), ("GET", "/v1/models", "limit=5")
        )
        self.assertEqual(logged.headers["x-api-key"], API_KEY)

    def test_keep_alive_reuses_the_connection(self) -> None:
        host, port = self.server.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        self.addCleanup(connection.close)
        sockets = []
        for _ in range(2):
            connection.request("GET", "/v1/models", headers={"x-api-key": API_KEY})
            with connection.getresponse() as response:
                self.assertEqual(response.status, 200)
                response.read()
            sockets.append(connection.sock)

        self.assertIsNotNone(sockets[0])
        self.assertIs(sockets[0], sockets[1])

    def test_sse_is_chunked_one_event_per_chunk_with_ping_after_start(self) -> None:
        body = json.dumps(
            {"model": MODEL, "max_tokens": 5, "stream": True, "messages": user("hi")}
        ).encode()
        head, chunks = self.raw_post("/v1/messages", body)

        self.assertIn("transfer-encoding: chunked", head)
        self.assertIn("content-type: text/event-stream; charset=utf-8", head)
        self.assertRegex(head, r"request-id: req_[A-Za-z0-9]{24}")
        names = []
        for chunk in chunks:
            match = re.fullmatch(r"event: (\w+)\ndata: (\{.*\})\n\n", chunk.decode())
            assert match is not None, chunk
            self.assertEqual(json.loads(match.group(2))["type"], match.group(1))
            names.append(match.group(1))
        self.assertEqual(names[:3], ["message_start", "ping", "content_block_start"])
        self.assertEqual(names[-1], "message_stop")

    def messages_body(self, text: str, *, stream: bool = False) -> bytes:
        body = {"model": MODEL, "max_tokens": 5, "stream": stream, "messages": user(text)}
        return json.dumps(body).encode()

    def test_a_refused_key_gets_401(self) -> None:
        self.server.refused_keys.add("sk-ant-test-revoked")
        request = self.post(
            "/v1/messages", self.messages_body("hi"), {"x-api-key": "sk-ant-test-revoked"}
        )
        self.assert_error(request, 401, "authentication_error")

    def test_a_gateway_page_and_cut_json(self) -> None:
        head, _ = self.raw_post("/v1/messages", self.messages_body("[[html]]"), chunked=False)
        self.assertIn("content-type: text/html; charset=utf-8", head)
        self.assertTrue(head.endswith("</html>\n"), head[-40:])
        head, _ = self.raw_post(
            "/v1/messages", self.messages_body("[[truncated-json]]"), chunked=False
        )
        body = head.partition("\r\n\r\n")[2]
        self.assertTrue(body.startswith('{"id":"msg_01'), body)
        with self.assertRaises(json.JSONDecodeError):
            json.loads(body)

    def test_streams_cut_mid_event_or_before_message_stop(self) -> None:
        _, chunks = self.raw_post("/v1/messages", self.messages_body("[[stream-cut]]", stream=True))
        last = chunks[-1].decode()
        self.assertTrue(last.startswith("event: content_block_delta\ndata: {"), last)
        self.assertFalse(last.endswith("\n\n"), last)
        self.assertEqual(len(chunks), 4)  # message_start, ping, content_block_start, half
        _, chunks = self.raw_post(
            "/v1/messages", self.messages_body("[[stream-no-stop]]", stream=True)
        )
        self.assertTrue(chunks[-1].startswith(b"event: content_block_stop\n"), chunks[-1])
        _, chunks = self.raw_post(
            "/v1/messages", self.messages_body("[[stream-error:billing_error]]", stream=True)
        )
        self.assertEqual(
            json.loads(chunks[-1].decode().partition("data: ")[2])["error"]["type"],
            "billing_error",
        )

    def raw_post(self, path: str, body: bytes, *, chunked: bool = True) -> tuple[str, list[bytes]]:
        """POST over a bare socket; return lower-cased headers and the raw chunk payloads
        (with ``chunked=False``: everything received, as text, and no chunks)."""
        host, port = self.server.url.removeprefix("http://").split(":")
        request = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: {API_KEY}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n"
        ).encode() + body
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(request)
            received = b"".join(iter(lambda: sock.recv(65536), b""))
        if not chunked:
            return received.decode(), []
        head, _, rest = received.partition(b"\r\n\r\n")
        chunks = []
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            chunks.append(rest[:size])
            rest = rest[size + 2 :]
        return head.decode().lower(), chunks


@pytest.mark.child
class CommandLineTest(unittest.TestCase):
    def test_main_serves_in_the_foreground_until_sigterm(self) -> None:
        temp = tempfile.TemporaryDirectory()
        self.addCleanup(temp.cleanup)
        log_path = Path(temp.name) / "requests.jsonl"
        command = [sys.executable, "-W", "error", str(SERVER_SCRIPT), "--log", str(log_path)]

        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
            # If the child never gets ready, kill it so readline() returns instead of hanging.
            watchdog = threading.Timer(30, process.kill)
            watchdog.start()
            try:
                ready = process.stdout.readline() if process.stdout else ""
                self.assertRegex(ready, r"^LISTENING http://127\.0\.0\.1:\d+\n$")
                url = ready.split()[1]
                with anthropic.Anthropic(api_key=API_KEY, base_url=url, max_retries=0) as client:
                    message = client.messages.create(
                        model=MODEL, max_tokens=5, messages=user("from a child")
                    )
                self.assertEqual(text_of(message), "Echo: from a child")
            finally:
                process.send_signal(signal.SIGTERM if os.name == "posix" else signal.SIGINT)
                returncode = process.wait(timeout=30)
                watchdog.cancel()

        if os.name == "posix":
            self.assertEqual(returncode, 0)
        lines = log_path.read_text(encoding="utf-8").splitlines()
        self.assertEqual(len(lines), 1)
        entry = json.loads(lines[0])
        self.assertEqual((entry["method"], entry["path"]), ("POST", "/v1/messages"))
        self.assertEqual(json.loads(entry["body"])["messages"], user("from a child"))


if __name__ == "__main__":
    unittest.main()
