"""OpenAI as a provider vcr_kit records and replays (issue 31), over the loopback OpenAI
server (``tests/support/servers/openai_server.py``) with the real ``openai`` SDK.

Every case of ``tests/support/children/openai_scenarios.py`` records with a key and
``OPENAI_BASE_URL``, replays with no key and no base URL (the SDK's default host,
``api.openai.com``, which nothing may reach) and re-records byte for byte; clients are
built by the code under test, as in production. The test classes under test are
defined inside the test methods and run with a real ``unittest`` runner.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import secrets
import string
import sys
import textwrap
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

import vcr_kit
from tests.support.children.openai_scenarios import CASES, MODEL, run_async, run_sync
from tests.support.helpers.env import offline, patch_env, run_captured, temp_dir
from tests.support.helpers.paths import ROOT
from tests.support.servers.openai_server import OpenAIServer
from vcr_kit._core import ids
from vcr_kit._ledger import cost as _cost
from vcr_kit._ledger.journal import Event
from vcr_kit._store.secrets import find_secret

#: Every variable the openai SDK (and Azure's client) reads: each test sets its own.
#: Drives the provider SDKs: see tests/tiers.py (which envs run it).
pytestmark = pytest.mark.providers

OPENAI_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_API_VERSION",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "VCR_HOSTS",
)
#: The fixtures one run of the scenarios writes, by endpoint.
FIXTURES_PER_RUN = {
    "openai-post-v1-chat-completions-": 5,
    "openai-post-v1-responses-": 7,
    "openai-post-v1-embeddings-": 1,
    "openai-get-v1-models-": 1,
}
CALLS_PER_RUN = sum(FIXTURES_PER_RUN.values())
#: Models the tests call that may have no price row: each gets one while a test runs.
UNPRICED = (MODEL, "text-embedding-3-small", "openai/gpt-5-mini", "my-deployment")
#: The code under test whose client is built at import (it needs a key then).
APP = "tests.support.children.openai_app"


def openai_key() -> str:
    """A fresh project-key-shaped key: it travels in a header only, no fixture may hold it."""
    alphabet = string.ascii_letters + string.digits
    return "sk-proj-" + "".join(secrets.choice(alphabet) for _ in range(48))


def run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)


def problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in [*result.errors, *result.failures])


class ProviderTestCase(unittest.TestCase):
    """A clean environment (no vcr_kit or OpenAI variable), a loopback OpenAI server, an
    empty fixtures folder and a fresh recording key."""

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        for name in OPENAI_VARS:
            os.environ.pop(name, None)
        self.server = OpenAIServer().start()
        self.addCleanup(self.server.stop)
        self.fixtures = temp_dir(self, prefix="openai-")
        self.key = openai_key()
        for model in UNPRICED:
            if _cost.price_for(model) is None:  # else a warning for each (-W error)
                vcr_kit.set_price(model, vcr_kit.Price(1.0, None, None, 0.1, 2.0))
                self.addCleanup(_forget_price, model)

    def recording(self, mode: str = "auto") -> None:
        """The environment of a developer who records: a key, the server as base URL."""
        self.leave_modes()
        os.environ.update(
            {"OPENAI_API_KEY": self.key, "OPENAI_BASE_URL": self.server.base_url, "VCR_MODE": mode}
        )

    def replaying(self) -> None:
        """CI's: no key, no base URL (the SDK's default host), a miss fails."""
        self.leave_modes()
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            os.environ.pop(name, None)
        os.environ["CI"] = "true"

    def leave_modes(self) -> None:
        for name in ("VCR_MODE", "CI"):
            os.environ.pop(name, None)

    def files(self) -> dict[str, bytes]:
        return {path.name: path.read_bytes() for path in sorted(self.fixtures.glob("*.json"))}

    def assert_clean(self, files: dict[str, bytes]) -> None:
        """No fixture holds the key, an auth header value or the headers never stored."""
        every = b"\n".join(files.values())
        for secret in (self.key, "Bearer", "org-loopback", "proj_loopback", "__cf_bm", "api-key"):
            self.assertNotIn(secret.encode(), every, f"{secret!r} reached a fixture")

    def assert_volatile_fields_fixed(self, files: dict[str, bytes]) -> None:
        """What differs on every call is stored fixed; a model's release date is a fact."""
        stored = {name: json.loads(data)["response"] for name, data in files.items()}
        (models,) = [body for name, body in stored.items() if "-get-v1-models-" in name]
        self.assertEqual(
            [model["created"] for model in models["body"]["data"]][:2], [1765000000, 1754000000]
        )
        chat = [r for n, r in stored.items() if "chat-completions" in n and "body" in r]
        self.assertEqual(
            {(c["body"]["created"], c["body"]["system_fingerprint"]) for c in chat}, {(0, "fp_vcr")}
        )
        streamed = [
            r["events"] for n, r in stored.items() if "chat-completions" in n and "events" in r
        ]
        self.assertTrue(streamed)
        pads = {e["data"]["obfuscation"] for events in streamed for e in events if "data" in e}
        self.assertEqual(pads, {""})
        answers = [r["body"] for n, r in stored.items() if "-responses-" in n and "body" in r]
        self.assertEqual({(a["created_at"], a["completed_at"]) for a in answers}, {(0, 0)})

    def assert_one_run_of_fixtures(self, names: list[str], runs: int = 1) -> None:
        for prefix, count in FIXTURES_PER_RUN.items():
            found = [name for name in names if name.startswith(prefix)]
            self.assertEqual(len(found), count * runs, f"{prefix}: {found}")
        self.assertEqual(len(names), CALLS_PER_RUN * runs, names)


@pytest.mark.inprocess
class SyncClientTest(ProviderTestCase):
    def test_every_case_records_replays_offline_and_rerecords_byte_identically(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def setUp(self) -> None:
                self.client = openai.OpenAI()  # built in setUp, from the environment
                self.addCleanup(self.client.close)

            def test_it(self) -> None:
                phase = os.environ["PHASE"]
                seen[phase] = run_sync(self.client, "sync")
                seen[f"{phase} journal"] = [e.event for e in self.vcr_journal.entries]
                if phase == "replay":
                    self.assertReplayed(CALLS_PER_RUN)
                    self.assertNoLiveCalls()
                    # A replayed answer's ids are given afresh (not the stored stand-ins),
                    # its request id (`x-request-id`) too, on each replay.
                    chat = [
                        self.client.chat.completions.create(
                            model=MODEL, messages=[{"role": "user", "content": "sync: hello"}]
                        )
                        for _ in range(2)
                    ]
                    response = self.client.responses.create(model=MODEL, input="sync: hi")
                    seen["given ids"] = [chat[0].id, response.id]
                    seen["request ids"] = [c._request_id for c in chat] + [response._request_id]

        self.recording()
        os.environ["PHASE"] = "record"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen["record journal"], [Event.RECORDED] * CALLS_PER_RUN)
        self.assertEqual(list(seen["record"]), list(CASES))
        recorded = self.files()
        self.assert_one_run_of_fixtures(list(recorded))
        self.assert_clean(recorded)
        sent = len(self.server.log)
        self.assertEqual(sent, CALLS_PER_RUN)
        self.assert_volatile_fields_fixed(recorded)

        self.replaying()
        os.environ["PHASE"] = "replay"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen["replay"], seen["record"])
        self.assertEqual(len(self.server.log), sent)  # nothing reached the server
        every = b"".join(recorded.values()).decode()
        for given in seen["given ids"]:
            self.assertRegex(given, r"^(chatcmpl-|resp_)vcr_[0-9a-f]{24}$")
            self.assertNotIn(given, every)
        self.assertNotIn("OPENAI_API_KEY", os.environ)  # the stand-in is gone again
        request_ids = seen["request ids"]
        self.assertEqual(len(set(request_ids)), 3, request_ids)
        for request_id in request_ids:
            self.assertRegex(request_id, r"^req_vcr_[0-9a-f]{24}$")

        self.recording(mode="record")
        os.environ["PHASE"] = "rerecord"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen["rerecord"], seen["record"])
        self.assertEqual(self.files(), recorded)

    def test_a_miss_in_replay_names_the_file_and_the_nearest(self) -> None:
        fixtures = self.fixtures
        caught: list[BaseException] = []

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with openai.OpenAI(max_retries=0) as client:
                    try:
                        client.chat.completions.create(
                            model=MODEL, messages=[{"role": "user", "content": os.environ["ASK"]}]
                        )
                    except vcr_kit.FixtureMissingError as error:
                        caught.append(error)

        self.recording()
        os.environ["ASK"] = "recorded once"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        (recorded,) = self.files()
        self.replaying()
        os.environ["ASK"] = "never recorded"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        (error,) = caught
        lines = str(error).splitlines()
        missing = next(fixtures.glob("*.json")).with_name(
            lines[0].split("/")[-1].split(".json")[0] + ".json"
        )
        self.assertRegex(missing.name, r"^openai-post-v1-chat-completions-[0-9a-f]{12}\.json$")
        self.assertEqual(
            lines[:2],
            [
                f"Fixture missing: {missing}. Re-run the tests with VCR_RECORD=1, then commit "
                "the result.",
                f"Nearest recorded fixture: {fixtures / recorded}.",
            ],
        )
        self.assertIn('-        "content": "recorded once",', lines)
        self.assertIn('+        "content": "never recorded",', lines)
        self.assertEqual(len(self.server.log), 1)

        # Mode auto, no key, the server as base URL: the stand-in key never records.
        self.leave_modes()
        os.environ.update(OPENAI_BASE_URL=self.server.base_url, VCR_MODE="auto")
        caught.clear()
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        (error,) = caught
        self.assertEqual(
            str(error).splitlines()[:3],
            [
                lines[0].removesuffix(
                    " Re-run the tests with VCR_RECORD=1, then commit the result."
                ),
                "Recording it needs an OpenAI API key: set OPENAI_API_KEY or AZURE_OPENAI_API_KEY "
                "(in the environment or in .env; no Anthropic API key is needed), and run again.",
                lines[1],
            ],
        )
        self.assertEqual(len(self.server.log), 1)

    def test_cost_is_priced_from_the_usage_openai_reports(self) -> None:
        # USD per million tokens: input, 5-min and 1-h cache writes, cache reads, output.
        vcr_kit.set_price(MODEL, vcr_kit.Price(1.25, 1.5, 3.0, 0.125, 10.0))
        self.addCleanup(_forget_price, MODEL)
        fixtures = self.fixtures
        costs: list[vcr_kit.SessionCost] = []

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                vcr_kit.reset_session_cost()
                with openai.OpenAI(max_retries=0) as client:
                    client.chat.completions.create(
                        model=MODEL, messages=[{"role": "user", "content": "[[cache]] priced"}]
                    )
                    client.responses.create(model=MODEL, input="[[cache]] priced")
                costs.append(vcr_kit.session_cost())

        self.recording()
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.replaying()
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        # [[cache]]: 2006 prompt tokens of which 1920 cached, 300 output of which 192
        # reasoning (billed as output), for each of the two calls; Responses also wrote 40
        # prompt tokens to the cache for 30 minutes (billed at the 5-minute write rate).
        expected = (2 * (1920 * 0.125 + 300 * 10.0) + 86 * 1.25 + 46 * 1.25 + 40 * 1.5) / 1e6
        for spent in costs:
            model = spent.by_model[MODEL]
            counted = (
                model.calls,
                model.input_tokens,
                model.cache_read_tokens,
                model.cache_write_5m_tokens,
                model.output_tokens,
            )
            self.assertEqual(counted, (2, 86 + 46, 2 * 1920, 40, 2 * 300))
            self.assertAlmostEqual(model.usd, expected, places=9)
            self.assertGreater(spent.usd, 0)


def _forget_price(model: str) -> None:
    with _cost.COST.lock:
        _cost.COST.overrides.pop(model, None)
        _cost.COST.prices_version += 1


@pytest.mark.inprocess
class AsyncClientTest(ProviderTestCase):
    def test_the_async_client_records_replays_on_the_recorded_url_and_rerecords(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRMixin, unittest.IsolatedAsyncioTestCase):
            vcr_fixtures_dir = fixtures

            async def asyncSetUp(self) -> None:
                self.client = openai.AsyncOpenAI()
                self.addAsyncCleanup(self.client.close)

            async def test_it(self) -> None:
                seen[os.environ["PHASE"]] = await run_async(self.client, "async")
                if os.environ["PHASE"] == "replay":
                    self.assertReplayed(CALLS_PER_RUN)
                    self.assertNoLiveCalls()

        for phase, mode in (("record", "auto"), ("replay", None), ("rerecord", "record")):
            if mode is None:
                # On the recorded URL this time (the sync test replays on the default
                # host): no key, the server still up, and nothing reaches it.
                self.replaying()
                os.environ["OPENAI_BASE_URL"] = self.server.base_url
            else:
                self.recording(mode)
            os.environ["PHASE"] = phase
            result = run_case(CodeUnderTest)
            self.assertTrue(result.wasSuccessful(), f"{phase}: {problems(result)}")
            if phase == "record":
                recorded = self.files()
                self.assert_one_run_of_fixtures(list(recorded))
                self.assert_clean(recorded)
            self.assertEqual(seen[phase], seen["record"], phase)
        self.assertEqual(self.files(), recorded)
        self.assertEqual(len(self.server.log), 2 * CALLS_PER_RUN)


@pytest.mark.inprocess
class ModuleClientTest(ProviderTestCase):
    def test_a_client_built_at_import_records_and_replays(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                sys.modules.pop(APP, None)  # imported anew, as by a new process
                app = importlib.import_module(APP)
                seen[os.environ["PHASE"]] = [app.ask("module level"), app.embed("module level")]

        self.addCleanup(_reload_without_a_key)
        self.recording()
        os.environ["PHASE"] = "record"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.replaying()
        os.environ["PHASE"] = "replay"
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen["replay"], seen["record"])
        self.assertEqual(seen["record"][0], "Echo: module level")
        self.assertEqual(len(self.server.log), 2)

    def test_a_fixture_block_replays_outside_a_test_with_no_key(self) -> None:
        def embedding(text: str) -> list[float]:
            """Library code: an embedding kept in a generic fixture."""
            with vcr_kit.fixture({"text": text}, "embedding", fixtures_dir=self.fixtures) as f:
                vector: list[float] = f.play(
                    lambda: (
                        openai.OpenAI()
                        .embeddings.create(model="text-embedding-3-small", input=text)
                        .data[0]
                        .embedding
                    )
                )
            return vector

        self.recording()
        recorded = embedding("kept in a block")
        self.replaying()
        os.environ["VCR_MODE"] = "replay"
        self.assertEqual(embedding("kept in a block"), recorded)
        self.assertEqual(len(self.server.log), 1)
        (name,) = self.files()
        self.assertRegex(name, r"^embedding-[0-9a-f]{12}\.json$")


def _reload_without_a_key() -> None:
    """Forget the app module: its client was built with this test's key."""
    sys.modules.pop(APP, None)


@pytest.mark.inprocess
class GatewayTest(ProviderTestCase):
    def test_an_openai_compatible_gateway_in_vcr_hosts(self) -> None:
        gateway = self.server.gateway_url
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with openai.OpenAI(base_url=gateway, max_retries=0) as client:
                    answer = client.chat.completions.create(
                        model="openai/gpt-5-mini", messages=[{"role": "user", "content": "gw"}]
                    )
                seen[os.environ["PHASE"]] = answer.choices[0].message.content

        host = self.server.url.removeprefix("http://")
        self.recording()
        os.environ.update(PHASE="record", VCR_HOSTS=host)
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.server.stop()  # the gateway is gone: replay must not need it
        self.replaying()
        os.environ.update(PHASE="replay", VCR_HOSTS=host)
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(seen, {"record": "Echo: gw", "replay": "Echo: gw"})
        (name,) = self.files()
        self.assertRegex(name, r"^openai-post-api-v1-chat-completions-[0-9a-f]{12}\.json$")

    def test_azure_with_its_api_version_in_the_key(self) -> None:
        endpoint = self.server.url
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                azure = openai.AzureOpenAI(
                    azure_endpoint=endpoint, api_version=os.environ["VERSION"], max_retries=0
                )
                with azure:
                    try:
                        answer = azure.chat.completions.create(
                            model="my-deployment", messages=[{"role": "user", "content": "az"}]
                        )
                        seen[os.environ["PHASE"]] = answer.choices[0].message.content
                    except vcr_kit.FixtureMissingError as error:
                        seen[os.environ["PHASE"]] = str(error).splitlines()[0]

        host = endpoint.removeprefix("http://")
        self.recording()
        os.environ.pop("OPENAI_API_KEY")
        key = "azure-" + self.key
        os.environ.update(
            PHASE="record", VCR_HOSTS=host, AZURE_OPENAI_API_KEY=key, VERSION="2024-10-21"
        )
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(self.server.log[-1].headers["api-key"], key)
        self.replaying()
        os.environ.pop("AZURE_OPENAI_API_KEY")
        os.environ.update(PHASE="replay", VCR_HOSTS=host)
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        os.environ.update(PHASE="other version", VERSION="2025-04-01-preview")
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual((seen["record"], seen["replay"]), ("Echo: az", "Echo: az"))
        self.assertTrue(seen["other version"].startswith("Fixture missing: "), seen)
        (name,) = self.files()
        stored = json.loads(self.files()[name])
        self.assertEqual(
            stored["request"]["path"], "/openai/deployments/my-deployment/chat/completions"
        )
        self.assertIn("2024-10-21", json.dumps(stored["request"]))
        self.assert_clean(self.files())
        self.assertNotIn(key.encode(), self.files()[name])
        self.assertEqual(len(self.server.log), 1)


#: The tests of the child run: the pytest marker, a ``VCRTestCase`` whose ``setUp``
#: builds the client, an async ``VCRMixin`` test, and code whose client is built at
#: import. Each writes what its code observed to ``$OBSERVED/<name>.json``.
CHILD_TESTS = textwrap.dedent(
    """
    import importlib
    import json
    import os
    import sys
    import unittest
    from pathlib import Path

    import openai
    import pytest

    import vcr_kit
    from tests.support.children.openai_scenarios import MODEL, run_async, run_sync

    # A price, so that the summary's cost is not zero whether or not a row exists.
    vcr_kit.set_price(MODEL, vcr_kit.Price(1.25, None, None, 0.125, 10.0))
    vcr_kit.set_price("text-embedding-3-small", vcr_kit.Price(0.02, None, None, None, 0.0))


    def save(name, value):
        Path(os.environ["OBSERVED"], name + ".json").write_text(json.dumps(value))


    @pytest.mark.vcr
    def test_marker():
        with openai.OpenAI() as client:
            save("marker", run_sync(client, "marker"))


    class TestBuiltInSetUp(vcr_kit.VCRTestCase):
        def setUp(self):
            self.client = openai.OpenAI()
            self.addCleanup(self.client.close)

        def test_sync(self):
            save("testcase", run_sync(self.client, "testcase"))
            if os.environ.get("CI"):
                self.assertNoLiveCalls()


    class TestAsync(vcr_kit.VCRMixin, unittest.IsolatedAsyncioTestCase):
        async def asyncSetUp(self):
            self.client = openai.AsyncOpenAI()
            self.addAsyncCleanup(self.client.close)

        async def test_async(self):
            save("async", await run_async(self.client, "child async"))


    def test_module_level_client(vcr):
        app = importlib.import_module("tests.support.children.openai_app")
        save("module", [app.ask("child module"), app.embed("child module")])
        assert {entry.event.value for entry in vcr.entries} == {os.environ["EXPECTED"]}
    """
)


@pytest.mark.child
class OfflineChildTest(unittest.TestCase):
    """One child pytest records every case (marker, ``VCRTestCase``, async, a client
    built at import) with a key and ``OPENAI_BASE_URL``; a second replays them under
    ``unshare -n`` with no key and no base URL, and its summary counts them and their cost."""

    def run_child(self, folder: Path, env: dict[str, str], observed: str, prefix: list[str]) -> str:
        (folder / observed).mkdir()
        env = {**env, "OBSERVED": str(folder / observed), "PYTHONPATH": str(ROOT)}
        done = run_captured(
            [
                *prefix,
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                # Plugins the child's tests do not use cost seconds to load.
                *("-p", "no:hypothesispytest", "-p", "no:xdist", "-p", "no:timeout"),
                *("-W", "error", "test_openai_child.py"),
            ],
            cwd=folder,
            env=env,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stdout + done.stderr

    def test_recorded_cases_replay_offline_with_no_key(self) -> None:
        folder = temp_dir(self, prefix="openai-child-")
        (folder / "setup.cfg").write_text("")  # the project root: fixtures/ goes here
        (folder / "test_openai_child.py").write_text(CHILD_TESTS)
        left_out = (*OPENAI_VARS, "CI", "PYTHONWARNINGS", "PYTHONPATH")
        base = {
            k: v for k, v in os.environ.items() if not k.startswith("VCR_") and k not in left_out
        }
        key = openai_key()
        with OpenAIServer() as server:
            recording = dict(
                base,
                OPENAI_API_KEY=key,
                OPENAI_BASE_URL=server.base_url,
                EXPECTED="recorded",
                VCR_REPORT="0",
            )
            self.assertIn("4 passed", self.run_child(folder, recording, "recorded", []))
            sent = len(server.log)
        # Every call has its own fixture but ``GET /v1/models``: one for the three runs.
        calls = 3 * CALLS_PER_RUN + 2
        self.assertEqual(sent, calls - 2)
        files = {p.name: p.read_bytes() for p in (folder / "fixtures").glob("*.json")}
        self.assertEqual(len(files), calls - 2)
        every = b"".join(files.values())
        self.assertNotIn(key.encode(), every)
        self.assertNotIn(b"Bearer", every)

        replaying = dict(base, CI="true", EXPECTED="replayed", VCR_REPORT="1")
        prefix = offline()
        output = self.run_child(folder, replaying, "replayed", prefix)
        self.assertIn("4 passed", output)
        summary = re.search(
            r"vcr_kit: (\d+) replayed, 0 recorded, 0 missing; \$(\d+\.\d{4}) of API calls replayed",
            output,
        )
        assert summary is not None, output
        self.assertEqual(int(summary.group(1)), calls)
        self.assertGreater(float(summary.group(2)), 0)
        for name in ("marker", "testcase", "async", "module"):
            recorded = json.loads((folder / "recorded" / f"{name}.json").read_text())
            replayed = json.loads((folder / "replayed" / f"{name}.json").read_text())
            self.assertEqual(replayed, recorded, name)
        self.assertEqual(
            {p.name: p.read_bytes() for p in (folder / "fixtures").glob("*.json")}, files
        )


@pytest.mark.inprocess
class NeverStoredTest(ProviderTestCase):
    """What the request did not earn is never stored: OpenAI's 401/403/429/5xx, cut and
    broken streams, bodies not of its shape; a 400 or 404 is, and replays as itself."""

    def test_answers_that_depend_on_the_moment_or_the_key_are_not_written(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}
        cases = {
            "[[error:401]]": "a 401 (authentication failure) depends on the key, not on the "
            "request",
            "[[error:403]]": "a 403 (permission failure) depends on the key or the account, not on "
            "the request",
            "[[error:429]]": "a 429 (rate limit) depends on the moment, not on the request",
            "[[error:500]]": "a 500 (server error) depends on the moment, not on the request",
            "[[error:503]]": "a 503 (service unavailable) depends on the moment, not on the "
            "request",
            "[[html]]": "an HTML page is not an API answer (a gateway's or a proxy's)",
            "[[truncated-json]]": "a JSON answer that does not parse (cut short?)",
            "stream [[stream-cut]]": "the stream ended after 2 events, before its final event "
            "(data: [DONE])",
            "stream [[stream-error]]": "the stream ended with an error (event 3): it may depend on "
            "the moment",
            "responses [[stream-cut]]": "the stream ended after 5 events, before its final event "
            "(response.completed)",
        }

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                client = openai.OpenAI(max_retries=0)
                self.addCleanup(client.close)
                for case in cases:
                    api, _, marker = case.rpartition(" ")
                    try:
                        if api == "responses":
                            with client.responses.stream(model=MODEL, input=marker) as stream:
                                stream.get_final_response()
                        else:
                            answer = client.chat.completions.create(
                                model=MODEL,
                                messages=[{"role": "user", "content": marker}],
                                stream=api == "stream",
                            )
                            if api == "stream":
                                list(answer)
                    except (openai.APIError, RuntimeError, ValueError):
                        pass
                    entry = self.vcr_journal.entries[-1]
                    seen[case] = (entry.event, entry.detail)

        self.recording()
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(
            seen, {c: (Event.LIVE, f"not recorded: {why}") for c, why in cases.items()}
        )
        self.assertEqual(self.files(), {})

    def test_a_request_error_is_stored_and_replays_as_the_same_exception(self) -> None:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with openai.OpenAI(max_retries=0) as client:
                    for marker in ("[[error:400]]", "[[error:404]]"):
                        try:
                            client.responses.create(model=MODEL, input=marker)
                        except openai.APIStatusError as error:
                            seen.setdefault(marker, []).append(
                                (
                                    type(error),
                                    error.status_code,
                                    error.code,
                                    error.message,
                                    error.request_id,
                                )
                            )

        self.recording()
        self.assertTrue(run_case(CodeUnderTest).wasSuccessful())
        self.replaying()
        self.assertTrue(run_case(CodeUnderTest).wasSuccessful())
        self.assertEqual(len(self.files()), 2)
        recorded, replayed = seen["[[error:400]]"]
        self.assertEqual(replayed, recorded)
        self.assertEqual(recorded[:3], (openai.BadRequestError, 400, "invalid_value"))
        recorded, replayed = seen["[[error:404]]"]
        self.assertEqual(replayed, recorded)
        self.assertEqual(recorded[:3], (openai.NotFoundError, 404, "model_not_found"))
        self.assertRegex(recorded[4], r"^req_[0-9a-f]{32}$")

    def test_a_key_in_an_answer_is_refused_whole_or_streamed_in_pieces(self) -> None:
        fixtures = self.fixtures
        refused: dict[str, str] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                messages: Any = [{"role": "user", "content": "[[secret]]"}]
                calls: dict[str, Callable[[openai.OpenAI], object]] = {
                    "chat": lambda c: c.chat.completions.create(model=MODEL, messages=messages),
                    "chat stream": lambda c: list(
                        c.chat.completions.create(model=MODEL, messages=messages, stream=True)
                    ),
                    "responses stream": lambda c: list(
                        c.responses.create(model=MODEL, input="[[secret]]", stream=True)
                    ),
                }
                with openai.OpenAI(max_retries=0) as client:
                    for name, call in calls.items():
                        with self.assertRaises(vcr_kit.SecretLeakError) as caught:
                            call(client)
                        refused[name] = str(caught.exception)

        self.recording()
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(self.files(), {})
        self.assertIn(
            "it contains an OpenAI key (sk-proj-...) at response.body.choices[0].message.content.",
            refused["chat"],
        )
        # A chat stream has the key only in pieces, one per chunk: joined, it is found.
        self.assertIn(
            "it contains an OpenAI key (sk-proj-...) in streamed block 1 (joined from its deltas).",
            refused["chat stream"],
        )
        # Responses repeats the whole text in `response.output_text.done`.
        self.assertIn(
            "it contains an OpenAI key (sk-proj-...) at response.events[",
            refused["responses stream"],
        )


@pytest.mark.inprocess
class ChainTest(ProviderTestCase):
    def test_a_chain_on_a_replayed_response_is_never_stored_as_a_400(self) -> None:
        """Turn 1 recorded by an earlier run, turn 2 added now: turn 2 quotes turn 1's
        replayed id, which no server knows. The API's 400 is not kept (it would answer
        turn 2 for good); recording the whole chain again works."""
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                with openai.OpenAI(max_retries=0) as client:
                    first = client.responses.create(model=MODEL, input="chain one")
                    if os.environ.get("TURNS") != "2":
                        return
                    try:
                        seen[os.environ["PHASE"]] = client.responses.create(
                            model=MODEL, input="chain two", previous_response_id=first.id
                        ).output_text
                    except openai.BadRequestError as error:
                        seen[os.environ["PHASE"]] = (
                            error.code,
                            self.vcr_journal.entries[-1].detail,
                        )

        self.recording()
        os.environ["PHASE"] = "turn 1"
        self.assertTrue(run_case(CodeUnderTest).wasSuccessful())
        ids.forget()  # what a new process knows: no live id behind the stored ones
        os.environ.update(TURNS="2", PHASE="turn 2 added")
        result = run_case(CodeUnderTest)
        self.assertTrue(result.wasSuccessful(), problems(result))
        self.assertEqual(
            seen["turn 2 added"],
            (
                "previous_response_not_found",
                "not recorded: a 400 previous_response_not_found depends on the responses the "
                "server keeps (a replayed response's id is unknown to it: record the whole chain "
                "again), not on the request",
            ),
        )
        self.assertEqual(len(self.files()), 1)
        self.recording(mode="record")
        os.environ["PHASE"] = "chain recorded"
        self.assertTrue(run_case(CodeUnderTest).wasSuccessful())
        ids.forget()
        self.replaying()
        os.environ["PHASE"] = "chain replayed"
        self.assertTrue(run_case(CodeUnderTest).wasSuccessful())
        expected = "Echo: chain two (turn 2, first: chain one)"
        self.assertEqual((seen["chain recorded"], seen["chain replayed"]), (expected, expected))
        self.assertEqual(len(self.files()), 2)


@pytest.mark.inprocess
class StreamedSecretTest(unittest.TestCase):
    """The secrets gate joins each OpenAI stream's deltas, part by part, before it looks."""

    def test_responses_and_chat_pieces_are_joined_by_their_part(self) -> None:
        key = openai_key()
        pieces = [key[i : i + 7] for i in range(0, len(key), 7)]
        where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
        delta = {**where, "type": "response.output_text.delta"}
        responses: list[dict[str, Any]] = [
            {"event": "response.output_text.delta", "data": {**delta, "delta": piece}}
            for piece in pieces
        ]
        other_part = {**where, "content_index": 1, "type": "response.output_text.delta"}
        # The key's halves in two parts of the item: neither part holds a key.
        halves = [
            {"data": {**where, "type": "response.output_text.delta", "delta": key[:20]}},
            {"data": {**other_part, "delta": key[20:]}},
        ]
        chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk"}
        calls = [
            {
                "data": {
                    **chunk,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "tool_calls": [{"index": 0, "function": {"arguments": piece}}]
                            },
                        }
                    ],
                }
            }
            for piece in pieces
        ]
        for events, found in ((responses, True), (halves, False), (calls, True)):
            document = {"response": {"events": events}}
            data = json.dumps(document).encode()
            self.assertEqual(find_secret(data, document=document) is not None, found, events[:1])
