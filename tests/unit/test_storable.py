"""``_core.storable``: the one decision of what is never stored, and its agreement with
the fixture kinds (what the recorder refuses to write is what ``check`` and replay
refuse to serve, and nothing else)."""

from __future__ import annotations

import unittest
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


if __name__ == "__main__":
    unittest.main()
