"""Faults through the aiohttp seam: the SDK's ``DefaultAioHttpClient`` and a plain
``aiohttp.ClientSession`` meet each fault as aiohttp would report the real one.

Recorded from the loopback server, replayed with the server stopped; what a real
dropped stream raises is taken from the loopback server first.
"""

from __future__ import annotations

import asyncio
import os
import unittest
from typing import Any

import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers.env import patch_env, start_server, temp_dir
from vcr_kit._integrations.session import vcr_session

pytestmark = pytest.mark.inprocess

try:
    import aiohttp
except ImportError:  # pragma: no cover - the test extra installs it
    aiohttp = None  # type: ignore[assignment]

STORY = "Tell a story over aiohttp"


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__module__.split('.')[0]}.{type(exc).__name__}: {exc}"


async def through_the_sdk(url: str, key: str, text: str = STORY, **options: Any) -> str:
    import anthropic

    async with anthropic.AsyncAnthropic(
        base_url=url, api_key=key, http_client=anthropic.DefaultAioHttpClient(), **options
    ) as client:
        try:
            async with client.messages.stream(
                model=MODEL, max_tokens=64, messages=[{"role": "user", "content": text}]
            ) as stream:
                return str((await stream.get_final_message()).content[0].text)
        except Exception as exc:
            return _failure(exc)


async def through_a_session(url: str, key: str, text: str = STORY) -> str:
    body = {"model": MODEL, "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": text}]}  # fmt: skip
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    async with aiohttp.ClientSession() as session:
        try:
            async with session.post(url + "/v1/messages", json=body, headers=headers) as answer:
                lines = [line async for line in answer.content]
        except Exception as exc:
            return _failure(exc)
    return f"{answer.status}: {sum(line.startswith(b'event: ') for line in lines)} events"


@unittest.skipIf(aiohttp is None, "aiohttp is not installed")
class AiohttpFaultsTest(unittest.TestCase):
    def setUp(self) -> None:
        import anthropic

        try:
            anthropic.DefaultAioHttpClient()
        except RuntimeError as exc:  # anthropic 0.x without httpx-aiohttp
            if os.environ.get("VCR_CLOUDS_REQUIRED") == "1":
                raise
            self.skipTest(f"the SDK's aiohttp client cannot be built here: {exc}")
        patch_env(self, VCR_REPORT="0")
        self.fixtures = temp_dir(self)
        server = start_server(self)
        self.url, key = server.url, recording_key()
        self.real_sdk_drop = asyncio.run(
            through_the_sdk(server.url, key, "x [[stream-drop]]", max_retries=0)
        )
        self.real_session_drop = asyncio.run(
            through_a_session(server.url, key, "x [[stream-drop]]")
        )
        patch_env(self, VCR_REPORT="0", ANTHROPIC_API_KEY=key)
        with vcr_session(mode="record", fixtures_dir=self.fixtures):
            self.story = asyncio.run(through_the_sdk(server.url, key))
            self.events = asyncio.run(through_a_session(server.url, key))
        server.stop()
        patch_env(self, VCR_REPORT="0")

    def replay(self, spec: str, scenario: Any, **options: Any) -> tuple[str, int]:
        with vcr_session(mode="replay", fixtures_dir=self.fixtures), vcr_kit.faults(spec) as plan:
            return asyncio.run(scenario(self.url, "replay", **options)), plan.count

    def test_the_sdks_aiohttp_client_retries_to_the_recorded_answer(self) -> None:
        self.assertEqual(self.story, f"Echo: {STORY}")
        self.assertEqual(self.replay("overloaded:0.01*2", through_the_sdk), (self.story, 2))
        self.assertEqual(self.replay("reset,empty", through_the_sdk), (self.story, 2))

    def test_each_fault_without_retries(self) -> None:
        seen = {
            spec: self.replay(spec, through_the_sdk, max_retries=0)[0].split(":")[0]
            for spec in ("reset", "refused", "empty", "read_timeout", "error_after:3")
        }
        # A connection error: APIConnectionError, or its subclass APITimeoutError where
        # the SDK's aiohttp transport (anthropic 1.0's) maps every aiohttp connection
        # error, a real reset included, to ConnectTimeout.
        connection = {"anthropic.APIConnectionError", "anthropic.APITimeoutError"}
        for spec in ("reset", "refused", "empty"):
            self.assertIn(seen[spec], connection, spec)
        self.assertEqual(seen["read_timeout"], "anthropic.APITimeoutError")
        self.assertEqual(seen["error_after:3"], "anthropic.APIStatusError")

    def test_a_cut_stream_raises_what_a_real_drop_raises(self) -> None:
        self.assertEqual(
            self.replay("cut_after:3", through_the_sdk, max_retries=0),
            (self.real_sdk_drop, 1),
        )
        self.assertEqual(self.replay("cut_after:3", through_a_session), (self.real_session_drop, 1))
        self.assertTrue(self.real_session_drop.startswith("aiohttp.ClientPayloadError"))

    def test_a_plain_session_meets_api_errors_and_spaced_events(self) -> None:
        self.assertEqual(self.replay("delay:0.001", through_a_session), (self.events, 1))
        self.assertEqual(self.replay("rate_limit:0.01", through_a_session), ("429: 0 events", 1))
        got, _ = self.replay("reset", through_a_session)
        self.assertEqual(got, "aiohttp.ClientOSError: [Errno 104] Connection reset by peer")
