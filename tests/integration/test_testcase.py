"""VCRTestCase / VCRMixin: per-test activation, interception of SDK-built clients,
the journal and its assertion helpers, async tests. Real SDK, real loopback server.

The test classes under test are defined inside the test methods (so no runner
collects them) and run with a real ``unittest`` runner.
"""

from __future__ import annotations

import io
import os
import unittest
from typing import Any

import anthropic
import pytest

import vcr_kit
from tests.support.helpers.loopback_case import LoopbackTestCase
from vcr_kit._ledger.journal import Event
from vcr_kit._seams import intercept as _intercept

pytestmark = pytest.mark.inprocess

MODEL = "claude-opus-4-7"
KEY = "sk-ant-test-" + "k" * 32


def ask_with_own_client(question: str) -> str:
    """Code under test: builds its own client, nothing injected."""
    with anthropic.Anthropic(max_retries=0) as client:
        reply = client.messages.create(
            model=MODEL, max_tokens=50, messages=[{"role": "user", "content": question}]
        )
    return "".join(block.text for block in reply.content if block.type == "text")


async def ask_async_with_own_client(question: str) -> str:
    client = anthropic.AsyncAnthropic(max_retries=0)
    try:
        reply = await client.messages.create(
            model=MODEL, max_tokens=50, messages=[{"role": "user", "content": question}]
        )
    finally:
        await client.close()
    return "".join(block.text for block in reply.content if block.type == "text")


def run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)


def problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in [*result.errors, *result.failures])


class MixinTestBase(LoopbackTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.fixtures = self.tmp  # the fixtures go in the temp folder itself

    def messages_requests(self) -> int:
        return len(self.server.requests_to("/v1/messages"))


class InterceptionTest(MixinTestBase):
    def test_a_client_built_by_the_code_is_recorded_then_replayed_offline(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class Recording(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                seen["answer"] = ask_with_own_client("Hello from the code")
                seen["recorded"] = len(self.vcr_journal.paths(Event.RECORDED))

        os.environ.update(
            {"ANTHROPIC_BASE_URL": self.server.url, "ANTHROPIC_API_KEY": KEY, "VCR_MODE": "auto"}
        )
        result = run_case(Recording)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen, {"answer": "Echo: Hello from the code", "recorded": 1})
        self.assertEqual(self.messages_requests(), 1)
        self.assertEqual(len(list(fixtures.glob("*.json"))), 1)

        # Replay: no key, CI, and the server's address unreachable (a closed port).
        self.server.stop()
        os.environ.pop("ANTHROPIC_API_KEY")
        os.environ.pop("VCR_MODE")
        os.environ.update({"CI": "true", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
        seen.clear()

        class Replaying(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                seen["answer"] = ask_with_own_client("Hello from the code")
                self.assertReplayed(1)
                self.assertNoLiveCalls()

        result = run_case(Replaying)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen["answer"], "Echo: Hello from the code")
        self.assertNotIn("ANTHROPIC_API_KEY", os.environ)  # the dummy key is gone again

    def test_after_a_test_and_after_a_failing_test_clients_reach_the_server_again(self) -> None:
        fixtures = self.fixtures
        os.environ.update(
            {"ANTHROPIC_BASE_URL": self.server.url, "ANTHROPIC_API_KEY": KEY, "VCR_MODE": "auto"}
        )

        class Passing(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                self.assertTrue(_intercept.is_installed())
                ask_with_own_client("inside a passing test")

        class Failing(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                ask_with_own_client("inside a failing test")
                self.fail("on purpose")

        class Erroring(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def setUp(self) -> None:
                raise RuntimeError("setUp blew up")

            def test_it(self) -> None:  # pragma: no cover - setUp fails first
                pass

        self.assertTrue(run_case(Passing).wasSuccessful())
        self.assertEqual(len(run_case(Failing).failures), 1)
        self.assertEqual(len(run_case(Erroring).errors), 1)
        self.assertFalse(_intercept.is_installed())
        os.environ.pop("VCR_MODE")
        before = self.messages_requests()

        # Outside tests, the same question that is now recorded goes to the server.
        self.assertEqual(
            ask_with_own_client("inside a passing test"), "Echo: inside a passing test"
        )
        self.assertEqual(self.messages_requests(), before + 1)
        self.assertEqual(len(list(fixtures.glob("*.json"))), 2)

    def test_clients_with_their_own_http_client_are_intercepted_too(self) -> None:
        # langchain-anthropic hands the SDK a DefaultHttpxClient subclass, pydantic-ai a
        # plain httpx2 client (httpx under anthropic 0.x): the seam is the library's
        # transport, so both are covered.
        fixtures = self.fixtures
        os.environ.update({"ANTHROPIC_API_KEY": KEY, "VCR_MODE": "auto"})
        url = self.server.url

        class OwnHttpClient(anthropic.DefaultHttpxClient):
            pass

        class Custom(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                from vcr_kit._core.httplib import sdk_library

                for http_client in (sdk_library().Client(), OwnHttpClient()):
                    with anthropic.Anthropic(base_url=url, http_client=http_client) as client:
                        client.messages.create(
                            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x"}]
                        )
                self.assertRecorded(1)
                self.assertReplayed(1)

        result = run_case(Custom)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(len(list(fixtures.glob("*.json"))), 1)
        self.assertEqual(self.messages_requests(), 1)


class JournalAndHelpersTest(MixinTestBase):
    def test_assertion_helpers_fail_with_a_readable_list(self) -> None:
        fixtures = self.fixtures
        os.environ.update({"ANTHROPIC_API_KEY": KEY, "VCR_MODE": "auto"})
        url = self.server.url
        messages: dict[str, str] = {}

        class Helpers(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                client = vcr_kit.client(base_url=url)
                self.addCleanup(client.close)
                client.messages.create(
                    model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "journal"}]
                )
                self.assertRecorded(1)
                for helper in (self.assertNoLiveCalls, lambda: self.assertReplayed(1)):
                    with self.assertRaises(AssertionError) as caught:
                        helper()
                    messages[helper.__name__] = str(caught.exception)

        result = run_case(Helpers)
        self.assertTrue(result.wasSuccessful(), problems(result))
        (name,) = [p.name for p in fixtures.glob("*.json")]
        shown = str(fixtures / name)
        self.assertEqual(
            messages["assertNoLiveCalls"],
            f"vcr_kit: expected replay only, but the API was called: recorded {shown}",
        )
        self.assertEqual(
            messages["<lambda>"], "vcr_kit: expected 1 replayed fixture(s), got 0: none"
        )

    def test_class_attributes_set_mode_and_folder_for_cassettes_and_clients(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class Strict(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures
            vcr_mode = "replay"

            def test_it(self) -> None:
                with vcr_kit.fixture({"q": 1}, "answer") as f:
                    seen["path"] = f.path
                    with self.assertRaises(vcr_kit.FixtureMissingError):
                        f.play(lambda: 42)
                with self.assertRaises(vcr_kit.FixtureMissingError):
                    self.anthropic.messages.create(
                        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x"}]
                    )
                seen["missing"] = len(self.vcr_journal.paths(Event.MISSING))

        result = run_case(Strict)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen["path"].parent, fixtures)
        self.assertEqual(seen["missing"], 2)
        self.assertEqual(self.messages_requests(), 0)

    def test_an_unknown_class_mode_fails_the_test_with_the_valid_list(self) -> None:
        class Bad(vcr_kit.VCRTestCase):
            vcr_mode = "sometimes"

            def test_it(self) -> None:  # pragma: no cover - never reached
                pass

        # The test errors with the message (the run goes on to its summary): issue 30.
        result = run_case(Bad)
        self.assertEqual((result.testsRun, len(result.errors)), (1, 1))
        self.assertEqual(
            result.errors[0][1].strip().splitlines()[-1],
            "vcr_kit.errors.ConfigError: vcr_mode='sometimes' is not a mode vcr_kit knows; "
            "use one of: auto, replay, record, off.",
        )


class NoKeyTest(MixinTestBase):
    def test_without_a_key_a_miss_says_so_and_nothing_is_sent(self) -> None:
        fixtures = self.fixtures
        url = self.server.url
        messages: list[str] = []

        class NoKey(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures
            vcr_mode = "auto"

            def test_it(self) -> None:
                # The test's stand-in key is set: both clients must know it is no key.
                self.assertTrue(os.environ["ANTHROPIC_API_KEY"])
                for make in (lambda: vcr_kit.client(base_url=url), self._own_client):
                    with make() as client, self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                        client.messages.create(
                            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "k"}]
                        )
                    messages.append(str(caught.exception))

            def _own_client(self) -> anthropic.Anthropic:
                return anthropic.Anthropic(base_url=url, max_retries=0)

        result = run_case(NoKey)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(len(messages), 2)
        for message in messages:
            self.assertTrue(message.startswith("Fixture missing: "), message)
            self.assertTrue(
                message.endswith(
                    "Recording it needs an API key: set ANTHROPIC_API_KEY (in the environment "
                    "or in .env) and run again."
                ),
                message,
            )
        self.assertEqual(self.server.log, [])
        self.assertEqual(list(fixtures.glob("*.json")), [])


class AsyncMixinTest(MixinTestBase):
    def test_isolated_asyncio_test_case_records_then_replays(self) -> None:
        fixtures = self.fixtures
        seen: list[tuple[str, str, bool]] = []

        class AsyncCase(vcr_kit.VCRMixin, unittest.IsolatedAsyncioTestCase):
            vcr_fixtures_dir = fixtures

            async def test_both_clients(self) -> None:
                own = await ask_async_with_own_client("async hello")
                reply = await self.async_anthropic.messages.create(
                    model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "mixin"}]
                )
                text = reply.content[0].text  # type: ignore[union-attr]
                seen.append((own, text, bool(self.vcr_journal.paths(Event.REPLAYED))))

        os.environ.update(
            {"ANTHROPIC_BASE_URL": self.server.url, "ANTHROPIC_API_KEY": KEY, "VCR_MODE": "auto"}
        )
        result = run_case(AsyncCase)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(self.messages_requests(), 2)

        self.server.stop()
        for name in ("ANTHROPIC_API_KEY", "VCR_MODE"):
            os.environ.pop(name)
        os.environ.update({"CI": "true", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
        result = run_case(AsyncCase)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(
            seen,
            [
                ("Echo: async hello", "Echo: mixin", False),
                ("Echo: async hello", "Echo: mixin", True),
            ],
        )


if __name__ == "__main__":
    unittest.main()
