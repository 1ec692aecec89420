"""The two rules of ``vcr_kit drift`` (``_core/drift_rules.py``) and the origin of an
answer (``_core/answer_origin.py``), as properties over their classes: any change of
the request is written under its own name or nowhere; any transient live answer, or
none, is ``unanswered`` whatever the fixture holds; an answer another model gave is
found. The command line's examples are in ``tests/cli/test_drift_rules.py``."""

from __future__ import annotations

import copy
import unittest
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from tests.support.helpers.provider_answers import (
    ENDPOINTS,
    UNEARNED_CASES,
    earned_answers,
    gemini_bad_key,
    stored_request,
)
from tests.support.helpers.provider_answers import transient_answers as provider_transients
from vcr_kit._core.answer_origin import foreign_answer, same_model
from vcr_kit._core.answer_verdict import compare_answers
from vcr_kit._core.drift_rules import (
    NOT_A_CHANGE,
    asked_request,
    describe_change,
    destination,
    unusable,
)
from vcr_kit._core.fixture_names import http_name
from vcr_kit._core.schema import stored_name

pytestmark = pytest.mark.inprocess

OPUS = "claude-opus-4-7"
SONNET = "claude-sonnet-4-6"


def request(**body: Any) -> dict[str, Any]:
    return {
        "method": "POST",
        "path": "/v1/messages",
        "body": {
            "model": OPUS,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Say hi."}],
            **body,
        },
    }


def message(model: str = OPUS, text: str = "Hi.") -> dict[str, Any]:
    return {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "body": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2},
        },
    }


def api_error(status: int, kind: str, words: str = "nope") -> dict[str, Any]:
    return {
        "status": status,
        "headers": {"content-type": "application/json"},
        "body": {"type": "error", "error": {"type": kind, "message": words}},
    }


def page(status: int, content_type: str, text: str) -> dict[str, Any]:
    return {"status": status, "headers": {"content-type": content_type}, "text": text}


def stream(last: str = "message_stop", error: str | None = None) -> dict[str, Any]:
    events: list[dict[str, Any]] = [
        {"event": "message_start", "data": {"type": "message_start", "message": message()["body"]}},
    ]
    if error is not None:
        events.append(
            {"event": "error", "data": {"type": "error", "error": {"type": error, "message": "x"}}}
        )
    elif last:
        events.append({"event": last, "data": {"type": last}})
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": events}


# --------------------------------------------------------------------------- #
# Where a live answer is written
# --------------------------------------------------------------------------- #

JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.text(max_size=8))
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
MODEL_IDS = st.from_regex(r"claude-[a-z]{3,6}-[0-9](-[0-9])?", fullmatch=True)


@st.composite
def changes(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stored request and the request drift asks instead, changed in any one way."""
    stored = request(system=draw(st.text(max_size=10)))
    asked = copy.deepcopy(stored)
    body = asked["body"]
    how = draw(
        st.sampled_from(
            ["model", "max_tokens", "system", "messages", "add", "drop", "path", "beta"]
        )
    )
    if how == "model":
        body["model"] = draw(MODEL_IDS.filter(lambda m: m != OPUS))
    elif how == "max_tokens":
        body["max_tokens"] = draw(st.integers(1, 10**6).filter(lambda n: n != 64))
    elif how == "system":
        body["system"] = draw(st.text(max_size=10).filter(lambda t: t != stored["body"]["system"]))
    elif how == "messages":
        body["messages"] = [*body["messages"], {"role": "assistant", "content": draw(JSON)}]
    elif how == "add":
        body[draw(st.sampled_from(["tools", "temperature", "stop_sequences"]))] = draw(JSON)
    elif how == "drop":
        del body[draw(st.sampled_from(["system", "max_tokens", "messages"]))]
    elif how == "path":
        asked["path"] = "/v1/messages/count_tokens"
    else:
        asked["anthropic-beta"] = draw(st.text(min_size=1, max_size=12))
    return stored, asked


class DestinationTest(unittest.TestCase):
    @settings(max_examples=examples(60), deadline=None)
    @given(changes())
    # The reviewer's case: --model claude-sonnet-4-6 over an Opus fixture.
    @example((request(), request(model=SONNET)))
    def test_a_changed_request_goes_under_its_own_name_never_the_fixtures(
        self, pair: tuple[dict[str, Any], dict[str, Any]]
    ) -> None:
        stored, asked = pair
        name = http_name("POST", stored["path"], stored)
        place = destination(name, stored, asked)
        self.assertIsNotNone(place.name, place.refusal)
        self.assertNotEqual(place.name, name)
        self.assertIs(place.request, asked)  # the written file holds the request asked
        self.assertEqual(place.name, stored_name({"kind": "http", "request": asked}, ""))
        self.assertTrue(place.changed)

    @settings(max_examples=examples(50), deadline=None)
    @given(st.text(max_size=10), st.integers(1, 4096))
    def test_an_unchanged_request_goes_under_the_fixtures_own_name(
        self, system: str, max_tokens: int
    ) -> None:
        stored = request(system=system, max_tokens=max_tokens)
        name = http_name("POST", "/v1/messages", stored)
        self.assertEqual(destination(name, stored, copy.deepcopy(stored)).name, name)
        # A file named for another request is written under neither name.
        other = http_name("POST", "/v1/messages", request(system=system + "!"))
        refused = destination(other, stored, stored)
        self.assertIsNone(refused.name)
        self.assertEqual(
            refused.refusal,
            f"its stored request is named {name}, not {other}: the file holds another "
            "request's answer (vcr_kit check reports it); record it again",
        )

    def test_the_model_map_changes_the_request_drift_asks(self) -> None:
        stored = request()
        self.assertIs(asked_request(stored, lambda m: m), stored)
        asked = asked_request(stored, {OPUS: SONNET}.get)
        self.assertEqual(asked["body"]["model"], SONNET)
        self.assertEqual(stored["body"]["model"], OPUS)  # the fixture's is left alone
        self.assertEqual(describe_change(stored, asked), f"model {OPUS} -> {SONNET}")
        batch = {
            "method": "POST",
            "path": "/v1/messages/batches",
            "body": {"requests": [{"custom_id": "a", "params": request()["body"]}]},
        }
        moved = asked_request(batch, lambda m: SONNET)
        self.assertEqual(moved["body"]["requests"][0]["params"]["model"], SONNET)
        self.assertEqual(describe_change(batch, moved), "body.requests")


# --------------------------------------------------------------------------- #
# Which live answers are compared
# --------------------------------------------------------------------------- #

MOMENT_STATUSES = st.sampled_from([401, 402, 403, 408, 409, 425, 429]) | st.integers(500, 599)


@st.composite
def transient_answers(draw: st.DrawFn) -> dict[str, Any] | None:
    """A live answer that says nothing of the request (None: the API was not reached)."""
    how = draw(st.sampled_from(["status", "html", "text", "cut", "stream", "none"]))
    if how == "none":
        return None
    if how == "status":
        status = draw(MOMENT_STATUSES)
        kind = draw(
            st.sampled_from(
                [
                    "rate_limit_error",
                    "api_error",
                    "overloaded_error",
                    "authentication_error",
                    "invalid_request_error",
                ]
            )
        )
        if draw(st.booleans()):
            return api_error(status, kind)
        return page(
            status,
            draw(st.sampled_from(["text/html", "text/plain", ""])),
            draw(st.text(max_size=20)),
        )
    if how == "html":  # a gateway's page, whatever its status
        status = draw(st.sampled_from([200, 400, 404, 502]))
        return page(status, "text/html; charset=utf-8", "<html>Bad gateway</html>")
    if how == "text":  # not JSON where the API answers JSON
        return page(draw(st.sampled_from([200, 201, 400, 404])), "text/plain", "OK")
    if how == "cut":
        return page(draw(st.sampled_from([200, 400])), "application/json", '{"type": "mess')
    if draw(st.booleans()):
        return stream(last=draw(st.sampled_from(["", "message_delta", "content_block_stop"])))
    return stream(
        error=draw(
            st.sampled_from(["overloaded_error", "rate_limit_error", "api_error", "something_new"])
        )
    )


STORED_ANSWERS = st.sampled_from(
    [
        message(),
        api_error(400, "invalid_request_error"),
        api_error(404, "not_found_error"),
        api_error(413, "request_too_large"),
        stream(),
        api_error(429, "rate_limit_error"),
    ]
)


class UnusableTest(unittest.TestCase):
    @settings(max_examples=examples(100), deadline=None)
    @given(transient_answers(), STORED_ANSWERS)
    # The reviewer's cases: a 429, a 401 and an HTML 502 against a fixture holding a 400.
    @example(api_error(429, "rate_limit_error"), api_error(400, "invalid_request_error"))
    @example(api_error(401, "authentication_error"), api_error(400, "invalid_request_error"))
    @example(page(502, "text/html", "<html>502</html>"), api_error(400, "invalid_request_error"))
    def test_a_transient_answer_is_unanswered_whatever_the_fixture_holds(
        self, live: dict[str, Any] | None, stored: dict[str, Any]
    ) -> None:
        reason = unusable(live, stored, "ConnectError: refused")
        self.assertIsNotNone(reason)
        assert reason is not None
        self.assertTrue(reason.endswith(f": {NOT_A_CHANGE}"), reason)

    @settings(max_examples=examples(50), deadline=None)
    @given(
        STORED_ANSWERS,
        st.sampled_from(
            [
                message(),
                message(text="Hello."),
                api_error(400, "invalid_request_error"),
                api_error(404, "not_found_error"),
                stream(),
                {
                    "status": 200,
                    "headers": {"content-type": "application/json"},
                    "body": {"input_tokens": 12},
                },
            ]
        ),
    )
    def test_an_answer_the_request_earned_is_compared(
        self, stored: dict[str, Any], live: dict[str, Any]
    ) -> None:
        self.assertIsNone(unusable(live, stored))
        compare_answers(stored, live)  # and the verdict has its say

    def test_the_reasons(self) -> None:
        self.assertEqual(
            unusable(api_error(429, "rate_limit_error")),
            f"a 429 (rate limit) depends on the moment, not on the request: {NOT_A_CHANGE}",
        )
        self.assertEqual(
            unusable(None, failure="ConnectError: [Errno 111] Connection refused"),
            f"no answer from the API (ConnectError: [Errno 111] Connection refused): "
            f"{NOT_A_CHANGE}",
        )
        self.assertEqual(
            unusable(page(200, "text/plain; charset=utf-8", "OK"), message()),
            f"a 200 whose body is not the API's JSON (text/plain): {NOT_A_CHANGE}",
        )
        self.assertEqual(
            unusable(page(425, "application/json", "{}")),
            f"a 425 (too early) depends on the moment, not on the request: {NOT_A_CHANGE}",
        )
        # An endpoint recorded as text is compared as text.
        self.assertIsNone(unusable(page(200, "text/plain", "a"), page(200, "text/plain", "b")))


class ProviderUnusableTest(unittest.TestCase):
    """``unusable`` over every provider, asked with the fixture's stored request (the
    provider in it): the classes ``storable`` never stores are never compared either."""

    @settings(max_examples=examples(10), deadline=None)
    @given(st.data())
    def test_a_transient_answer_is_unanswered_at_every_provider(self, data: Any) -> None:
        # Every endpoint x every class in each example, against any stored answer.
        stored_of = {e: data.draw(earned_answers(e), label=f"{e} stored") for e in ENDPOINTS}
        for endpoint, how in UNEARNED_CASES:
            _, live = data.draw(provider_transients(endpoint, how), label=f"{endpoint} {how}")
            stored = stored_of[endpoint]
            reason = unusable(live, stored, "", stored_request(endpoint))
            self.assertIsNotNone(reason, (endpoint.provider, endpoint.name, how, live))
            assert reason is not None
            self.assertTrue(reason.endswith(f": {NOT_A_CHANGE}"), reason)

    @settings(max_examples=examples(10), deadline=None)
    @given(st.data())
    def test_an_answer_the_request_earned_is_compared_at_every_provider(self, data: Any) -> None:
        for endpoint in ENDPOINTS:
            live = data.draw(earned_answers(endpoint), label=f"{endpoint} live")
            stored = data.draw(earned_answers(endpoint), label="stored")
            self.assertIsNone(unusable(live, stored, "", stored_request(endpoint)))
            compare_answers(stored, live)  # and the verdict has its say

    def test_the_provider_reasons(self) -> None:
        gemini = stored_request(ENDPOINTS[8])
        cut = {"status": 200, "headers": {"content-type": "text/event-stream"},
               "events": [{"data": {"candidates": [{"index": 0}]}}]}  # fmt: skip
        self.assertEqual(
            unusable(cut, None, "", gemini),
            "the stream ended after 1 events, before a chunk gave its finishReason: "
            f"{NOT_A_CHANGE}",
        )
        self.assertEqual(
            unusable(gemini_bad_key(), None, "", gemini),
            f"a 400 API_KEY_INVALID depends on the key, not on the request: {NOT_A_CHANGE}",
        )
        responses = stored_request(ENDPOINTS[5])
        started = {"event": "response.created", "data": {"type": "response.created"}}
        self.assertEqual(
            unusable({**cut, "events": [started]}, None, "", responses),
            "the stream ended after 1 events, before its final event (response.completed): "
            f"{NOT_A_CHANGE}",
        )


# --------------------------------------------------------------------------- #
# Whose answer a fixture holds
# --------------------------------------------------------------------------- #


class AnswerOriginTest(unittest.TestCase):
    # Pairs the API gave (../shared/real_answers): an alias answered by its snapshot.
    def test_an_alias_and_its_snapshot_are_one_model(self) -> None:
        for asked, answered in [
            ("claude-sonnet-4-0", "claude-sonnet-4-20250514"),
            ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022"),
            ("claude-3-opus-latest", "claude-3-opus-20240229"),
            ("claude-haiku-4-5", "claude-haiku-4-5-20251001"),
            ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
            ("claude-sonnet-4-6", "claude-sonnet-4-6"),
            ("gpt-4.1", "gpt-4.1-2025-04-14"),
        ]:
            self.assertTrue(same_model(asked, answered), (asked, answered))
        for asked, answered in [
            (OPUS, SONNET),
            ("claude-sonnet-4-0", "claude-sonnet-4-5-20250929"),
            ("claude-opus-4-6", "claude-opus-4-7"),
            ("claude-haiku-4-5", "claude-sonnet-4-5"),
        ]:
            self.assertFalse(same_model(asked, answered), (asked, answered))

    @settings(max_examples=examples(40), deadline=None)
    @given(MODEL_IDS, MODEL_IDS, st.booleans())
    def test_an_answer_another_model_gave_is_found(
        self, asked: str, answered: str, streamed: bool
    ) -> None:
        answer = message(answered)
        if streamed:
            answer = stream()
            answer["events"][0]["data"]["message"]["model"] = answered
        doc = {"kind": "http", "request": request(model=asked), "response": answer}
        finding = foreign_answer(doc)
        if same_model(asked, answered):
            self.assertIsNone(finding)
        else:
            self.assertEqual(
                finding,
                f"response: the answer is {answered}'s, but the stored request asks {asked}: "
                "this file answers another request (an earlier vcr_kit drift --update "
                "--model wrote such files). Delete it and record again",
            )

    def test_what_names_no_model_is_not_judged(self) -> None:
        for doc in [
            {"kind": "http", "request": request(), "response": api_error(400, "x")},
            {
                "kind": "http",
                "request": {"method": "GET", "path": "/v1/models"},
                "response": message(SONNET),
            },
            {"kind": "message", "request": {"messages": []}, "response": message(SONNET)},
            {"kind": "http", "request": request(), "response": "not an answer"},
        ]:
            self.assertIsNone(foreign_answer(doc))
