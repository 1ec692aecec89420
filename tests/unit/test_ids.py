"""Ids in answers and in the requests that quote them: the pure functions of ``_ids``."""

from __future__ import annotations

import json
import re
import unittest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vcr_kit._core import ids as _ids

pytestmark = pytest.mark.inprocess

LIVE_MSG = "msg_01AbCdEfGhIjKlMnOpQrStUv"
LIVE_TOOL = "toolu_01AbCdEfGhIjKlMnOpQrStUv"
LIVE_BATCH = "msgbatch_01AbCdEfGhIjKlMnOpQrStUv"


def answer() -> dict[str, object]:
    return {
        "id": LIVE_MSG,
        "type": "message",
        "content": [
            {"type": "text", "text": "see file_name.txt and msg_hello"},
            {"type": "tool_use", "id": LIVE_TOOL, "name": "t", "input": {}},
        ],
        "batch": {
            "id": LIVE_BATCH,
            "results_url": f"https://x/v1/messages/batches/{LIVE_BATCH}/results",
        },
    }


class IdsTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    def stored(self) -> tuple[dict[str, object], dict[str, str]]:
        walk, stored_to_live = _ids.stabilizer("post-v1-messages-abc.json")
        return walk(answer()), stored_to_live

    def test_the_file_holds_deterministic_ids_and_leaves_text_alone(self) -> None:
        first, to_live = self.stored()
        second, _ = self.stored()
        self.assertEqual(first, second)
        text = json.dumps(first)
        self.assertEqual(first["id"], "msg_vcr_0")
        self.assertRegex(text, r'"toolu_vcr[0-9a-f]{21}"')
        batch = first["batch"]
        assert isinstance(batch, dict)
        self.assertRegex(batch["id"], r"^msgbatch_vcr[0-9a-f]{21}$")
        self.assertEqual(
            batch["results_url"], f"https://x/v1/messages/batches/{batch['id']}/results"
        )
        self.assertIn("see file_name.txt and msg_hello", text)  # short words are text
        self.assertEqual(sorted(to_live.values()), sorted([LIVE_MSG, LIVE_TOOL, LIVE_BATCH]))

    def test_replay_gives_fresh_message_ids_stored_tool_ids_and_one_batch_id(self) -> None:
        stored, _ = self.stored()
        text = json.dumps(stored)
        one = json.loads(_ids.give_ids_text(text, "post-v1-messages-abc"))
        two = json.loads(_ids.give_ids_text(text, "post-v1-messages-abc"))
        self.assertNotEqual(one["id"], two["id"])
        self.assertRegex(one["id"], r"^msg_vcr_[0-9a-f]{24}$")
        self.assertEqual(one["content"][1]["id"], stored["content"][1]["id"])  # type: ignore[index]
        self.assertEqual(one["batch"]["id"], two["batch"]["id"])
        # A later request quoting what the caller got is keyed on the recorded ids.
        request = json.dumps(
            {"previous": one["id"], "other": two["id"], "batch": one["batch"]["id"]}
        )
        self.assertEqual(
            json.loads(_ids.quoted_tokens(request)),
            {
                "previous": "msg_vcr_0@post-v1-messages-abc",
                "other": "msg_vcr_0@post-v1-messages-abc",
                "batch": stored["batch"]["id"],  # type: ignore[index]
            },
        )

    def test_after_recording_requests_go_out_with_the_live_ids(self) -> None:
        stored, to_live = self.stored()
        got = json.loads(_ids.give_ids_text(json.dumps(stored), "post-v1-messages-abc", to_live))
        request = json.dumps(
            {"previous": got["id"], "tool": got["content"][1]["id"], "batch": got["batch"]["id"]}
        )
        self.assertEqual(
            json.loads(_ids.live_ids_in(request)),
            {"previous": LIVE_MSG, "tool": LIVE_TOOL, "batch": LIVE_BATCH},
        )
        # The live ids themselves, quoted back, key like the given ones.
        self.assertEqual(
            json.loads(_ids.quoted_tokens(json.dumps({"previous": LIVE_MSG}))),
            {"previous": "msg_vcr_0@post-v1-messages-abc"},
        )

    @given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_ -:/.\"'0123456789", max_size=80))
    def test_text_vcr_kit_never_gave_out_is_never_changed(self, text: str) -> None:
        _ids.forget()
        stored, _ = self.stored()
        _ids.give_ids_text(json.dumps(stored), "post-v1-messages-abc")
        unknown = re.sub(r"_vcr", "_vxr", text)  # no id vcr_kit could have given
        self.assertEqual(_ids.quoted_tokens(unknown), unknown)
        self.assertEqual(_ids.live_ids_in(unknown), unknown)


if __name__ == "__main__":
    unittest.main()
