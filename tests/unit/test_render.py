"""``_cli/_render``: how ``vcr_kit show`` reads a streamed answer, joined into the
message the SDK assembles from its events (``_core.stream_message``)."""

from __future__ import annotations

import unittest
from typing import Any

import pytest

from vcr_kit._cli._render import response_lines

pytestmark = pytest.mark.inprocess

START = {
    "type": "message_start",
    "message": {
        "id": "msg_vcr_0",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    },
}
TOOL = {
    "type": "content_block_start",
    "index": 0,
    "content_block": {"type": "tool_use", "id": "toolu_vcr0", "name": "get_weather", "input": {}},
}
TEXT = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
END = [
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
        "usage": {"output_tokens": 5},
    },
    {"type": "message_stop"},
]


def http_doc(events: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "http",
        "response": {
            "status": 200,
            "headers": {"content-type": "text/event-stream"},
            "events": [{"event": e["type"], "data": e} for e in events],
        },
    }


class StreamRenderTest(unittest.TestCase):
    def test_a_tool_input_cut_short_shows_the_object_read_so_far(self) -> None:
        # As the SDK reads it (partial JSON); the text '{"city": "Paris", "unit' before.
        cut = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris", "unit'},
        }
        self.assertEqual(
            response_lines(http_doc([START, TOOL, cut, *END])),
            [
                "status 200",
                "(a stream of 6 events, joined)",
                '[assistant calls get_weather (toolu_vcr0)] {"city": "Paris"}',
                "stop_reason: max_tokens",
            ],
        )

    def test_the_stream_helper_s_events_show_what_they_assemble_not_its_snapshot(self) -> None:
        # The stream helper's message_stop carries its snapshot; the SDK assembles the
        # message from the events, and so does show now (it showed the snapshot before).
        text = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "From the events."},
        }
        snapshot = {
            **START["message"],
            "content": [{"type": "text", "text": "Snapshot."}],
            "stop_reason": "end_turn",
        }
        events = [START, TEXT, text, *END[:2], {"type": "message_stop", "message": snapshot}]
        doc = {"kind": "stream", "response": [{"$sdk": "Event", "data": e} for e in events]}
        self.assertEqual(
            response_lines(doc),
            [
                "(a stream of 6 events, joined)",
                "[assistant] From the events.",
                "stop_reason: max_tokens",
            ],
        )


if __name__ == "__main__":
    unittest.main()
