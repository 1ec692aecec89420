"""The connection guard sees addresses, not only names.

asyncio and aiohttp never look up a numeric host, so a base URL such as
``http://127.0.0.1:PORT`` or ``http://[::1]:PORT`` reaches the network past a guard
that watches ``getaddrinfo``. These tests open such connections the ways clients do
(a blocking socket, asyncio's ``open_connection``, a thread) and check that replay
refuses each before it leaves, that the other modes journal it as ``live``, and that
a test's own servers on other ports are left alone.
"""

from __future__ import annotations

import asyncio
import io
import socket
import threading
import unittest
from typing import Any

import pytest

import vcr_kit
from tests.support.helpers.env import patch_env, start_server, temp_dir

pytestmark = pytest.mark.inprocess


def run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)


def problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in [*result.errors, *result.failures])


def blocking(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect((host, port))


def with_asyncio(host: str, port: int) -> None:
    async def open_it() -> None:
        _, writer = await asyncio.open_connection(host, port)
        writer.close()
        await writer.wait_closed()

    asyncio.run(open_it())


def in_a_thread(host: str, port: int) -> None:
    failed: list[BaseException] = []

    def target() -> None:
        try:
            with_asyncio(host, port)
        except BaseException as exc:  # handed to the test's thread
            failed.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join(10)
    if failed:
        raise failed[0]


WAYS = {"blocking": blocking, "asyncio": with_asyncio, "thread": in_a_thread}


class AddressGuardTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = start_server(self)
        self.other = start_server(self)
        self.fixtures = temp_dir(self)
        self.port = int(self.server.url.rsplit(":", 1)[1])

    def _case(self, opener: Any, host: str, port: int) -> tuple[list[Any], list[tuple[str, str]]]:
        fixtures = self.fixtures
        caught: list[BaseException] = []
        entries: list[tuple[str, str]] = []

        class Case(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                try:
                    opener(host, port)
                except vcr_kit.FixtureMissingError as exc:
                    caught.append(exc)
                entries.extend((e.event.value, e.detail) for e in self.vcr_journal.entries)

        result = run_case(Case)
        self.assertTrue(result.wasSuccessful(), problems(result))
        return caught, entries

    def test_replay_refuses_a_numeric_base_url_however_it_is_opened(self) -> None:
        patch_env(self, VCR_MODE="replay", VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url)
        for way, opener in WAYS.items():
            with self.subTest(way=way):
                caught, entries = self._case(opener, "127.0.0.1", self.port)
                self.assertEqual(len(caught), 1)
                self.assertTrue(
                    str(caught[0]).startswith(
                        "Fixture missing: vcr_kit refused a connection to "
                        f"127.0.0.1:{self.port} in replay mode. It came from "
                    ),
                    str(caught[0]),
                )
                self.assertEqual(entries, [("missing", f"connection to 127.0.0.1:{self.port}")])
        self.assertEqual(self.server.log, [])

    def test_the_message_names_the_client(self) -> None:
        patch_env(self, VCR_MODE="replay", VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url)
        (error,), _ = self._case(blocking, "127.0.0.1", self.port)
        self.assertEqual(
            str(error),
            f"Fixture missing: vcr_kit refused a connection to 127.0.0.1:{self.port} in replay "
            f"mode. It came from {__name__}, an HTTP client vcr_kit could not wrap (one that "
            "does not send through httpx2's or httpx's own transport or through aiohttp), so "
            "no fixture could be looked up for it. Send it through httpx2, httpx or aiohttp "
            "(e.g. build it with vcr_kit.client()), or run the process through the proxy "
            "(python -m vcr_kit run -- ...), which records any client.",
        )

    def test_ipv6_and_a_listed_gateway_address_are_refused(self) -> None:
        patch_env(
            self,
            VCR_MODE="replay",
            VCR_REPORT="0",
            ANTHROPIC_BASE_URL="http://[::1]:8123",
            VCR_HOSTS="10.0.0.5:8443",
        )
        for host, port, shown in (("::1", 8123, "[::1]:8123"), ("10.0.0.5", 8443, None)):
            with self.subTest(host=host):
                caught, entries = self._case(with_asyncio, host, port)
                self.assertEqual(len(caught), 1)
                self.assertEqual(
                    entries, [("missing", f"connection to {shown or f'{host}:{port}'}")]
                )

    def test_outside_replay_the_connection_is_journaled_as_live(self) -> None:
        patch_env(self, VCR_MODE="auto", VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url)
        for way, opener in WAYS.items():
            with self.subTest(way=way):
                caught, entries = self._case(opener, "127.0.0.1", self.port)
                self.assertEqual(caught, [])
                self.assertEqual(
                    entries,
                    [
                        (
                            "live",
                            f"connection to 127.0.0.1:{self.port} from a client vcr_kit "
                            "could not wrap",
                        )
                    ],
                )

    def test_a_tests_own_server_on_another_port_is_untouched(self) -> None:
        patch_env(self, VCR_MODE="replay", VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url)
        other = int(self.other.url.rsplit(":", 1)[1])
        for way, opener in WAYS.items():
            with self.subTest(way=way):
                self.assertEqual(self._case(opener, "127.0.0.1", other), ([], []))

    def test_outside_a_test_nothing_is_watched(self) -> None:
        patch_env(self, VCR_MODE="replay", VCR_REPORT="0", ANTHROPIC_BASE_URL=self.server.url)
        with_asyncio("127.0.0.1", self.port)  # no test running: a plain connection
        self.assertIs(socket.socket.connect, socket.socket.__mro__[1].connect)  # type: ignore[attr-defined]


class WayOutTest(unittest.TestCase):
    def test_an_httpx_client_on_its_own_transport_is_told_to_take_vcr_transport(self) -> None:
        from vcr_kit._seams.guard import unwrapped_client_message

        self.assertEqual(
            unwrapped_client_message("10.0.0.5", 8443, "httpx._transports.default"),
            "Fixture missing: vcr_kit refused a connection to 10.0.0.5:8443 in replay mode. "
            "It came from httpx._transports.default, an HTTP client vcr_kit could not wrap "
            "(one built on its own transport, not httpx's), so no fixture could be looked up "
            "for it. Give that client a vcr_kit.VCRTransport or build it with "
            "vcr_kit.client(), or run the process through the proxy "
            "(python -m vcr_kit run -- ...).",
        )
