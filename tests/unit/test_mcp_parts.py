"""The pure parts of ``vcr_kit mcp``: the key rule both transports share, an SSE
stream's messages, ``--header`` and the default server name of ``--url``."""

from __future__ import annotations

import json
import unittest
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vcr_kit._cli.mcp_http import default_name, parse_header
from vcr_kit._mcp.fixtures import mcp_stored_request
from vcr_kit._mcp.upstream import sse_messages

pytestmark = pytest.mark.inprocess

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)

#: What JSON-RPC puts in an event: an object (a message) or a list (a batch).
MESSAGES = st.dictionaries(st.text(), JSON_VALUES, max_size=3) | st.lists(JSON_VALUES, max_size=3)


def as_sse(messages: list[Any], indent: int | None) -> list[str]:
    """``messages`` as an SSE stream's lines, as a server may frame them: a comment, event
    names and ids, and each message's JSON over one ``data:`` line or several."""
    lines = [": keep-alive", ""]
    for number, message in enumerate(messages):
        lines += ["event: message", f"id: {number}"]
        lines += [f"data: {line}" for line in json.dumps(message, indent=indent).splitlines()]
        lines.append("")
    return lines


class SseMessagesTest(unittest.TestCase):
    @given(st.lists(MESSAGES, max_size=5), st.sampled_from([None, 1, 2]))
    def test_every_message_comes_back_in_order(
        self, messages: list[Any], indent: int | None
    ) -> None:
        self.assertEqual(list(sse_messages(as_sse(messages, indent))), messages)

    def test_data_that_is_not_json_is_skipped_and_the_last_event_needs_no_blank_line(self) -> None:
        lines = ["data: not json", "", 'data:{"id": 1}']
        self.assertEqual(list(sse_messages(lines)), [{"id": 1}])


class RequestKeyTest(unittest.TestCase):
    @given(st.integers() | st.text(), JSON_VALUES)
    def test_the_id_and_meta_are_left_out(self, request_id: Any, meta: Any) -> None:
        request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": "now", "_meta": meta}}  # fmt: skip
        self.assertEqual(
            mcp_stored_request("clock", request),
            {"server": "clock", "method": "tools/call", "params": {"name": "now"}},
        )


class CommandLinePartsTest(unittest.TestCase):
    def test_parse_header(self) -> None:
        self.assertEqual(
            parse_header("Authorization: Bearer a:b "), ("Authorization", "Bearer a:b")
        )
        self.assertEqual(parse_header("X-Key:v"), ("X-Key", "v"))
        for bad in ("Bearer x", ": v", "Two words: v"):
            self.assertIsNone(parse_header(bad), bad)

    def test_default_name_is_host_and_path_without_port_user_or_query(self) -> None:
        self.assertEqual(default_name("https://u:pw@mcp.example.com:8443/v1/mcp/?key=k"),
                         "mcp.example.com/v1/mcp")  # fmt: skip


if __name__ == "__main__":
    unittest.main()
