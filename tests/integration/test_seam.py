"""The seam: which requests it takes, which it leaves alone, and that no call is silent.

Real SDK, real loopback server, real ``VCRTestCase`` tests run by a real runner.
"""

from __future__ import annotations

import io
import os
import socket
import time
import unittest
import urllib.request
from typing import Any

import anthropic
import pytest

import vcr_kit
from tests.support.helpers.env import patch_env
from tests.support.helpers.loopback_case import LoopbackTestCase
from vcr_kit._core.httplib import sdk_library
from vcr_kit._ledger import journal as _journal
from vcr_kit._seams import intercept as _intercept
from vcr_kit._seams.hosts import HostSet, anthropic_hosts, parse_host

pytestmark = pytest.mark.inprocess

MODEL = "claude-opus-4-7"
KEY = "sk-ant-test-" + "s" * 32
http: Any = sdk_library()


def run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)


def problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in [*result.errors, *result.failures])


def ask(client: Any, text: str) -> str:
    reply = client.messages.create(
        model=MODEL, max_tokens=20, messages=[{"role": "user", "content": text}]
    )
    return str(reply.content[0].text)


class HostsTest(unittest.TestCase):
    def test_parse_host_forms(self) -> None:
        cases = {
            "api.anthropic.com": ("api.anthropic.com", None),
            "Gateway.Internal:8443": ("gateway.internal", 8443),
            "https://llm.example.com/anthropic": ("llm.example.com", 443),
            "http://127.0.0.1:9000": ("127.0.0.1", 9000),
            "[::1]:8080": ("::1", 8080),
        }
        for text, expected in cases.items():
            with self.subTest(text=text):
                self.assertEqual(parse_host(text, "VCR_HOSTS"), expected)

    def test_bad_hosts_are_refused_by_name(self) -> None:
        for text in ("bad host", "host:notaport", "https://"):
            with self.subTest(text=text), self.assertRaises(vcr_kit.ConfigError) as caught:
                parse_host(text, "VCR_HOSTS")
            self.assertEqual(
                str(caught.exception),
                f"VCR_HOSTS={text!r} is not a host vcr_kit can match; use a host name, "
                "host:port or a URL, e.g. VCR_HOSTS=llm-gateway.internal:8443.",
            )

    def test_matching(self) -> None:
        hosts = HostSet([("api.anthropic.com", None), ("127.0.0.1", 9000)])
        self.assertTrue(hosts.matches("API.anthropic.com", None))
        self.assertTrue(hosts.matches("api.anthropic.com", 8443))
        self.assertTrue(hosts.matches("127.0.0.1", 9000))
        self.assertFalse(hosts.matches("127.0.0.1", 9001))
        self.assertFalse(hosts.matches("example.com", None))

    def test_the_environment_adds_hosts(self) -> None:
        patch_env(self, ANTHROPIC_BASE_URL="http://127.0.0.1:7000", VCR_HOSTS="a.example, b:81")
        self.assertEqual(
            anthropic_hosts(["c.example"]).names(),
            ["127.0.0.1:7000", "a.example", "api.anthropic.com", "b:81", "c.example"],
        )


class SeamTestBase(LoopbackTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.fixtures = self.tmp  # the fixtures go in the temp folder itself


class WhatTheSeamTakesTest(SeamTestBase):
    def test_other_hosts_and_a_tests_own_mock_are_left_alone(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        patch_env(self, ANTHROPIC_API_KEY=KEY, VCR_MODE="replay")
        seen: dict[str, Any] = {}

        def mocked(request: Any) -> Any:
            return http.Response(200, json={"mocked": True})

        class Untouched(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                # The loopback server is no Anthropic host here, and this is no SDK call.
                with http.Client() as plain:
                    seen["other"] = plain.get(url + "/v1/models").status_code
                with http.Client(transport=http.MockTransport(mocked)) as mock:
                    seen["mock"] = mock.post("https://api.anthropic.com/v1/messages").json()
                self.assertEqual(self.vcr_journal.entries, [])

        result = run_case(Untouched)
        self.assertTrue(result.wasSuccessful(), problems(result))
        # 401: the request reached the server as it was (no key), neither replayed nor refused.
        self.assertEqual(seen, {"other": 401, "mock": {"mocked": True}})
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual(list(fixtures.glob("*.json")), [])

    def test_vcr_hosts_adds_a_host_for_raw_http_clients(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        host = url.removeprefix("http://")
        patch_env(self, ANTHROPIC_API_KEY=KEY, VCR_MODE="auto")
        statuses: list[int] = []

        class Gateway(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures
            vcr_hosts = (host,)

            def test_it(self) -> None:
                with http.Client() as raw:  # no anthropic-version header: known by host only
                    for _ in range(2):
                        statuses.append(
                            raw.get(url + "/v1/models", headers={"x-api-key": KEY}).status_code
                        )
                self.assertRecorded(1)
                self.assertReplayed(1)

        result = run_case(Gateway)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(statuses, [200, 200])
        self.assertEqual(len(self.server.log), 1)


class NoSilentLiveCallsTest(SeamTestBase):
    def test_mode_off_calls_are_journaled_and_fail_assert_no_live_calls(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        patch_env(self, ANTHROPIC_API_KEY=KEY, VCR_MODE="off", ANTHROPIC_BASE_URL=url)
        caught: list[str] = []

        class Off(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with anthropic.Anthropic(max_retries=0) as client:
                    ask(client, "off one")
                    ask(client, "off two")
                self.assertEqual(
                    [e.event for e in self.vcr_journal.entries], [_journal.Event.LIVE] * 2
                )
                try:
                    self.assertNoLiveCalls()
                except AssertionError as exc:
                    caught.append(str(exc))

        result = run_case(Off)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(
            caught,
            [
                "vcr_kit: expected replay only, but the API was called: "
                f"live POST {url}/v1/messages, live POST {url}/v1/messages"
            ],
        )
        self.assertEqual(list(fixtures.glob("*.json")), [])
        self.assertEqual(len(self.server.log), 2)

    def test_a_transient_answer_passed_back_is_journaled_as_live(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        patch_env(self, ANTHROPIC_API_KEY=KEY, VCR_MODE="auto", ANTHROPIC_BASE_URL=url)
        events: list[list[str]] = []

        class Busy(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with anthropic.Anthropic(max_retries=1) as client:
                    ask(client, "busy [[overloaded-once]]")
                events.append([e.event.value for e in self.vcr_journal.entries])

        result = run_case(Busy)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(events, [["live", "recorded"]])

    def test_replay_mode_refuses_a_client_vcr_kit_cannot_wrap(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        port = url.rsplit(":", 1)[1]
        patch_env(self, VCR_MODE="replay", ANTHROPIC_BASE_URL=url)
        caught: list[BaseException] = []

        class Urllib(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                try:
                    urllib.request.urlopen(url + "/v1/models", timeout=5)
                except vcr_kit.FixtureMissingError as exc:
                    caught.append(exc)
                self.assertEqual([e.event.value for e in self.vcr_journal.entries], ["missing"])

        result = run_case(Urllib)
        self.assertTrue(result.wasSuccessful(), problems(result))
        (error,) = caught
        self.assertEqual(
            str(error),
            f"Fixture missing: vcr_kit refused a connection to 127.0.0.1:{port} in replay mode. "
            "It came from urllib.request, an HTTP client vcr_kit could not wrap (one that "
            "does not send through httpx2's or httpx's own transport or through aiohttp), so "
            "no fixture could be looked up for it. Send it through httpx2, httpx or aiohttp "
            "(e.g. build it with vcr_kit.client()), or run the process through the proxy "
            "(python -m vcr_kit run -- ...), which records any client.",
        )
        self.assertEqual(self.server.log, [])

    def test_outside_replay_an_unwrapped_client_is_journaled_as_live(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        patch_env(self, VCR_MODE="auto", ANTHROPIC_BASE_URL=url)
        entries: list[tuple[str, str]] = []

        class Urllib(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                request = urllib.request.Request(url + "/v1/models", headers={"x-api-key": KEY})
                with urllib.request.urlopen(request, timeout=5) as answer:
                    answer.read()
                entries.extend((e.event.value, e.detail) for e in self.vcr_journal.entries)
                with self.assertRaises(AssertionError):
                    self.assertNoLiveCalls()

        result = run_case(Urllib)
        self.assertTrue(result.wasSuccessful(), problems(result))
        host = url.removeprefix("http://")
        self.assertEqual(
            entries, [("live", f"connection to {host} from a client vcr_kit could not wrap")]
        )


class OwnProxyTest(SeamTestBase):
    def test_a_tests_own_proxy_is_reached_in_replay_mode(self) -> None:
        # vcr_proxy points ANTHROPIC_BASE_URL at a proxy of this process: the guard must
        # let in-process clients reach it (the proxy replays), not refuse them.
        fixtures, url = self.fixtures, self.server.url
        patch_env(self, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url, VCR_MODE="auto")
        answers: list[str] = []

        class ViaProxy(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures
            vcr_proxy = True

            def test_it(self) -> None:
                self.assertNotEqual(os.environ["ANTHROPIC_BASE_URL"], url)
                with anthropic.Anthropic(max_retries=0) as client:
                    answers.append(ask(client, "through the proxy"))

        for mode in ("auto", "replay"):
            os.environ["VCR_MODE"] = mode
            result = run_case(ViaProxy)
            self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(answers, ["Echo: through the proxy"] * 2)
        self.assertEqual(len(self.server.log), 1)


class ErrorsReachTheCallerTest(SeamTestBase):
    def test_a_miss_is_raised_at_once_as_itself_with_retries_on(self) -> None:
        fixtures, url = self.fixtures, self.server.url
        patch_env(self, VCR_MODE="replay", ANTHROPIC_BASE_URL=url)
        seen: list[tuple[type[BaseException], int, float]] = []

        class Miss(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with anthropic.Anthropic(max_retries=3) as client:
                    started = time.monotonic()
                    try:
                        ask(client, "never recorded")
                    except BaseException as exc:  # the class is the point
                        seen.append(
                            (
                                type(exc),
                                self.vcr_journal.count(_journal.Event.MISSING),
                                time.monotonic() - started,
                            )
                        )

        result = run_case(Miss)
        self.assertTrue(result.wasSuccessful(), problems(result))
        ((cls, misses, _),) = seen
        # The SDK did not retry (one lookup, no back-off) nor wrap it as a connection error.
        self.assertTrue(issubclass(cls, vcr_kit.FixtureMissingError), cls)
        self.assertFalse(issubclass(cls, anthropic.APIConnectionError))
        self.assertEqual(misses, 1)
        self.assertEqual(self.server.log, [])


class InstallTest(SeamTestBase):
    def test_the_seam_is_installed_only_while_a_test_runs(self) -> None:
        library = sdk_library()
        own = library.HTTPTransport.__dict__.get("handle_request")
        states: list[bool] = []

        class Probe(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = self.fixtures

            def test_it(self) -> None:
                states.append(_intercept.is_installed())
                states.append(library.HTTPTransport.__dict__.get("handle_request") is not own)

        result = run_case(Probe)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(states, [True, True])
        self.assertFalse(_intercept.is_installed())
        self.assertIs(library.HTTPTransport.__dict__.get("handle_request"), own)

    def test_each_test_installs_the_same_wrappers_again(self) -> None:
        # Made once per process (``PATCHES.made_once``): a test's set-up is setattrs only.
        library = sdk_library()
        seen: list[tuple[Any, ...]] = []

        class Probe(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = self.fixtures

            def test_one(self) -> None:
                seen.append(self.installed())

            def test_two(self) -> None:
                seen.append(self.installed())

            def installed(self) -> tuple[Any, ...]:
                # What an SDK release lacks (a cloud client, the key check) is None twice.
                places = [
                    (library.HTTPTransport, "handle_request"),
                    (library.AsyncHTTPTransport, "handle_async_request"),
                    (library.HTTPTransport, "__init__"),
                    (anthropic.Anthropic, "_validate_headers"),
                    (getattr(anthropic, "AnthropicBedrock", object), "_prepare_request"),
                    (socket.socket, "connect"),
                ]
                return (*(vars(owner).get(name) for owner, name in places), socket.getaddrinfo)

        result = run_case(Probe)
        self.assertTrue(result.wasSuccessful(), problems(result))
        first, second = seen
        self.assertEqual([a is b for a, b in zip(first, second, strict=True)], [True] * 7)
        self.assertIsNotNone(first[0])
        self.assertFalse(_intercept.is_installed())
        self.assertIsNot(socket.getaddrinfo, first[6])  # put back after the last test


if __name__ == "__main__":
    unittest.main()
