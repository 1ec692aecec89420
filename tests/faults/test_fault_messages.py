"""Bounded, useful messages: a miss shows a short diff in every mode, and the advice fits
the situation (CI, local without a key, record mode, ``VCR_MODE=replay``) (issue #10)."""

from __future__ import annotations

import os
import textwrap
import unittest

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL
from tests.support.helpers.env import environ_without_vcr, temp_dir
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.loopback_case import LoopbackTestCase, create
from tests.support.helpers.paths import ROOT

HUGE = 2_000_000  # characters of prompt: one JSON line of the diff
NEEDS_KEY = (
    "Recording it needs an API key: set ANTHROPIC_API_KEY (in the environment or in .env) "
    "and run again."
)


@pytest.mark.inprocess
class MissMessageTest(LoopbackTestCase):
    def client(self, mode: str | None, key: str | None) -> anthropic.Anthropic:
        client = vcr_kit.client(
            mode=mode, fixtures_dir=self.fixtures, base_url=self.server.url, api_key=key
        )
        self.addCleanup(client.close)
        return client

    def miss(self, mode: str | None, text: str, key: str | None = None) -> BaseException:
        with self.assertRaises(vcr_kit.VCRError) as caught:
            create(self.client(mode, key), text)
        return caught.exception

    def test_a_huge_prompt_gives_a_short_diff_with_what_was_cut(self) -> None:
        create(self.client("record", self.key), "a" * HUGE)
        for mode, key in (("replay", None), ("auto", None), ("replay", self.key)):
            with self.subTest(mode=mode, key=key):
                message = str(self.miss(mode, "b" * HUGE, key))
                self.assertLess(len(message), 6000)  # on main: about 4 MB
                self.assertIn("What differs:", message)
                # The diff line: 21 characters of indent and key, the prompt, '",'.
                self.assertIn(f"... ({21 + HUGE + 2 - 200} more characters)", message)
                self.assertLessEqual(len(message.splitlines()), 50)

    def test_a_local_miss_without_a_key_shows_the_diff(self) -> None:
        create(self.client("record", self.key), "Recorded question")
        error = self.miss("auto", "Another question")
        path = error.path  # type: ignore[attr-defined]
        lines = str(error).splitlines()
        self.assertEqual(lines[:2], [f"Fixture missing: {path}.", NEEDS_KEY])
        self.assertTrue(lines[2].startswith("Nearest recorded fixture: "), lines)
        self.assertIn("What differs:", lines)
        self.assertNotIn("VCR_RECORD", str(error))  # for CI; it changes nothing here
        self.assertEqual(self.server.log[1:], [])

    def test_record_mode_without_a_key_on_a_recorded_fixture(self) -> None:
        create(self.client("record", self.key), "Already there")
        (path,) = self.fixtures.glob("*.json")
        self.server.reset_log()
        error = self.miss("record", "Already there")
        self.assertIsInstance(error, vcr_kit.ConfigError)
        self.assertEqual(
            str(error),
            f"Recording {path} needs an API key: mode record calls the API for every request, "
            "even one already recorded. Set ANTHROPIC_API_KEY (in the environment or in .env), "
            "or use mode auto (unset VCR_MODE=record) to replay the recorded fixture.",
        )
        self.assertEqual(self.server.log, [])

    def test_ci_says_record_with_vcr_record(self) -> None:
        os.environ["CI"] = "true"
        error = self.miss(None, "Never recorded")
        self.assertIsInstance(error, vcr_kit.FixtureMissingError)
        self.assertEqual(
            str(error),
            f"Fixture missing: {error.path}. Re-run the tests with VCR_RECORD=1, then commit "  # type: ignore[attr-defined]
            "the result.",
        )

    def test_vcr_mode_replay_says_vcr_record_would_not_help(self) -> None:
        os.environ["VCR_MODE"] = "replay"
        error = self.miss(None, "Never recorded")
        self.assertEqual(
            str(error),
            f"Fixture missing: {error.path}. VCR_MODE=replay never records: run the tests "  # type: ignore[attr-defined]
            "with VCR_MODE=auto and an API key, then commit the result.",
        )


@pytest.mark.child
class UnderPytestTest(unittest.TestCase):
    def test_the_miss_of_a_huge_prompt_is_small_in_pytests_report(self) -> None:
        # The issue saw 8 MB under pytest (the whole line, twice): the report of a failing
        # test must stay small, whatever the test runner shows twice.
        folder = temp_dir(self)
        (folder / "test_huge.py").write_text(
            textwrap.dedent(
                f"""
                import anthropic, vcr_kit
                from tests.support.servers.loopback_server import LoopbackServer

                def test_miss(tmp_path):
                    with LoopbackServer() as server:
                        def ask(mode, text, key):
                            with vcr_kit.client(mode=mode, fixtures_dir=tmp_path,
                                                base_url=server.url, api_key=key) as client:
                                client.messages.create(model="{MODEL}", max_tokens=16,
                                    messages=[{{"role": "user", "content": text}}])
                        ask("record", "a" * {HUGE}, "sk-ant-test-" + "k" * 30)
                        ask("replay", "b" * {HUGE}, None)
                """
            ),
            encoding="utf-8",
        )
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "VCR_REPORT": "0"}
        done = driver().run("pytest", ["-q", "-p", "no:cacheprovider", "test_huge.py"],
                            cwd=folder, env=env, timeout=120)  # fmt: skip
        self.assertEqual(done.returncode, 1, done.stdout[-2000:] + done.stderr[-2000:])
        self.assertIn("FixtureMissingError", done.stdout)
        self.assertLess(len(done.stdout) + len(done.stderr), 60_000)


if __name__ == "__main__":
    unittest.main()
