"""Secrets beyond Anthropic's keys never reach a fixture (issue #15, part 5).

On main ``authorization: bearer <token>`` in lower case was written into a fixture, and
AWS keys, GitHub tokens, JWTs, private keys and base64-encoded keys passed silently.
Through the real SDK over loopback: refused before the call (the server sees nothing)
and, on the answer side, before the write; nothing written. The pure matcher is
driven by hypothesis: every shape caught in any case, in base64, inside text;
ordinary text and random base64 are not; ``VCR_ALLOW_SECRETS`` lets one through.
"""

from __future__ import annotations

import base64
import os
import re
import string
import unittest
from typing import Any

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.env import entries
from tests.support.helpers.examples import examples
from tests.support.helpers.loopback_case import LoopbackTestCase, create
from vcr_kit._core.config import AllowedSecrets, allowed_secrets
from vcr_kit._core.credentials import credentials_in
from vcr_kit._store.secret_shapes import Hit, find_hit

pytestmark = pytest.mark.inprocess

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"

#: (kind, a token of that shape): what the SDK tests send, one of each.
EXAMPLES = [
    ("a credential header", "authorization: bearer " + "t0k3n" * 6),
    ("a bearer token", "BEARER " + "t0k3n" * 6),
    ("an AWS access key id (AKIA...)", "AKIA" + "Q7" * 8),
    ("an AWS access key id (AKIA...)", "ASIA" + "Z9" * 8),
    ("an AWS secret access key", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("a Google API key (AIza...)", "AIza" + "b" * 35),
    ("an OpenAI key (sk-proj-...)", "sk-proj-" + "Pq7_" * 10),
    ("an OpenAI key (sk-proj-...)", "sk-svcacct-" + "Sv4-" * 10),
    ("a Google OAuth token (ya29....)", "ya29." + "c" * 30),
    ("an Azure key (AccountKey=...)", "AccountKey=" + "d" * 86 + "=="),
    ("a GitHub token (ghp_...)", "ghp_" + "E" * 36),
    ("a GitHub token (ghp_...)", "github_pat_" + "F" * 30),
    ("a GitLab token (glpat-...)", "glpat-" + "g" * 20),
    ("a Slack token (xox?-...)", "xoxb-1234567890-" + "h" * 12),
    ("a JSON web token (eyJ...)", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl"),
    ("a private key block", "-----BEGIN OPENSSH PRIVATE KEY-----"),
]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class SdkTest(LoopbackTestCase):
    def client(self, **options: Any) -> anthropic.Anthropic:
        client = vcr_kit.client(
            mode="auto", fixtures_dir=self.fixtures, base_url=self.server.url, **options
        )
        self.addCleanup(client.close)
        return client

    def test_each_shape_in_a_prompt_is_refused_before_the_call(self) -> None:
        for kind, token in [*EXAMPLES, *((f"{k}, base64-encoded", b64(t)) for k, t in EXAMPLES)]:
            with self.subTest(kind=kind, token=token[:12]):
                with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                    create(self.client(api_key=self.key), f"Here: {token} (keep it)")
                message = str(caught.exception)
                self.assertEqual(
                    message,
                    f"Refusing to record fixture {caught.exception.path}: the request itself "
                    f"contains {kind} at request.body.messages[0].content. The API was not "
                    "called. Keep secrets out of prompts and tool results, or add a dehydrate "
                    "rule that replaces them. If it is not a secret, list it (or a re: "
                    "pattern) in VCR_ALLOW_SECRETS.",
                )
                self.assertNotIn(token, message)
        self.assertEqual(self.server.log, [])
        self.assertEqual(entries(self.fixtures), [])

    def test_a_lower_case_bearer_header_value_echoed_is_refused(self) -> None:
        token = "custom-token-0123456789abcdef"  # no known shape: only the header says so
        client = self.client(api_key=None, default_headers={"authorization": f"bearer {token}"})
        with self.assertRaises(vcr_kit.SecretLeakError) as caught:
            create(client, f"echo {token}")
        self.assertIn(
            "the request itself contains the value of the authorization header at "
            "request.body.messages[0].content. The API was not called.",
            str(caught.exception),
        )
        self.assertEqual(self.server.log, [])
        self.assertEqual(entries(self.fixtures), [])

    def test_an_allowed_value_is_recorded(self) -> None:
        token = "AKIA" + "Q7" * 8  # the example key of a tutorial, say
        with self.assertRaises(vcr_kit.SecretLeakError):
            create(self.client(api_key=self.key), f"Docs use {token}.")
        os.environ["VCR_ALLOW_SECRETS"] = f"re:nothing-else,{token}"
        create(self.client(api_key=self.key), f"Docs use {token}.")
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual(len([n for n in entries(self.fixtures) if n.endswith(".json")]), 1)

    def test_each_shape_in_an_answer_is_refused_before_the_write(self) -> None:
        for kind, token in [*EXAMPLES, *((f"{k}, base64-encoded", b64(t)) for k, t in EXAMPLES)]:
            with self.subTest(kind=kind, token=token[:12]):
                recording = vcr_kit.fixture({"q": "what is in env?"}, "env", mode="record",
                                            fixtures_dir=self.fixtures)  # fmt: skip
                with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                    recording.play(lambda token=token: {"output": [f"ok {token}"]})  # type: ignore[misc]
                message = str(caught.exception)
                self.assertEqual(
                    message,
                    f"Refusing to write fixture {caught.exception.path}: it contains {kind} at "
                    "response.output[0]. Nothing was written. Keep secrets out of prompts and "
                    "tool results, or add a dehydrate rule that replaces them, then record "
                    "again. If it is not a secret, list it (or a re: pattern) in "
                    "VCR_ALLOW_SECRETS.",
                )
                self.assertNotIn(token, message)
        self.assertEqual(entries(self.fixtures), [])

    def test_each_shape_in_an_sdk_answer_is_refused_before_the_write(self) -> None:
        """The loopback server echoes the prompt: the answer holds the token, while the
        cassette's own key (its conversation) does not."""
        sdk = anthropic.Anthropic(base_url=self.server.url, api_key=self.key, max_retries=0)
        self.addCleanup(sdk.close)
        conversation = [{"role": "user", "content": "What is in the environment?"}]
        for number, (kind, token) in enumerate(EXAMPLES[:4] + EXAMPLES[-3:], start=1):
            with self.subTest(kind=kind, token=token[:12]):
                with (
                    vcr_kit.cassette(
                        conversation, mode="record", fixtures_dir=self.fixtures
                    ) as recording,
                    self.assertRaises(vcr_kit.SecretLeakError) as caught,
                ):
                    recording.play(lambda token=token: create(sdk, token))  # type: ignore[misc]
                self.assertEqual(
                    str(caught.exception),
                    f"Refusing to write fixture {caught.exception.path}: it contains {kind} at "
                    "response.data.content[0].text. Nothing was written. Keep secrets out of "
                    "prompts and tool results, or add a dehydrate rule that replaces them, then "
                    "record again. If it is not a secret, list it (or a re: pattern) in "
                    "VCR_ALLOW_SECRETS.",
                )
                self.assertEqual(len(self.server.log), number)  # called, and nothing kept
        self.assertEqual(entries(self.fixtures), [])

    def test_a_bad_allow_pattern_is_a_config_error(self) -> None:
        os.environ["VCR_ALLOW_SECRETS"] = "re:ghp_[A-Z"
        with self.assertRaises(vcr_kit.ConfigError) as caught:
            create(self.client(api_key=self.key), "Hello")
        self.assertRegex(
            str(caught.exception),
            r"^VCR_ALLOW_SECRETS: 're:ghp_\[A-Z' is not a valid regular expression \(.+\)\. "
            r"Fix the pattern, or give the value itself without 're:'\.$",
        )
        self.assertEqual(self.server.log, [])


class SettingTest(unittest.TestCase):
    def setUp(self) -> None:
        self.addCleanup(os.environ.pop, "VCR_ALLOW_SECRETS", None)

    def test_the_readme_example(self) -> None:
        os.environ["VCR_ALLOW_SECRETS"] = "AKIAIOSFODNN7EXAMPLE,re:ghp_0{36}"
        allowed = allowed_secrets()
        self.assertIsNone(find_hit(b"AKIAIOSFODNN7EXAMPLE and ghp_" + b"0" * 36, [], allowed))
        self.assertIsNotNone(find_hit(b"ghp_" + b"0" * 35 + b"1", [], allowed))  # whole token
        self.assertIsNotNone(find_hit(b"AKIAIOSFODNN7EXAMPLF", [], allowed))

    def test_a_comma_in_a_repeat_and_newlines_between_entries(self) -> None:
        os.environ["VCR_ALLOW_SECRETS"] = "re:glpat-x{20,30}\n ya29.test-token-for-the-docs "
        allowed = allowed_secrets()
        self.assertIsNone(find_hit(b"glpat-" + b"x" * 25 + b" ya29.test-token-for-the-docs", [],
                                   allowed))  # fmt: skip
        self.assertIsNotNone(find_hit(b"glpat-" + b"x" * 31, [], allowed))

    def test_a_live_key_is_never_allowed(self) -> None:
        key = "sk-ant-api03-" + "L" * 40
        os.environ["VCR_ALLOW_SECRETS"] = f"{key},re:.*"
        hit = find_hit(f"echo {key}".encode(), [("ANTHROPIC_API_KEY", key)], allowed_secrets())
        self.assertEqual(hit, Hit("the value of ANTHROPIC_API_KEY", 5))

    def test_header_names_and_schemes_in_any_case(self) -> None:
        headers = {"AUTHORIZATION": "bearer tok-0123456789abcdef", "X-Api-Key": "KEY-0123456789"}
        self.assertEqual(
            credentials_in(headers),
            [
                ("the authorization header", "tok-0123456789abcdef"),
                ("the x-api-key header", "KEY-0123456789"),
            ],
        )


# -- the pure matcher, driven by hypothesis ------------------------------------------------


def chars(alphabet: str, size: int, most: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size if most is None else most)


def any_case(word: str) -> st.SearchStrategy[str]:
    return st.tuples(*(st.sampled_from(sorted({c.lower(), c.upper()})) for c in word)).map("".join)


def labelled(words: list[str], sep: list[str], value: st.SearchStrategy[str]) -> Any:
    return st.tuples(st.sampled_from(words).flatmap(any_case), st.sampled_from(sep), value).map(
        "".join
    )


#: kind -> tokens of that shape, generated.
SHAPES: dict[str, st.SearchStrategy[str]] = {
    "an Anthropic key (sk-ant-...)": chars(URLSAFE, 20, 60).map(lambda s: "sk-ant-api03-" + s),
    # OpenAI's project, service-account and admin keys (issue 31).
    "an OpenAI key (sk-proj-...)": st.tuples(
        st.sampled_from(["sk-proj-", "sk-svcacct-", "sk-admin-"]), chars(URLSAFE, 20, 60)
    ).map("".join),
    "an AWS access key id (AKIA...)": st.tuples(
        st.sampled_from(["AKIA", "ASIA"]), chars(UPPER, 16)
    ).map("".join),
    "an AWS secret access key": labelled(
        ["aws_secret_access_key", "SecretAccessKey"], ["=", ": ", '": "'],
        chars(ALNUM + "+/", 40),
    ),
    "a Google API key (AIza...)": chars(URLSAFE, 35).map(lambda s: "AIza" + s),
    "a Google OAuth token (ya29....)": chars(URLSAFE, 20, 80).map(lambda s: "ya29." + s),
    "an Azure key (AccountKey=...)": labelled(
        ["AccountKey", "SharedAccessKey"], ["="], chars(ALNUM + "+/", 86).map(lambda s: s + "==")
    ),
    "a GitHub token (ghp_...)": st.one_of(
        st.tuples(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), chars(ALNUM, 36)).map(
            "".join
        ),
        chars(ALNUM + "_", 22, 80).map(lambda s: "github_pat_" + s),
    ),
    "a GitLab token (glpat-...)": chars(URLSAFE, 20, 40).map(lambda s: "glpat-" + s),
    "a Slack token (xox?-...)": st.tuples(
        st.sampled_from("abposr"), chars(ALNUM + "-", 10, 60)
    ).map(lambda t: f"xox{t[0]}-{t[1]}"),
    "a JSON web token (eyJ...)": st.tuples(
        chars(URLSAFE, 8, 40), chars(URLSAFE, 8, 200), chars(URLSAFE, 8, 90)
    ).map(lambda t: f"eyJ{t[0]}.eyJ{t[1]}.{t[2]}"),
    "a private key block": st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]).map(
        lambda s: f"-----BEGIN {s}PRIVATE KEY-----"
    ),
    "a credential header": labelled(
        ["authorization", "x-api-key", "proxy-authorization"], [": ", "=", '": "'],
        st.tuples(
            st.sampled_from(["", "bearer ", "basic ", "token "]), chars(ALNUM + "._-", 20, 60)
        ).map("".join),
    ),
    "a bearer token": labelled(["bearer"], [" "], chars(ALNUM + "._~+/-", 20, 60)),
}  # fmt: skip

shape_and_token = st.sampled_from(sorted(SHAPES)).flatmap(
    lambda kind: st.tuples(st.just(kind), SHAPES[kind])
)
#: Words of the tokens' own alphabet, shorter than any token: what prose and code look like.
words = st.lists(chars(ALNUM + "._-/+", 1, 19), max_size=40)
separators = st.sampled_from([" ", "\n", '"', "(", ", ", "\t", ": "])
#: What may stand before a base64 text, stuck to it or not.
leads = st.sampled_from(["", "key=", "Basic ", "x", "secret_"])


def embed(before: list[str], text: str, after: list[str], sep: str) -> bytes:
    return sep.join([*before, text, *after]).encode()


class MatcherPropertyTest(unittest.TestCase):
    @settings(max_examples=examples(300), deadline=None)
    @given(shape_and_token, words, words, separators)
    def test_every_shape_is_caught_inside_text(
        self, pair: tuple[str, str], before: list[str], after: list[str], sep: str
    ) -> None:
        kind, token = pair
        hit = find_hit(embed(before, token, after, sep), [])
        self.assertIsNotNone(hit)
        assert hit is not None
        # A label also names the shape inside it ("Authorization: Bearer ..."): either.
        self.assertIn(hit.kind, {kind, "a bearer token", "a credential header"} if "bearer" in
                      token.lower() else {kind})  # fmt: skip

    @settings(max_examples=examples(300), deadline=None)
    @given(shape_and_token, words, words, st.booleans(), leads)
    def test_every_shape_is_caught_in_base64(
        self, pair: tuple[str, str], before: list[str], after: list[str], urlsafe: bool, lead: str
    ) -> None:
        kind, token = pair
        plain = " ".join([*before, token, *after]).encode()
        encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(plain).decode()
        hit = find_hit(embed(before, lead + encoded, after, " "), [])
        self.assertIsNotNone(hit)
        assert hit is not None
        self.assertTrue(hit.encoded or hit.kind != kind, hit)  # found by decoding (or plainly)

    @settings(max_examples=examples(300), deadline=None)
    @given(words, separators)
    def test_ordinary_text_is_not_a_secret(self, text: list[str], sep: str) -> None:
        self.assertIsNone(find_hit(sep.join(text).encode(), []))

    @settings(max_examples=examples(200), deadline=None)
    @given(st.binary(min_size=18, max_size=3000), st.booleans())
    def test_random_base64_is_not_a_secret(self, data: bytes, urlsafe: bool) -> None:
        encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data)
        self.assertIsNone(find_hit(b'"data": "' + encoded + b'"', []))

    @settings(max_examples=examples(200), deadline=None)
    @given(shape_and_token, st.text(ALNUM, min_size=16, max_size=40), words)
    def test_live_values_are_caught_plain_and_in_base64(
        self, pair: tuple[str, str], value: str, before: list[str]
    ) -> None:
        live = [("ANTHROPIC_API_KEY", value)]
        for text in (value, b64(f"key={value}")):
            hit = find_hit(embed(before, text, [], " "), live)
            self.assertIsNotNone(hit)
            assert hit is not None
            self.assertEqual(hit.what, "the value of ANTHROPIC_API_KEY")

    @settings(max_examples=examples(300), deadline=None)
    @given(shape_and_token, words, st.booleans())
    def test_an_allowed_token_passes(
        self, pair: tuple[str, str], before: list[str], as_pattern: bool
    ) -> None:
        _, token = pair
        # The token is what follows a label ("AccountKey=", "x-api-key: bearer ").
        value = re.sub(r'(?i)^(?:[\w-]+(?:": "|: |=))?(?:(?:bearer|basic|token) )?', "", token)
        entry = "re:" + re.escape(value) if as_pattern else value
        os.environ["VCR_ALLOW_SECRETS"] = f"other-value,{entry}"
        self.addCleanup(os.environ.pop, "VCR_ALLOW_SECRETS", None)
        allowed = allowed_secrets()
        text = embed(before, token, [], " ")
        self.assertIsNone(find_hit(text, [], allowed), (token, value))
        self.assertIsNotNone(find_hit(text, [], AllowedSecrets()))


if __name__ == "__main__":
    unittest.main()
