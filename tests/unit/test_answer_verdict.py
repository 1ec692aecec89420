"""The classifier of ``vcr_kit drift`` and ``vcr_kit.compare``: properties over made-up
answers (the same answer is identical, reworded text is benign, a structural change
a regression, a moved envelope API drift), and the exact reasons given."""

from __future__ import annotations

import copy
import json
import string
import unittest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._core.answer_verdict import (
    API_DRIFT,
    BENIGN,
    IDENTICAL,
    REGRESSION,
    compare_answers,
    compare_documents,
)
from vcr_kit._core.stream_message import assemble_message

pytestmark = pytest.mark.inprocess

_WORDS = st.text(alphabet=string.ascii_letters + " .,!", min_size=1, max_size=40)
_KEYS = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8)
_SCALARS = st.one_of(st.integers(-1000, 1000), st.booleans(), _WORDS)
_INPUTS = st.dictionaries(_KEYS, _SCALARS, min_size=1, max_size=4)


@st.composite
def messages(draw: Any) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "Sure. " + draw(_WORDS)}]
    tools = draw(st.lists(st.tuples(_KEYS, _INPUTS), max_size=2))
    for index, (name, tool_input) in enumerate(tools):
        blocks.append(
            {"type": "tool_use", "id": f"toolu_vcr{index:021x}", "name": name, "input": tool_input}
        )
    return {
        "id": "msg_vcr_0",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": blocks,
        "stop_reason": "tool_use" if tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": draw(st.integers(1, 99)), "output_tokens": 5},
    }


def answer(message: dict[str, Any]) -> dict[str, Any]:
    """A stored JSON answer."""
    headers = {"content-type": "application/json", "request-id": "req_vcr_recorded"}
    return {"status": 200, "body": message, "headers": headers}


def events_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The stored SSE events that deliver ``message``, as the API sends them."""
    start = {**message, "content": [], "stop_reason": None}
    events = [{"event": "message_start", "data": {"type": "message_start", "message": start}}]
    events.append({"event": "ping", "data": {"type": "ping"}})
    for index, block in enumerate(message["content"]):
        empty = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
        events.append(
            {
                "event": "content_block_start",
                "data": {"type": "content_block_start", "index": index, "content_block": empty},
            }
        )
        if block["type"] == "text":
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            {
                "event": "content_block_delta",
                "data": {"type": "content_block_delta", "index": index, "delta": delta},
            }
        )
        events.append(
            {"event": "content_block_stop", "data": {"type": "content_block_stop", "index": index}}
        )
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(
        {
            "event": "message_delta",
            "data": {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 5}},
        }
    )
    events.append({"event": "message_stop", "data": {"type": "message_stop"}})
    return events


def stream(message: dict[str, Any]) -> dict[str, Any]:
    headers = {"content-type": "text/event-stream; charset=utf-8"}
    return {"status": 200, "events": events_of(message), "headers": headers}


class PropertyTest(unittest.TestCase):
    @settings(max_examples=examples(60), deadline=None)
    @given(messages())
    def test_the_same_answer_is_identical_json_and_stream(self, message: dict[str, Any]) -> None:
        self.assertEqual(
            compare_answers(answer(message), answer(copy.deepcopy(message))).verdict, IDENTICAL
        )
        self.assertEqual(
            compare_answers(stream(message), stream(copy.deepcopy(message))).verdict, IDENTICAL
        )

    @settings(max_examples=examples(60), deadline=None)
    @given(messages(), st.integers(1, 10_000))
    def test_usage_alone_changes_nothing(self, message: dict[str, Any], tokens: int) -> None:
        other = copy.deepcopy(message)
        other["usage"]["input_tokens"] = tokens
        self.assertEqual(compare_answers(answer(message), answer(other)).verdict, IDENTICAL)

    @settings(max_examples=examples(60), deadline=None)
    @given(messages(), _WORDS)
    def test_reworded_text_is_benign(self, message: dict[str, Any], words: str) -> None:
        other = copy.deepcopy(message)
        other["content"][0]["text"] = "Well, " + words
        for make in (answer, stream):
            verdict = compare_answers(make(message), make(other))
            self.assertEqual(verdict.verdict, BENIGN)
            self.assertEqual(verdict.reasons, ("benign: other wording in block 0 (text)",))

    @settings(max_examples=examples(60), deadline=None)
    @given(messages(), st.sampled_from(["max_tokens", "refusal", "pause_turn"]))
    def test_another_stop_reason_is_a_regression(self, message: dict[str, Any], stop: str) -> None:
        other = copy.deepcopy(message)
        other["stop_reason"] = stop
        for make in (answer, stream):
            verdict = compare_answers(make(message), make(other))
            self.assertEqual(verdict.verdict, REGRESSION, verdict.reasons)

    @settings(max_examples=examples(60), deadline=None)
    @given(messages(), _KEYS, _SCALARS)
    def test_a_new_envelope_field_is_api_drift(
        self, message: dict[str, Any], key: str, value: Any
    ) -> None:
        if key in message:
            return
        other = {**copy.deepcopy(message), key: value}
        verdict = compare_answers(answer(message), answer(other))
        self.assertEqual(verdict.verdict, API_DRIFT)
        self.assertIn(f"api drift: new field [message].{key}", verdict.reasons[0])

    @settings(max_examples=examples(60), deadline=None)
    @given(messages(), _KEYS)
    def test_a_tool_input_of_another_shape_is_a_regression(
        self, message: dict[str, Any], key: str
    ) -> None:
        tools = [b for b in message["content"] if b["type"] == "tool_use"]
        if not tools or key in tools[0]["input"]:
            return
        other = copy.deepcopy(message)
        next(b for b in other["content"] if b["type"] == "tool_use")["input"][key] = 1
        for make in (answer, stream):
            verdict = compare_answers(make(message), make(other))
            self.assertEqual(verdict.verdict, REGRESSION, verdict.reasons)

    @settings(max_examples=examples(60), deadline=None)
    @given(messages())
    def test_the_stream_assembles_the_message(self, message: dict[str, Any]) -> None:
        assembled = assemble_message(e["data"] for e in events_of(message))
        assert assembled is not None
        self.assertEqual(assembled["content"], message["content"])
        self.assertEqual(assembled["stop_reason"], message["stop_reason"])


def _message(*blocks: dict[str, Any], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_vcr_0",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": list(blocks),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_vcr0", "name": name, "input": tool_input}


class ReasonsTest(unittest.TestCase):
    def reasons(self, recorded: dict[str, Any], live: dict[str, Any]) -> tuple[str, ...]:
        return compare_answers(answer(recorded), answer(live)).reasons

    def test_truncation(self) -> None:
        self.assertEqual(
            self.reasons(
                _message(_text("A long story.")), _message(_text("A long"), stop="max_tokens")
            ),
            (
                "regression: truncated by max_tokens (stop reason was end_turn)",
                "benign: other wording in block 0 (text)",
            ),
        )

    def test_a_tool_called_now_and_no_longer(self) -> None:
        plain = _message(_text("Sunny."))
        called = _message(
            _text("Let me check."), _tool("get_weather", city="Paris"), stop="tool_use"
        )
        self.assertEqual(
            self.reasons(plain, called)[:2],
            (
                "regression: stop reason end_turn -> tool_use",
                "regression: a tool is called now: get_weather",
            ),
        )
        self.assertIn(
            "regression: no tool is called now (was get_weather)", self.reasons(called, plain)
        )

    def test_another_tool_and_another_input(self) -> None:
        self.assertEqual(
            self.reasons(
                _message(_tool("get_weather", city="Paris"), stop="tool_use"),
                _message(_tool("lookup", city="Paris"), stop="tool_use"),
            ),
            ("regression: tools get_weather -> lookup",),
        )
        self.assertEqual(
            self.reasons(
                _message(_tool("w", city="Paris"), stop="tool_use"),
                _message(_tool("w", city=["Paris"]), stop="tool_use"),
            ),
            ("regression: tool w input {city: string} -> {city: array}",),
        )
        self.assertEqual(
            self.reasons(
                _message(_tool("w", city="Paris"), stop="tool_use"),
                _message(_tool("w", city="Rome"), stop="tool_use"),
            ),
            ("benign: tool w input: other values",),
        )

    def test_a_tool_input_cut_short_is_the_object_read_so_far(self) -> None:
        # A stream's tool input is read as the SDK reads it (partial JSON): the live
        # input below is {city: string} now; it was its text (a string) before.
        called = _message(_tool("w", city="Paris", unit="C"), stop="tool_use")
        cut = stream(_message(_tool("w", city="Paris", unit="C"), stop="max_tokens"))
        data = next(e["data"] for e in cut["events"] if e["event"] == "content_block_delta")
        data["delta"]["partial_json"] = '{"city": "Paris", "unit'
        self.assertEqual(
            compare_answers(stream(called), cut).reasons,
            (
                "regression: truncated by max_tokens (stop reason was tool_use)",
                "regression: tool w input {city: string, unit: string} -> {city: string}",
            ),
        )

    def test_other_citations_of_the_same_text_are_benign(self) -> None:
        # A stream's citations_delta events are assembled into the text block, as the
        # SDK does: other citations are a benign change now (identical before).
        def cited(text: str) -> dict[str, Any]:
            answer = stream(_message(_text("The sky is blue.")))
            events = answer["events"]
            at = next(n for n, e in enumerate(events) if e["event"] == "content_block_delta")
            events[at - 1]["data"]["content_block"]["citations"] = []
            citation = {
                "type": "char_location",
                "cited_text": text,
                "document_index": 0,
                "document_title": None,
                "start_char_index": 0,
                "end_char_index": len(text),
            }
            events.insert(
                at,
                {
                    "event": "content_block_delta",
                    "data": {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "citations_delta", "citation": citation},
                    },
                },
            )
            return answer

        self.assertEqual(compare_answers(cited("blue"), cited("blue")).verdict, IDENTICAL)
        self.assertEqual(
            compare_answers(cited("the sky is blue"), cited("blue skies")).reasons,
            ("benign: block 0 (text) differs",),
        )

    def test_structured_output(self) -> None:
        recorded = _message(_text('{"name": "Ada", "age": 36}'))
        self.assertEqual(
            self.reasons(recorded, _message(_text('{"name": "Bob", "age": 7}'))),
            ("benign: other wording in block 0 (text)",),
        )
        self.assertEqual(
            self.reasons(recorded, _message(_text('{"name": "Bob"}'))),
            ("regression: structured output in block 0 has another JSON shape",),
        )
        self.assertEqual(
            self.reasons(recorded, _message(_text("Ada, 36"))),
            ("regression: structured output in block 0 is no longer JSON",),
        )

    def test_another_block_kind(self) -> None:
        thinking = {"type": "thinking", "thinking": "Hmm.", "signature": "s"}
        self.assertEqual(
            self.reasons(_message(_text("Hi.")), _message(thinking, _text("Hi."))),
            ("regression: content blocks text -> thinking, text",),
        )

    def test_success_against_error(self) -> None:
        error = {
            "status": 400,
            "headers": {"content-type": "application/json"},
            "body": {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "max_tokens: too large"},
            },
        }
        verdict = compare_answers(answer(_message(_text("Hi."))), error)
        self.assertEqual(
            verdict.reasons, ("regression: success -> error 400 invalid_request_error",)
        )
        self.assertEqual(compare_answers(error, error).verdict, IDENTICAL)

    def test_a_retyped_and_a_removed_field(self) -> None:
        live = _message(_text("Hi."))
        live["usage"] = {"input_tokens": "1"}
        self.assertEqual(
            self.reasons(_message(_text("Hi.")), live),
            (
                "api drift: field [message].usage.input_tokens: number -> string",
                "api drift: field [message].usage.output_tokens is gone (was number)",
            ),
        )

    def test_sse_event_types_and_content_type(self) -> None:
        message = _message(_text("Hi."))
        moved = stream(message)
        moved["events"][1] = {"event": "heartbeat", "data": {"type": "heartbeat"}}
        self.assertEqual(
            compare_answers(stream(message), moved).reasons,
            ("api drift: new SSE event type heartbeat", "api drift: SSE event type ping is gone"),
        )
        other = answer(message)
        other["headers"] = {"content-type": "application/x-ndjson"}
        self.assertEqual(
            compare_answers(answer(message), other).reasons,
            ("api drift: content-type application/json -> application/x-ndjson",),
        )

    def test_token_counts_and_cassette_documents(self) -> None:
        count = {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {"input_tokens": 18},
        }
        more = {**count, "body": {"input_tokens": 23}}
        self.assertEqual(
            compare_answers(count, more).reasons, ("benign: values differ: input_tokens",)
        )
        recorded = {
            "kind": "token_count",
            "response": {"$sdk": "MessageTokensCount", "data": {"input_tokens": 18}},
        }
        self.assertEqual(compare_documents(recorded, recorded).verdict, IDENTICAL)
        live = {
            "kind": "token_count",
            "response": {"$sdk": "MessageTokensCount", "data": {"input_tokens": 18, "extra": 1}},
        }
        self.assertEqual(
            compare_documents(recorded, live).reasons, ("api drift: new field extra (number)",)
        )
