"""A fixture's stored request names its file, for any request (issue 15, part 2), and the
nesting bound answers for any depth."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.env import vcr_environ
from tests.support.helpers.examples import examples
from vcr_kit._core.schema import misnamed, nested_deeper_than, stored_name

pytestmark = pytest.mark.inprocess

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
#: Text the dehydrate rules rewrite, among any other.
texts = st.one_of(
    st.text(),
    st.sampled_from(
        [
            "/home/someone/project/file.py",
            'num_files="3"',
            'duration_ms="12"',
            "0b7f9d3e-1c2a-4e5f-8a9b-0c1d2e3f4a5b",
            "2025-01-01T10:00:00Z",
        ]
    ),
)
conversations = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": texts}),
    min_size=1,
    max_size=30,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


class StoredNameTest(unittest.TestCase):
    def recorded(self, make: Any, answer: Any = None) -> tuple[Path, dict[str, Any]]:
        played = {"ok": True} if answer is None else answer
        with vcr_environ(VCR_REPORT="0"), tempfile.TemporaryDirectory() as folder:
            with make(folder) as c:
                c.play(lambda: played)
                path = c.path
            return path, json.loads(path.read_text(encoding="utf-8"))

    @settings(
        max_examples=examples(60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(json_values)
    def test_a_generic_fixture_names_its_file(self, question: Any) -> None:
        path, doc = self.recorded(
            lambda folder: vcr_kit.fixture(question, "answer", mode="record", fixtures_dir=folder)
        )
        self.assertEqual(stored_name(doc, path.name), path.name)
        self.assertIsNone(misnamed(doc, path.name))
        self.assertIsNotNone(misnamed(doc, "answer-000000000000.json"))

    @settings(
        max_examples=examples(60),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(conversations, st.sampled_from(["cassette", "token_count"]))
    def test_a_conversation_fixture_names_its_file(
        self, messages: list[dict[str, str]], how: str
    ) -> None:
        make = {"cassette": vcr_kit.cassette, "token_count": vcr_kit.token_count_cassette}[how]
        answer = 42 if how == "token_count" else None  # a token count is a number
        path, doc = self.recorded(
            lambda folder: make(messages, mode="record", fixtures_dir=folder), answer
        )
        self.assertEqual(stored_name(doc, path.name), path.name)

    @given(json_values, st.integers(0, 6))
    def test_the_depth_bound_agrees_with_the_depth(self, value: Any, limit: int) -> None:
        self.assertEqual(nested_deeper_than(value, limit), depth(value) > limit)

    def test_the_depth_bound_answers_for_any_depth(self) -> None:
        value: Any = []
        for _ in range(100_000):  # far deeper than any recursion could walk
            value = [value]
        self.assertTrue(nested_deeper_than(value))
        self.assertFalse(nested_deeper_than([[{"a": [1]}]]))


if __name__ == "__main__":
    unittest.main()
