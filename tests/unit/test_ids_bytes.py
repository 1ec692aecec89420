"""``give_ids_bytes`` is ``give_ids_text`` then ``encode``, written piece by piece.

Fresh ids are random, so two runs are compared with each given id replaced by the
order in which it first appears: the same ids at the same places, the same bytes
around them. Each run starts from a clean slate (``forget``), as a fresh process would.
"""

from __future__ import annotations

import re
import unittest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from vcr_kit._core import ids as _ids

pytestmark = pytest.mark.inprocess

STEM = "post-v1-messages-abc"
STORED = [
    '"msg_vcr_1"',
    '"msg_vcr_22"',
    '"toolu_vcr' + "a" * 21 + '"',
    '"file_vcr' + "0123456789abcdef01234" + '"',
    '"msgbatch_vcr' + "f" * 21 + '"',
]
pieces = st.one_of(
    st.text(max_size=10),
    st.sampled_from([*STORED, '"', "_vcr", "é", "\u2028", '\\"msg_vcr_1\\"', "msg_vcr_1"]),
)
texts = st.lists(pieces, max_size=16).map("".join)
_GIVEN = re.compile(r"(?:msg|toolu|file|msgbatch)_vcr_[0-9a-f]{24}")


def by_first_appearance(data: bytes) -> str:
    order: dict[str, str] = {}
    return _GIVEN.sub(
        lambda m: order.setdefault(m.group(0), f"<id {len(order)}>"), data.decode("utf-8")
    )


class GiveIdsBytesTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    def both(self, text: str, live: dict[str, str] | None = None) -> tuple[bytes, bytes]:
        _ids.forget()
        as_text = _ids.give_ids_text(text, STEM, live).encode("utf-8")
        _ids.forget()
        as_bytes = _ids.give_ids_bytes(text, STEM, live)
        return as_text, as_bytes

    @settings(max_examples=examples(300), deadline=None)
    @given(texts, st.booleans(), st.booleans())
    def test_the_same_ids_at_the_same_places(self, text: str, recorded: bool, long: bool) -> None:
        live = {"toolu_vcr" + "a" * 21: "toolu_01live"} if recorded else None
        if long:  # past what is substituted at once: written piece by piece
            text = " " * (1 << 16) + text
        as_text, as_bytes = self.both(text, live)
        self.assertEqual(by_first_appearance(as_bytes), by_first_appearance(as_text))

    @settings(max_examples=examples(300), deadline=None)
    @given(texts)
    def test_pieces_cut_once_give_the_same_ids_at_the_same_places(self, text: str) -> None:
        # A prepared fixture keeps its answer cut at the ids (``split_at_ids``); each
        # replay joins the pieces with fresh ids: the same bytes as the one substitution,
        # and the ids given are known the same way (a later request quoting them gets
        # the same key).
        _, as_text = self.both(text)  # the ids the registry now knows
        text_keyed = _ids.quoted_tokens(as_text.decode("utf-8"))
        _ids.forget()
        pieces = _ids.split_at_ids(text)
        as_pieces = _ids.give_ids_pieces(pieces, STEM)
        self.assertEqual(by_first_appearance(as_pieces), by_first_appearance(as_text))
        self.assertEqual(_ids.quoted_tokens(as_pieces.decode("utf-8")), text_keyed)
        again = _ids.give_ids_pieces(pieces, STEM)  # a second replay: other message ids
        if any(stored.startswith("msg_vcr_") for stored in pieces.ids):
            self.assertNotEqual(again, as_pieces)

    def test_gaps_longer_than_one_encoded_piece(self) -> None:
        filler = "x" * ((1 << 20) - 3)  # each gap is encoded in two pieces
        text = '{"a": "' + filler + '", "id": "msg_vcr_1", "b": "é' + filler + '"}'
        as_text, as_bytes = self.both(text)
        self.assertEqual(len(as_bytes), len(as_text))
        self.assertEqual(by_first_appearance(as_bytes), by_first_appearance(as_text))
        # The stored id as a whole JSON string: a given id is msg_vcr_ and 24 random hex
        # digits, so it starts with "msg_vcr_1" one time in sixteen.
        self.assertNotIn(b'"msg_vcr_1"', as_bytes)
        self.assertRegex(as_bytes.decode(), r'"id": "msg_vcr_[0-9a-f]{24}"')

    def test_a_text_with_no_stored_id_is_only_encoded(self) -> None:
        self.assertEqual(_ids.give_ids_bytes('{"a": "é"}', STEM), '{"a": "é"}'.encode())


if __name__ == "__main__":
    unittest.main()
