"""Every provider's ids, as properties (issue 31, points 1 and 5): the stand-ins a
fixture stores for OpenAI's and Gemini's live ids (``_core.ids.stabilizer`` with the
provider's ``IdVocabulary``), and the ids a caller is given for them.

- the same live answer twice, whatever its live ids, ``created`` and fingerprints, is
  stored as the same bytes: a re-record that changed nothing changes no byte;
- the volatile fields are stored fixed; no live id survives in the file;
- a tool call's id (``call_``) is a stable stand-in, served as stored;
- the other ids (``chatcmpl-``, ``resp_``, Responses' items, Gemini's ``responseId``)
  are given afresh, and a later request that quotes one (``previous_response_id``,
  ``tool_call_id``) is keyed by the stored stand-in (``quoted_tokens``), while
  recording and in replay, and goes out as the live id while recording;
- Anthropic's answers are stored as before providers came (pinned bytes).
"""

from __future__ import annotations

import json
import random
import re
import unittest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.examples import examples
from tests.support.helpers.provider_answers import ENDPOINTS, Endpoint, good_answers
from vcr_kit._core import ids as _ids
from vcr_kit._core.id_vocabulary import IdVocabulary
from vcr_kit._core.providers import PROVIDERS

pytestmark = pytest.mark.inprocess

OTHERS = [e for e in ENDPOINTS if e.provider != "anthropic"]
STAND_IN = re.compile(r"vcr[0-9a-f]{21}")
#: The live ids' letters (as the APIs make them) and lengths the stabilizer takes for ids.
LIVE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
cases = st.sampled_from(OTHERS).flatmap(
    lambda e: st.tuples(st.just(e), good_answers(e), st.integers(0, 2**32))
)


def seed_of(endpoint: Endpoint) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", f"{endpoint.method}-{endpoint.path}".lower()).strip("-")
    return f"{endpoint.provider}-{slug}-0123456789ab.json"


def vocabulary_of(endpoint: Endpoint) -> IdVocabulary:
    return PROVIDERS[endpoint.provider].ids


def _id_pattern(vocabulary: IdVocabulary) -> re.Pattern[str]:
    """The live ids with a prefix (none for Gemini: then a pattern that matches nothing)."""
    prefixes = sorted((*vocabulary.tool_prefixes, *vocabulary.other_prefixes), key=len)[::-1]
    if not prefixes:
        return re.compile(r"(?!)()")
    return re.compile(rf"({'|'.join(map(re.escape, prefixes))})[A-Za-z0-9_-]{{12,}}")


def live_ids(answer: Any, vocabulary: IdVocabulary) -> set[str]:
    """Every live id ``answer`` holds: by its prefix, or by its field (``responseId``)."""
    pattern, fields = _id_pattern(vocabulary), dict(vocabulary.id_fields)
    found: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and (key in fields or pattern.fullmatch(value)):
            found.add(value)

    walk(answer)
    return found


def relive(answer: Any, vocabulary: IdVocabulary, rng: random.Random) -> Any:
    """``answer`` as the API could give it again: each live id renamed (one id, one new
    name), each volatile field another value."""
    names: dict[str, str] = {}
    ids = live_ids(answer, vocabulary)
    pattern = _id_pattern(vocabulary)
    fixed = dict(vocabulary.fixed_fields)

    def renamed(value: str) -> str:
        if value not in names:
            found = pattern.fullmatch(value)
            prefix = found.group(1) if found else ""
            names[value] = prefix + "".join(rng.choice(LIVE) for _ in range(24))
        return names[value]

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if key in fixed and type(value) is type(fixed[key]):
            return rng.randrange(1 << 31) if isinstance(value, int) else f"fp_{rng.random()}"
        if isinstance(value, str) and value in ids:
            return renamed(value)
        return value

    return walk(answer)


def stored_text(endpoint: Endpoint, answer: Any) -> tuple[str, dict[str, str]]:
    walk, stored_to_live = _ids.stabilizer(seed_of(endpoint), vocabulary=vocabulary_of(endpoint))
    return json.dumps(walk(answer), sort_keys=True), stored_to_live


def pairs(stored: Any, given: Any) -> list[tuple[str, str]]:
    """(stored, given) of each string that differs between two answers of one shape."""
    if isinstance(stored, dict):
        return [p for k in stored for p in pairs(stored[k], given[k])]
    if isinstance(stored, list):
        return [p for s, g in zip(stored, given, strict=True) for p in pairs(s, g)]
    return [(stored, given)] if isinstance(stored, str) and stored != given else []


def stand_ins(text: str, vocabulary: IdVocabulary) -> list[str]:
    prefixes = (*vocabulary.tool_prefixes, *vocabulary.other_prefixes,
                *(prefix for _, prefix in vocabulary.id_fields))  # fmt: skip
    alternatives = "|".join(map(re.escape, prefixes))
    return re.findall(rf'"((?:{alternatives})vcr[0-9a-f]{{21}})"', text)


class StoredIdsTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    @settings(max_examples=examples(150), deadline=None)
    @given(cases)
    def test_the_same_answer_is_stored_the_same_whatever_its_live_ids(self, case: Any) -> None:
        endpoint, answer, salt = case
        vocabulary = vocabulary_of(endpoint)
        again = relive(answer, vocabulary, random.Random(salt))
        _ids.forget()
        first, to_live = stored_text(endpoint, answer)
        _ids.forget()  # another run: nothing remembered
        second, _ = stored_text(endpoint, again)
        self.assertEqual(first, second)
        # No live id survives, and each stand-in stands for one of them.
        live = live_ids(answer, vocabulary)
        for value in live:
            self.assertNotIn(json.dumps(value), first)
        self.assertEqual(set(to_live.values()), live)
        self.assertEqual(set(to_live), set(stand_ins(first, vocabulary)))
        # The volatile fields are fixed.
        fixed = dict(vocabulary.fixed_fields)
        for key, value in re.findall(r'"(\w+)": ("[^"]*"|\d+)', first):
            if key in fixed:
                self.assertEqual(json.loads(value), fixed[key], key)
        # Tool ids are their prefix, "vcr" and 21 hex digits, one per live tool id.
        tools = [s for s in to_live if s.startswith(vocabulary.tool_prefixes or ("\0",))]
        self.assertEqual(len(tools), len({to_live[s] for s in tools}))


class GivenIdsTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    def assert_quoted_back(self, stored: str, given: str, tool: bool) -> None:
        """A later request quoting ``given`` is keyed by ``stored``."""
        field = "tool_call_id" if tool else "previous_response_id"
        self.assertEqual(
            _ids.quoted_tokens(json.dumps({field: given, "input": "next"})),
            json.dumps({field: stored, "input": "next"}),
        )

    @settings(max_examples=examples(150), deadline=None)
    @given(cases)
    def test_a_quoted_id_keys_as_its_stand_in_recording_and_replaying(self, case: Any) -> None:
        endpoint, answer, _ = case
        vocabulary = vocabulary_of(endpoint)
        stem = seed_of(endpoint).removesuffix(".json")
        text, to_live = stored_text(endpoint, answer)
        # Recording: the caller gets ids, quotes them, and they go out as the live ones.
        recorded = pairs(json.loads(text), json.loads(_ids.give_ids_text(text, stem, to_live)))
        for stored, handed in recorded:
            tool = stored.startswith(vocabulary.tool_prefixes or ("\0",))
            self.assertIn(stored, to_live)
            self.assertNotIn("vcr", to_live[stored])
            self.assertTrue(handed.startswith(stored[: stored.index("vcr")]), (stored, handed))
            self.assertFalse(tool, "a tool id is given as stored")
            self.assertEqual(_ids.live_ids_in(json.dumps(handed)), json.dumps(to_live[stored]))
            self.assert_quoted_back(stored, handed, tool)
        for stored in to_live:
            if stored.startswith(vocabulary.tool_prefixes or ("\0",)):
                self.assert_quoted_back(stored, stored, True)  # its own token
                self.assertEqual(_ids.live_ids_in(json.dumps(stored)), json.dumps(to_live[stored]))
        # Replay, in another process: fresh ids, keyed as the same stand-ins.
        _ids.forget()
        replayed = pairs(json.loads(text), json.loads(_ids.give_ids_text(text, stem)))
        self.assertEqual([s for s, _ in replayed], [s for s, _ in recorded])
        for (stored, handed), (_, before) in zip(replayed, recorded, strict=True):
            self.assertNotEqual(handed, before)  # afresh: unique like uuid4
            self.assertIn("vcr_", handed)
            self.assert_quoted_back(stored, handed, False)
            self.assertEqual(_ids.live_ids_in(json.dumps(handed)), json.dumps(handed))  # no live id


#: Anthropic answers and the bytes the stabilizer stored for them before providers came
#: (``vcr_kit/_core/ids.py`` at the commit before them): providers change none.
ANTHROPIC_SEED = "post-v1-messages-0123456789ab.json"
ANTHROPIC_ANSWERS: list[Any] = [
    {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": [
            {
                "type": "text",
                "text": "call_abc123def456ghi789 and resp_68af0c2b1e8c8190a1b2c3d4 stay text",
            },
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "lookup",
                "input": {
                    "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
                    "call": "call_Qm3nZ8xY2wL5vT9rK1pD7sF4",
                },
            },
        ],
        "created": 1733000000,
        "system_fingerprint": "fp_44709d6fcb",
        "responseId": "abcDEF123ghiJKL456mno",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 12, "output_tokens": 30},
    },
    {
        "id": "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message_batch",
        "processing_status": "ended",
        "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF/results",
        "created_at": "2026-11-30T00:00:00Z",
    },
    [
        {
            "type": "message_start",
            "message": {"id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "content": []},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
                "name": "web_search",
                "input": {},
            },
        },
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
                "content": [],
            },
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {
                "type": "text_delta",
                "text": "fc_68af0c2b1e8c8190a1b2c3d4e5f6 file_011CNha8iCJcU1wXNR6q4V8w",
            },
        },
    ],
]
ANTHROPIC_PINNED: list[Any] = [
    {
        "id": "msg_vcr_0",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": [
            {
                "type": "text",
                "text": "call_abc123def456ghi789 and resp_68af0c2b1e8c8190a1b2c3d4 stay text",
            },
            {
                "type": "tool_use",
                "id": "toolu_vcr5ba13a854f2589d302358",
                "name": "lookup",
                "input": {
                    "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
                    "call": "call_Qm3nZ8xY2wL5vT9rK1pD7sF4",
                },
            },
        ],
        "created": 1733000000,
        "system_fingerprint": "fp_44709d6fcb",
        "responseId": "abcDEF123ghiJKL456mno",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 12, "output_tokens": 30},
    },
    {
        "id": "msgbatch_vcr38d6291a1ea8bec1d2837",
        "type": "message_batch",
        "processing_status": "ended",
        "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_vcr38d6291a1ea8bec1d2837/results",
        "created_at": "2026-11-30T00:00:00Z",
    },
    [
        {"type": "message_start", "message": {"id": "msg_vcr_0", "type": "message", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "srvtoolu_vcr5ba13a854f2589d302358",
                "name": "web_search",
                "input": {},
            },
        },
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_vcr5ba13a854f2589d302358",
                "content": [],
            },
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {
                "type": "text_delta",
                "text": "fc_68af0c2b1e8c8190a1b2c3d4e5f6 file_011CNha8iCJcU1wXNR6q4V8w",
            },
        },
    ],
]


class AnthropicUnchangedTest(unittest.TestCase):
    def setUp(self) -> None:
        _ids.forget()
        self.addCleanup(_ids.forget)

    def test_anthropic_answers_are_stored_as_before(self) -> None:
        for answer, pinned in zip(ANTHROPIC_ANSWERS, ANTHROPIC_PINNED, strict=True):
            with self.subTest(answer=json.dumps(answer)[:60]):
                _ids.forget()
                walk, _ = _ids.stabilizer(ANTHROPIC_SEED)
                stored = walk(answer)
                self.assertEqual(stored, pinned)
                self.assertEqual(json.dumps(stored), json.dumps(pinned))


if __name__ == "__main__":
    unittest.main()
