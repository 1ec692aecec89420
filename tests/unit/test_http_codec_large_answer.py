"""``rebuild_large_response`` gives the bytes ``rebuild_response`` gives, ids and all,
and holds far less while it does for a large answer.

Fresh ids are random: both are compared with each given id replaced by the order in
which it first appears, from a clean slate each (``forget``).
"""

from __future__ import annotations

import gc
import tracemalloc
import unittest
from typing import Any

import pytest

from tests.unit.test_ids_bytes import by_first_appearance
from vcr_kit._core import ids as _ids
from vcr_kit._core.httplib import sdk_library
from vcr_kit._engine.http_codec import rebuild_large_response, rebuild_response

pytestmark = pytest.mark.inprocess

#: The SDK's HTTP library: httpx2 from anthropic 1.0 on, httpx before.
http = sdk_library()
REQUEST = http.Request("POST", "https://api.anthropic.com/v1/messages")
TOOL = "toolu_vcr" + "a" * 21
ANSWERS: list[dict[str, Any]] = [
    {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "body": {
            "id": "msg_vcr_0",
            "type": "message",
            "content": [
                {"type": "text", "text": 'quoted \\"msg_vcr_0\\" and "msg_vcr_0" é\u2028\n'},
                {"type": "tool_use", "id": TOOL, "input": {"msg_vcr_0": [1, 2.5, None, True]}},
            ],
            "usage": {"input_tokens": 3, "output_tokens": 4},
        },
    },
    {
        "status": 200,
        "headers": {"content-type": "text/event-stream"},
        "events": [
            {
                "event": "message_start",
                "data": {
                    "type": "message_start",
                    "message": {"id": "msg_vcr_0", "type": "message", "content": []},
                },
            },
            {
                "event": "content_block_start",
                "data": {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": TOOL},
                },
            },
            {"event": "ping", "data_text": "not json"},
            {"event": "message_stop", "data": {"type": "message_stop"}},
        ],
    },
    {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "body": {"id": "msg_vcr_0", "type": "message", "text": "x_vcr" * 50000},
    },
    {"status": 200, "headers": {"content-type": "application/json"}, "body": [float("nan")]},
    {"status": 200, "headers": {}, "text": "plain"},
    {
        "status": 200,
        "headers": {"content-type": "application/json"},  # this machine's paths
        "body": {
            "id": "msg_vcr_0",
            "type": "message",
            "text": "in [CWD] and [HOME]/x",
            "[HOME]": "a key is left as it is",
        },
    },
    {
        "status": 200,
        "headers": {"content-type": "text/event-stream"},
        "events": [
            {
                "event": "message_start",
                "data": {
                    "type": "message_start",
                    "message": {"id": "msg_vcr_0", "type": "message", "content": []},
                },
            },
            {
                "event": "content_block_delta",
                "data": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "at [TMPDIR]/y"},
                },
            },
        ],
    },
]


def content(rebuild: Any, stored: dict[str, Any], live: dict[str, str] | None) -> str:
    _ids.forget()
    response = rebuild(stored, REQUEST, fixture_stem="stem", live_ids=live)
    return by_first_appearance(response.content)


class TestSameBytes(unittest.TestCase):
    def tearDown(self) -> None:
        _ids.forget()

    def test_same_bytes_and_ids_as_the_text_way(self) -> None:
        for number, stored in enumerate(ANSWERS):
            for live in (None, {"msg_vcr_0": "msg_live", TOOL: "toolu_live"}):
                with self.subTest(answer=number, live=live):
                    self.assertEqual(
                        content(rebuild_large_response, stored, live),
                        content(rebuild_response, stored, live),
                    )

    def test_a_large_answer_is_rebuilt_with_little_besides_its_bytes(self) -> None:
        size = 8 * 1024 * 1024
        stored = {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {"id": "msg_vcr_0", "type": "message", "text": "lorem " * (size // 6)},
        }
        peaks = {}
        for rebuild in (rebuild_large_response, rebuild_response):
            gc.collect()
            tracemalloc.start()
            try:
                response = rebuild(stored, REQUEST, fixture_stem="stem")
                peaks[rebuild.__name__] = tracemalloc.get_traced_memory()[1] / size
            finally:
                tracemalloc.stop()
            del response
        # Its bytes and a slice or two; the text way holds the text and its bytes.
        self.assertLess(peaks["rebuild_large_response"], 1.3)
        self.assertGreater(peaks["rebuild_response"], 2.0)


if __name__ == "__main__":
    unittest.main()
