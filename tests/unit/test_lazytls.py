"""Clients built during a test set up TLS only when a request goes to the network.

Against a real HTTPS loopback server with a self-signed certificate: a recording
client built during a test still verifies the server exactly as the SDK would
(refused without the CA, accepted with ``verify=`` a context that trusts it), and a
replaying one never creates an SSL context at all.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import threading
import unittest
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest

from tests.support.helpers.env import patch_env, temp_dir
from vcr_kit._core.httplib import sdk_library
from vcr_kit._integrations.testcase import vcr_session
from vcr_kit._seams import lazytls as _lazytls

http: Any = sdk_library()

MESSAGE = {
    "id": "msg_01tls",
    "type": "message",
    "role": "assistant",
    "model": "claude-opus-4-7",
    "content": [{"type": "text", "text": "over TLS"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 2},
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.server.hits += 1  # type: ignore[attr-defined]
        body = json.dumps(MESSAGE).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", "req_01tls")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def make_certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,digitalSignature,keyCertSign",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextmanager
def https_server(cert: Path, key: Path) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.hits = 0  # type: ignore[attr-defined]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def counting_ssl_contexts() -> Iterator[list[int]]:
    """Counts every ``ssl.SSLContext`` created while the block runs."""
    count = [0]
    original = ssl.SSLContext.__new__

    def new(cls: type[ssl.SSLContext], *args: Any, **kwargs: Any) -> ssl.SSLContext:
        count[0] += 1
        return original(cls, *args, **kwargs)

    ssl.SSLContext.__new__ = staticmethod(new)  # type: ignore[assignment, method-assign]
    try:
        yield count
    finally:
        ssl.SSLContext.__new__ = original  # type: ignore[method-assign]


def ask(client: anthropic.Anthropic) -> str:
    reply = client.messages.create(
        model="claude-opus-4-7", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
    )
    return reply.content[0].text  # type: ignore[union-attr]


def transport_of(client: Any) -> Any:
    return client._client._transport


def find_in_chain(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first ``kind`` among ``error``'s causes and contexts (a chain may loop)."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


@pytest.mark.child
@pytest.mark.matrix
@unittest.skipUnless(shutil.which("openssl"), "needs the openssl command")
class LazyTlsTest(unittest.TestCase):
    cert: ClassVar[Path]
    key: ClassVar[Path]

    @classmethod
    def setUpClass(cls) -> None:
        # One certificate for the class (an RSA key: the slow part); a server per test.
        holder = unittest.TestCase()
        cls.addClassCleanup(holder.doCleanups)
        cls.cert, cls.key = make_certificate(temp_dir(holder))

    def setUp(self) -> None:
        self.folder = temp_dir(self)
        running = https_server(self.cert, self.key)
        server = running.__enter__()
        self.addCleanup(running.__exit__, None, None, None)
        self.server = server
        self.url = f"https://127.0.0.1:{server.server_address[1]}"
        self.fixtures = self.folder / "fixtures"
        patch_env(self, ANTHROPIC_API_KEY="test-key-not-secret", VCR_REPORT="0")

    def trusting(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    def test_a_recording_client_built_in_a_test_refuses_an_untrusted_server(self) -> None:
        with vcr_session(mode="record", fixtures_dir=self.fixtures):
            client = anthropic.Anthropic(base_url=self.url, max_retries=0)
            self.assertTrue(_lazytls.is_lazy(transport_of(client)))
            with self.assertRaises(anthropic.APIConnectionError) as caught:
                ask(client)
        self.assertIsInstance(
            find_in_chain(caught.exception, ssl.SSLCertVerificationError),
            ssl.SSLCertVerificationError,
        )
        self.assertEqual(self.server.hits, 0)  # type: ignore[attr-defined]
        self.assertFalse(self.fixtures.exists() and any(self.fixtures.glob("*.json")))

    def test_a_recording_client_that_trusts_the_server_records_and_replay_builds_no_tls(
        self,
    ) -> None:
        with vcr_session(mode="record", fixtures_dir=self.fixtures):
            client = anthropic.Anthropic(
                base_url=self.url,
                max_retries=0,
                http_client=anthropic.DefaultHttpxClient(verify=self.trusting()),
            )
            self.assertTrue(_lazytls.is_lazy(transport_of(client)))
            self.assertEqual(ask(client), "over TLS")
            self.assertFalse(_lazytls.is_lazy(transport_of(client)))
            self.assertIs(type(transport_of(client)), http.HTTPTransport)
            client.close()
        self.assertEqual(self.server.hits, 1)  # type: ignore[attr-defined]
        self.assertEqual(len(list(self.fixtures.glob("*.json"))), 1)

        with (
            counting_ssl_contexts() as contexts,
            vcr_session(mode="replay", fixtures_dir=self.fixtures),
        ):
            client = anthropic.Anthropic(base_url=self.url)
            self.assertEqual(ask(client), "over TLS")
            self.assertTrue(_lazytls.is_lazy(transport_of(client)))
            client.close()  # nothing to close: still no SSL context
        self.assertEqual(contexts[0], 0)
        self.assertEqual(self.server.hits, 1)  # type: ignore[attr-defined]

    def test_an_async_client_replays_without_tls_and_records_with_verification(self) -> None:
        async def scenario() -> None:
            with vcr_session(mode="record", fixtures_dir=self.fixtures):
                refused = anthropic.AsyncAnthropic(base_url=self.url, max_retries=0)
                with self.assertRaises(anthropic.APIConnectionError):
                    await refused.messages.create(
                        model="claude-opus-4-7",
                        max_tokens=8,
                        messages=[{"role": "user", "content": "hi"}],
                    )
                trusted = anthropic.AsyncAnthropic(
                    base_url=self.url,
                    max_retries=0,
                    http_client=anthropic.DefaultAsyncHttpxClient(verify=self.trusting()),
                )
                reply = await trusted.messages.create(
                    model="claude-opus-4-7",
                    max_tokens=8,
                    messages=[{"role": "user", "content": "hi"}],
                )
                self.assertEqual(reply.content[0].text, "over TLS")  # type: ignore[union-attr]
                await trusted.close()
                await refused.close()
            with (
                counting_ssl_contexts() as contexts,
                vcr_session(mode="replay", fixtures_dir=self.fixtures),
            ):
                client = anthropic.AsyncAnthropic(base_url=self.url)
                async with client:
                    reply = await client.messages.create(
                        model="claude-opus-4-7",
                        max_tokens=8,
                        messages=[{"role": "user", "content": "hi"}],
                    )
                self.assertEqual(reply.content[0].text, "over TLS")  # type: ignore[union-attr]
            self.assertEqual(contexts[0], 0)

        asyncio.run(scenario())
        self.assertEqual(self.server.hits, 1)  # type: ignore[attr-defined]


@pytest.mark.inprocess
class LazyLifecycleTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.fixtures = temp_dir(self)

    def test_outside_a_test_transports_are_built_at_once(self) -> None:
        self.assertFalse(_lazytls.is_lazy(http.HTTPTransport()))
        self.assertFalse(_lazytls.is_lazy(http.AsyncHTTPTransport()))

    def test_a_lazy_transport_outlives_the_test_and_builds_its_pool_on_first_use(self) -> None:
        with vcr_session(mode="replay", fixtures_dir=self.fixtures):
            transport = http.HTTPTransport(verify=False, http1=True)
        self.assertTrue(_lazytls.is_lazy(transport))
        self.assertIsInstance(transport, http.HTTPTransport)
        pool = transport._pool
        self.assertFalse(_lazytls.is_lazy(transport))
        self.assertIs(type(transport), http.HTTPTransport)
        self.assertIs(transport._pool, pool)
        transport.close()

    def test_closing_or_leaving_a_lazy_transport_builds_nothing(self) -> None:
        with vcr_session(mode="replay", fixtures_dir=self.fixtures), counting_ssl_contexts() as n:
            with http.HTTPTransport() as transport:
                pass
            transport.close()
            client = anthropic.Anthropic(api_key="x")
            client.close()
        self.assertEqual(n[0], 0)
        self.assertTrue(_lazytls.is_lazy(transport))

    def test_a_subclass_of_the_transport_is_built_at_once(self) -> None:
        class Mine(http.HTTPTransport):  # type: ignore[misc, name-defined]
            pass

        with vcr_session(mode="replay", fixtures_dir=self.fixtures):
            mine = Mine()
        self.assertFalse(_lazytls.is_lazy(mine))
        self.assertIs(type(mine), Mine)
        mine.close()

    def test_the_same_arguments_reach_the_real_init(self) -> None:
        with vcr_session(mode="replay", fixtures_dir=self.fixtures):
            transport = http.HTTPTransport(verify=False, retries=3, http2=False)
        pool = transport._pool
        self.assertEqual(pool._retries, 3)
        self.assertEqual(pool._ssl_context.verify_mode, ssl.CERT_NONE)
        transport.close()


if __name__ == "__main__":
    unittest.main()
