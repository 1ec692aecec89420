"""``vcr_kit._core.fixture_names``: fixture names are content hashes of the dehydrated request.

The expected names are pinned as literals (computed once with hashlib, shown
next to them), so any change of the naming scheme breaks these tests: a change
of scheme orphans every fixture that users have committed.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import unittest
from typing import Any

import pytest
from anthropic.types import Message, TextBlock, Usage
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers.env import patch_env, reordered, working_dir
from tests.support.helpers.examples import examples
from vcr_kit import ConfigError
from vcr_kit._core.fixture_names import (
    MAX_NAME_LENGTH,
    cassette_name,
    fixture_name,
    http_name,
    token_count_name,
    validate_name,
)
from vcr_kit.dehydrate import cwd_slug

pytestmark = pytest.mark.inprocess

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.json$")
PROPERTY_SETTINGS = settings(deadline=None, max_examples=examples(150))


def sha1(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def invalid_name_message(name: str) -> str:
    return (
        f"Invalid fixture name {name!r}: use letters, digits, '.', '_' and '-' only "
        "(no path separators, no '..', not starting with '.' or '-')."
    )


HELLO_HI = [
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]},
]


class PinnedNamesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_cassette_name_is_the_original_scheme(self) -> None:
        # sha1("Hello")[:6] == "f7ff9e"; sha1('[{"text":"Hi","type":"text"}]')[:6] == "0f7c0d"
        self.assertEqual(sha1(b"Hello")[:6], "f7ff9e")
        self.assertEqual(sha1(canonical([{"type": "text", "text": "Hi"}]))[:6], "0f7c0d")
        self.assertEqual(cassette_name(HELLO_HI), "f7ff9e-0f7c0d.json")

    def test_string_content_hashes_its_utf8_text(self) -> None:
        text = "héllo ✓"
        self.assertEqual(sha1(text.encode("utf-8"))[:6], "b7c2a1")
        self.assertEqual(cassette_name([{"role": "user", "content": text}]), "b7c2a1.json")

    def test_sdk_objects_hash_like_their_wire_json(self) -> None:
        message = Message(
            id="msg_1",
            type="message",
            role="assistant",
            model="claude-x",
            content=[TextBlock(type="text", text="Hi")],
            stop_reason="end_turn",
            stop_sequence=None,
            usage=Usage(input_tokens=1, output_tokens=1),
        )
        self.assertEqual(cassette_name([HELLO_HI[0], message]), "f7ff9e-0f7c0d.json")

    def test_fixture_name(self) -> None:
        value = {"question": "What is 2+2?", "n": 2}
        # sha1('{"n":2,"question":"What is 2+2?"}')[:12] == "048f10b868e0"
        self.assertEqual(sha1(canonical(value))[:12], "048f10b868e0")
        self.assertEqual(fixture_name(value, "answer"), "answer-048f10b868e0.json")

    def test_token_count_name(self) -> None:
        messages = [{"role": "user", "content": "Hello"}]
        request = {"messages": messages, "tools": []}
        self.assertEqual(sha1(canonical(request))[:12], "5c9ba5ce0da0")
        self.assertEqual(token_count_name(messages, []), "token-count-5c9ba5ce0da0.json")

    def test_http_name(self) -> None:
        key = {"model": "m", "max_tokens": 5}
        self.assertEqual(sha1(canonical(key))[:12], "14aba6b373a3")
        self.assertEqual(
            http_name("POST", "/v1/messages", key), "post-v1-messages-14aba6b373a3.json"
        )

    def test_empty_conversation(self) -> None:
        self.assertEqual(cassette_name([]), "empty.json")


class NameRulesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_role_is_not_hashed(self) -> None:
        as_user = [{"role": "user", "content": "same"}, {"role": "user", "content": [1, 2]}]
        as_assistant = [
            {"role": "assistant", "content": "same"},
            {"role": "assistant", "content": [1, 2]},
        ]
        self.assertEqual(cassette_name(as_user), cassette_name(as_assistant))

    def test_content_changes_the_name(self) -> None:
        self.assertNotEqual(
            cassette_name([{"role": "user", "content": "Hello"}]),
            cassette_name([{"role": "user", "content": "Hello!"}]),
        )
        self.assertNotEqual(fixture_name({"a": "x y"}, "n"), fixture_name({"a": "x  y"}, "n"))
        self.assertNotEqual(fixture_name({"a": 1}, "n"), fixture_name({"a": 1}, "m"))

    def test_key_order_and_whitespace_do_not_matter_for_fixture_name(self) -> None:
        compact = json.loads('{"b":[1,2],"a":{"y":1,"x":2}}')
        spaced = json.loads('{\n  "a" : { "x" : 2 ,  "y" : 1 },\n  "b" : [ 1 , 2 ]\n}\n')
        self.assertEqual(list(compact), ["b", "a"])
        self.assertEqual(list(spaced), ["a", "b"])
        self.assertEqual(fixture_name(compact, "q"), fixture_name(spaced, "q"))
        digest = sha1(b'{"a":{"x":2,"y":1},"b":[1,2]}')[:12]
        self.assertEqual(fixture_name(spaced, "q"), f"q-{digest}.json")

    def test_tuples_and_lists_are_the_same_json(self) -> None:
        self.assertEqual(fixture_name({"a": (1, 2)}, "t"), fixture_name({"a": [1, 2]}, "t"))

    def test_cwd_dependent_content_has_one_name_on_every_machine(self) -> None:
        def names_here(cwd: str) -> tuple[str, ...]:
            text_block = {"type": "text", "text": f"ls {cwd}"}
            slug_text = f"{cwd} ~/.claude/projects/{cwd_slug()}/x"
            return (
                cassette_name([{"role": "user", "content": f"Please edit {cwd}/src/app.py"}]),
                cassette_name([{"role": "user", "content": [text_block]}]),
                fixture_name({"path": f"{cwd}/a.txt", "cwd": cwd}, "read"),
                token_count_name([{"role": "user", "content": slug_text}], []),
            )

        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
            with working_dir(one) as cwd:
                first = names_here(str(cwd))
            with working_dir(two) as cwd:
                second = names_here(str(cwd))
        self.assertNotEqual(one, two)
        self.assertEqual(first, second)
        elsewhere = cassette_name([{"role": "user", "content": "Please edit /else/src/app.py"}])
        self.assertNotEqual(first[0], elsewhere)

    def test_long_conversation_names_stay_short_and_distinct(self) -> None:
        messages = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
            for i in range(500)
        ]
        name = cassette_name(messages)
        self.assertLessEqual(len(name), MAX_NAME_LENGTH)
        self.assertLessEqual(len(name), 200)
        self.assertRegex(name, NAME_RE)
        changed = [dict(m) for m in messages]
        changed[400]["content"] = "message 400, edited"
        self.assertNotEqual(cassette_name(changed), name)
        self.assertLessEqual(len(cassette_name(changed)), 200)
        # The head stays readable: the first hashes are the per-message ones.
        self.assertTrue(name.startswith(sha1(b"message 0")[:6] + "-" + sha1(b"message 1")[:6]))
        self.assertNotEqual(cassette_name(messages[:499]), name)

    def test_token_count_name_ignores_uuids_timestamps_and_cwd_slug(self) -> None:
        def request(uuid: str, stamp: str) -> list[dict[str, str]]:
            return [
                {
                    "role": "user",
                    "content": f"session {uuid} at {stamp} in ~/.claude/projects/{cwd_slug()}/",
                }
            ]

        a = token_count_name(
            request("123e4567-e89b-12d3-a456-426614174000", "2024-05-01T12:30:45.123Z"), []
        )
        b = token_count_name(
            request("9f0c1d2e-3b4a-4c5d-8e6f-7a8b9c0d1e2f", "2025-12-31 23:59:59+01:00"), []
        )
        self.assertEqual(a, b)
        self.assertRegex(a, r"^token-count-[0-9a-f]{12}\.json$")
        with tempfile.TemporaryDirectory() as folder, working_dir(folder):
            c = token_count_name(
                request("00000000-0000-0000-0000-000000000000", "2020-01-01T00:00:00Z"), []
            )
        self.assertEqual(a, c)
        self.assertNotEqual(a, token_count_name(request("x", "y"), []))
        self.assertNotEqual(a, token_count_name(request("x", "y"), [{"name": "tool"}]))

    def test_token_count_name_sees_every_message_and_tool(self) -> None:
        # The rules apply to each string, not to the whole JSON text: a rule that eats
        # the rest of its string must not eat the following messages and tools.
        first = {"role": "user", "content": "Available commands: /a /b"}
        a = token_count_name([first, {"role": "user", "content": "one"}], [{"name": "t1"}])
        b = token_count_name([first, {"role": "user", "content": "two"}], [{"name": "t1"}])
        c = token_count_name([first, {"role": "user", "content": "one"}], [{"name": "t2"}])
        self.assertEqual(len({a, b, c}), 3)
        files = {"role": "user", "content": "Files modified by user: a.py"}
        self.assertNotEqual(
            token_count_name([files, {"role": "user", "content": "one"}], []),
            token_count_name([files, {"role": "user", "content": "two"}], []),
        )

    def test_formats(self) -> None:
        self.assertRegex(fixture_name({"a": 1}, "my_name.v2"), r"^my_name\.v2-[0-9a-f]{12}\.json$")
        self.assertRegex(token_count_name([], []), r"^token-count-[0-9a-f]{12}\.json$")
        self.assertRegex(
            http_name("GET", "/v1/models?limit=2", {}),
            r"^get-v1-models-limit-2-[0-9a-f]{12}\.json$",
        )
        self.assertRegex(
            http_name("POST", "/v1/messages/count_tokens", {"a": 1}),
            r"^post-v1-messages-count-tokens-[0-9a-f]{12}\.json$",
        )
        long_path = http_name("POST", "/" + "x/" * 200, {})
        self.assertLessEqual(len(long_path), 200)
        self.assertRegex(long_path, NAME_RE)

    def test_http_name_key_order_does_not_matter(self) -> None:
        self.assertEqual(
            http_name("POST", "/v1/messages", {"model": "m", "max_tokens": 5}),
            http_name("POST", "/v1/messages", {"max_tokens": 5, "model": "m"}),
        )
        self.assertNotEqual(
            http_name("POST", "/v1/messages", {"model": "m", "max_tokens": 5}),
            http_name("POST", "/v1/messages", {"model": "m", "max_tokens": 6}),
        )


class ValidateNameTest(unittest.TestCase):
    def test_refused_names(self) -> None:
        for name in ("../x", "a/b", "a\\b", ".hidden", "", "a..b", "-x", "a b", "x/../y", "C:x"):
            with self.subTest(name=name), self.assertRaises(ConfigError) as caught:
                validate_name(name)
            self.assertEqual(str(caught.exception), invalid_name_message(name))

    def test_refused_long_name(self) -> None:
        name = "a" * 300
        with self.assertRaises(ConfigError) as caught:
            validate_name(name)
        self.assertEqual(
            str(caught.exception),
            f"Invalid fixture name {'a' * 40!r}...: 305 characters, at most 200 are allowed.",
        )
        self.assertIsInstance(caught.exception, ValueError)

    def test_accepted_names(self) -> None:
        self.assertEqual(validate_name("abc"), "abc.json")
        self.assertEqual(validate_name("abc.json"), "abc.json")
        self.assertEqual(validate_name("a.b_c-d"), "a.b_c-d.json")
        self.assertEqual(validate_name("a" * 195), "a" * 195 + ".json")
        with self.assertRaises(ConfigError):
            validate_name("a" * 196)

    def test_fixture_name_refuses_a_bad_name(self) -> None:
        with self.assertRaises(ConfigError) as caught:
            fixture_name({"a": 1}, "../escape")
        digest = sha1(canonical({"a": 1}))[:12]
        self.assertEqual(str(caught.exception), invalid_name_message(f"../escape-{digest}"))


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)
contents = st.one_of(
    st.text(),
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text()}), max_size=3),
    json_values,
)
messages_strategy = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": contents}),
    max_size=80,
)


class NamePropertiesTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    @PROPERTY_SETTINGS
    @given(messages_strategy)
    def test_cassette_names_are_safe_and_short(self, messages: list[dict[str, Any]]) -> None:
        name = cassette_name(messages)
        self.assertRegex(name, NAME_RE)
        self.assertLessEqual(len(name), 200)
        swapped = [
            {"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
            for m in messages
        ]
        self.assertEqual(cassette_name(swapped), name)

    @PROPERTY_SETTINGS
    @given(json_values, st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,40}", fullmatch=True))
    def test_fixture_names_are_safe_and_order_free(self, value: Any, name: str) -> None:
        result = fixture_name(value, name)
        self.assertRegex(result, NAME_RE)
        self.assertLessEqual(len(result), 200)
        self.assertEqual(fixture_name(reordered(value), name), result)

    @PROPERTY_SETTINGS
    @given(messages_strategy, st.lists(json_values, max_size=3))
    def test_token_count_names_are_safe(self, messages: list[Any], tools: list[Any]) -> None:
        name = token_count_name(messages, tools)
        self.assertRegex(name, r"^token-count-[0-9a-f]{12}\.json$")


if __name__ == "__main__":
    unittest.main()
