"""``_core.storable``: the one decision of what is never stored, and its agreement with
the fixture kinds (what the recorder refuses to write is what ``check`` and replay
refuse to serve, and nothing else)."""

from __future__ import annotations

import unittest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from tests.support.helpers.provider_answers import (
    ENDPOINTS,
    UNEARNED_CASES,
    earned_answers,
    gemini_bad_key,
    stored_request,
    transient_answers,
)
from vcr_kit._core.httplib import sdk_library
from vcr_kit._core.schema import problems
from vcr_kit._core.storable import answer_refusal, status_refusal, stream_refusal
from vcr_kit._engine.http_codec import store_response

pytestmark = pytest.mark.inprocess

http = sdk_library()  # httpx2, or httpx under anthropic 0.x
UNEARNED = {401, 402, 403, 408, 409, 429}
NEVER = "such an answer is never stored (delete it and record again)"
MIDDLE = ["ping", "content_block_start", "content_block_delta", "content_block_stop"]

events_before_stop = st.lists(
    st.tuples(st.sampled_from(MIDDLE), st.dictionaries(st.text(max_size=3), st.integers())),
    max_size=8,
).map(lambda middle: [("message_start", {"type": "message_start"}), *middle])


def whole(middle: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [*middle, ("message_delta", {}), ("message_stop", {"type": "message_stop"})]


class StatusTest(unittest.TestCase):
    @given(st.integers(100, 599))
    def test_a_status_is_refused_exactly_when_it_is_about_the_key_account_or_moment(
        self, status: int
    ) -> None:
        refused = status_refusal(status)
        self.assertEqual(refused is not None, status in UNEARNED or status >= 500)
        if refused is not None:
            self.assertTrue(refused.startswith(f"a {status} ("), refused)
            self.assertTrue(refused.endswith(", not on the request"), refused)


class StreamTest(unittest.TestCase):
    @given(events_before_stop)
    def test_a_stream_that_reached_message_stop_is_kept(self, middle: Any) -> None:
        self.assertIsNone(stream_refusal(whole(middle)))

    @given(events_before_stop, st.data())
    def test_any_stream_cut_short_is_refused(self, middle: Any, data: Any) -> None:
        events = whole(middle)
        kept = data.draw(st.integers(0, len(events) - 1))
        self.assertEqual(
            stream_refusal(events[:kept]),
            f"the stream ended {f'after {kept} events' if kept else 'with no event'}, "
            "before its final event (message_stop)",
        )

    @given(events_before_stop, st.data())
    def test_an_event_cut_in_the_middle_is_refused_by_its_number(
        self, middle: Any, data: Any
    ) -> None:
        events = whole(middle)
        cut = data.draw(st.integers(0, len(events) - 1))
        events[cut] = (events[cut][0], None)
        self.assertEqual(
            stream_refusal(events), f"the stream was cut mid-event (event {cut + 1} is not JSON)"
        )

    def test_an_error_event_ends_a_stream_and_its_type_decides(self) -> None:
        start = ("message_start", {})
        for error_type, kept in (
            ("invalid_request_error", True),
            ("not_found_error", True),
            ("request_too_large", True),
            ("overloaded_error", False),
            ("rate_limit_error", False),
            ("api_error", False),
            ("authentication_error", False),
            ("billing_error", False),
            ("permission_error", False),
            ("timeout_error", False),
            ("brand_new_error", False),
        ):
            with self.subTest(error_type=error_type):
                error = ("error", {"type": "error", "error": {"type": error_type}})
                self.assertEqual(stream_refusal([start, error]) is None, kept)


stored_forms = st.fixed_dictionaries(
    {
        "status": st.sampled_from([200, 201, 204, 400, 401, 403, 404, 409, 413, 429, 500, 529]),
        "headers": st.sampled_from(
            [
                {"content-type": "application/json"},
                {"content-type": "text/html; charset=utf-8"},
                {"content-type": "text/plain"},
                {},
            ]
        ),
    }
).flatmap(
    lambda head: st.one_of(
        st.just({**head, "body": {"type": "error", "error": {"type": "x", "message": "m"}}}),
        st.just({**head, "body": {"id": "msg_1", "type": "message"}}),
        st.just({**head, "text": '{"id": "msg_1", "ty'}),
        st.just({**head, "text": "Not Found"}),
    )
)


class AgreementTest(unittest.TestCase):
    @given(stored_forms)
    def test_check_reports_never_stored_exactly_when_the_recorder_refuses(
        self, response: dict[str, Any]
    ) -> None:
        doc = {
            "vcr_kit_format": 1,
            "kind": "http",
            "request": {"method": "POST", "path": "/v1/messages", "body": {}},
            "response": response,
            "usage": [],
        }
        found = problems(doc, "post-v1-messages-0123456789ab.json")
        refusal = answer_refusal(response, doc["request"])  # the recorder asks with its request
        never = [line for line in found if line.endswith(NEVER)]
        if refusal is None:
            self.assertEqual(never, [])
        else:
            self.assertEqual(never, [f"{refusal.field}: {refusal.reason}; {NEVER}"])

    def test_the_codec_refuses_an_error_without_the_apis_error_object(self) -> None:
        request = http.Request("POST", "https://api.anthropic.com/v1/messages")
        page = http.Response(
            404, headers={"content-type": "text/plain"}, content=b"Not Found", request=request
        )
        self.assertIsNone(store_response(page, seed="x.json"))
        self.assertEqual(
            answer_refusal({"status": 404, "headers": {}, "text": "Not Found"}),
            ("response.body", "a 404 without the API's error object"),
        )
        error = {"type": "error", "error": {"type": "not_found_error", "message": "no"}}
        api = http.Response(404, json=error, request=request)
        stored = store_response(api, seed="x.json")
        self.assertIsNotNone(stored)
        self.assertEqual(stored["body"], error)  # type: ignore[index]


class ProviderTest(unittest.TestCase):
    """The same decision over every provider, asked with the provider in the request
    (as the recorder, ``check`` and drift ask): each provider's transient statuses in
    its own error shape, Gemini's bad key (a 400), its cut streams, HTML, JSON cut
    short and bodies not of the endpoint's documented shape are refused; the answers
    its requests earned (plain, streamed, their own errors) are kept."""

    @settings(max_examples=examples(15), deadline=None)
    @given(st.data())
    def test_an_answer_no_request_earned_is_refused_at_every_provider(self, data: Any) -> None:
        # Every endpoint x every class in each example: no class of one provider is left
        # to chance (a sampled one met a broken rule once in a hundred examples).
        for endpoint, how in UNEARNED_CASES:
            _, response = data.draw(transient_answers(endpoint, how), label=f"{endpoint} {how}")
            self.assert_refused(endpoint, how, response)

    def test_gemini_refuses_a_bad_key_in_its_400(self) -> None:
        self.assert_refused(ENDPOINTS[7], "bad key", gemini_bad_key())

    def assert_refused(self, endpoint: Any, how: str, response: dict[str, Any]) -> None:
        refusal = answer_refusal(response, stored_request(endpoint))
        self.assertIsNotNone(refusal, (endpoint.provider, endpoint.name, how, response))
        assert refusal is not None
        status = response["status"]
        if how == "status":
            self.assertEqual(refusal.field, "response.status")
            self.assertTrue(refusal.reason.startswith(f"a {status} ("), refusal)
        elif how == "bad key":
            reason = response["body"]["error"]["details"][0]["reason"]
            self.assertEqual(refusal.field, "response.status")
            self.assertTrue(refusal.reason.startswith(f"a 400 {reason} depends on "), refusal)
        elif how == "html":
            self.assertEqual(refusal.field, "response.headers.content-type")
        elif how in ("cut stream", "stream error"):
            self.assertEqual(refusal.field, "response.events")
        elif how == "shape":
            self.assertIn(refusal.field, ("response.body", "response.body.type"), refusal)
        # Nothing in the file would replay: check reports it too (the same decision).
        doc = {"vcr_kit_format": 1, "kind": "http", "request": stored_request(endpoint),
               "response": response, "usage": []}  # fmt: skip
        self.assertIn(f"{refusal.field}: {refusal.reason}; {NEVER}", problems(doc, "x.json"))

    @settings(max_examples=examples(10), deadline=None)
    @given(st.data())
    def test_an_answer_the_request_earned_is_kept_at_every_provider(self, data: Any) -> None:
        for endpoint in ENDPOINTS:
            response = data.draw(earned_answers(endpoint), label=str(endpoint))
            request = stored_request(endpoint)
            self.assertIsNone(answer_refusal(response, request), (endpoint.name, response))
            doc = {"vcr_kit_format": 1, "kind": "http", "request": request,
                   "response": response, "usage": []}  # fmt: skip
            self.assertEqual([p for p in problems(doc, "x.json") if p.endswith(NEVER)], [])

    def test_the_provider_decides_not_the_path(self) -> None:
        """An OpenAI stream without ``[DONE]`` is cut; the same events asked as an
        Anthropic request are judged by Anthropic's rule (``message_stop``)."""
        chunk = {"data": {"object": "chat.completion.chunk", "choices": []}}
        cut = {"status": 200, "headers": {"content-type": "text/event-stream"}, "events": [chunk]}
        openai = stored_request(ENDPOINTS[3])
        self.assertEqual(
            answer_refusal(cut, openai),
            ("response.events",
             "the stream ended after 1 events, before its final event (data: [DONE])"),
        )  # fmt: skip
        whole = {**cut, "events": [chunk, {"data_text": "[DONE]"}]}
        self.assertIsNone(answer_refusal(whole, openai))
        self.assertIsNotNone(answer_refusal(whole, {k: v for k, v in openai.items()
                                                    if k != "provider"}))  # fmt: skip
        gemini = stored_request(ENDPOINTS[8])
        self.assertEqual(
            answer_refusal({**cut, "events": [{"data": {"candidates": [{"index": 0}]}}]}, gemini),
            ("response.events",
             "the stream ended after 1 events, before a chunk gave its finishReason"),
        )  # fmt: skip
        self.assertEqual(
            answer_refusal(gemini_bad_key(), stored_request(ENDPOINTS[7])),
            ("response.status",
             "a 400 API_KEY_INVALID depends on the key, not on the request"),
        )  # fmt: skip


if __name__ == "__main__":
    unittest.main()
