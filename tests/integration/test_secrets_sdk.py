"""No key ever reaches a fixture: not the recording key, not a key-shaped string in an answer.

The recording key travels in request headers, which are never stored. An answer
that carries a key-shaped string (the loopback server's ``[[secret]]`` trigger)
is refused with ``SecretLeakError``, through the transparent client and through
cassettes alike, and leaves no file behind, not even a temporary one.
"""

from __future__ import annotations

import re
import unittest
from pathlib import Path

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import (
    MODEL,
    WEATHER_TOOL,
    fixture_files,
    recording_key,
    sent_key,
)
from tests.support.helpers.env import patch_env, start_server, temp_dir, user

pytestmark = pytest.mark.inprocess

SECRET_PROMPT = "Tell me a secret [[secret]]"
LEAKED = "sk-ant-api03-" + "A" * 36  # what the server's [[secret]] answer contains
REFUSAL = re.compile(
    r"Refusing to write fixture (?P<path>.+): it contains an Anthropic key \(sk-ant-\.\.\.\) "
    r"(?:in streamed block \d+ \(joined from its deltas\)|at response[\w.\[\]]+)\. "
    r"Nothing was written\. Keep secrets out of prompts and tool results, or add "
    r"a dehydrate rule that replaces them, then record again\. If it is not a secret, "
    r"list it \(or a re: pattern\) in VCR_ALLOW_SECRETS\."
)


class SecretsSetUp(unittest.TestCase):
    """A clean environment, a temporary folder, a recording key and a loopback server."""

    def setUp(self) -> None:
        patch_env(self)
        self.tmp = temp_dir(self, prefix="vcr-secrets-")
        self.key = recording_key()
        self.server = start_server(self)

    def assert_refused(self, exc: vcr_kit.SecretLeakError, folder: Path) -> None:
        message = str(exc)
        match = REFUSAL.fullmatch(message)
        self.assertIsNotNone(match, message)
        assert match is not None
        self.assertEqual(Path(match["path"]), exc.path)
        self.assertEqual(exc.path.parent if exc.path else None, folder)
        self.assertIsInstance(exc, ValueError)
        self.assertNotIn(LEAKED, message)
        self.assertNotIn("AAAAAAAAAAAAAAAAAAAA", message)
        self.assertNotIn(self.key, message)
        # No fixture and no temporary file: the lock folder is all there is.
        for name in fixture_files(folder) if folder.exists() else {}:
            self.assertTrue(name.startswith(".locks/"), name)


class RecordingKeyTest(SecretsSetUp):
    def test_recording_key_is_in_no_fixture(self) -> None:
        client_dir, cassette_dir = self.tmp / "client", self.tmp / "cassette"
        options = {"base_url": self.server.url, "api_key": self.key}
        with vcr_kit.client(mode="record", fixtures_dir=client_dir, **options) as client:
            client.messages.create(model=MODEL, max_tokens=16, messages=user("Hi"))
            with client.messages.create(
                model=MODEL, max_tokens=16, messages=user("Stream"), stream=True
            ) as stream:
                list(stream)
            with client.messages.stream(
                model=MODEL, max_tokens=16, messages=user("Helper")
            ) as helper:
                helper.get_final_message()
            client.messages.count_tokens(model=MODEL, messages=user("Hi"), tools=[WEATHER_TOOL])
            client.models.list()
            with self.assertRaises(anthropic.BadRequestError):
                client.messages.create(model=MODEL, max_tokens=16, messages=user("[[error:400]]"))

        with anthropic.Anthropic(**options) as plain:
            for text in ("Hi", "[[error:400]]"):
                with vcr_kit.cassette(user(text), mode="record", fixtures_dir=cassette_dir) as c:
                    try:
                        c.play(
                            lambda text=text: plain.messages.create(
                                model=MODEL, max_tokens=16, messages=user(text)
                            )
                        )
                    except anthropic.BadRequestError:
                        self.assertEqual(text, "[[error:400]]")
            with vcr_kit.streaming_cassette(
                user("Stream"), mode="record", fixtures_dir=cassette_dir
            ) as c:
                list(
                    c.play(
                        lambda: plain.messages.stream(
                            model=MODEL, max_tokens=16, messages=user("Stream")
                        )
                    )
                )
            with vcr_kit.token_count_cassette(
                user("Hi"), [WEATHER_TOOL], mode="record", fixtures_dir=cassette_dir
            ) as c:
                c.play(
                    lambda: plain.messages.count_tokens(
                        model=MODEL, messages=user("Hi"), tools=[WEATHER_TOOL]
                    )
                )

        self.assertEqual(len(self.server.log), 10)
        for request in self.server.log:  # it was sent, every time
            self.assertEqual(sent_key(request.headers), self.key)
        files = {**fixture_files(client_dir), **fixture_files(cassette_dir)}
        self.assertEqual(len([name for name in files if name.endswith(".json")]), 6 + 4)
        for name, data in files.items():
            self.assertNotIn(self.key.encode(), data, name)
            self.assertNotIn(self.key[len("sk-ant-test-") :].encode(), data, name)
            self.assertNotIn(b"sk-ant-", data, name)


class KeyShapedAnswerTest(SecretsSetUp):
    def test_client_refuses_to_write_a_key_shaped_answer(self) -> None:
        folder = self.tmp / "client"
        with vcr_kit.client(
            mode="record", fixtures_dir=folder, base_url=self.server.url, api_key=self.key
        ) as client:
            with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                client.messages.create(model=MODEL, max_tokens=16, messages=user(SECRET_PROMPT))
        self.assert_refused(caught.exception, folder)
        self.assertEqual(len(self.server.log), 1)  # not retried

    def test_cassette_refuses_to_write_a_key_shaped_answer(self) -> None:
        with anthropic.Anthropic(base_url=self.server.url, api_key=self.key) as client:
            with (
                vcr_kit.cassette(user(SECRET_PROMPT), mode="record", fixtures_dir=self.tmp) as c,
                self.assertRaises(vcr_kit.SecretLeakError) as caught,
            ):
                c.play(
                    lambda: client.messages.create(
                        model=MODEL, max_tokens=16, messages=user(SECRET_PROMPT)
                    )
                )
        self.assert_refused(caught.exception, self.tmp)
        self.assertEqual(caught.exception.path, c.path)
        self.assertFalse(c.recorded)

    def test_stream_helper_cassette_refuses_to_write_a_key_shaped_answer(self) -> None:
        # messages.stream() events carry the accumulated text: the key appears whole.
        prompt = user(SECRET_PROMPT + " (helper)")
        with anthropic.Anthropic(base_url=self.server.url, api_key=self.key) as client:
            with (
                vcr_kit.streaming_cassette(prompt, mode="record", fixtures_dir=self.tmp) as c,
                self.assertRaises(vcr_kit.SecretLeakError) as caught,
            ):
                list(
                    c.play(
                        lambda: client.messages.stream(model=MODEL, max_tokens=16, messages=prompt)
                    )
                )
        self.assert_refused(caught.exception, self.tmp)

    def test_client_refuses_to_write_a_streamed_key(self) -> None:
        # The server streams text in 8-character deltas, so the key reaches the file in
        # pieces ("key sk-a", "nt-api03", ...): only the joined block text shows it.
        folder = self.tmp / "client-stream"
        with vcr_kit.client(
            mode="record", fixtures_dir=folder, base_url=self.server.url, api_key=self.key
        ) as client:
            with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                with client.messages.create(
                    model=MODEL, max_tokens=16, messages=user(SECRET_PROMPT), stream=True
                ) as stream:
                    list(stream)
        self.assert_refused(caught.exception, folder)

    def test_streaming_cassette_refuses_to_write_a_streamed_key(self) -> None:
        prompt = user(SECRET_PROMPT + " (raw stream)")
        with anthropic.Anthropic(base_url=self.server.url, api_key=self.key) as client:
            with (
                vcr_kit.streaming_cassette(prompt, mode="record", fixtures_dir=self.tmp) as c,
                self.assertRaises(vcr_kit.SecretLeakError) as caught,
            ):
                list(
                    c.play(
                        lambda: client.messages.create(
                            model=MODEL, max_tokens=16, messages=prompt, stream=True
                        )
                    )
                )
        self.assert_refused(caught.exception, self.tmp)


class AsyncKeyShapedAnswerTest(SecretsSetUp, unittest.IsolatedAsyncioTestCase):
    async def test_async_client_refuses_to_write_a_key_shaped_answer(self) -> None:
        folder = self.tmp / "client"
        async with vcr_kit.async_client(
            mode="record", fixtures_dir=folder, base_url=self.server.url, api_key=self.key
        ) as client:
            with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                await client.messages.create(
                    model=MODEL, max_tokens=16, messages=user(SECRET_PROMPT)
                )
        self.assert_refused(caught.exception, folder)
        self.assertEqual(len(self.server.log), 1)

    async def test_async_cassette_refuses_to_write_a_key_shaped_answer(self) -> None:
        async with anthropic.AsyncAnthropic(base_url=self.server.url, api_key=self.key) as client:
            with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                async with vcr_kit.cassette(
                    user(SECRET_PROMPT), mode="record", fixtures_dir=self.tmp
                ) as c:
                    await c.play(
                        lambda: client.messages.create(
                            model=MODEL, max_tokens=16, messages=user(SECRET_PROMPT)
                        )
                    )
        self.assert_refused(caught.exception, self.tmp)


if __name__ == "__main__":
    unittest.main()
