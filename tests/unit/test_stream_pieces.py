"""Streamed blocks stored whole (``_engine.stream_pieces``) and what it is for: a path
split across ``input_json_delta`` or ``text_delta`` pieces is dehydrated, and hydrated
back into this machine's folder for the client, in as many pieces as were recorded."""

from __future__ import annotations

import json
import unittest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import patch_env, temp_dir, working_dir
from tests.support.helpers.examples import examples
from vcr_kit._core.httplib import sdk_library
from vcr_kit._engine.http_codec import parse_sse, rebuild_response, render_sse, store_response
from vcr_kit._engine.stream_pieces import PIECES, join_pieces, split_pieces

pytestmark = pytest.mark.inprocess


def delta(index: int, piece: str, kind: str = "input_json_delta") -> dict[str, Any]:
    field = "partial_json" if kind == "input_json_delta" else "text"
    return {
        "event": "content_block_delta",
        "data": {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": kind, field: piece},
        },
    }


def CHANGE(text: str) -> str:
    """Changes every text, so that every run of pieces is joined."""
    return "<" + text + ">"


def stop(index: int) -> dict[str, Any]:
    return {"event": "content_block_stop", "data": {"type": "content_block_stop", "index": index}}


def texts(events: list[dict[str, Any]]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for event in events:
        data = event["data"]
        if data["type"] == "content_block_delta":
            piece = data["delta"].get("partial_json", data["delta"].get("text"))
            found.setdefault(data["index"], []).append(piece)
    return found


class JoinSplitTest(unittest.TestCase):
    def test_pieces_join_into_the_first_and_split_back_to_their_count(self) -> None:
        events = [delta(1, ""), delta(1, '{"file_pa'), delta(1, 'th":"/a/b"}'), stop(1)]
        joined = join_pieces(events, CHANGE)
        self.assertEqual(
            joined, [{**delta(1, '{"file_path":"/a/b"}'), PIECES: [0, 9, 11]}, stop(1)]
        )
        self.assertEqual(split_pieces(joined), events)  # cut where it was cut

    def test_text_pieces_too_and_blocks_apart(self) -> None:
        events = [delta(0, "Hel", "text_delta"), delta(0, "lo", "text_delta"), stop(0),
                  delta(2, '{"a"'), delta(2, ":1}")]  # fmt: skip
        joined = join_pieces(events, CHANGE)
        self.assertEqual(
            joined,
            [{**delta(0, "Hello", "text_delta"), PIECES: [3, 2]}, stop(0),
             {**delta(2, '{"a":1}'), PIECES: [4, 3]}],
        )  # fmt: skip
        self.assertEqual(texts(split_pieces(joined)), {0: ["Hel", "lo"], 2: ['{"a"', ":1}"]})

    def test_a_run_that_dehydrates_alike_in_pieces_is_stored_as_sent(self) -> None:
        events = [delta(0, '{"path":"/w/'), delta(0, 'a"}'), delta(1, "at /w/"), delta(1, "a")]
        self.assertEqual(join_pieces(events, lambda text: text.replace("/w", "[CWD]")), events)
        joined = join_pieces(events, lambda text: text.replace("/w/a", "[CWD]"))
        self.assertEqual(joined, [{**delta(0, '{"path":"/w/a"}'), PIECES: [12, 3]},
                                  {**delta(1, "at /w/a"), PIECES: [6, 1]}])  # fmt: skip

    def test_a_single_piece_and_other_events_are_left_alone(self) -> None:
        events = [delta(0, '{"a":1}'), stop(0), {"event": "ping", "data": {"type": "ping"}}]
        self.assertEqual(join_pieces(events, CHANGE), events)
        self.assertIs(split_pieces(events), events)

    @settings(deadline=None, max_examples=examples(200))
    @given(
        st.lists(
            st.one_of(
                st.tuples(st.integers(0, 2), st.sampled_from(["input_json_delta", "text_delta"]),
                          st.text(max_size=6)),
                st.tuples(st.integers(0, 2)),
            ),
            max_size=20,
        )
    )  # fmt: skip
    def test_a_stream_comes_back_as_it_was_sent(self, parts: list[tuple[Any, ...]]) -> None:
        # Pieces of any block and type, in any order, with block stops between.
        events = [delta(p[0], p[2], p[1]) if len(p) == 3 else stop(p[0]) for p in parts]
        stored = json.loads(json.dumps(join_pieces(events, CHANGE)))  # through a fixture file
        self.assertEqual(split_pieces(stored), events)

    @settings(deadline=None, max_examples=examples(200))
    @given(st.lists(st.text(max_size=6), min_size=2, max_size=8), st.text(max_size=30))
    def test_a_changed_text_keeps_its_count_of_pieces(self, pieces: list[str], new: str) -> None:
        stored = join_pieces([delta(0, piece) for piece in pieces], CHANGE)
        stored[0]["data"]["delta"]["partial_json"] = new  # hydrated: another length
        self.assertEqual(texts(split_pieces(stored)), {0: texts(split_pieces(stored))[0]})
        self.assertEqual("".join(texts(split_pieces(stored))[0]), new)
        self.assertEqual(len(split_pieces(stored)), len(pieces))


class PathAcrossPiecesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.lib = sdk_library()

    def response(self, events: list[dict[str, Any]]) -> Any:
        request = self.lib.Request("POST", "https://api.anthropic.com/v1/messages")
        return self.lib.Response(
            200, headers={"content-type": "text/event-stream"},
            content=render_sse(events).encode(), request=request,
        )  # fmt: skip

    def test_a_path_split_across_pieces_moves_to_the_replaying_folder(self) -> None:
        recording, replaying = temp_dir(self), temp_dir(self)
        whole = json.dumps({"file_path": f"{recording}/notes.txt"}, separators=(",", ":"))
        pieces = [whole[i : i + 7] for i in range(0, len(whole), 7)]
        with working_dir(recording):
            final = {"event": "message_stop", "data": {"type": "message_stop"}}
            events = [*(delta(1, p) for p in pieces), final]  # only a whole stream is kept
            stored = store_response(self.response(events), "seed")
        assert stored is not None
        self.assertEqual(
            stored["events"][0]["data"]["delta"]["partial_json"],
            '{"file_path":"[CWD]/notes.txt"}',
        )
        self.assertEqual(stored["events"][0][PIECES], [len(p) for p in pieces])
        self.assertNotIn(str(recording), json.dumps(stored))
        with working_dir(replaying):
            replayed = rebuild_response(stored, self.response([]).request)
        got = texts(parse_sse(replayed.text))[1]
        self.assertEqual(len(got), len(pieces))
        self.assertEqual(json.loads("".join(got)), {"file_path": f"{replaying}/notes.txt"})


if __name__ == "__main__":
    unittest.main()
