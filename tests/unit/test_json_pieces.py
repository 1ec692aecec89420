"""``write_json`` writes exactly what ``json.dumps`` writes, piece by piece.

The fixture format is byte for byte what it was: pretty-printed (``indent=2``) for a
fixture, compact for an answer on the wire. Small slice and batch sizes put every
boundary (a string cut in slices, a batch handed over mid-document) into small
examples; the sizes in use are checked too.
"""

from __future__ import annotations

import json
import unittest
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._core import json_pieces
from vcr_kit._core.json_pieces import Unusual, write_json
from vcr_kit._store.files import serialize_document

pytestmark = pytest.mark.inprocess

texts = st.text(
    st.characters(codec="utf-8") | st.sampled_from(['"', "\\", "\n", "\x00", "\u2028", "é"]),
    max_size=40,
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(texts, inner, max_size=5),
    max_leaves=30,
)


def written(value: Any, indent: int | None) -> str:
    out: list[str] = []
    write_json(value, out.append, indent=indent)
    return "".join(out)


def expected(value: Any, indent: int | None) -> str:
    if indent is None:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)


class TestSameTextAsJson(unittest.TestCase):
    @settings(max_examples=examples(300), deadline=None)
    @given(documents, st.sampled_from([None, 2]), st.integers(1, 9), st.integers(1, 9))
    def test_same_text_with_any_slice_and_batch(
        self, value: Any, indent: int | None, slice_size: int, batch: int
    ) -> None:
        with (
            mock.patch.object(json_pieces, "SLICE", slice_size),
            mock.patch.object(json_pieces, "BATCH", batch),
        ):
            self.assertEqual(written(value, indent), expected(value, indent))

    @settings(max_examples=examples(200), deadline=None)
    @given(documents)
    def test_fixture_bytes_as_before(self, value: Any) -> None:
        doc = {"format": 1, "value": value}
        before = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        self.assertEqual(serialize_document(doc), before.encode("utf-8"))

    def test_a_large_string_is_handed_over_in_slices(self) -> None:
        text = 'é"' * json_pieces.SLICE
        out: list[str] = []
        write_json({"text": text}, out.append, indent=2)
        self.assertEqual("".join(out), expected({"text": text}, 2))
        self.assertLessEqual(max(len(piece) for piece in out), 6 * json_pieces.SLICE + 2)
        self.assertGreater(len(out), 2)

    def test_on_string_sees_each_string_that_may_hold_an_id_whole(self) -> None:
        seen: list[str] = []

        def on_string(escaped: str) -> str:
            seen.append(escaped)
            return escaped.upper()

        long = "x" * (json_pieces.SLICE + 5) + "_vcr"
        value = {"msg_vcr_1": ["toolu_vcr1", "plain", long]}
        out: list[str] = []
        write_json(value, out.append, on_string=on_string)
        self.assertEqual(seen, ['"msg_vcr_1"', '"toolu_vcr1"', json.dumps(long)])
        self.assertEqual(
            "".join(out), '{"MSG_VCR_1":["TOOLU_VCR1","plain",' + json.dumps(long).upper() + "]}"
        )


class TestLeftToJson(unittest.TestCase):
    def test_values_json_must_write_are_refused(self) -> None:
        for value in ({1: "a"}, ("a",), float("nan"), [float("inf")], True.__class__, {"a": 1.0j}):
            with self.subTest(value=value), self.assertRaises(Unusual):
                written(value, 2)

    def test_serialize_falls_back_to_json_and_its_errors(self) -> None:
        self.assertEqual(
            serialize_document({"a": ("x", 1), "b": {2: None}}),
            b'{\n  "a": [\n    "x",\n    1\n  ],\n  "b": {\n    "2": null\n  }\n}\n',
        )
        with self.assertRaisesRegex(ValueError, "Out of range float values"):
            serialize_document({"a": float("nan")})
        with self.assertRaisesRegex(UnicodeEncodeError, "position 10: surrogates not allowed"):
            serialize_document({"a": "\ud800"})
        loop: list[Any] = []
        loop.append(loop)
        with self.assertRaisesRegex(ValueError, "Circular reference detected"):
            serialize_document({"a": loop})


if __name__ == "__main__":
    unittest.main()
