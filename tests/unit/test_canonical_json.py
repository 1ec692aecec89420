"""The optional orjson path writes exactly the standard library's canonical JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import unittest
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import environ_without_vcr
from tests.support.helpers.examples import examples
from tests.support.helpers.paths import ROOT
from tests.unit.test_fixture_names_committed import HTTP_FIXTURES, rebuilt_request
from vcr_kit._core import canonical_json as _fastjson
from vcr_kit._core import ids as _ids
from vcr_kit._core.http_request import name_and_stored


def stdlib(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)

TRICKY = [
    1e-05,
    9.9e-05,
    1e-07,
    2.5e-08,
    1e-10,
    1e16,
    1e22,
    123.456,
    -0.0,
    5e-324,
    2**64,
    -(2**63) - 1,
    "\ud800",
    "\x00\x1f\x7f\u2028",
    {"\ue000": 1, "\U0001f600": 2, "B": 3, "b": 4},
    {1: "int key"},
    float("nan"),
    float("inf"),
    "a null word",
    "e-mail",
]


@pytest.mark.inprocess
@unittest.skipUnless(_fastjson.available(), "orjson is not installed")
class FastCanonicalTest(unittest.TestCase):
    def check(self, value: Any, finite: bool = False) -> None:
        fast = _fastjson.canonical(value, finite=finite)
        try:
            expected = stdlib(value)
        except (TypeError, ValueError):
            self.assertIsNone(fast)  # the standard library refuses it: so must the fast path
            return
        if fast is not None:
            self.assertEqual(fast, expected)

    def test_tricky_values(self) -> None:
        for value in TRICKY:
            with self.subTest(value=value):
                self.check(value)
                self.check([value, {"k": value}])

    @settings(max_examples=examples(500), deadline=None)
    @given(json_values)
    def test_any_json_value(self, value: Any) -> None:
        self.check(value)

    @settings(max_examples=examples(300), deadline=None)
    @given(json_values)
    def test_finite_values_with_the_null_scan_skipped(self, value: Any) -> None:
        text = json.dumps(value)
        if "NaN" in text or "Infinity" in text:
            return
        self.check(json.loads(text), finite=True)

    def test_the_fast_path_is_taken_for_an_ordinary_request(self) -> None:
        value = {
            "model": "claude-opus-4-7",  # "e-" in text is no number
            "messages": [{"role": "user", "content": "hé, a re-run"}],
            "temperature": 0.5,
        }
        self.assertEqual(_fastjson.canonical(value, finite=True), stdlib(value))

    def test_a_nan_in_a_request_body_still_refuses_the_key(self) -> None:
        from vcr_kit._core.httplib import sdk_library

        request = sdk_library().Request(
            "POST", "https://api.anthropic.com/v1/messages", content=b'{"temperature": NaN}'
        )
        with self.assertRaises(TypeError):
            name_and_stored(request)


@pytest.mark.child
class PurePathTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    def test_committed_fixture_keys_are_the_same_without_orjson(self) -> None:
        for path in HTTP_FIXTURES:
            stored = json.loads(path.read_text(encoding="utf-8"))["request"]
            with mock.patch.object(_fastjson, "_dumps", None):
                pure = name_and_stored(rebuilt_request(stored))
            fast = name_and_stored(rebuilt_request(stored))
            self.assertEqual(pure, fast)
            self.assertEqual(pure[0], path.name)

    def test_committed_fixtures_are_named_by_the_quick_key_too(self) -> None:
        from vcr_kit._core.http_request import quick_name

        if not _fastjson.available():
            self.skipTest("orjson is not in use: there is no quick key")
        for path in HTTP_FIXTURES:
            stored = json.loads(path.read_text(encoding="utf-8"))["request"]
            quick = quick_name(rebuilt_request(stored))
            if stored.get("body") is None:  # nothing to parse: the exact way
                self.assertIsNone(quick)
                continue
            assert quick is not None
            self.assertEqual(quick[0], path.name)

    def test_vcr_pure_json_turns_the_fast_path_off(self) -> None:
        env = environ_without_vcr()
        env["VCR_PURE_JSON"] = "1"
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from vcr_kit._core import canonical_json; print(canonical_json.available())",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        self.assertEqual(done.stdout.strip(), "False", done.stderr)


if __name__ == "__main__":
    unittest.main()
