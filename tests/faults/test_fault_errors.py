"""Every vcr_kit error reaches the caller as itself, at once, whatever the client (issue #10).

On main an exception that vcr_kit did not raise on purpose (a fixture whose
``response`` is a string: ``AttributeError``; a folder where the fixture should be
written: ``IsADirectoryError``) crossed the SDK as a plain ``Exception``: the SDK
retried it with back-off sleeps (1 to 4 s), called the API again on each attempt in
record mode, and reported ``APIConnectionError: Connection error.``. Here each case
is tried through the three ways a client reaches vcr_kit: ``vcr_kit.client()``, a
client the code builds itself inside a ``VCRTestCase`` (the transport seam), and the
proxy (whose form of "as itself" is an Anthropic error object carrying the message).
"""

from __future__ import annotations

import io
import json
import os
import sys
import textwrap
import time
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import anthropic
import pytest

import vcr_kit
from tests.support.helpers.env import environ_without_vcr, run_captured, temp_dir
from tests.support.helpers.loopback_case import LoopbackTestCase, create
from vcr_kit._engine import recorder as _http

#: Shorter than the SDK's two retry back-offs together (0.5 s and 1 s, each less up to
#: a quarter of jitter: at least 1.125 s), with room for a slow shared machine.
AT_ONCE = 1.1


class ThreeClientsTestCase(LoopbackTestCase):
    def record(self, text: str) -> Path:
        with vcr_kit.client(
            mode="record", fixtures_dir=self.fixtures, base_url=self.server.url, api_key=self.key
        ) as client:
            create(client, text)
        (path,) = [p for p in self.fixtures.glob("*.json") if text in p.read_text()]
        self.server.reset_log()
        return path

    def corrupt(self, path: Path, change: Callable[[dict[str, Any]], None]) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        change(doc)
        path.write_text(json.dumps(doc), encoding="utf-8")

    # -- the three clients: each returns what the caller got and how long it took ----

    def via_client(self, text: str, mode: str) -> tuple[BaseException, float]:
        with vcr_kit.client(
            mode=mode, fixtures_dir=self.fixtures, base_url=self.server.url, api_key=self.key
        ) as client:
            return self.raised(lambda: create(client, text))

    def via_seam(self, text: str, mode: str) -> tuple[BaseException, float]:
        outcome: list[tuple[BaseException, float]] = []
        fixtures, url, key, raised = self.fixtures, self.server.url, self.key, self.raised

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures
            vcr_mode = mode

            def test_it(self) -> None:
                # The code builds its own client: only the transport seam sees it.
                with anthropic.Anthropic(base_url=url, api_key=key) as client:
                    outcome.append(raised(lambda: create(client, text)))

        suite = unittest.defaultTestLoader.loadTestsFromTestCase(CodeUnderTest)
        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
        self.assertEqual(result.errors + result.failures, [])
        return outcome[0]

    def via_proxy(self, text: str, mode: str) -> tuple[BaseException, float]:
        with (
            vcr_kit.proxy(mode=mode, fixtures_dir=self.fixtures, upstream=self.server.url) as url,
            mock.patch("sys.stderr", io.StringIO()),  # the proxy logs each refusal
            anthropic.Anthropic(base_url=url, api_key=self.key) as client,
        ):
            return self.raised(lambda: create(client, text))

    def raised(self, call: Callable[[], Any]) -> tuple[BaseException, float]:
        start = time.monotonic()
        try:
            call()
        except Exception as exc:
            return exc, time.monotonic() - start
        self.fail("the call succeeded")

    def assert_as_itself(
        self,
        got: tuple[BaseException, float],
        how: str,
        error: type[vcr_kit.VCRError],
        message: str,
    ) -> None:
        exc, elapsed = got
        if how == "proxy":  # an Anthropic error object; 400: the SDK never retries it
            self.assertIsInstance(exc, anthropic.BadRequestError)
            assert isinstance(exc, anthropic.BadRequestError)
            body: Any = exc.body  # the whole object, or its "error" part (older SDKs)
            error_object = body.get("error", body) if isinstance(body, dict) else {}
            self.assertEqual(error_object.get("message"), message)
            self.assertEqual(exc.status_code, 400)
        else:
            self.assertIsInstance(exc, error)
            self.assertNotIsInstance(exc, anthropic.APIConnectionError)
            self.assertEqual(str(exc), message)
        self.assertLess(elapsed, AT_ONCE, f"{how}: {elapsed:.2f} s: the SDK retried it")

    def each_client(self) -> list[tuple[str, Callable[[str, str], tuple[BaseException, float]]]]:
        return [("client", self.via_client), ("seam", self.via_seam), ("proxy", self.via_proxy)]


@pytest.mark.inprocess
class CorruptFixtureTest(ThreeClientsTestCase):
    def test_a_response_that_is_a_string(self) -> None:
        path = self.record("String answer")
        self.corrupt(path, lambda doc: doc.update(response="hello"))
        message = (
            f"Fixture {path} cannot be replayed: response: a string, not an object with a "
            "status. Delete it, or re-record it with VCR_MODE=record."
        )
        for how, play in self.each_client():
            for mode in ("auto", "replay"):
                with self.subTest(how=how, mode=mode):
                    got = play("String answer", mode)
                    self.assert_as_itself(got, how, vcr_kit.FixtureCorruptError, message)
        self.assertEqual(self.server.log, [])

    def test_a_folder_at_the_fixture_path(self) -> None:
        path = self.record("A folder")
        path.unlink()
        path.mkdir()
        message = f"Fixture {path} is a folder, not a file. Remove it."
        for how, play in self.each_client():
            with self.subTest(how=how):
                got = play("A folder", "auto")
                self.assert_as_itself(got, how, vcr_kit.FixtureCorruptError, message)
        self.assertEqual(self.server.log, [])

    def test_an_unforeseen_fault_names_the_fixture(self) -> None:
        # A fault no check foresaw, inside vcr_kit's own handling: it must not leak
        # as AttributeError, nor be retried as a connection error.
        path = self.record("Unforeseen")

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise AttributeError("'str' object has no attribute 'get'")

        message = (
            f"vcr_kit could not handle the fixture of {path}: AttributeError: 'str' object "
            "has no attribute 'get'. Run `python -m vcr_kit check` on the folder; delete the "
            "fixture or re-record it with VCR_MODE=record."
        )
        # Both ways a replay builds its answer: the full one, and the one for a request
        # that names its fixture as it is (``_engine/prepared.py``).
        with (
            mock.patch.object(_http, "rebuild_response", broken),
            mock.patch.object(_http, "response_from_head", broken),
        ):
            for how, play in self.each_client():
                with self.subTest(how=how):
                    got = play("Unforeseen", "replay")
                    self.assert_as_itself(got, how, vcr_kit.FixtureCorruptError, message)
        self.assertEqual(self.server.log, [])


@pytest.mark.inprocess
class UpstreamErrorsStillRetriedTest(ThreeClientsTestCase):
    def test_a_refused_connection_is_the_sdks_to_retry(self) -> None:
        # The other side of the rule: the upstream's own errors reach the SDK unchanged.
        with vcr_kit.client(
            mode="auto",
            fixtures_dir=self.fixtures,
            base_url="http://127.0.0.1:9",
            api_key=self.key,
            max_retries=0,
        ) as client:
            exc, _ = self.raised(lambda: create(client, "Nobody listens"))
        self.assertIsInstance(exc, anthropic.APIConnectionError)


#: A user's test module that imports the SDK only inside its test, after vcr_kit's
#: seams are in place (as code under test that imports it lazily does).
_LAZY_IMPORT_TEST = textwrap.dedent(
    """
    import unittest
    import vcr_kit

    class LazyImport(vcr_kit.VCRTestCase):
        def test_ask(self):
            import anthropic

            client = anthropic.Anthropic(max_retries=2)
            client.messages.create(
                model="claude-opus-4-7", max_tokens=5,
                messages=[{"role": "user", "content": "imported late"}],
            )
    """
)


@pytest.mark.child
@pytest.mark.matrix
class SdkImportedDuringTheTestTest(unittest.TestCase):
    def test_a_keyless_miss_reaches_the_caller_as_itself(self) -> None:
        # anthropic 0.x turned every exception inside its retry loop into
        # "APIConnectionError: Connection error." (after two back-off sleeps); the
        # passage for vcr_kit's errors is now put in place when the SDK is imported.
        folder = temp_dir(self)
        (folder / "test_lazy.py").write_text(_LAZY_IMPORT_TEST, encoding="utf-8")
        env = {
            **environ_without_vcr(),
            "VCR_MODE": "auto",
            "VCR_REPORT": "0",
            "PYTHONPATH": os.pathsep.join(sys.path),
        }
        env.pop("ANTHROPIC_API_KEY", None)
        done = run_captured(
            [sys.executable, "-m", "unittest", "test_lazy"], cwd=folder, env=env, timeout=120
        )
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("vcr_kit.errors.FixtureMissingError: Fixture missing: ", done.stderr)
        self.assertIn(
            "Recording it needs an API key: set ANTHROPIC_API_KEY (in the environment or in "
            ".env) and run again.",
            done.stderr,
        )
        self.assertNotIn("Connection error", done.stderr)
        self.assertNotIn("Retrying request", done.stderr)


if __name__ == "__main__":
    unittest.main()
