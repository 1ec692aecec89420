"""The fault spec (``_core.faults``): parse and render round trip, exact messages for bad
specs, and the schedule that walks each request through its faults."""

from __future__ import annotations

import os
import unittest
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vcr_kit._core.config import faults_from_environment
from vcr_kit._core.faults import (
    ALWAYS,
    FAULTS,
    MAX_SECONDS,
    PRESETS,
    Fault,
    Kind,
    RequestFacts,
    Schedule,
    Spec,
    facts_of,
    parse_spec,
    render_spec,
)
from vcr_kit.errors import ConfigError

pytestmark = pytest.mark.inprocess

_TAIL = (
    ". A fault spec is a comma-separated list of NAME, NAME:ARG, NAME*N or NAME@FILTER "
    "(see https://vcr-kit.github.io/vcr_kit/faults/)."
)
_word = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.*?/ ", min_size=1, max_size=12
).filter(
    lambda s: s == s.strip()  # an item's edges are trimmed: a value cannot start with a blank
)
_seconds = st.floats(min_value=0, max_value=MAX_SECONDS, allow_nan=False, allow_infinity=False)


@st.composite
def _faults(draw: st.DrawFn) -> Fault:
    name = draw(st.sampled_from(sorted(FAULTS)))
    kind = FAULTS[name]
    arg: float | None = None
    if kind.arg == "int":
        arg = draw(st.integers(0, 10_000))
    elif kind.arg == "seconds" and (kind.arg_required or draw(st.booleans())):
        arg = draw(_seconds)
    chance = draw(st.none() | st.floats(min_value=1e-9, max_value=1.0))
    return Fault(
        name,
        arg,
        draw(st.sampled_from([1, 2, 7, ALWAYS])),
        every=draw(st.none() | st.integers(1, 50)),
        model=draw(st.none() | _word),
        text=draw(st.none() | _word),
        tool=draw(st.none() | _word),
        chance=chance,
        seed=draw(st.none() | st.integers(0, 2**32)) if chance is not None else None,
    )


class RoundTrip(unittest.TestCase):
    @given(st.lists(_faults(), max_size=5))
    def test_parse_reads_back_what_render_writes(self, faults: list[Fault]) -> None:
        spec = Spec(tuple(faults))
        self.assertEqual(parse_spec(render_spec(spec)), spec)

    def test_the_fixed_forms(self) -> None:
        spec = parse_spec(" overloaded*2 , cut_after:3,slow_first:2.5, rate_limit:0.05*always")
        self.assertEqual(
            spec.faults,
            (
                Fault("overloaded", count=2),
                Fault("cut_after", 3),
                Fault("slow_first", 2.5),
                Fault("rate_limit", 0.05, ALWAYS),
            ),
        )
        self.assertEqual(
            render_spec(spec), "overloaded*2,cut_after:3,slow_first:2.5,rate_limit:0.05*always"
        )

    def test_a_preset_stands_for_its_spec(self) -> None:
        for name, text in PRESETS.items():
            with self.subTest(name):
                self.assertEqual(parse_spec(name), parse_spec(text))
        self.assertEqual(parse_spec("flaky,reset"), parse_spec("overloaded*2,reset"))

    def test_empty_means_no_faults(self) -> None:
        self.assertFalse(parse_spec(""))
        self.assertFalse(parse_spec("  "))

    def test_every_fault_has_its_kind(self) -> None:
        self.assertEqual(
            {name for name, f in FAULTS.items() if f.kind is Kind.API},
            {"overloaded", "rate_limit", "server_error", "timeout", "request_timeout"},
        )
        self.assertEqual(
            {name for name, f in FAULTS.items() if f.kind is Kind.TRANSPORT},
            {"reset", "refused", "empty", "read_timeout"},
        )


class BadSpecs(unittest.TestCase):
    def assert_refused(self, text: str, problem: str) -> None:
        with self.assertRaises(ConfigError) as caught:
            parse_spec(text, "VCR_FAULTS")
        self.assertEqual(str(caught.exception), f"VCR_FAULTS={text!r}: {problem}{_TAIL}")

    def test_unknown_name(self) -> None:
        self.assert_refused(
            "overloded*2",
            "unknown fault 'overloded'; the faults are overloaded, rate_limit, server_error, "
            "timeout, request_timeout, reset, refused, empty, read_timeout, cut_after, "
            "error_after, slow_first, delay, the presets flaky, rate_limited, outage, "
            "dropped_stream, hung",
        )

    def test_each_bad_form(self) -> None:
        table = {
            "cut_after": "cut_after needs its N (events): write cut_after:3",
            "slow_first": "slow_first needs its SECONDS: write slow_first:2.5",
            "cut_after:2.5": "cut_after:2.5: N is a whole number of events from 0 to 1000000",
            "cut_after:1000001": "cut_after:1000001: N is a whole number of events from 0 "
            "to 1000000",
            "reset:3": "reset takes no argument",
            "rate_limit:-1": "rate_limit:-1: SECONDS is a number from 0 to 86400 (a day)",
            "rate_limit:1e12": "rate_limit:1e12: SECONDS is a number from 0 to 86400 (a day)",
            "slow_first:nan": "slow_first:nan: SECONDS is a number from 0 to 86400 (a day)",
            "overloaded*0": "overloaded*0: N is a whole number from 1 to 1000000, or 'always'",
            "overloaded*two": "overloaded*two: N is a whole number from 1 to 1000000, or 'always'",
            "overloaded,,reset": "an empty item (two commas in a row, or one at an end)",
            "overloaded,": "an empty item (two commas in a row, or one at an end)",
            "overloaded@often:2": "'@often:2' is not a filter; the filters are @every:..., "
            "@model:..., @text:..., @tool:..., @chance:..., @seed:...",
            "overloaded@every:0": "@every:0 needs a whole number from 1 to 1000000",
            "overloaded@chance:0": "@chance:0 needs a probability above 0, at most 1",
            "overloaded@chance:1.5": "@chance:1.5 needs a probability above 0, at most 1",
            "overloaded@seed:3": "@seed needs @chance in 'overloaded@seed:3'",
            "overloaded@model:a@model:b": "@model given twice in 'overloaded@model:a@model:b'",
        }
        for text, problem in table.items():
            with self.subTest(text):
                self.assert_refused(text, problem)

    def test_vcr_faults_is_read_in_config(self) -> None:
        with mock.patch.dict(os.environ, {"VCR_FAULTS": "overloaded*2"}):
            self.assertEqual(faults_from_environment(), parse_spec("overloaded*2"))
        with mock.patch.dict(os.environ, {"VCR_FAULTS": "overload"}):
            with self.assertRaises(ConfigError) as caught:
                faults_from_environment()
        self.assertTrue(str(caught.exception).startswith("VCR_FAULTS='overload': unknown fault"))


def _walk(spec: str, facts: RequestFacts, attempts: int) -> list[str | None]:
    schedule = Schedule(parse_spec(spec))
    return [f.name if (f := schedule.next_fault(facts)) else None for _ in range(attempts)]


class TheSchedule(unittest.TestCase):
    plain = RequestFacts("post-v1-messages-aaa.json", model="claude-opus-4-7")
    stream = RequestFacts(
        "post-v1-messages-bbb.json",
        stream=True,
        model="claude-haiku-4-5",
        tools=("get_weather",),
        text='{"content": "weather in Paris"}',
    )

    def test_n_attempts_of_each_request_then_the_recorded_answer(self) -> None:
        self.assertEqual(
            _walk("overloaded*2", self.plain, 4), ["overloaded", "overloaded", None, None]
        )

    def test_items_in_order(self) -> None:
        self.assertEqual(
            _walk("overloaded*2,rate_limit,reset", self.plain, 5),
            ["overloaded", "overloaded", "rate_limit", "reset", None],
        )

    def test_each_distinct_request_walks_its_own_schedule(self) -> None:
        schedule = Schedule(parse_spec("overloaded"))
        other = RequestFacts("post-v1-messages-ccc.json")
        self.assertIsNotNone(schedule.next_fault(self.plain))
        self.assertIsNotNone(schedule.next_fault(other))
        self.assertIsNone(schedule.next_fault(self.plain))
        self.assertIsNone(schedule.next_fault(other))

    def test_always(self) -> None:
        self.assertEqual(_walk("outage", self.plain, 3), ["overloaded"] * 3)

    def test_stream_faults_only_meet_streams(self) -> None:
        self.assertEqual(_walk("cut_after:3", self.plain, 1), [None])
        self.assertEqual(_walk("cut_after:3", self.stream, 2), ["cut_after", None])
        self.assertEqual(_walk("slow_first:1", self.plain, 1), ["slow_first"])

    def test_filters(self) -> None:
        self.assertEqual(_walk("overloaded@model:claude-haiku-*", self.plain, 1), [None])
        self.assertEqual(_walk("overloaded@model:claude-haiku-*", self.stream, 1), ["overloaded"])
        self.assertEqual(_walk("overloaded@tool:get_weather", self.plain, 1), [None])
        self.assertEqual(_walk("overloaded@tool:get_weather", self.stream, 1), ["overloaded"])
        self.assertEqual(_walk("overloaded@text:Paris", self.stream, 1), ["overloaded"])
        self.assertEqual(_walk("overloaded@text:Paris", self.plain, 1), [None])

    def test_every_kth_call(self) -> None:
        schedule = Schedule(parse_spec("server_error*always@every:3"))
        got = [schedule.next_fault(RequestFacts(f"k{i}")) for i in range(9)]
        self.assertEqual([i for i, f in enumerate(got) if f], [2, 5, 8])

    def test_a_seeded_chance_draws_the_same_faults_each_run(self) -> None:
        def draws(seed: int) -> list[bool]:
            schedule = Schedule(parse_spec(f"overloaded@chance:0.3@seed:{seed}"))
            return [schedule.next_fault(RequestFacts(f"k{i}")) is not None for i in range(400)]

        self.assertEqual(draws(7), draws(7))
        self.assertNotEqual(draws(7), draws(8))
        self.assertTrue(90 <= sum(draws(7)) <= 150, sum(draws(7)))  # about 30 % of 400


class ScheduleProperties(unittest.TestCase):
    @given(
        st.lists(
            st.tuples(
                st.sampled_from(
                    ["overloaded", "reset", "server_error", "cut_after:2", "slow_first:1"]
                ),
                st.integers(1, 4),
            ),
            max_size=5,
        ),
        st.booleans(),
    )
    def test_each_request_walks_its_items_in_order_then_gets_the_recording(
        self, items: list[tuple[str, int]], stream: bool
    ) -> None:
        spec = parse_spec(",".join(f"{name}*{n}" for name, n in items)) if items else Spec()
        schedule = Schedule(spec)
        met = [(f.name, f.count) for f in spec.faults if stream or f.name != "cut_after"]
        expected = [f.name for f in spec.faults for _ in range(f.count) if (f.name, f.count) in met]
        for key in ("a", "b"):  # each distinct request on its own
            facts = RequestFacts(key, stream=stream)
            got = [schedule.next_fault(facts) for _ in range(len(expected) + 2)]
            self.assertEqual([f.name for f in got if f], expected)
            self.assertEqual(got[len(expected) :], [None, None])


class Facts(unittest.TestCase):
    def test_facts_of_a_messages_body(self) -> None:
        body = (
            b'{"model": "claude-opus-4-7", "stream": true, "tools": [{"name": "a"}, '
            b'{"name": "b"}], "messages": []}'
        )
        facts = facts_of("k", body)
        self.assertEqual(
            (facts.model, facts.stream, facts.tools), ("claude-opus-4-7", True, ("a", "b"))
        )

    def test_each_providers_tools(self) -> None:
        chat = b'{"tools": [{"type": "function", "function": {"name": "a"}}]}'
        responses = b'{"model": "gpt-5-mini", "tools": [{"type": "function", "name": "b"}]}'
        gemini = b'{"tools": [{"functionDeclarations": [{"name": "c"}, {"name": "d"}]}]}'
        self.assertEqual(facts_of("k", chat).tools, ("a",))
        self.assertEqual(facts_of("k", responses).tools, ("b",))
        self.assertEqual(facts_of("k", gemini).tools, ("c", "d"))

    def test_geminis_model_and_stream_are_in_its_path(self) -> None:
        path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
        facts = facts_of("k", b'{"contents": []}', path + "?alt=sse")
        self.assertEqual((facts.model, facts.stream), ("gemini-2.5-flash", True))
        facts = facts_of("k", b'{"contents": []}', path)  # the chunks as one JSON array
        self.assertEqual((facts.model, facts.stream), ("gemini-2.5-flash", False))
        facts = facts_of("k", b"", "/v1beta/models/gemini-2.5-flash:generateContent")
        self.assertEqual((facts.model, facts.stream), ("gemini-2.5-flash", False))

    def test_a_body_that_is_not_an_object(self) -> None:
        self.assertEqual(facts_of("k", b""), RequestFacts("k"))
        self.assertEqual(facts_of("k", b"[1]"), RequestFacts("k", text="[1]"))


if __name__ == "__main__":
    unittest.main()
