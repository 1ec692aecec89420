"""The aiohttp seam: the SDK's ``DefaultAioHttpClient`` and a plain ``aiohttp.ClientSession``,
recorded against the loopback server and replayed with the server gone.

Real SDK, real aiohttp, real loopback server, real ``VCRTestCase`` tests run by a runner.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import unittest
from typing import Any

import pytest

import vcr_kit
from tests.support.helpers.env import patch_env
from tests.support.helpers.loopback_case import LoopbackTestCase
from tests.support.helpers.paths import ROOT

if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":  # the clients tox env: no skipping
    import aiohttp
else:
    aiohttp = pytest.importorskip("aiohttp", reason="aiohttp is not installed (the test extra)")

MODEL = "claude-opus-4-7"
KEY = "sk-ant-test-" + "a" * 32


def run_case(case: type[unittest.TestCase]) -> unittest.TestResult:
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)


def problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in [*result.errors, *result.failures])


async def through_the_sdk(base_url: str) -> list[str]:
    import anthropic

    client = anthropic.AsyncAnthropic(
        base_url=base_url, http_client=anthropic.DefaultAioHttpClient(), max_retries=0
    )
    async with client:
        reply = await client.messages.create(
            model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "aiohttp plain"}]
        )
        async with client.messages.stream(
            model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "aiohttp stream"}]
        ) as stream:
            streamed = await stream.get_final_text()
    return [reply.content[0].text, streamed, reply.usage.model_dump_json()]


async def through_a_plain_session(base_url: str, key: str) -> list[Any]:
    body = {"model": MODEL, "max_tokens": 20, "messages": [{"role": "user", "content": "raw"}]}
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    async with aiohttp.ClientSession() as session:
        async with session.post(base_url + "/v1/messages", json=body, headers=headers) as answer:
            plain = (answer.status, await answer.json())
        streaming = {**body, "stream": True}
        async with session.post(
            base_url + "/v1/messages", data=json.dumps(streaming), headers=headers
        ) as answer:
            lines = [line async for line in answer.content]
    return [plain[0], plain[1]["content"], plain[1]["usage"], b"".join(lines).count(b"event: ")]


@pytest.mark.inprocess
class AiohttpSeamTest(LoopbackTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.fixtures = self.tmp  # the fixtures go in the temp folder itself

    def _run(self, env: dict[str, str], scenario: Any, *args: Any) -> tuple[Any, list[str]]:
        fixtures = self.fixtures
        seen: dict[str, Any] = {}

        class Case(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                seen["result"] = asyncio.run(scenario(*args))
                seen["events"] = [entry.event for entry in self.vcr_journal.entries]

        patch_env(self, **env)
        result = run_case(Case)
        self.assertTrue(result.wasSuccessful(), problems(result))
        return seen["result"], seen["events"]

    def test_the_sdks_aiohttp_client_is_recorded_and_replayed(self) -> None:
        import anthropic

        try:
            anthropic.DefaultAioHttpClient()
        except RuntimeError as exc:  # anthropic 0.x without httpx-aiohttp
            if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":
                raise
            self.skipTest(f"the SDK's aiohttp client cannot be built here: {exc}")
        record = {"VCR_MODE": "auto", "ANTHROPIC_API_KEY": KEY}
        recorded, events = self._run(record, through_the_sdk, self.server.url)
        self.assertEqual(events, ["recorded", "recorded"])
        self.assertEqual(len(list(self.fixtures.glob("*.json"))), 2)
        self.assertEqual(len(self.server.log), 2)
        self.server.stop()
        for _ in range(2):
            replayed, events = self._run({"VCR_MODE": "replay"}, through_the_sdk, self.server.url)
            self.assertEqual(replayed, recorded)
            self.assertEqual(events, ["replayed", "replayed"])

    def test_a_plain_session_to_a_numeric_base_url_is_recorded_and_replayed(self) -> None:
        env = {"ANTHROPIC_BASE_URL": self.server.url}
        recorded, events = self._run(
            {**env, "VCR_MODE": "auto", "ANTHROPIC_API_KEY": KEY},
            through_a_plain_session,
            self.server.url,
            KEY,
        )
        self.assertEqual(events, ["recorded", "recorded"])
        self.assertEqual(recorded[0], 200)
        self.assertGreater(recorded[3], 3)
        self.server.stop()
        replayed, events = self._run(
            {**env, "VCR_MODE": "replay"}, through_a_plain_session, self.server.url, "x" * 20
        )
        self.assertEqual(replayed, recorded)
        self.assertEqual(events, ["replayed", "replayed"])
        for path in self.fixtures.glob("*.json"):
            self.assertNotIn(KEY, path.read_text())

    def test_other_hosts_are_left_alone(self) -> None:
        async def elsewhere(url: str) -> int:
            async with aiohttp.ClientSession() as session:
                async with session.get(url + "/v1/models") as answer:
                    return answer.status

        status, events = self._run({"VCR_MODE": "replay"}, elsewhere, self.server.url)
        self.assertEqual((status, events), (401, []))  # reached the server, without a key
        self.assertEqual(len(self.server.log), 1)


@pytest.mark.child
@pytest.mark.matrix
def test_aiohttp_is_patched_only_while_a_test_runs_and_never_imported() -> None:
    script = """
import sys
import vcr_kit
from vcr_kit._integrations.session import vcr_session
from vcr_kit._seams import aiohttp_seam
with vcr_session(mode="replay", fixtures_dir=sys.argv[1]):
    print("loaded in session", "aiohttp" in sys.modules)
    import aiohttp
    print("patched after import", aiohttp_seam.is_patched())
print("patched after the test", aiohttp_seam.is_patched())
print("meta path clean", not any(type(f).__name__ == "PatchOnImport" for f in sys.meta_path))
"""
    out = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "build" / "unused-fixtures")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={"PATH": "/usr/bin:/bin", "VCR_REPORT": "0", "PYTHONWARNINGS": "error"},
    ).stdout.splitlines()
    assert out == [
        "loaded in session False",
        "patched after import True",
        "patched after the test False",
        "meta path clean True",
    ]
