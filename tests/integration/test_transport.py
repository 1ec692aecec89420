"""The transparent client: ``vcr_kit.client()``, ``async_client()`` and ``VCRTransport``.

Keys (what makes two requests share a fixture), what a fixture may hold, misses,
modes and parallel recording, all with the real SDK against the loopback server.
"""

from __future__ import annotations

import json
import os
import time
import unittest
from pathlib import Path
from typing import Any

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import (
    MODEL,
    WEATHER_TOOL,
    fixture_files,
    recording_key,
    sent_key,
)
from tests.support.helpers.env import patch_env, reordered, run_spawned, start_server, temp_dir
from vcr_kit._core.http_request import name_and_stored
from vcr_kit._core.httplib import sdk_library
from vcr_kit._engine.http_codec import rebuild_response, store_response
from vcr_kit._ledger import journal as _journal

#: httpx2, or httpx under anthropic 0.x: the library the SDK sends with.
http = sdk_library()

API = "https://api.anthropic.com"
BODY: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 64,
    "system": "Be brief.",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
    "tools": [WEATHER_TOOL],
}
MISSING_LINE = "Fixture missing: {}. Re-run the tests with VCR_RECORD=1, then commit the result."
NEEDS_KEY = (
    "\nRecording it needs an API key: set ANTHROPIC_API_KEY (in the environment or in .env) "
    "and run again."
)
PARALLEL_WORKERS = 4


def raw_request(
    body: Any, *, url: str = API, headers: list[tuple[str, str]] | None = None, indent: Any = None
) -> http.Request:
    content = json.dumps(body, indent=indent).encode()
    return http.Request("POST", url + "/v1/messages", headers=headers or [], content=content)


def sdk_body(text: str, **extra: Any) -> dict[str, Any]:
    """The JSON body the SDK sends for ``messages.create(max_tokens=16, ...)``."""
    return {
        "max_tokens": 16,
        "messages": [{"role": "user", "content": text}],
        "model": MODEL,
        **extra,
    }


def fixture_path(folder: Path, body: Any) -> Path:
    return folder / name_and_stored(raw_request(body))[0]


class EnvTestCase(unittest.TestCase):
    """A clean vcr_kit environment and a temporary fixtures folder per test."""

    def setUp(self) -> None:
        patch_env(self)
        self.tmp = temp_dir(self, prefix="vcr-transport-")
        self.fixtures = self.tmp / "fixtures"
        self.key = recording_key()


class ServerTestCase(EnvTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.server = start_server(self)

    def client(self, **options: Any) -> anthropic.Anthropic:
        options.setdefault("fixtures_dir", self.fixtures)
        options.setdefault("base_url", self.server.url)
        options.setdefault("api_key", self.key)
        client = vcr_kit.client(**options)
        self.addCleanup(client.close)
        return client

    def json_fixtures(self) -> dict[str, bytes]:
        return {k: v for k, v in fixture_files(self.fixtures).items() if k.endswith(".json")}


# -- keys ---------------------------------------------------------------------------------


@pytest.mark.inprocess
class RequestKeyTest(unittest.TestCase):
    def test_key_ignores_key_order_whitespace_headers_and_host(self) -> None:
        first = raw_request(
            BODY,
            headers=[
                ("x-api-key", "sk-ant-test-one"),
                ("anthropic-version", "2023-06-01"),
                ("user-agent", "Anthropic/Python 2.14.0"),
                ("x-stainless-os", "Linux"),
                ("x-stainless-retry-count", "0"),
                ("content-type", "application/json"),
            ],
        )
        second = raw_request(
            reordered(BODY),
            url="http://127.0.0.1:8080",
            indent=4,
            headers=[
                ("content-type", "application/json"),
                ("x-stainless-retry-count", "2"),
                ("x-stainless-os", "MacOS"),
                ("user-agent", "Anthropic/Python 1.0.0"),
                ("anthropic-version", "2026-10-21"),
                ("authorization", "Bearer sk-ant-test-two"),
            ],
        )
        self.assertNotEqual(first.content, second.content)
        self.assertEqual(name_and_stored(first), name_and_stored(second))
        name, stored = name_and_stored(first)
        self.assertRegex(name, r"\Apost-v1-messages-[0-9a-f]{12}\.json\Z")
        self.assertEqual(stored, {"method": "POST", "path": "/v1/messages", "body": BODY})

    def test_everything_the_api_sees_changes_the_key(self) -> None:
        variants = {
            "base": BODY,
            "model": {**BODY, "model": "claude-sonnet-4-6"},
            "system": {**BODY, "system": "Be verbose."},
            "no system": {k: v for k, v in BODY.items() if k != "system"},
            "tools": {**BODY, "tools": [{**WEATHER_TOOL, "name": "get_forecast"}]},
            "no tools": {k: v for k, v in BODY.items() if k != "tools"},
            "max_tokens": {**BODY, "max_tokens": 65},
            "temperature": {**BODY, "temperature": 0.5},
            "stream": {**BODY, "stream": True},
            "messages": {**BODY, "messages": [{"role": "user", "content": "Hello"}]},
        }
        names = {label: name_and_stored(raw_request(body))[0] for label, body in variants.items()}
        self.assertEqual(len(set(names.values())), len(variants), names)
        count = http.Request("POST", API + "/v1/messages/count_tokens", json=BODY)
        self.assertNotIn(name_and_stored(count)[0], names.values())
        self.assertTrue(name_and_stored(count)[0].startswith("post-v1-messages-count-tokens-"))

    def test_anthropic_beta_header_is_part_of_the_key(self) -> None:
        plain = name_and_stored(raw_request(BODY))
        beta = name_and_stored(
            raw_request(BODY, headers=[("anthropic-beta", "files-api-2025-04-14")])
        )
        other = name_and_stored(
            raw_request(BODY, headers=[("anthropic-beta", "mcp-client-2025-04-04")])
        )
        self.assertEqual(len({plain[0], beta[0], other[0]}), 3)
        self.assertNotIn("anthropic-beta", plain[1])
        self.assertEqual(beta[1]["anthropic-beta"], "files-api-2025-04-14")


# -- the client against the server -----------------------------------------------------------


@pytest.mark.inprocess
class ClientKeyTest(ServerTestCase):
    def test_reordered_body_replays_the_recorded_fixture(self) -> None:
        transport = vcr_kit.VCRTransport(mode="auto", fixtures_dir=self.fixtures)
        with http.Client(transport=transport, base_url=self.server.url) as raw:
            headers = {"x-api-key": self.key, "anthropic-version": "2023-06-01"}
            first = raw.post("/v1/messages", content=json.dumps(BODY), headers=headers)
            second = raw.post(
                "/v1/messages",
                content=json.dumps(reordered(BODY), indent=2),
                headers={"anthropic-version": "2026-10-21", "authorization": "Bearer " + self.key},
            )
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual(len(self.json_fixtures()), 1)
        self.assertEqual(first.status_code, 200)
        one, two = first.json(), second.json()
        self.assertNotEqual(one.pop("id"), two.pop("id"))
        self.assertEqual(one, two)

    def test_requests_that_differ_get_their_own_fixtures(self) -> None:
        client = self.client(mode="auto")
        base: dict[str, Any] = {
            "model": MODEL,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Hello"}],
        }
        variants: list[dict[str, Any]] = [
            base,
            {**base, "model": "claude-sonnet-4-6"},
            {**base, "system": "Be brief."},
            {**base, "tools": [WEATHER_TOOL]},
            {**base, "max_tokens": 65},
            {**base, "extra_headers": {"anthropic-beta": "files-api-2025-04-14"}},
        ]
        for params in variants:
            client.messages.create(**params)
        self.assertEqual(len(self.server.log), len(variants))
        fixtures = self.json_fixtures()
        self.assertEqual(len(fixtures), len(variants))
        for params in variants:  # each one again: all replayed
            client.messages.create(**params)
        self.assertEqual(len(self.server.log), len(variants))
        betas = [
            json.loads(data)["request"] for data in fixtures.values() if b'"anthropic-beta"' in data
        ]
        self.assertEqual(len(betas), 1)
        self.assertEqual(betas[0]["anthropic-beta"], "files-api-2025-04-14")
        self.assertEqual(betas[0]["body"], {**base, "max_tokens": 64})

    def test_no_credential_or_volatile_header_is_stored(self) -> None:
        cookie = "session=" + "c" * 40
        client = self.client(mode="record", default_headers={"cookie": cookie})
        client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hi"}]
        )
        with client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Go"}], stream=True
        ) as stream:
            list(stream)
        client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "Hi"}])
        client.models.list()
        with self.assertRaises(anthropic.BadRequestError):
            client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "[[error:400]]"}]
            )
        sent = self.server.log[0].headers
        self.assertEqual(sent_key(sent), self.key)
        self.assertEqual(sent["cookie"], cookie)
        fixtures = self.json_fixtures()
        self.assertEqual(len(fixtures), 5)
        for name, data in fixtures.items():
            lowered = data.lower()
            for needle in (
                b"authorization",
                b"x-api-key",
                b"cookie",
                b"x-stainless",
                b"user-agent",
            ):
                self.assertNotIn(needle, lowered, name)
            for needle in (b"bearer", b"anthropic-version", b"set-cookie", b'"date"'):
                self.assertNotIn(needle, lowered, name)
            self.assertNotIn(self.key.encode(), data, name)
            self.assertNotIn(cookie.encode(), data, name)
            stored = json.loads(data)
            self.assertLessEqual(set(stored["request"]), {"method", "path", "body"}, name)
            self.assertLessEqual(set(stored["response"]["headers"]), {"content-type", "request-id"})


@pytest.mark.inprocess
class MissTest(ServerTestCase):
    def test_replay_miss_raises_fixture_missing_error_at_once(self) -> None:
        client = self.client(mode="replay")
        path = fixture_path(self.fixtures, sdk_body("Never recorded"))
        with (
            _journal.journal() as journal,
            self.assertRaises(vcr_kit.FixtureMissingError) as caught,
        ):
            client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Never recorded"}]
            )
        self.assertEqual(str(caught.exception), MISSING_LINE.format(path))
        self.assertEqual(caught.exception.path, path)
        self.assertIsInstance(caught.exception, LookupError)
        self.assertEqual(type(caught.exception).__name__, "FixtureMissingError")
        self.assertEqual(journal.paths(_journal.Event.MISSING), [path])  # looked up once: no retry
        self.assertEqual(self.server.log, [])
        self.assertFalse(self.fixtures.exists())

    def test_replay_miss_names_the_nearest_fixture(self) -> None:
        recorder = self.client(mode="record")
        recorder.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Recorded"}]
        )
        self.server.reset_log()
        client = self.client(mode="replay")
        with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
            client.messages.create(
                model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "Recorded"}]
            )
        lines = str(caught.exception).splitlines()
        path = fixture_path(self.fixtures, sdk_body("Recorded", max_tokens=32))
        self.assertEqual(lines[0], MISSING_LINE.format(path))
        recorded = fixture_path(self.fixtures, sdk_body("Recorded"))
        self.assertEqual(lines[1], f"Nearest recorded fixture: {recorded}.")
        self.assertIn('-    "max_tokens": 16,', lines)
        self.assertIn('+    "max_tokens": 32,', lines)
        self.assertEqual(self.server.log, [])

    def test_auto_miss_without_an_api_key_says_how_to_record(self) -> None:
        client = self.client(mode="auto", api_key=None)
        path = fixture_path(self.fixtures, sdk_body("No key"))
        with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
            client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "No key"}]
            )
        self.assertEqual(str(caught.exception), f"Fixture missing: {path}." + NEEDS_KEY)
        self.assertEqual(self.server.log, [])

    def test_replay_of_a_recorded_fixture_needs_no_key(self) -> None:
        self.client(mode="record").messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Keyless"}]
        )
        self.server.reset_log()
        message = self.client(mode="replay", api_key=None, base_url=None).messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Keyless"}]
        )
        self.assertEqual(message.content[0].to_dict(), {"type": "text", "text": "Echo: Keyless"})
        self.assertEqual(self.server.log, [])


@pytest.mark.inprocess
class CorruptFixtureTest(ServerTestCase):
    def write(self, body: Any, data: bytes) -> Path:
        path = fixture_path(self.fixtures, body)
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        return path

    def replay(self, text: str) -> vcr_kit.FixtureCorruptError:
        client = self.client(mode="replay")
        with (
            _journal.journal() as journal,
            self.assertRaises(vcr_kit.FixtureCorruptError) as caught,
        ):
            client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": text}]
            )
        self.assertEqual(journal.count(_journal.Event.MISSING), 0)
        self.assertEqual(self.server.log, [])
        return caught.exception

    def test_a_torn_fixture_is_reported_not_retried(self) -> None:
        path = self.write(sdk_body("Torn"), b'{"vcr_kit_format": 1, "kind": "ht')
        error = self.replay("Torn")
        self.assertEqual(error.path, path)
        self.assertTrue(str(error).startswith(f"Fixture {path} is not valid JSON: "), str(error))

    def test_a_fixture_that_cannot_be_rebuilt_is_reported_not_retried(self) -> None:
        body = sdk_body("Half")
        _, stored = name_and_stored(raw_request(body))
        document = {"vcr_kit_format": 1, "kind": "http", "request": stored, "response": {}}
        path = self.write(body, json.dumps(document).encode())
        error = self.replay("Half")
        self.assertEqual(
            str(error),
            f"Fixture {path} cannot be replayed: response.status: None is not an HTTP status "
            "(100-599) (and 1 more: `vcr_kit check` lists them). "
            "Delete it, or re-record it with VCR_MODE=record.",
        )


@pytest.mark.inprocess
class AsyncMissTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.tmp = temp_dir(self, prefix="vcr-transport-")
        self.server = start_server(self)

    async def test_async_replay_miss_raises_fixture_missing_error_at_once(self) -> None:
        path = fixture_path(self.tmp, sdk_body("Never recorded, async"))
        async with vcr_kit.async_client(
            mode="replay", fixtures_dir=self.tmp, base_url=self.server.url, api_key=recording_key()
        ) as client:
            with (
                _journal.journal() as journal,
                self.assertRaises(vcr_kit.FixtureMissingError) as caught,
            ):
                await client.messages.create(
                    model=MODEL,
                    max_tokens=16,
                    messages=[{"role": "user", "content": "Never recorded, async"}],
                )
        self.assertEqual(str(caught.exception), MISSING_LINE.format(path))
        self.assertEqual(journal.paths(_journal.Event.MISSING), [path])
        self.assertEqual(self.server.log, [])

    async def test_async_auto_miss_without_an_api_key(self) -> None:
        path = fixture_path(self.tmp, sdk_body("No key, async"))
        async with vcr_kit.async_client(
            mode="auto", fixtures_dir=self.tmp, base_url=self.server.url
        ) as client:
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                await client.messages.create(
                    model=MODEL,
                    max_tokens=16,
                    messages=[{"role": "user", "content": "No key, async"}],
                )
        self.assertEqual(str(caught.exception), f"Fixture missing: {path}." + NEEDS_KEY)
        self.assertEqual(self.server.log, [])


@pytest.mark.inprocess
class ModeTest(ServerTestCase):
    def test_mode_off_passes_through_and_writes_nothing(self) -> None:
        client = self.client(mode="off")
        texts = []
        for _ in range(2):
            message = client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Live"}]
            )
            texts.append((message.id, message._request_id))
        self.assertEqual(len(self.server.log), 2)
        self.assertFalse(self.fixtures.exists())
        ((id1, req1), (id2, req2)) = texts
        self.assertRegex(id1, r"\Amsg_01[A-Za-z0-9]{22}\Z")  # the server's own ids
        self.assertNotEqual(id1, id2)
        self.assertRegex(req1 or "", r"\Areq_[A-Za-z0-9]{24}\Z")
        self.assertNotEqual(req1, req2)

    def test_record_mode_calls_the_api_every_time(self) -> None:
        client = self.client(mode="record")
        for _ in range(2):
            client.messages.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Again"}]
            )
        self.assertEqual(len(self.server.log), 2)
        self.assertEqual(len(self.json_fixtures()), 1)

    def test_vcr_mode_variable_overrides_the_mode_option(self) -> None:
        os.environ["VCR_MODE"] = "off"
        client = self.client(mode="replay")
        client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Env wins"}]
        )
        self.assertEqual(len(self.server.log), 1)
        self.assertFalse(self.fixtures.exists())


# -- what a stored response keeps -----------------------------------------------------------


@pytest.mark.inprocess
class StoredResponseTest(unittest.TestCase):
    def test_stored_response_keeps_no_retry_after(self) -> None:
        request = raw_request(BODY)
        error = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "bad"},
            "request_id": "req_0123",
        }
        live = http.Response(
            400,
            headers={
                "content-type": "application/json",
                "request-id": "req_0123",
                "retry-after": "30",
                "retry-after-ms": "30000",
                "x-should-retry": "true",
                "date": "Mon, 30 Nov 2026 15:00:00 GMT",
                "set-cookie": "session=abc",
                "anthropic-organization-id": "org-123",
            },
            json=error,
            request=request,
        )
        stored = store_response(live, seed="post-v1-messages-000000000000.json")
        self.assertEqual(
            stored,
            {
                "status": 400,
                "body": error,
                "headers": {"content-type": "application/json", "request-id": "req_0123"},
            },
        )
        assert stored is not None
        rebuilt = rebuild_response(stored, request)
        self.assertEqual(
            dict(rebuilt.headers),
            {
                "content-type": "application/json",
                "request-id": "req_0123",
                "content-length": str(len(rebuilt.content)),
            },
        )
        self.assertEqual(rebuilt.json(), error)

    def test_transient_answers_are_never_stored(self) -> None:
        request = raw_request(BODY)
        for status in (408, 409, 429, 500, 502, 503, 529):
            live = http.Response(status, json={"type": "error"}, request=request)
            self.assertIsNone(store_response(live, seed="x.json"), status)


# -- parallel recording -----------------------------------------------------------------------


def record_in_child(
    barrier: Any, results: Any, fixtures: str, base_url: str, key: str
) -> None:  # pragma: no cover - runs in a spawned process
    with vcr_kit.client(
        mode="auto", fixtures_dir=fixtures, base_url=base_url, api_key=key
    ) as client:
        barrier.wait(timeout=60)
        started = time.monotonic()
        message = client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Once [[slow]]"}]
        )
        results.put((started, time.monotonic(), message.content[0].text, message.id))


@pytest.mark.child
class ParallelRecordingTest(ServerTestCase):
    def test_same_request_from_four_processes_reaches_the_api_once(self) -> None:
        answers, exit_codes = run_spawned(
            record_in_child,
            PARALLEL_WORKERS,
            str(self.fixtures),
            self.server.url,
            self.key,
            timeout=120,
        )
        for exit_code in exit_codes:
            self.assertEqual(exit_code, 0)

        self.assertEqual(len(self.server.requests_to("/v1/messages")), 1)
        self.assertEqual({text for _, _, text, _ in answers}, {"Echo: Once [[slow]]"})
        self.assertEqual(len({message_id for _, _, _, message_id in answers}), PARALLEL_WORKERS)
        # They overlapped: every worker asked before the first one had its answer.
        self.assertLess(max(s for s, _, _, _ in answers), min(e for _, e, _, _ in answers))
        self.assertEqual(len(self.json_fixtures()), 1)


if __name__ == "__main__":
    unittest.main()
