"""The secret scan finds what it found when it lowered and translated a whole copy of
the text: the same first hit (kind, offset) for any text, any window size.

The reference below is the scan as it was (a lower-cased copy for the words matched
in any case, a translated copy to find base64 runs); the scan now looks at windows of
the text. Small windows put every boundary into small examples.
"""

from __future__ import annotations

import re
import unittest
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._store import secret_shapes
from vcr_kit._store.secret_shapes import SHAPES, Hit, find_hit

pytestmark = pytest.mark.inprocess

_MASK = bytes(
    ord("a") if c in secret_shapes._BASE64_LETTERS else ord("=") if c == ord("=") else ord(" ")
    for c in range(256)
)
_OLD_RUN = re.compile(rb"a+=*")
_AS_WRITTEN = [tuple(re.compile(p.pattern) for p in shape.patterns) for shape in SHAPES]


def old_runs(data: bytes) -> Iterator[tuple[int, bytes]]:
    mask = data.translate(_MASK)
    position = mask.find(b"a" * 20)
    while position >= 0:
        end = _OLD_RUN.match(mask, position)
        assert end is not None
        run = data[position : end.end()]
        if b"_" not in run or not secret_shapes._ID.fullmatch(run):
            yield position, run
        position = mask.find(b"a" * 20, end.end())


def old_scan(data: bytes, depth: int = 0) -> Hit | None:
    lowered = data.lower()
    for shape, patterns in zip(SHAPES, _AS_WRITTEN, strict=True):
        text = lowered if shape.lowered else data
        for pattern in patterns:
            for match in pattern.finditer(text):
                return Hit(shape.label, match.start())
    if depth >= 2:
        return None
    decoded = [(s, t) for s, run in old_runs(data) for t in secret_shapes._decodings(run)]
    if not decoded or old_scan(b"\n".join(t for _, t in decoded), depth + 1) is None:
        return None
    for start, text in decoded:
        inner = old_scan(text, depth + 1)
        if inner is not None:
            return Hit(inner.what, start, "base64-encoded")
    return None


WORDS = [
    b"Authorization",
    b"AUTHORIZATION",
    b"api-KEY",
    b"Bearer ",
    b"bearer\t",
    b"Basic ",
    b"AccountKey",
    b"SharedAccessKey",
    b"Secret_Access_Key",
    b"secretaccesskey",
    b'": "',
    b":",
    b"=",
    b" ",
    b'\\"',
    b"sk-ant-",
    b"AKIA",
    b"ghp_",
    b"eyJ",
    b".",
    b"ABCDEFGHIJ0123456789",
    b"abcdefghij/+",
    b"toolu_01",
    b"==",
    b"\n",
    b"\xc3\xa9",
    b"c2stYW50LWFwaTAzLUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB",  # base64 of an Anthropic key
]
texts = st.lists(st.sampled_from(WORDS) | st.binary(max_size=6), max_size=30).map(b"".join)


class TestSameFindings(unittest.TestCase):
    @settings(max_examples=examples(500), deadline=None)
    @given(texts, st.integers(1, 40))
    def test_same_first_hit_with_any_window(self, data: bytes, window: int) -> None:
        with mock.patch.object(secret_shapes, "_WINDOW", window):
            self.assertEqual(find_hit(data, []), old_scan(data))

    @settings(max_examples=examples(200), deadline=None)
    @given(texts, st.sampled_from([1, 3, 20, 64, 1 << 20]))
    def test_same_runs_with_any_window(self, data: bytes, window: int) -> None:
        with mock.patch.object(secret_shapes, "_WINDOW", window):
            self.assertEqual(list(secret_shapes._runs(data)), list(old_runs(data)))

    def test_found_across_a_window_boundary(self) -> None:
        token = b"Authorization: Bearer " + b"Ab1" * 10
        for at in range(0, 30):
            data = b"x" * at + token
            with self.subTest(at=at), mock.patch.object(secret_shapes, "_WINDOW", 16):
                hit = find_hit(data, [])
                self.assertEqual(hit, Hit("a credential header", at))


if __name__ == "__main__":
    unittest.main()
