"""``quoted_tokens``'s one-scan shortcut gives what the full regex pass gives."""

from __future__ import annotations

import json
import unittest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._core import ids as _ids

pytestmark = pytest.mark.inprocess

STORED = json.dumps(
    {
        "id": "msg_vcr_0",
        "type": "message",
        "content": [
            {"type": "tool_use", "id": "toolu_vcr0123456789abcdef01234", "name": "t"},
            {"type": "text", "text": "see file_vcr0123456789abcdef01234"},
        ],
        "batch": "msgbatch_vcr0123456789abcdef01234",
    }
)


def reference(text: str) -> str:
    """The full pass that the shortcut must agree with."""
    return _ids._QUOTED_ID.sub(lambda m: _ids.IDS.token_of_given.get(m.group(0), m.group(0)), text)


class QuotedTokensTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)
        replayed = json.loads(_ids.give_ids_text(STORED, "post-v1-messages-abc"))
        self.given = [
            replayed["id"],
            replayed["content"][0]["id"],
            replayed["content"][1]["text"].split()[-1],
            replayed["batch"],
        ]

    def test_a_replayed_message_id_maps_to_its_token_and_a_tool_id_to_itself(self) -> None:
        message, tool = self.given[0], self.given[1]
        self.assertIn("_vcr_", message)
        text = json.dumps({"previous_message_id": message, "tool_use_id": tool})
        self.assertEqual(
            _ids.quoted_tokens(text),
            json.dumps(
                {"previous_message_id": "msg_vcr_0@post-v1-messages-abc", "tool_use_id": tool}
            ),
        )
        self.assertFalse(_ids.IDS.has_live_ids)

    @settings(max_examples=examples(300), deadline=None)
    @given(st.data())
    def test_the_shortcut_agrees_with_the_full_pass(self, data: st.DataObject) -> None:
        pieces = st.sampled_from(
            [
                *self.given,
                "msg_01abc",
                "toolu_01x",
                "x",
                " ",
                "_",
                "-",
                "_vcr",
                "vcr_",
                "é",
                '"',
                "msg_",
                "file_x_",
                "toolu_vcr",
                "a",
            ]
        )
        text = "".join(data.draw(st.lists(pieces, max_size=12)))
        self.assertEqual(_ids.quoted_tokens(text), reference(text))
        # The check on a body still in bytes says "maybe" wherever the pass changes it.
        if reference(text) != text:
            self.assertTrue(_ids.holds_quoted_ids(text.encode("utf-8")))

    @settings(max_examples=examples(300), deadline=None)
    @given(st.data())
    def test_the_bytes_check_says_maybe_wherever_the_full_pass_changes_text(
        self, data: st.DataObject
    ) -> None:
        if data.draw(st.booleans()):  # a recording gave live ids: the other branch
            _ids.give_ids_text(STORED, "post-v1-messages-def", {"msg_vcr_0": "msg_01live"})
        pieces = st.sampled_from(
            [
                *self.given,
                "msg_01live",
                "msg_01abc",
                "toolu_01x",
                "x",
                "_",
                "_vcr",
                "vcr_",
                "é",
                '"',
                "msg_",
                "toolu_vcr",
                "file_",
                "a",
            ]
        )
        text = "".join(data.draw(st.lists(pieces, max_size=12)))
        if reference(text) != text:
            self.assertTrue(_ids.holds_quoted_ids(text.encode("utf-8")))

    def test_the_bytes_check_is_no_while_nothing_was_given(self) -> None:
        _ids.forget()
        self.assertFalse(_ids.holds_quoted_ids(b'{"id": "msg_vcr_0123"}'))

    def test_after_a_recording_the_full_pass_runs(self) -> None:
        _ids.give_ids_text(STORED, "post-v1-messages-def", {"msg_vcr_0": "msg_01live"})
        self.assertTrue(_ids.IDS.has_live_ids)
        self.assertEqual(_ids.quoted_tokens('"msg_01live"'), '"msg_vcr_0@post-v1-messages-def"')
        self.assertTrue(_ids.holds_quoted_ids(b'"msg_01live"'))
        self.assertFalse(_ids.holds_quoted_ids(b'"no id here"'))


if __name__ == "__main__":
    unittest.main()
