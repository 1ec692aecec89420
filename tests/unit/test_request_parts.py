"""A request's parse for its key: floats told apart from the rest, with one decoder.

The key's canonical JSON takes a fast path that may spell a small float otherwise than
the standard library (``1e-05``); it is taken only when the parse says the body holds
no float. The parse uses one decoder for every request, so whether a float was seen
must be found again for each request and each thread.
"""

from __future__ import annotations

import json
import threading
import unittest
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vcr_kit._core.http_request import request_parts, undehydrated_key
from vcr_kit._core.httplib import sdk_library

http: Any = sdk_library()

bodies = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


def request(body: Any) -> Any:
    return http.Request(
        "POST", "https://api.anthropic.com/v1/messages", content=json.dumps(body).encode()
    )


def standard_bytes(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


class RequestPartsTest(unittest.TestCase):
    def test_a_small_float_is_keyed_as_the_standard_library_spells_it(self) -> None:
        parts = request_parts(request({"model": "claude-opus-4-7", "temperature": 0.00001}))
        self.assertTrue(parts.floats)
        self.assertIn(b'"temperature":1e-05', undehydrated_key(parts)[1])

    def test_a_body_after_one_with_a_float_is_known_to_hold_none(self) -> None:
        self.assertTrue(request_parts(request({"temperature": 0.5})).floats)
        self.assertFalse(request_parts(request({"max_tokens": 5})).floats)

    def test_a_float_seen_in_another_thread_is_not_this_ones(self) -> None:
        started, parsed = threading.Event(), threading.Event()
        seen: list[bool] = []

        def other() -> None:
            started.wait()
            seen.append(request_parts(request({"temperature": 0.5})).floats)
            parsed.set()

        thread = threading.Thread(target=other)
        thread.start()
        started.set()
        parsed.wait()
        thread.join()
        self.assertEqual(seen, [True])
        self.assertFalse(request_parts(request({"max_tokens": 5})).floats)

    @settings(max_examples=200, deadline=None)
    @given(bodies)
    def test_the_key_bytes_are_the_standard_librarys(self, body: Any) -> None:
        parts = request_parts(request(body))
        self.assertEqual(undehydrated_key(parts)[1], standard_bytes(parts.stored))


if __name__ == "__main__":
    unittest.main()
