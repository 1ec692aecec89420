"""The bytes of an injected fault (``_engine.faults``): the API's error shape and
headers, the SSE error event, a stream split into its events."""

from __future__ import annotations

import json
import unittest

import pytest

from vcr_kit._core.faults import parse_spec
from vcr_kit._engine.faults import error_answer, error_event, sse_events

pytestmark = pytest.mark.inprocess


def _answer(spec: str) -> tuple[int, dict[str, str], dict[str, object]]:
    status, headers, body = error_answer(parse_spec(spec).faults[0], "req_vcrfault_1")
    return status, dict(headers), json.loads(body)


class ErrorAnswers(unittest.TestCase):
    def test_each_api_error_in_the_apis_shape(self) -> None:
        table = {
            "overloaded": (529, "overloaded_error", "Overloaded"),
            "server_error": (500, "api_error", "Internal server error"),
            "timeout": (504, "timeout_error", "Request timed out"),
            "request_timeout": (408, "timeout_error", "Request timed out"),
        }
        for spec, (status, error_type, message) in table.items():
            with self.subTest(spec):
                got_status, headers, body = _answer(spec)
                self.assertEqual(got_status, status)
                self.assertEqual(
                    body,
                    {
                        "type": "error",
                        "request_id": "req_vcrfault_1",
                        "error": {"type": error_type, "message": message},
                    },
                )
                self.assertEqual(
                    headers, {"content-type": "application/json", "request-id": "req_vcrfault_1"}
                )

    def test_a_rate_limit_says_when_to_retry_and_which_limits_ran_out(self) -> None:
        status, headers, body = _answer("rate_limit")
        self.assertEqual(status, 429)
        self.assertEqual((headers["retry-after"], headers["retry-after-ms"]), ("1", "1000"))
        for what in ("requests", "tokens", "input-tokens", "output-tokens"):
            self.assertEqual(headers[f"anthropic-ratelimit-{what}-remaining"], "0")
            self.assertRegex(
                headers[f"anthropic-ratelimit-{what}-reset"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"
            )
        self.assertEqual(
            body["error"],
            {
                "type": "rate_limit_error",
                "message": ("Number of request tokens has exceeded your per-minute rate limit"),
            },
        )

    def test_a_short_retry_after(self) -> None:
        _, headers, _ = _answer("rate_limit:0.05")
        self.assertEqual((headers["retry-after"], headers["retry-after-ms"]), ("1", "50"))
        _, headers, _ = _answer("overloaded:0.01")
        self.assertEqual((headers["retry-after"], headers["retry-after-ms"]), ("1", "10"))
        _, headers, _ = _answer("overloaded")
        self.assertNotIn("retry-after", headers)


class Streams(unittest.TestCase):
    def test_the_error_event(self) -> None:
        event = error_event("req_vcrfault_2")
        name, data = event.decode().rstrip("\n").split("\n")
        self.assertEqual(name, "event: error")
        self.assertEqual(
            json.loads(data.removeprefix("data: ")),
            {
                "type": "error",
                "request_id": "req_vcrfault_2",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
            },
        )
        self.assertTrue(event.endswith(b"\n\n"))

    def test_a_stream_splits_into_its_events(self) -> None:
        stream = b"event: a\ndata: {}\n\nevent: b\r\ndata: {}\r\n\r\n"
        self.assertEqual(sse_events(stream), [b"event: a\ndata: {}\n\n", b"event: b\ndata: {}\n\n"])
        self.assertEqual(sse_events(b""), [])
