"""``_core.stream_message``: the message a stream delivers is the one the SDK's own
``accumulate_event`` assembles from the same events, on real answers (the stream
fixtures, the real API answers in shared/) and on streams made from them (deltas cut
into pieces, streams cut short, counts left out, deltas aimed at another kind of
block); and the rules it keeps where the SDK would raise."""

from __future__ import annotations

import copy
import inspect
import json
import random
import unittest
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from tests.support.helpers.real_streams import fixture_streams, shared_streams
from vcr_kit._core.stream_message import apply_message_delta, assemble_message, start_snapshot

pytestmark = pytest.mark.inprocess

try:
    from anthropic.lib.streaming._beta_messages import accumulate_event as beta_accumulate
    from anthropic.lib.streaming._messages import accumulate_event
except ImportError:  # an SDK without the stream helpers' accumulation
    accumulate_event = beta_accumulate = None

#: The rules followed are the SDK's from the release that keeps JSON buffers beside
#: the snapshot (2.x); older ones differ (no container, no stop_details, fewer counts).
SDK_AS_FOLLOWED = (
    accumulate_event is not None
    and "json_bufs" in inspect.signature(accumulate_event).parameters
    and "request_headers" in inspect.signature(beta_accumulate).parameters
)
RAW_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
STREAMS = fixture_streams() + shared_streams()
#: Small enough for the SDK to assemble many times over in a property test.
SMALL_STREAMS = [(name, events) for name, events in STREAMS if len(json.dumps(events)) < 20_000]
BETA_BLOCKS = frozenset({"mcp_tool_use", "mcp_tool_result", "compaction", "fallback"})


def sdk_message(events: list[Any], accumulate: Callable[..., Any]) -> dict[str, Any] | None:
    """What the SDK's accumulation makes of ``events``, as JSON (the raw events only:
    its stream helper feeds it those)."""
    snapshot, buffers = None, {}
    extra = {"request_headers": None} if accumulate is beta_accumulate else {}
    for event in events:
        if not isinstance(event, dict) or event.get("type") not in RAW_EVENTS:
            continue
        if snapshot is None and event["type"] != "message_start":
            continue
        snapshot = accumulate(event=event, current_snapshot=snapshot, json_bufs=buffers, **extra)
    return None if snapshot is None else snapshot.to_dict(mode="json", warnings=False)


def uses_beta(events: list[Any]) -> bool:
    """Whether a stream has parts only the beta accumulation reads."""
    for event in events:
        if not isinstance(event, dict):
            continue
        block = event.get("content_block")
        if isinstance(block, dict) and block.get("type") in BETA_BLOCKS:
            return True
        if event.get("type") == "message_delta":
            usage = event.get("usage") or {}
            if any(
                event.get(k) is not None for k in ("context_management", "input_transformations")
            ):
                return True
            if any(usage.get(k) is not None for k in ("iterations", "fallback_credit")):
                return True
    return False


def vary(events: list[Any], rnd: random.Random) -> list[Any]:
    """Another stream the SDK reads as well: deltas cut into pieces, pings and
    deltas for another kind of block put in, counts and the container left out of
    ``message_delta``, a second one after it, the stream cut short (inside a tool's
    input, or anywhere)."""
    out: list[Any] = []
    kinds: dict[int, str] = {}
    for event in events:
        if not isinstance(event, dict):
            out.append(event)
            continue
        kind = event.get("type")
        if kind == "content_block_start":
            kinds[event["index"]] = event["content_block"]["type"]
        if kind == "content_block_delta" and rnd.random() < 0.5:
            out.extend(_pieces(event, rnd))
        elif kind == "message_delta" and rnd.random() < 0.5:
            out.append(_thinned(event, rnd))
        else:
            out.append(event)
        if kinds and rnd.random() < 0.1:
            out.append(_misaimed(kinds, rnd))
        if rnd.random() < 0.05:
            out.append({"type": "ping"})
    if rnd.random() < 0.2:
        last = next(
            e for e in reversed(out) if isinstance(e, dict) and e.get("type") == "message_delta"
        )
        out.append(_thinned(last, rnd))
    json_at = [
        n
        for n, e in enumerate(out)
        if isinstance(e, dict) and (e.get("delta") or {}).get("type") == "input_json_delta"
    ]
    if json_at and rnd.random() < 0.3:  # inside a tool input: the SDK reads partial JSON
        out = out[: rnd.choice(json_at) + 1]
    elif rnd.random() < 0.3:
        out = out[: rnd.randint(1, len(out))]
    return out


def _pieces(event: dict[str, Any], rnd: random.Random) -> list[dict[str, Any]]:
    delta = event["delta"]
    field = {
        "text_delta": "text",
        "thinking_delta": "thinking",
        "input_json_delta": "partial_json",
    }.get(delta["type"])
    if field is None or not delta[field]:
        return [event]
    text = delta[field]
    cuts = sorted(rnd.sample(range(len(text) + 1), min(3, len(text) + 1)))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return [{**event, "delta": {**delta, field: part}} for part in parts]


def _thinned(event: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    usage = {
        k: (None if k != "output_tokens" and rnd.random() < 0.5 else v)
        for k, v in (event.get("usage") or {}).items()
    }
    delta = {
        k: (None if k == "container" and rnd.random() < 0.5 else v)
        for k, v in event["delta"].items()
    }
    return {**event, "delta": delta, "usage": usage}


def _misaimed(kinds: dict[int, str], rnd: random.Random) -> dict[str, Any]:
    """A delta of a kind the block at its index does not take (the SDK skips it)."""
    index = rnd.choice(sorted(kinds))
    wrong = [
        d
        for d, fits in (
            ({"type": "text_delta", "text": "x"}, "text"),
            ({"type": "thinking_delta", "thinking": "x"}, "thinking"),
            ({"type": "signature_delta", "signature": "x"}, "thinking"),
            ({"type": "citations_delta", "citation": {"type": "char_location"}}, "text"),
            ({"type": "input_json_delta", "partial_json": "]"}, "tool_use"),
        )
        if fits != kinds[index] and not (fits == "tool_use" and "tool_use" in kinds[index])
    ]
    return {"type": "content_block_delta", "index": index, "delta": rnd.choice(wrong)}


@unittest.skipUnless(SDK_AS_FOLLOWED, "this SDK's stream accumulation is older than followed")
class SameAsTheSdkTest(unittest.TestCase):
    def assert_same_as_sdk(self, events: list[Any]) -> None:
        ours = assemble_message(events)
        self.assertEqual(ours, sdk_message(events, beta_accumulate))
        if not uses_beta(events):
            self.assertEqual(ours, sdk_message(events, accumulate_event))

    def test_every_real_stream(self) -> None:
        self.assertGreaterEqual(len(fixture_streams()), 5)
        for name, events in STREAMS:
            with self.subTest(stream=name):
                self.assert_same_as_sdk(events)

    def test_the_stream_helper_s_final_snapshot_is_the_assembled_message(self) -> None:
        helper = [(n, e) for n, e in fixture_streams() if e[-1].get("message")]
        self.assertTrue(helper)
        for name, events in helper:
            with self.subTest(stream=name):
                self.assertEqual(assemble_message(events), events[-1]["message"])

    @settings(max_examples=40, deadline=None)
    @given(st.sampled_from(SMALL_STREAMS), st.randoms(use_true_random=False))
    def test_streams_made_from_real_ones(
        self, stream: tuple[str, list[Any]], rnd: random.Random
    ) -> None:
        events = vary(stream[1], rnd)
        before = json.dumps(events)
        try:
            expected = sdk_message(events, beta_accumulate)
        except ValueError:  # a cut the SDK cannot read partway (it parses each prefix)
            reject()
        self.assertEqual(assemble_message(events), expected)
        if not uses_beta(events):
            self.assertEqual(assemble_message(events), sdk_message(events, accumulate_event))
        self.assertEqual(json.dumps(events), before, "the events given were changed")


def start(**message: Any) -> dict[str, Any]:
    base = {
        "id": "msg_vcr_0",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 1},
    }
    return {"type": "message_start", "message": {**base, **message}}


def block(index: int, **content_block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content_block}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def message_delta(usage: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": "end_turn", **fields}, "usage": usage}


TOOL = {"type": "tool_use", "id": "toolu_vcr0", "name": "get_weather", "input": {}}


class RulesTest(unittest.TestCase):
    def test_no_message_start_no_message(self) -> None:
        snapshot = {"type": "message", "content": [{"type": "text", "text": "hi"}]}
        self.assertIsNone(assemble_message([{"type": "message_stop", "message": snapshot}]))
        self.assertIsNone(assemble_message([]))

    def test_the_events_win_over_the_snapshots_helper_events_carry(self) -> None:
        events = [
            start(),
            block(0, type="text", text=""),
            delta(0, type="text_delta", text="A"),
            {
                "type": "content_block_stop",
                "index": 0,
                "content_block": {"type": "text", "text": "other"},
            },
            {"type": "message_stop", "message": {"type": "message", "content": []}},
        ]
        message = assemble_message(events)
        assert message is not None
        self.assertEqual(message["content"], [{"type": "text", "text": "A"}])

    def test_a_second_message_start_changes_nothing(self) -> None:
        message = assemble_message([start(), start(model="other"), block(0, type="text")])
        assert message is not None
        self.assertEqual((message["model"], len(message["content"])), ("m", 1))

    def test_message_delta_counts_replace_the_start_s_and_null_keeps_them(self) -> None:
        usage = {
            "output_tokens": 40,
            "input_tokens": 12,
            "cache_read_input_tokens": None,
            "server_tool_use": {"web_search_requests": 1},
        }
        message = assemble_message([start(), message_delta(usage)])
        assert message is not None
        self.assertEqual(
            message["usage"],
            {
                "input_tokens": 12,
                "cache_read_input_tokens": 5,
                "output_tokens": 40,
                "server_tool_use": {"web_search_requests": 1},
            },
        )

    def test_the_container_is_kept_and_a_null_one_does_not_erase_it(self) -> None:
        container = {"id": "container_1", "expires_at": "2026-01-01T00:00:00Z"}
        message = assemble_message(
            [
                start(),
                message_delta({"output_tokens": 2}, container=container),
                message_delta({"output_tokens": 3}, container=None),
            ]
        )
        assert message is not None
        self.assertEqual(message["container"], container)
        self.assertEqual((message["stop_details"], message["usage"]["output_tokens"]), (None, 3))

    def test_a_tool_input_cut_short_is_the_object_read_so_far(self) -> None:
        events = [
            start(),
            block(0, **TOOL),
            delta(0, type="input_json_delta", partial_json='{"city": "Paris", "da'),
            delta(0, type="input_json_delta", partial_json='ys": [1, 2'),
        ]
        message = assemble_message(events)
        assert message is not None
        self.assertEqual(message["content"][0]["input"], {"city": "Paris", "days": [1, 2]})

    def test_a_tool_input_that_is_not_json_is_kept_as_its_text(self) -> None:
        events = [start(), block(0, **TOOL), delta(0, type="input_json_delta", partial_json="}{")]
        message = assemble_message(events)
        assert message is not None
        self.assertEqual(message["content"][0]["input"], "}{")

    def test_no_json_keeps_the_start_s_input(self) -> None:
        events = [
            start(),
            block(0, **{**TOOL, "input": {"a": 1}}),
            delta(0, type="input_json_delta", partial_json=""),
        ]
        message = assemble_message(events)
        assert message is not None
        self.assertEqual(message["content"][0]["input"], {"a": 1})

    def test_a_delta_for_another_kind_or_no_block_is_skipped(self) -> None:
        events = [
            start(),
            block(0, type="text", text="A"),
            block(1, **TOOL),
            delta(1, type="text_delta", text="lost"),
            delta(5, type="text_delta", text="?"),
            delta(0, type="signature_delta", signature="s"),
            {"type": "ping"},
            "junk",
            delta(0, type="citations_delta", citation={"type": "char_location"}),
            delta(0, type="text_delta", text="B"),
        ]
        message = assemble_message(events)
        assert message is not None
        self.assertEqual(
            message["content"],
            [
                {"type": "text", "text": "AB", "citations": [{"type": "char_location"}]},
                TOOL,
            ],
        )

    def test_the_events_given_are_left_as_they_were(self) -> None:
        events = [
            start(content=[{"type": "text", "text": "", "citations": []}]),
            delta(0, type="text_delta", text="A"),
            delta(0, type="citations_delta", citation={"type": "char_location"}),
            message_delta({"output_tokens": 9}),
        ]
        before = copy.deepcopy(events)
        assemble_message(events)
        self.assertEqual(events, before)

    def test_cost_s_two_steps_are_the_same_rules(self) -> None:
        self.assertIsNone(start_snapshot({"type": "ping"}))
        snapshot = start_snapshot(start(usage=None))
        assert snapshot is not None
        apply_message_delta(snapshot, message_delta({"output_tokens": 7, "input_tokens": None}))
        self.assertEqual(snapshot["usage"], {"output_tokens": 7})
        self.assertEqual(
            snapshot, assemble_message([start(usage=None), message_delta({"output_tokens": 7})])
        )


if __name__ == "__main__":
    unittest.main()
