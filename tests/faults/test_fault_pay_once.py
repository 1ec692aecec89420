"""Pay once: what would refuse the write is checked before the live call (issue #10).

On main a request whose own prompt held a key-shaped string was sent (and paid for)
on every run, then refused at the write; a folder at the fixture path in record mode
was called three times (the SDK retried the ``IsADirectoryError``).
"""

from __future__ import annotations

import unittest

import anthropic
import pytest

import vcr_kit
from tests.support.helpers.loopback_case import LoopbackTestCase, create
from vcr_kit import fixture

pytestmark = pytest.mark.inprocess

KEY_SHAPED = "sk-ant-api03-" + "Q" * 40


class PayOnceTest(LoopbackTestCase):
    def client(self, mode: str = "auto") -> anthropic.Anthropic:
        client = vcr_kit.client(
            mode=mode, fixtures_dir=self.fixtures, base_url=self.server.url, api_key=self.key
        )
        self.addCleanup(client.close)
        return client

    def test_a_key_in_the_prompt_is_refused_before_the_call(self) -> None:
        text = f"My key is {KEY_SHAPED}, keep it safe."
        for run in (1, 2):  # on main: one paid call per run, and nothing ever kept
            with self.subTest(run=run), self.assertRaises(vcr_kit.SecretLeakError) as caught:
                create(self.client(), text)
            path = caught.exception.path
            assert path is not None
            self.assertEqual(
                str(caught.exception),
                f"Refusing to record fixture {path}: the request itself contains an "
                "Anthropic key (sk-ant-...) at request.body.messages[0].content. The API was "
                "not called. Keep secrets out of prompts and tool results, or add a dehydrate "
                "rule that replaces them. If it is not a secret, list it (or a re: pattern) in "
                "VCR_ALLOW_SECRETS.",
            )
            self.assertFalse(path.exists())
        self.assertEqual(self.server.log, [])

    def test_a_key_in_a_cassette_input_is_refused_before_the_call(self) -> None:
        calls: list[int] = []
        with self.assertRaises(vcr_kit.SecretLeakError):
            fixture({"prompt": KEY_SHAPED}, "leak", mode="auto", fixtures_dir=self.fixtures).play(
                lambda: calls.append(1) or {"answer": 1}
            )
        self.assertEqual(calls, [])

    def test_a_folder_at_the_fixture_path_in_record_mode(self) -> None:
        create(self.client("record"), "Taken")
        (path,) = self.fixtures.glob("*.json")
        path.unlink()
        path.mkdir()
        self.server.reset_log()
        with self.assertRaises(vcr_kit.FixtureWriteError) as caught:
            create(self.client("record"), "Taken")
        self.assertEqual(
            str(caught.exception),
            f"Cannot write fixture {path}: a folder is in its place. Remove it. "
            "The API was not called.",
        )
        self.assertEqual(self.server.log, [])  # on main: 3 paid calls (SDK retries)
        self.assertEqual(list(path.iterdir()), [])

    def test_the_live_key_value_in_the_prompt_is_refused_before_the_call(self) -> None:
        with self.assertRaises(vcr_kit.SecretLeakError) as caught:
            create(self.client(), f"echo {self.key}")
        # 2.x sends the key as a bearer token, 0.x as x-api-key.
        self.assertRegex(
            str(caught.exception),
            r"the request itself contains the value of the (authorization|x-api-key) header",
        )
        self.assertEqual(self.server.log, [])


if __name__ == "__main__":
    unittest.main()
