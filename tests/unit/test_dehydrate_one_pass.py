"""The one literal set of the dehydrate gate says exactly what one search per rule said.

``fewest_literals`` drops the literals that another one implies; the gate (per string
and over a request's JSON text) searches for those only. Checked against the per-rule
scan it replaced, on random texts built from every rule literal, parts of them and
noise, and against each rule applied in turn with no gate at all.
"""

from __future__ import annotations

import json
import tempfile
import unittest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import patch_env
from tests.support.helpers.examples import examples
from vcr_kit.dehydrate import (
    DEFAULT_RULES,
    PathRule,
    Rule,
    WholeStringRule,
    dehydrate,
    dehydrate_json,
    fewest_literals,
    json_text_may_change,
)

pytestmark = pytest.mark.inprocess

POSIX = {"cwd": "/home/dev/proj", "config_home": "/home/dev/.claude"}
#: Every path rule's path in these tests (home and temp folder as on a Linux machine).
PATHS = {
    "cwd": "/home/dev/proj",
    "config_home": "/home/dev/.claude",
    "cwd_slug": "-home-dev-proj",
    "home": "/home/dev",
    "temp_dir": "/tmp",
}
#: Each rule's own literal, as the old gate searched for it (a POSIX path has one spelling).
EVERY_LITERAL = [
    rule.marker
    if isinstance(rule, WholeStringRule)
    else rule.trigger
    if isinstance(rule, Rule)
    else rule.path(PATHS)
    for rule in DEFAULT_RULES
]
#: Literals cut short too: a text holding half of one must not pass for holding it.
PIECES = sorted(
    {
        *EVERY_LITERAL,
        *(lit[: len(lit) // 2] for lit in EVERY_LITERAL),
        *(lit[1:] for lit in EVERY_LITERAL),
    }
)
texts = st.lists(
    st.one_of(st.text(max_size=6), st.sampled_from(PIECES), st.sampled_from(["7", "\n", '"'])),
    max_size=12,
).map("".join)
PROPERTY = settings(max_examples=examples(300), deadline=None)


def per_rule_scan(text: str, literals: list[str]) -> bool:
    """The old gate: one search of ``text`` per rule literal."""
    return any(literal in text for literal in literals)


def every_rule_in_turn(text: str, rules: tuple[Any, ...], paths: dict[str, str]) -> str:
    """dehydrate with no gate: each rule applied to the text as the one before left it."""
    for rule in rules:
        text = rule.apply(text, paths)
    return text


class FewestLiteralsTest(unittest.TestCase):
    @PROPERTY
    @given(texts, st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
    def test_the_fewest_literals_are_found_exactly_where_any_literal_is(
        self, text: str, literals: list[str]
    ) -> None:
        self.assertEqual(
            per_rule_scan(text, list(fewest_literals(literals))), per_rule_scan(text, literals)
        )

    def test_shared_and_implied_literals_are_searched_once(self) -> None:
        self.assertEqual(
            fewest_literals(["duration_ms=", "duration_ms", "git", "git", "/a/b/c", "/a/b"]),
            ("duration_ms", "/a/b", "git"),
        )


class OnePassGateTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, HOME="/home/dev", TMPDIR="/tmp")
        tempfile.tempdir = None  # gettempdir() caches its answer: read $TMPDIR again
        self.addCleanup(setattr, tempfile, "tempdir", None)

    @PROPERTY
    @given(texts)
    def test_dehydrate_gives_what_each_rule_in_turn_gives(self, text: str) -> None:
        self.assertEqual(dehydrate(text, **POSIX), every_rule_in_turn(text, DEFAULT_RULES, PATHS))

    @PROPERTY
    @given(texts)
    def test_the_request_gate_says_change_wherever_a_rule_literal_is(self, text: str) -> None:
        document = json.dumps({"messages": [{"role": "user", "content": text}]})
        found = per_rule_scan(document, EVERY_LITERAL)
        if "\\" not in document:  # an escaped character sends every text down the walk
            self.assertEqual(json_text_may_change(document, **POSIX), found)
        if not json_text_may_change(document, **POSIX):
            value = json.loads(document)
            self.assertEqual(dehydrate_json(value, **POSIX), value)

    def test_a_rule_with_no_literal_sends_every_text_through_every_rule(self) -> None:
        rules = (*DEFAULT_RULES, Rule("any_digit", r"\d", "#"))
        self.assertTrue(json_text_may_change('{"a": "plain"}', rules=rules))
        self.assertEqual(dehydrate("a1", rules=rules), "a#")

    def test_path_rules_of_this_call_are_in_the_literal_set(self) -> None:
        rule = PathRule("data", "[DATA]", lambda: "/srv/data")
        self.assertEqual(dehydrate("at /srv/data/x", rules=(rule,)), "at [DATA]/x")
        self.assertFalse(json_text_may_change('{"a": "/srv/other"}', rules=(rule,)))


if __name__ == "__main__":
    unittest.main()
