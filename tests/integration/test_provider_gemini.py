"""Google Gemini recorded and replayed like Claude (issue 31), over the loopback Gemini
server (``tests/support/servers/gemini_server.py``) and the real ``google-genai`` SDK.

Every case of ``tests/support/children/gemini_scenarios.py`` (plain, a function-calling
round trip, a stream, embeddings; sync and async clients the code builds itself) records
with a key and ``GOOGLE_GEMINI_BASE_URL``, replays with neither (the default host,
``generativelanguage.googleapis.com``, which the connection guard keeps unreached) and
re-records byte for byte. One child test replays them in a process with no network
(``unshare -n``) and no key, through ``VCRTestCase``, ``@pytest.mark.vcr`` and a
``vcr_kit.fixture`` block.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import secrets
import string
import sys
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import google.oauth2.credentials
import pytest
from google import genai
from google.genai import errors, types

import vcr_kit
from tests.support.children import gemini_scenarios as scenarios
from tests.support.children.gemini_scenarios import MODEL, PROMPT
from tests.support.helpers.env import (
    environ_without_vcr,
    offline,
    patch_env,
    run_captured,
    temp_dir,
)
from tests.support.helpers.gemini_releases import API_VERSION, http_library
from tests.support.helpers.paths import ROOT
from tests.support.servers.gemini_server import GeminiServer
from vcr_kit._ledger.cost import COST, price_for, reset_session_cost
from vcr_kit._ledger.prices import Price

#: google-genai subclasses aiohttp's ClientSession for its async client, which aiohttp
#: warns against: the SDK's affair.
AIOHTTP_SUBCLASS_WARNING = "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
pytestmark = [pytest.mark.filterwarnings(AIOHTTP_SUBCLASS_WARNING), pytest.mark.providers]

#: The variables that steer google-genai: each test sets its own.
GEMINI_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "VCR_HOSTS")
#: Five calls a run: plain, the call and the final answer, a stream, an embedding.
CALLS = 5
#: Google's published price (USD per million tokens) when no row is in the table yet.
FLASH = Price(0.30, None, None, 0.03, 2.50, source="test", checked="2026-12-03")


def google_key() -> str:
    """A fresh ``AIza...`` key: the shape the secrets gate knows, a value it must never store."""
    alphabet = string.ascii_letters + string.digits
    return "AIza" + "".join(secrets.choice(alphabet) for _ in range(35))


def run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)


def problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in [*result.errors, *result.failures])


def fixture_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.json"))}


def documents(folder: Path) -> dict[str, Any]:
    return {name: json.loads(data) for name, data in fixture_bytes(folder).items()}


class GeminiCase(unittest.TestCase):
    """A clean environment (no Gemini variable), a fixtures folder, a fresh key and
    the class's server with an empty log."""

    server: GeminiServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = GeminiServer().start()
        cls.addClassCleanup(cls.server.stop)

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")  # the whole environment is restored on clean-up
        for name in GEMINI_VARS:
            os.environ.pop(name, None)
        self.fixtures = temp_dir(self) / "fixtures"
        self.key = google_key()
        self.server.reset_log()
        self.server.refused_keys.clear()
        reset_session_cost()
        self.addCleanup(reset_session_cost)
        if price_for(MODEL) is None:
            vcr_kit.set_price(MODEL, FLASH)
            self.addCleanup(COST.reset)  # the price must not reach later modules' tests

    def recording_env(self, **more: str) -> None:
        os.environ.update(
            {
                "GEMINI_API_KEY": self.key,
                "GOOGLE_GEMINI_BASE_URL": self.server.url,
                "VCR_MODE": "auto",
                **more,
            }
        )

    def replay_env(self) -> None:
        """CI, no key, no base URL: the SDK's default host, which nothing may reach."""
        for name in (*GEMINI_VARS, "VCR_MODE"):
            os.environ.pop(name, None)
        os.environ["CI"] = "true"

    def in_test(self, body: Callable[[vcr_kit.VCRTestCase], Any]) -> Any:
        """``body(test)`` run as a ``VCRTestCase`` test on this test's fixtures folder."""
        fixtures, seen = self.fixtures, dict[str, Any]()

        class Case(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                seen["value"] = body(self)

        result = run_case(Case)
        self.assertTrue(result.wasSuccessful(), problems(result))
        return seen["value"]

    def assert_no_key_stored(self) -> None:
        for name, data in fixture_bytes(self.fixtures).items():
            text = data.decode()
            self.assertNotIn(self.key, text, name)
            self.assertNotIn("x-goog-api-key", text.lower(), name)
            self.assertNotIn("key=", text, name)


@pytest.mark.inprocess
class RecordReplayTest(GeminiCase):
    def test_every_case_records_replays_on_the_default_host_and_re_records_byte_for_byte(
        self,
    ) -> None:
        def recording(test: vcr_kit.VCRTestCase) -> Any:
            observed = scenarios.observe()
            test.assertRecorded(2 * CALLS)
            return observed

        self.recording_env()
        recorded = self.in_test(recording)

        self.assertEqual(len(self.server.log), 2 * CALLS)
        stored = documents(self.fixtures)
        self.assertEqual(len(stored), 2 * CALLS)
        for name, document in stored.items():
            self.assertTrue(name.startswith(f"gemini-post-{API_VERSION}-models-"), name)
            self.assertEqual(document["request"]["provider"], "gemini", name)
        self.assert_no_key_stored()
        streams = [d for d in stored.values() if "streamGenerateContent" in d["request"]["path"]]
        self.assertEqual([d["request"].get("query") for d in streams], [[["alt", "sse"]]] * 2)
        first = fixture_bytes(self.fixtures)

        def replaying(test: vcr_kit.VCRTestCase) -> Any:
            observed = scenarios.observe()
            test.assertReplayed(2 * CALLS)
            test.assertNoLiveCalls()
            return observed

        self.server.reset_log()
        self.replay_env()
        reset_session_cost()
        replayed = self.in_test(replaying)

        self.assertEqual(self.server.log, [])
        self.assertEqual(scenarios.without_ids(replayed), scenarios.without_ids(recorded))
        # The live responseIds are stored as stand-ins; the caller gets ids of their own.
        self.assertRegex(replayed["sync"]["plain"]["id"], r"^gresp_vcr_[0-9a-f]{24}$")
        self.assertNotEqual(replayed["sync"]["plain"]["id"], recorded["sync"]["plain"]["id"])
        self.assertEqual(len(replayed["sync"]["stream"]["ids"]), 1)  # one answer, one id
        texts = "".join(data.decode() for data in first.values())
        self.assertFalse([i for i in self.server.response_ids if i in texts])
        chunks = sum(recorded[run]["stream"]["chunks"] for run in ("sync", "async"))
        stand_ins = re.findall(r'"responseId": "gresp_vcr[0-9a-f]{21}"', texts)
        self.assertEqual(len(stand_ins), 2 * 3 + chunks)  # three answers and a stream a run
        usage = [u for d in stored.values() for u in d["usage"]]
        self.assertEqual(len(usage), 2 * (CALLS - 1))  # embeddings report no usage
        self.assertEqual({(u["provider"], u["model"]) for u in usage}, {("gemini", MODEL)})
        cost = vcr_kit.session_cost().by_model[MODEL]
        self.assertEqual(cost.calls, 2 * (CALLS - 1))
        self.assertEqual(cost.input_tokens, sum(u["usage"]["input_tokens"] for u in usage))
        self.assertGreater(cost.usd, 0)

        os.environ.pop("CI")
        self.recording_env(VCR_MODE="record")
        self.in_test(lambda test: scenarios.observe())
        self.assertEqual(len(self.server.log), 2 * CALLS)
        self.assertEqual(fixture_bytes(self.fixtures), first)

    def test_earned_errors_and_cached_thinking_usage_replay_as_recorded(self) -> None:
        thinking = types.GenerateContentConfig(
            thinking_config=types.ThinkingConfig(thinking_budget=64)
        )

        def calls(test: vcr_kit.VCRTestCase) -> list[Any]:
            client, seen = genai.Client(), []
            for model, text in ((MODEL, "[[error:400]]"), ("no-such-model", "hello")):
                with test.assertRaises(errors.ClientError) as raised:
                    client.models.generate_content(model=model, contents=text)
                error = raised.exception
                seen.append([error.code, error.status, error.message])
            answer = client.models.generate_content(
                model=MODEL, contents="[[cache]]", config=thinking
            )
            seen.append(answer.usage_metadata.model_dump(exclude_none=True))
            return seen

        self.recording_env()
        recorded = self.in_test(calls)
        self.assertEqual(
            [row[:2] for row in recorded[:2]], [[400, "INVALID_ARGUMENT"], [404, "NOT_FOUND"]]
        )
        stored = documents(self.fixtures)
        self.assertEqual(len(stored), 3)
        (usage,) = [u for d in stored.values() for u in d["usage"]]
        output = recorded[2]["candidates_token_count"] + 64
        self.assertEqual(
            usage,
            {
                "provider": "gemini",
                "model": MODEL,
                "usage": {
                    "input_tokens": 1200 - 1024,
                    "output_tokens": output,
                    "cache_read_input_tokens": 1024,
                    "reasoning_tokens": 64,
                },
            },
        )

        self.replay_env()
        reset_session_cost()
        self.assertEqual(self.in_test(calls), recorded)
        price = price_for(MODEL)
        assert price is not None
        assert price.cache_read is not None
        usd = (176 * price.input + 1024 * price.cache_read + output * price.output) / 1e6
        self.assertAlmostEqual(vcr_kit.session_cost().usd, usd, places=12)

    def test_faults_come_in_google_shapes(self) -> None:
        stream_text = "Stream a long enough greeting."

        def record(test: vcr_kit.VCRTestCase) -> None:
            client = genai.Client()
            client.models.generate_content(model=MODEL, contents=PROMPT)
            list(client.models.generate_content_stream(model=MODEL, contents=stream_text))

        def faulted(test: vcr_kit.VCRTestCase) -> list[Any]:
            client, seen = genai.Client(), []
            for spec in ("overloaded", "rate_limit", "error_after:1", "cut_after:1"):
                with vcr_kit.faults(spec):
                    try:
                        client.models.generate_content(model=MODEL, contents=PROMPT)
                        stream = client.models.generate_content_stream
                        list(stream(model=MODEL, contents=stream_text))
                    except errors.APIError as error:
                        seen.append([spec, error.code, error.status, error.message])
                    except http_library.RemoteProtocolError:
                        seen.append([spec, "cut"])
            test.assertFaults(4)
            return seen

        self.recording_env()
        self.in_test(record)
        self.replay_env()
        limited = "Number of request tokens has exceeded your per-minute rate limit"
        self.assertEqual(
            self.in_test(faulted),
            [
                ["overloaded", 503, "UNAVAILABLE", "Overloaded"],
                ["rate_limit", 429, "RESOURCE_EXHAUSTED", limited],
                ["error_after:1", 503, "UNAVAILABLE", "Overloaded"],
                ["cut_after:1", "cut"],
            ],
        )


@pytest.mark.inprocess
class MissesAndKeysTest(GeminiCase):
    def test_a_miss_in_replay_names_the_file_and_reaches_nothing(self) -> None:
        self.replay_env()

        def missing(test: vcr_kit.VCRTestCase) -> str:
            client = genai.Client()
            with test.assertRaises(vcr_kit.FixtureMissingError) as raised:
                client.models.generate_content(model=MODEL, contents="never recorded")
            return str(raised.exception)

        message = self.in_test(missing)
        self.assertIn(str(self.fixtures / f"gemini-post-{API_VERSION}-models-"), message)
        self.assertIn(".json", message)
        self.assertEqual(self.server.log, [])

    def test_the_stand_in_key_never_records(self) -> None:
        os.environ.update({"GOOGLE_GEMINI_BASE_URL": self.server.url, "VCR_MODE": "auto"})

        def without_key(test: vcr_kit.VCRTestCase) -> str:
            client = genai.Client()
            with test.assertRaises(vcr_kit.FixtureMissingError) as raised:
                client.models.generate_content(model=MODEL, contents=PROMPT)
            return str(raised.exception)

        message = self.in_test(without_key)
        self.assertIn(f"gemini-post-{API_VERSION}-models-", message)
        self.assertEqual(self.server.log, [])
        self.assertEqual(fixture_bytes(self.fixtures), {})

    def test_the_key_query_is_neither_stored_nor_keyed_but_alt_is(self) -> None:
        body = {"contents": [{"role": "user", "parts": [{"text": "by query"}]}]}
        url = f"{self.server.url}/v1beta/models/{MODEL}"
        os.environ.update(
            {"VCR_MODE": "auto", "VCR_HOSTS": self.server.url.removeprefix("http://")}
        )

        def by_query(test: vcr_kit.VCRTestCase) -> list[int]:
            with http_library.Client() as client:
                first = client.post(f"{url}:generateContent?key={self.key}", json=body)
                other = client.post(f"{url}:generateContent?key={google_key()}", json=body)
                sse = client.post(f"{url}:streamGenerateContent?alt=sse&key={self.key}", json=body)
                array = client.post(f"{url}:streamGenerateContent?key={self.key}", json=body)
            test.assertRecorded(3)
            test.assertReplayed(1)
            return [first.status_code, other.status_code, sse.status_code, array.status_code]

        self.assertEqual(self.in_test(by_query), [200] * 4)
        self.assertEqual(len(self.server.log), 3)
        queries = sorted(str(d["request"].get("query")) for d in documents(self.fixtures).values())
        self.assertEqual(queries, ["None", "None", "[['alt', 'sse']]"])
        self.assert_no_key_stored()

    def test_answers_never_stored(self) -> None:
        self.server.refused_keys.add(self.key)
        self.recording_env()

        def refused(test: vcr_kit.VCRTestCase) -> Any:
            client = genai.Client()
            with test.assertRaises(errors.ClientError) as raised:
                client.models.generate_content(model=MODEL, contents="bad key")
            return raised.exception.details, [e.detail for e in test.vcr_journal.entries]

        details, notes = self.in_test(refused)
        self.assertEqual(details["error"]["details"][0]["reason"], "API_KEY_INVALID")
        self.assertEqual(
            notes, ["not recorded: a 400 API_KEY_INVALID depends on the key, not on the request"]
        )
        self.server.refused_keys.clear()

        def unearned(test: vcr_kit.VCRTestCase) -> list[str]:
            client = genai.Client()
            for marker in ("[[error:429]]", "[[error:503]]", "[[error:500]]"):
                with test.assertRaises(errors.APIError):
                    client.models.generate_content(model=MODEL, contents=marker)
            for marker in ("[[html]]", "[[truncated-json]]"):
                with test.assertRaises(json.JSONDecodeError):
                    client.models.generate_content(model=MODEL, contents=marker)
            stream = client.models.generate_content_stream
            self.assertEqual(len(list(stream(model=MODEL, contents="[[stream-cut]] some text"))), 3)
            with test.assertRaises(errors.ServerError):
                list(stream(model=MODEL, contents="[[stream-error]]"))
            with test.assertRaisesRegex(
                vcr_kit.SecretLeakError,
                r"it contains a Google API key \(AIza\.\.\.\) at "
                r"response\.body\.candidates\[0\]\.content\.parts\[0\]\.text\. Nothing was written",
            ):
                client.models.generate_content(model=MODEL, contents="tell [[secret]]")
            return [e.detail for e in test.vcr_journal.entries if e.detail]

        notes = self.in_test(unearned)
        self.assertEqual(len(self.server.log), 1 + 8)
        self.assertEqual(fixture_bytes(self.fixtures), {})
        moment = "depends on the moment, not on the request"
        self.assertEqual(
            [note.removeprefix("not recorded: ") for note in notes],
            [
                f"a 429 (rate limit) {moment}",
                f"a 503 (service unavailable) {moment}",
                f"a 500 (server error) {moment}",
                "an HTML page is not an API answer (a gateway's or a proxy's)",
                "a JSON answer that does not parse (cut short?)",
                "the stream ended after 3 events, before a chunk gave its finishReason",
                "the stream ended with an error (event 2): it may depend on the moment",
            ],
        )


@pytest.mark.inprocess
class HttpOptionsTest(GeminiCase):
    def test_http_options_base_url_with_vcr_hosts(self) -> None:
        host = self.server.url.removeprefix("http://")
        options = types.HttpOptions(base_url=self.server.url)
        os.environ.update({"VCR_MODE": "auto", "VCR_HOSTS": host})

        def ask(test: vcr_kit.VCRTestCase) -> str | None:
            client = genai.Client(api_key=self.key, http_options=options)
            return client.models.generate_content(model=MODEL, contents="through http_options").text

        self.assertEqual(self.in_test(ask), "Echo: through http_options")
        self.assertEqual(len(self.server.log), 1)

        self.replay_env()
        os.environ["VCR_HOSTS"] = host

        def again(test: vcr_kit.VCRTestCase) -> list[Any]:
            client = genai.Client(http_options=options)  # no key: the stand-in
            answers = [
                client.models.generate_content(model=MODEL, contents="through http_options")
                for _ in range(2)
            ]
            test.assertNoLiveCalls()
            return [[answer.text, answer.response_id] for answer in answers]

        (text, first), (same, second) = self.in_test(again)
        self.assertEqual([text, same], ["Echo: through http_options"] * 2)
        # One fixture, two answers: each its own responseId, as the API gives.
        self.assertNotEqual(first, second)
        self.assertEqual(len(self.server.log), 1)

    def test_google_api_key_records_as_well(self) -> None:
        os.environ.update({"GOOGLE_API_KEY": self.key, "GOOGLE_GEMINI_BASE_URL": self.server.url})

        def ask(test: vcr_kit.VCRTestCase) -> str | None:
            test.assertNotIn("GEMINI_API_KEY", os.environ)  # no stand-in beside a real key
            client = genai.Client()
            answer = client.models.generate_content(model=MODEL, contents=PROMPT)
            test.assertRecorded(1)
            return answer.text

        self.assertEqual(self.in_test(ask), f"Echo: {PROMPT}")
        self.assertEqual(self.server.log[0].headers["x-goog-api-key"], self.key)
        self.assert_no_key_stored()

    def test_vertex_express_mode_records_and_replays_on_its_default_host(self) -> None:
        # vertexai=True with an API key: Vertex AI's paths, the key in x-goog-api-key.
        os.environ.update(
            {"VCR_MODE": "auto", "VCR_HOSTS": self.server.url.removeprefix("http://")}
        )

        def ask(test: vcr_kit.VCRTestCase) -> str | None:
            options = types.HttpOptions(base_url=self.server.url)
            client = genai.Client(vertexai=True, api_key=self.key, http_options=options)
            return client.models.generate_content(model=MODEL, contents="on Vertex").text

        self.assertEqual(self.in_test(ask), "Echo: on Vertex")
        (request,) = self.server.log
        self.assertEqual(request.path, f"/v1beta1/publishers/google/models/{MODEL}:generateContent")
        (name,) = fixture_bytes(self.fixtures)
        self.assertTrue(name.startswith("gemini-post-v1beta1-publishers-google-models-"), name)
        self.assert_no_key_stored()

        self.replay_env()

        def again(test: vcr_kit.VCRTestCase) -> str | None:
            client = genai.Client(vertexai=True)  # aiplatform.googleapis.com, no key
            answer = client.models.generate_content(model=MODEL, contents="on Vertex").text
            test.assertReplayed(1)
            return answer

        self.assertEqual(self.in_test(again), "Echo: on Vertex")
        self.assertEqual(len(self.server.log), 1)

    def test_vertex_with_google_credentials_replays_with_none(self) -> None:
        # vertexai=True with a project: Google credentials (an access token), the
        # project and location in the path; a replay looks no credentials up.
        os.environ.update(
            {"VCR_MODE": "auto", "VCR_HOSTS": self.server.url.removeprefix("http://")}
        )
        token = "ya29." + google_key()
        where = {"project": "vcr-test-project", "location": "us-central1"}
        options = types.HttpOptions(base_url=self.server.url)

        def ask(test: vcr_kit.VCRTestCase) -> str | None:
            credentials = google.oauth2.credentials.Credentials(token=token)
            client = genai.Client(
                vertexai=True, credentials=credentials, http_options=options, **where
            )
            return client.models.generate_content(model=MODEL, contents="on Vertex").text

        self.assertEqual(self.in_test(ask), "Echo: on Vertex")
        (request,) = self.server.log
        self.assertEqual(request.headers["authorization"], f"Bearer {token}")
        self.assertEqual(
            request.path,
            "/v1beta1/projects/vcr-test-project/locations/us-central1/publishers/google/models/"
            f"{MODEL}:generateContent",
        )
        (text,) = [data.decode() for data in fixture_bytes(self.fixtures).values()]
        self.assertNotIn(token, text)

        self.replay_env()
        # No credentials anywhere: google-auth would fail to find any.
        os.environ["GOOGLE_APPLICATION_CREDENTIALS"] = str(self.fixtures / "none.json")

        def again(test: vcr_kit.VCRTestCase) -> list[str | None]:
            client = genai.Client(vertexai=True, **where)  # us-central1-aiplatform.googleapis.com
            answer = client.models.generate_content(model=MODEL, contents="on Vertex")

            async def later() -> str | None:
                try:
                    aio = client.aio.models
                    return (await aio.generate_content(model=MODEL, contents="on Vertex")).text
                finally:  # google-genai before 1.52 leaves its aiohttp session open otherwise
                    await client.aio.aclose()

            answers = [answer.text, asyncio.run(later())]  # the async token look-up too
            test.assertNoLiveCalls()
            return answers

        self.assertEqual(self.in_test(again), ["Echo: on Vertex"] * 2)
        self.assertEqual(len(self.server.log), 1)


#: The child's test file: VCRTestCase (sync), the pytest marker (async) and a fixture
#: block, each replaying what the parent recorded, offline and with no key.
CHILD_TESTS = """
import json, os, pathlib
import pytest
import vcr_kit
from tests.support.children import gemini_scenarios as scenarios
from vcr_kit._ledger.cost import price_for
from vcr_kit._ledger.journal import Event

if price_for(scenarios.MODEL) is None:  # until the price table has Gemini's rows
    vcr_kit.set_price(scenarios.MODEL, vcr_kit.Price(0.30, None, None, 0.03, 2.50))
pytestmark = pytest.mark.filterwarnings({warning!r})
OUT = os.environ["GEMINI_OBSERVED"]


def keep(name, value):
    path = pathlib.Path(OUT)
    seen = json.loads(path.read_text()) if path.exists() else {{}}
    path.write_text(json.dumps({{**seen, name: value}}))


class Sync(vcr_kit.VCRTestCase):
    def test_sync(self):
        keep("sync", scenarios.run_sync())
        self.assertReplayed({calls})
        self.assertNoLiveCalls()


@pytest.mark.vcr(mode="replay")
def test_async(vcr):
    keep("async", scenarios.run_async())
    assert len(vcr.paths(Event.REPLAYED)) == {calls}


@pytest.mark.vcr(mode="replay")
def test_fixture_block():
    with vcr_kit.fixture({{"prompt": scenarios.PROMPT}}, "summary") as block:
        keep("block", block.play(lambda: pytest.fail("a replayed block does not call")))
"""


@pytest.mark.child
class OfflineChildTest(GeminiCase):
    def test_the_recorded_cases_replay_offline_with_no_key(self) -> None:
        def recording(test: vcr_kit.VCRTestCase) -> Any:
            observed = scenarios.observe()
            client = genai.Client()  # kept: a client left to the collector closes its pool
            with vcr_kit.fixture({"prompt": PROMPT}, "summary") as block:
                observed["block"] = block.play(
                    lambda: client.models.generate_content(model=MODEL, contents=PROMPT).text
                )
            return observed

        self.recording_env()
        recorded = self.in_test(recording)
        self.assertEqual(recorded["block"], f"Echo: {PROMPT}")
        tests = self.fixtures.parent / "test_gemini_offline.py"
        tests.write_text(CHILD_TESTS.format(warning=AIOHTTP_SUBCLASS_WARNING, calls=CALLS))
        out = self.fixtures.parent / "observed.json"
        env = {
            **{k: v for k, v in environ_without_vcr().items() if k not in GEMINI_VARS},
            "PYTHONPATH": str(ROOT),
            "CI": "true",
            "VCR_FIXTURES_DIR": str(self.fixtures),
            "VCR_REPORT": "1",
            "GEMINI_OBSERVED": str(out),
            # vcr_kit's plugin alone: hypothesis's would double the child's start-up.
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        plugins = ["-p", "vcr_kit.pytest_plugin", "-p", "no:cacheprovider"]
        pytest_run = [sys.executable, "-m", "pytest", "-q", *plugins, "-W", "error", str(tests)]
        command = [*offline(), *pytest_run]
        done = run_captured(command, cwd=self.fixtures.parent, env=env, timeout=120)

        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("3 passed", done.stdout)
        self.assertRegex(
            done.stderr,
            rf"vcr_kit: {2 * CALLS + 1} replayed, 0 recorded, 0 missing; "
            r"\$0\.\d+ of API calls replayed",
        )
        seen = json.loads(out.read_text())
        self.assertEqual(
            scenarios.without_ids(seen["sync"]), scenarios.without_ids(recorded["sync"])
        )
        self.assertEqual(
            scenarios.without_ids(seen["async"]), scenarios.without_ids(recorded["async"])
        )
        self.assertEqual(seen["block"], recorded["block"])
