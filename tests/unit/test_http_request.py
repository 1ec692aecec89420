"""A request's parse for its key: floats told apart from the rest, with one decoder.

The key's canonical JSON takes a fast path that may spell a small float otherwise than
the standard library (``1e-05``); it is taken only when the parse says the body holds
no float. The parse uses one decoder for every request, so whether a float was seen
must be found again for each request and each thread.
"""

from __future__ import annotations

import hashlib
import json
import threading
import unittest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._core import canonical_json as fastjson
from vcr_kit._core.canonical_json import holds_huge_float
from vcr_kit._core.fixture_names import canonical_json
from vcr_kit._core.http_request import (
    quick_name,
    quick_parts,
    request_parts,
    undehydrated_bytes,
    undehydrated_name,
)
from vcr_kit._core.httplib import sdk_library

pytestmark = pytest.mark.inprocess

http: Any = sdk_library()

bodies = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


#: A JSON number as any client may spell it: leading minus, many digits, fraction,
#: exponent of either case and sign (huge integers included).
number_literals = st.from_regex(
    r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
)


def request(body: Any) -> Any:
    return raw_request(json.dumps(body).encode())


def raw_request(content: bytes) -> Any:
    return http.Request("POST", "https://api.anthropic.com/v1/messages", content=content)


def standard_bytes(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


class RequestPartsTest(unittest.TestCase):
    def test_a_small_float_is_keyed_as_the_standard_library_spells_it(self) -> None:
        parts = request_parts(request({"model": "claude-opus-4-7", "temperature": 0.00001}))
        self.assertTrue(parts.floats)
        self.assertIn(b'"temperature":1e-05', undehydrated_bytes(parts))

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

    def test_the_beta_header_is_keyed_in_any_case_and_no_other_header_is(self) -> None:
        headers = [
            ("Anthropic-Beta", "files-api-2025-04-14"),
            ("x-anthropic-beta", "no"),
            ("anthropic-betas", "no"),
            ("anthropic-bet4", "no"),
        ]
        keyed = http.Request(
            "POST", "https://api.anthropic.com/v1/messages", content=b"{}", headers=headers
        )
        stored = request_parts(keyed).stored
        self.assertEqual(stored["anthropic-beta"], "files-api-2025-04-14")
        self.assertEqual(set(stored), {"method", "path", "body", "anthropic-beta"})
        self.assertNotIn("anthropic-beta", request_parts(request({})).stored)

    @settings(max_examples=examples(200), deadline=None)
    @given(bodies)
    def test_the_key_bytes_are_the_standard_librarys(self, body: Any) -> None:
        parts = request_parts(request(body))
        self.assertEqual(undehydrated_bytes(parts), standard_bytes(parts.stored))
        digest = hashlib.sha1(standard_bytes(parts.stored)).hexdigest()
        self.assertEqual(undehydrated_name(parts)[1], digest)


@unittest.skipUnless(fastjson.available(), "orjson is not in use: there is no quick key")
class QuickKeyTest(unittest.TestCase):
    """Replay looks a request up by the key of orjson's parse first. A fixture found
    that way is served only when the exact parse would name the same file: this holds
    whenever the fixture's request (bytes equal to the quick key's) holds no float that
    may have been a huge integer (``holds_huge_float``), which replay checks per
    fixture."""

    def assert_served_only_as_the_exact_key_would(self, content: bytes) -> None:
        quick = quick_parts(raw_request(content))
        if quick is None:  # orjson refused it: the exact way runs, as before
            self.assertIsNone(quick_name(raw_request(content)))
            return
        data = quick[1]
        # A fixture these bytes can name: the standard library wrote its request.
        recorded = json.loads(data)
        if canonical_json(recorded) != data or holds_huge_float(recorded):
            return  # no such fixture, or one that replay leaves to the exact way
        exact = request_parts(raw_request(content))
        self.assertEqual(undehydrated_bytes(exact), data)
        self.assertEqual(undehydrated_name(exact), quick_name(raw_request(content)))

    @settings(max_examples=examples(300), deadline=None)
    @given(bodies)
    def test_a_fixture_found_by_the_quick_key_is_the_exact_keys(self, body: Any) -> None:
        self.assert_served_only_as_the_exact_key_would(json.dumps({"x": body}).encode())

    @settings(max_examples=examples(300), deadline=None)
    @given(bodies, st.binary(max_size=4), st.integers(min_value=0))
    def test_any_bytes_are_keyed_as_the_exact_parse_keys_them(
        self, body: Any, inserted: bytes, at: int
    ) -> None:
        # orjson reads the body's bytes (UTF-8 checked by it, not by a decode first):
        # text beyond ASCII as it is, and any bytes at all slipped in somewhere.
        content = json.dumps({"x": body}, ensure_ascii=False).encode("utf-8")
        at %= len(content) + 1
        self.assert_served_only_as_the_exact_key_would(content[:at] + inserted + content[at:])

    @settings(max_examples=examples(500), deadline=None)
    @given(st.lists(number_literals, min_size=1, max_size=4))
    def test_any_spelling_of_a_number_is_keyed_as_the_exact_parse_keys_it(
        self, literals: list[str]
    ) -> None:
        content = ('{"model":"claude-opus-4-7","x":[' + ",".join(literals) + "]}").encode()
        self.assert_served_only_as_the_exact_key_would(content)

    def test_a_plain_request_has_the_exact_key(self) -> None:
        body = {
            "model": "claude-opus-4-7",
            "max_tokens": 64,
            "temperature": 0.7,
            "messages": [{"role": "user", "content": 'Grüße, 世界 \u2028 \\ "'}],
            "metadata": {"user_id": "someone"},
        }
        self.assertEqual(quick_name(request(body)), undehydrated_name(request_parts(request(body))))

    def test_a_huge_integer_is_why_a_fixture_with_a_huge_float_is_left_to_the_exact_way(
        self,
    ) -> None:
        # orjson makes 2**64 + 1 the float 2**64: the quick key of a request holding the
        # integer is the exact key of one that held the float, which is not this request.
        huge = 2**64 + 1
        quick = quick_name(request({"x": huge}))
        assert quick is not None
        self.assertEqual(quick, undehydrated_name(request_parts(request({"x": float(huge)}))))
        self.assertNotEqual(quick, undehydrated_name(request_parts(request({"x": huge}))))
        parsed = quick_parts(request({"x": huge}))
        assert parsed is not None
        self.assertTrue(holds_huge_float(json.loads(parsed[1])))

    def test_what_orjson_refuses_has_no_quick_key(self) -> None:
        for content in (
            b"",
            b"not json",
            b'{"x": NaN}',
            b'"\\ud800"',
            b"\xff",
            b'"\xed\xa0\x80"',
            b'\xef\xbb\xbf{"x": 1}',
        ):
            with self.subTest(content=content):
                self.assertIsNone(quick_name(raw_request(content)))

    def test_huge_floats_are_told_from_the_rest(self) -> None:
        self.assertFalse(holds_huge_float({"a": [0.5, -1e18, 2**70, "1e30"], "b": None}))
        for value in (2.0**63, -(2.0**63), 1e300, [{"a": float("nan")}], float("inf")):
            with self.subTest(value=value):
                self.assertTrue(holds_huge_float({"a": [value]}))


if __name__ == "__main__":
    unittest.main()
