"""Gemini's facts as pure functions: which answers are storable, their usage, where a
key hides in a URL. The integration tests (``tests/integration/test_provider_gemini.py``)
drive the same rules through google-genai; these pin the edges no SDK call reaches."""

from __future__ import annotations

import unittest
from typing import Any

import pytest

from vcr_kit._core.credentials import (
    REPLAY_API_KEY,
    has_real_key,
    query_credentials,
    uses_stand_in_key,
)
from vcr_kit._core.providers.gemini import PROVIDER as GEMINI
from vcr_kit._core.schema import FORMAT_KEY, FORMAT_VERSION, problems, stored_name

pytestmark = [pytest.mark.inprocess, pytest.mark.providers]

STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
USAGE = {"promptTokenCount": 120, "candidatesTokenCount": 7, "cachedContentTokenCount": 100}


def chunk(
    text: str, finish: str | None = None, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"parts": [{"text": text}], "role": "model"},
        "index": 0,
    }
    if finish:
        candidate["finishReason"] = finish
    found: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}
    if usage:
        found["usageMetadata"] = usage
    return found


def array_answer(*chunks: dict[str, Any]) -> dict[str, Any]:
    return {"status": 200, "body": list(chunks), "headers": {"content-type": "application/json"}}


class ArrayStreamTest(unittest.TestCase):
    """``streamGenerateContent`` without ``alt=sse``: the chunks as one JSON array."""

    def test_whole_only_with_a_finish_reason(self) -> None:
        whole = array_answer(chunk("Hel"), chunk("lo", "STOP", USAGE))
        cut = array_answer(chunk("Hel"), chunk("lo"))

        self.assertIsNone(GEMINI.shape_refusal("POST", STREAM, whole))
        self.assertEqual(
            GEMINI.shape_refusal("POST", STREAM, cut),
            (
                "response.body",
                "a 200 that is not a generated content: "
                "its 2 chunks end before one gave its finishReason",
            ),
        )
        self.assertEqual(
            GEMINI.shape_refusal("POST", STREAM, array_answer(chunk("a"), {"oops": 1})),
            (
                "response.body",
                "a 200 that is not a generated content: "
                'its item 1: it has neither "candidates" nor "promptFeedback"',
            ),
        )

    def test_usage_is_the_last_chunks(self) -> None:
        (entry,) = GEMINI.usage(array_answer(chunk("Hel"), chunk("lo", "STOP", USAGE)))

        self.assertEqual(
            entry,
            {
                "provider": "gemini",
                "model": "gemini-2.5-flash",
                "usage": {"input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 100},
            },
        )

    def test_a_fixture_holding_one_replays_and_an_sse_request_needs_events(self) -> None:
        request = {"method": "POST", "path": STREAM, "body": {}, "provider": "gemini"}
        doc = {
            FORMAT_KEY: FORMAT_VERSION,
            "kind": "http",
            "request": request,
            "response": array_answer(chunk("Hi", "STOP", USAGE)),
            "usage": GEMINI.usage(array_answer(chunk("Hi", "STOP", USAGE))),
        }
        name = stored_name(doc, "gemini-post-v1beta-models-x-0123456789ab.json")
        assert name is not None

        self.assertEqual(problems(doc, name), [])
        with_sse = {**doc, "request": {**request, "query": [["alt", "sse"]]}}
        self.assertIn(
            "response.events: missing: the request asked for a stream", problems(with_sse, name)
        )


class KeyInTheQueryTest(unittest.TestCase):
    def test_a_query_key_is_a_credential(self) -> None:
        found = query_credentials("alt=sse&key=AIzaSyQueryKey", GEMINI.credential_query)

        self.assertEqual(found, [("the key= query parameter", "AIzaSyQueryKey")])
        self.assertTrue(has_real_key({}, found))
        self.assertFalse(uses_stand_in_key({}, found))
        self.assertEqual(query_credentials("alt=sse", GEMINI.credential_query), [])
        self.assertEqual(query_credentials("key=AIzaSyQueryKey", ()), [])

    def test_the_stand_in_in_the_query_never_records(self) -> None:
        found = query_credentials(f"key={REPLAY_API_KEY}", GEMINI.credential_query)

        self.assertTrue(uses_stand_in_key({}, found))
        self.assertFalse(has_real_key({}, found))


class KeyErrorsTest(unittest.TestCase):
    def test_a_400_about_the_key_is_unearned_a_400_about_the_request_is_not(self) -> None:
        bad_key = {
            "error": {
                "code": 400,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                    }
                ],
            }
        }
        bad_request = {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}

        self.assertEqual(
            GEMINI.error_refusal(400, bad_key),
            "a 400 API_KEY_INVALID depends on the key, not on the request",
        )
        self.assertIsNone(GEMINI.error_refusal(400, bad_request))
