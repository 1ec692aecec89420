"""Only what the request earned is stored (issue #15, part 1); a token count cassette
replays a plain number (part 7).

On main a 401 from a bad key was written, and the next run replayed the
``AuthenticationError`` after the key was fixed, without a call; a stream the
upstream cut mid-event was written, every replay raised a raw ``JSONDecodeError``
and ``vcr_kit check`` found nothing; a JSON answer cut short was blamed on a fixture
that did not exist. Here the real SDK records against the loopback server, which
answers a refused key, each status the API uses for the key, the account or the
moment, an HTML page, cut JSON and cut streams, through every path that records:
``vcr_kit.client()`` and its async twin, a client the code builds itself (the
transport seam), the cassettes, and the proxy. Files that main wrote are then
checked and replayed.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import unittest
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import environ_without_vcr, patch_env
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.loopback_case import LoopbackTestCase, create
from tests.support.helpers.paths import ROOT
from vcr_kit._core.httplib import sdk_library
from vcr_kit._ledger import journal as _journal

AUTH = "a 401 (authentication failure) depends on the key, not on the request"
CUT = "the stream was cut mid-event (event 4 is not JSON)"
NEVER = "; such an answer is never stored (delete it and record again)"
#: Each status the API answers for the key, the account or the moment, and why it is not kept.
UNEARNED = {
    401: AUTH,
    402: "a 402 (billing failure) depends on the account, not on the request",
    403: "a 403 (permission failure) depends on the key or the account, not on the request",
    408: "a 408 (time-out) depends on the moment, not on the request",
    409: "a 409 (conflict the SDK retries) depends on the moment, not on the request",
    429: "a 429 (rate limit) depends on the moment, not on the request",
    500: "a 500 (server error) depends on the moment, not on the request",
    502: "a 502 (bad gateway) depends on the moment, not on the request",
    503: "a 503 (service unavailable) depends on the moment, not on the request",
    504: "a 504 (time-out) depends on the moment, not on the request",
    529: "a 529 (overload) depends on the moment, not on the request",
}


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def corrupt_message(path: Path) -> str:
    """The replay error for ``path``, with a ``{}`` where the problem goes."""
    return (
        f"Fixture {path} cannot be replayed: {{}}. Delete it, or re-record it with VCR_MODE=record."
    )


class UnearnedTestCase(LoopbackTestCase):
    def files(self) -> list[Path]:
        return sorted(self.fixtures.glob("*.json")) if self.fixtures.is_dir() else []

    def client(self, key: str | None = None, mode: str = "auto") -> anthropic.Anthropic:
        client = vcr_kit.client(
            mode=mode,
            fixtures_dir=self.fixtures,
            base_url=self.server.url,
            api_key=key or self.key,
            max_retries=0,
        )
        self.addCleanup(client.close)
        return client

    def aclient(self, key: str | None = None, mode: str = "auto") -> anthropic.AsyncAnthropic:
        return vcr_kit.async_client(
            mode=mode,
            fixtures_dir=self.fixtures,
            base_url=self.server.url,
            api_key=key or self.key,
            max_retries=0,
        )

    @contextmanager
    def why_not_recorded(self, *reasons: str) -> Iterator[None]:
        """The block writes no fixture, and journals one ``live`` entry per reason."""
        before = self.files()
        with _journal.journal() as seen:
            yield
        self.assertEqual(
            [(e.event, e.detail) for e in seen.entries],
            [(_journal.Event.LIVE, f"not recorded: {r}") for r in reasons],
        )
        self.assertEqual(self.files(), before)

    def calls(self) -> int:
        return len(self.server.requests_to("/v1/messages"))


# -- the in-process client, sync and async ----------------------------------------------


@pytest.mark.inprocess
class ClientTest(UnearnedTestCase):
    def test_a_401_from_a_bad_key_is_not_stored_and_the_fixed_key_records(self) -> None:
        bad = recording_key()
        self.server.refused_keys.add(bad)
        with self.why_not_recorded(AUTH), self.assertRaises(anthropic.AuthenticationError):
            create(self.client(bad), "Hello")
        # The key fixed: the next run asks the API (on main it replayed the 401, no call).
        self.assertEqual(create(self.client(), "Hello").content[0].text, "Echo: Hello")
        self.assertEqual(create(self.client(mode="replay"), "Hello").content[0].text, "Echo: Hello")
        self.assertEqual(self.calls(), 2)

    def test_a_401_from_a_bad_key_async(self) -> None:
        bad = recording_key()
        self.server.refused_keys.add(bad)

        async def run(key: str | None) -> str:
            async with self.aclient(key) as client:
                message = await client.messages.create(
                    model=MODEL, max_tokens=16, messages=user("Hello async")
                )
            return str(message.content[0].text)  # type: ignore[union-attr]

        with self.why_not_recorded(AUTH), self.assertRaises(anthropic.AuthenticationError):
            asyncio.run(run(bad))
        self.assertEqual(asyncio.run(run(None)), "Echo: Hello async")
        self.assertEqual(len(self.files()), 1)
        self.assertEqual(self.calls(), 2)

    def test_each_status_of_the_key_the_account_or_the_moment_is_not_stored(self) -> None:
        for status, reason in UNEARNED.items():
            with self.subTest(status=status):
                with (
                    self.why_not_recorded(reason),
                    self.assertRaises(anthropic.APIStatusError) as caught,
                ):
                    create(self.client(), f"Status [[error:{status}]]")
                self.assertEqual(caught.exception.status_code, status)
        # The request's own errors are its answer: kept, and replayed as themselves.
        for status in (400, 404, 413):
            with self.subTest(status=status), self.assertRaises(anthropic.APIStatusError):
                create(self.client(), f"Status [[error:{status}]]")
        self.assertEqual(len(self.files()), 3)

    def stream_types(self, client: anthropic.Anthropic, text: str) -> list[str]:
        with client.messages.create(
            model=MODEL, max_tokens=16, messages=user(text), stream=True
        ) as stream:
            return [event.type for event in stream]

    def test_a_stream_cut_mid_event_is_not_stored(self) -> None:
        for round in (1, 2):  # each run asks the API again, and gets the same cut stream
            with self.subTest(round=round), self.why_not_recorded(CUT):
                types = self.stream_types(self.client(), "Cut me [[stream-cut]]")
            self.assertEqual(types, ["message_start", "content_block_start"])
        self.assertEqual(self.calls(), 2)

    def test_a_stream_cut_mid_event_async_and_through_the_stream_helper(self) -> None:
        async def run() -> list[str]:
            async with self.aclient() as client:
                async with client.messages.stream(
                    model=MODEL, max_tokens=16, messages=user("Cut async [[stream-cut]]")
                ) as stream:
                    return [event.type async for event in stream]

        with self.why_not_recorded(CUT):
            self.assertEqual(asyncio.run(run()), ["message_start", "content_block_start"])

    def test_a_stream_whose_connection_breaks_is_not_stored(self) -> None:
        # Held on main too; pinned here with the other ways a stream ends early.
        with self.assertRaises(anthropic.APIConnectionError):
            self.stream_types(self.client(), "Drop me [[stream-drop]]")
        self.assertEqual(self.files(), [])
        self.assertEqual(self.calls(), 1)

    def test_a_stream_that_ends_before_message_stop_is_not_stored(self) -> None:
        text = "Stop short [[stream-no-stop]]"
        # message_start, ping, content_block_start, the deltas, content_block_stop.
        events = 4 + len(f"Echo: {text}") // 8 + 1
        reason = f"the stream ended after {events} events, before its final event (message_stop)"
        with self.why_not_recorded(reason):
            types = self.stream_types(self.client(), text)
        self.assertEqual(types[-1], "content_block_stop")

    def test_an_sse_error_event_is_stored_only_when_the_request_earned_it(self) -> None:
        refused = {
            "overloaded_error": "an SSE error event (overloaded_error): " + UNEARNED[529],
            "authentication_error": "an SSE error event (authentication_error): " + AUTH,
            "mystery_error": "an SSE error event of unknown type 'mystery_error' may not "
            "depend on the request",
        }
        for error_type, reason in refused.items():
            with self.subTest(error_type=error_type), self.why_not_recorded(reason):
                with self.assertRaises(anthropic.APIStatusError):
                    self.stream_types(self.client(), f"Break [[stream-error:{error_type}]]")
        text = "Break [[stream-error:invalid_request_error]]"
        with self.assertRaises(anthropic.APIStatusError) as recorded:
            self.stream_types(self.client(), text)
        with self.assertRaises(anthropic.APIStatusError) as replayed:
            self.stream_types(self.client(mode="replay"), text)
        self.assertEqual(replayed.exception.body, recorded.exception.body)
        self.assertEqual(len(self.files()), 1)
        self.assertEqual(self.calls(), 4)

    def test_an_html_page_and_cut_json_are_not_stored(self) -> None:
        with self.why_not_recorded("an HTML page is not an API answer (a gateway's or a proxy's)"):
            page = create(self.client(), "Gateway [[html]]")
        self.assertIsInstance(page, str)  # what the SDK makes of it, as without vcr_kit
        self.assertTrue(str(page).startswith("<!DOCTYPE html>"))
        # On main: a FixtureCorruptError about a fixture file that was never written.
        with self.why_not_recorded("a JSON answer that does not parse (cut short?)"):
            with self.assertRaises(json.JSONDecodeError) as caught:
                create(self.client(), "Cut JSON [[truncated-json]]")
        self.assertNotIsInstance(caught.exception, vcr_kit.VCRError)


# -- a client the code under test builds itself: the transport seam ---------------------


@pytest.mark.inprocess
class SeamTest(UnearnedTestCase):
    def test_the_seam_keeps_neither_a_401_nor_a_cut_stream_and_says_why(self) -> None:
        patch_env(self, ANTHROPIC_API_KEY=self.key)  # a key is set: the test may record
        bad = recording_key()
        self.server.refused_keys.add(bad)
        fixtures, url, good = self.fixtures, self.server.url, self.key
        seen: list[Any] = []

        class CodeUnderTest(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures
            vcr_mode = "auto"

            def test_it(self) -> None:
                with anthropic.Anthropic(base_url=url, api_key=bad, max_retries=0) as client:
                    try:
                        create(client, "Seam hello")
                    except anthropic.AuthenticationError as exc:
                        seen.append(exc.status_code)
                with anthropic.Anthropic(base_url=url, api_key=good, max_retries=0) as client:
                    with client.messages.create(
                        model=MODEL,
                        max_tokens=16,
                        messages=user("Seam [[stream-cut]]"),
                        stream=True,
                    ) as stream:
                        seen.append([event.type for event in stream])
                try:
                    self.assertNoLiveCalls()
                except AssertionError as exc:
                    seen.append(str(exc))

        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(CodeUnderTest)
        )
        self.assertEqual(result.errors + result.failures, [])
        self.assertEqual(seen[:2], [401, ["message_start", "content_block_start"]])
        self.assertRegex(
            seen[2],
            r"\Avcr_kit: expected replay only, but the API was called: "
            rf"live \S+/post-v1-messages-\w{{12}}\.json {re.escape(f'(not recorded: {AUTH})')}, "
            rf"live \S+/post-v1-messages-\w{{12}}\.json {re.escape(f'(not recorded: {CUT})')}\Z",
        )
        self.assertEqual(self.files(), [])


# -- the cassettes ------------------------------------------------------------------------


@pytest.mark.inprocess
class CassetteTest(UnearnedTestCase):
    def sdk(self, key: str | None = None) -> anthropic.Anthropic:
        client = anthropic.Anthropic(
            base_url=self.server.url, api_key=key or self.key, max_retries=0
        )
        self.addCleanup(client.close)
        return client

    def test_a_401_is_not_stored_by_a_cassette(self) -> None:
        bad = recording_key()
        self.server.refused_keys.add(bad)
        messages = user("Cassette hello")

        def play(key: str | None, mode: str = "auto") -> Any:
            with vcr_kit.cassette(messages, mode=mode, fixtures_dir=self.fixtures) as c:
                return c.play(
                    lambda: self.sdk(key).messages.create(
                        model=MODEL, max_tokens=16, messages=messages
                    )
                )

        with self.why_not_recorded(AUTH), self.assertRaises(anthropic.AuthenticationError):
            play(bad)
        self.assertEqual(play(None).content[0].text, "Echo: Cassette hello")
        self.assertEqual(play(None, "replay").content[0].text, "Echo: Cassette hello")
        self.assertEqual(self.calls(), 2)

    def test_a_529_is_not_stored_by_an_async_cassette(self) -> None:
        messages = user("Busy [[overloaded-always]]")

        async def play() -> Any:
            async with anthropic.AsyncAnthropic(
                base_url=self.server.url, api_key=self.key, max_retries=0
            ) as client:
                async with vcr_kit.cassette(messages, mode="auto", fixtures_dir=self.fixtures) as c:
                    return await c.play(
                        lambda: client.messages.create(
                            model=MODEL, max_tokens=16, messages=messages
                        )
                    )

        with self.why_not_recorded(UNEARNED[529]), self.assertRaises(anthropic.APIStatusError):
            asyncio.run(play())

    def stream_fn(self, how: str, messages: list[dict[str, Any]]) -> Callable[[], Any]:
        """What a test plays: ``create(stream=True)``, or the ``messages.stream()`` helper."""
        client = self.sdk()
        if how == "create":
            return lambda: client.messages.create(
                model=MODEL,
                max_tokens=16,
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
        return lambda: client.messages.stream(
            model=MODEL,
            max_tokens=16,
            messages=messages,  # type: ignore[arg-type]
        )

    def test_a_streaming_cassette_keeps_only_a_whole_stream(self) -> None:
        short = (
            r"\Anot recorded: the stream ended after (\d+) events, before its final event "
            r"\(message_stop\)\Z"
        )
        for text in ("Cassette cut [[stream-cut]]", "Cassette short [[stream-no-stop]]"):
            messages = user(text)
            for how in ("create", "stream"):
                with self.subTest(text=text, how=how):
                    with (
                        _journal.journal() as seen,
                        vcr_kit.streaming_cassette(
                            messages, mode="auto", fixtures_dir=self.fixtures
                        ) as c,
                    ):
                        events = list(c.play(self.stream_fn(how, messages)))
                    self.assertNotEqual(events[-1].type, "message_stop")
                    self.assertFalse(c.recorded or c.replayed)
                    self.assertEqual(self.files(), [])
                    (entry,) = seen.entries
                    self.assertEqual(entry.event, _journal.Event.LIVE)
                    # The SDK drops the half event: what the cassette sees just stops.
                    count = re.fullmatch(short, entry.detail)
                    self.assertIsNotNone(count, entry.detail)
                    self.assertEqual(int(count.group(1)) if count else 0, len(events))
        # A whole stream is stored, and replays.
        messages = user("Cassette whole")
        with vcr_kit.streaming_cassette(messages, mode="auto", fixtures_dir=self.fixtures) as c:
            recorded = [
                e.type
                for e in c.play(
                    lambda: self.sdk().messages.stream(
                        model=MODEL, max_tokens=16, messages=messages
                    )
                )
            ]
        with vcr_kit.streaming_cassette(messages, mode="replay", fixtures_dir=self.fixtures) as c:
            self.assertEqual([e.type for e in c.play(lambda: None)], recorded)
        self.assertEqual(recorded[-1], "message_stop")

    def test_an_async_streaming_cassette_keeps_no_cut_stream(self) -> None:
        messages = user("Async cassette cut [[stream-cut]]")

        async def play() -> list[str]:
            async with anthropic.AsyncAnthropic(
                base_url=self.server.url, api_key=self.key, max_retries=0
            ) as client:
                async with vcr_kit.streaming_cassette(
                    messages, mode="auto", fixtures_dir=self.fixtures
                ) as c:
                    return [
                        event.type
                        async for event in c.play(
                            lambda: client.messages.create(
                                model=MODEL, max_tokens=16, messages=messages, stream=True
                            )
                        )
                    ]

        reason = "the stream ended after 2 events, before its final event (message_stop)"
        with self.why_not_recorded(reason):
            self.assertEqual(asyncio.run(play()), ["message_start", "content_block_start"])

    def test_a_streaming_cassette_keeps_an_sse_error_only_when_earned(self) -> None:
        client = self.sdk()
        for error_type, kept in (("overloaded_error", False), ("invalid_request_error", True)):
            messages = user(f"Cassette break [[stream-error:{error_type}]]")
            with self.subTest(error_type=error_type):
                with (
                    vcr_kit.streaming_cassette(
                        messages, mode="auto", fixtures_dir=self.fixtures
                    ) as c,
                    self.assertRaises(anthropic.APIStatusError),
                ):
                    list(
                        c.play(
                            lambda m=messages: client.messages.create(
                                model=MODEL, max_tokens=16, messages=m, stream=True
                            )
                        )
                    )
                self.assertEqual(c.path.exists(), kept)
        # What was kept replays as the same error (on main it could not be replayed).
        with vcr_kit.streaming_cassette(messages, mode="replay", fixtures_dir=self.fixtures) as c:
            with self.assertRaises(anthropic.APIStatusError) as caught:
                list(c.play(lambda: None))
        self.assertEqual(caught.exception.body["error"]["type"], "invalid_request_error")  # type: ignore[index]

    def test_a_stream_of_plain_values_is_refused_before_it_is_written(self) -> None:
        # On main it was written, and every replay refused it ("not an SDK event").
        messages = user("Plain values")
        with (
            vcr_kit.streaming_cassette(messages, mode="auto", fixtures_dir=self.fixtures) as c,
            self.assertRaises(vcr_kit.FixtureValueError) as caught,
        ):
            list(c.play(lambda: iter([{"as": "event"}])))
        self.assertEqual(
            str(caught.exception),
            f"Cannot record {c.path}: response[0]: not an SDK event "
            '({"$sdk": ..., "data": ...}). The played function of a \'stream\' cassette '
            "returns a stream of SDK events (or a messages.stream() manager).",
        )
        self.assertEqual(self.files(), [])


# -- part 7: a token count cassette whose function returns a number -----------------------


@pytest.mark.inprocess
class TokenCountTest(UnearnedTestCase):
    MESSAGES: ClassVar = user("How many tokens?")
    TOOLS: ClassVar = [{"name": "get_weather", "input_schema": {"type": "object"}}]

    def count(self, mode: str, fn: Callable[[], Any]) -> tuple[Any, Any]:
        with vcr_kit.token_count_cassette(
            self.MESSAGES, self.TOOLS, mode=mode, fixtures_dir=self.fixtures
        ) as c:
            return c.play(fn), c

    def test_a_number_records_and_replays_as_a_number(self) -> None:
        client = anthropic.Anthropic(base_url=self.server.url, api_key=self.key)
        self.addCleanup(client.close)

        def tokens() -> int:
            return client.messages.count_tokens(
                model=MODEL,
                messages=self.MESSAGES,
                tools=self.TOOLS,  # type: ignore[arg-type]
            ).input_tokens

        recorded, c = self.count("auto", tokens)
        self.assertTrue(c.recorded)
        self.assertEqual(json.loads(c.path.read_text())["response"], recorded)
        replayed, c = self.count("replay", lambda: self.fail("replay called the function"))
        self.assertTrue(c.replayed)
        self.assertIs(type(replayed), int)
        self.assertEqual(replayed, recorded)
        self.assertEqual(len(self.server.requests_to("/v1/messages/count_tokens")), 1)

    def test_a_number_async(self) -> None:
        async def tokens() -> int:
            async with anthropic.AsyncAnthropic(
                base_url=self.server.url, api_key=self.key
            ) as client:
                counted = await client.messages.count_tokens(
                    model=MODEL,
                    messages=self.MESSAGES,
                    tools=self.TOOLS,  # type: ignore[arg-type]
                )
            return counted.input_tokens

        async def play(mode: str) -> Any:
            async with vcr_kit.token_count_cassette(
                self.MESSAGES, self.TOOLS, mode=mode, fixtures_dir=self.fixtures
            ) as c:
                return await c.play(tokens)

        recorded = asyncio.run(play("auto"))
        self.assertEqual(asyncio.run(play("replay")), recorded)
        self.assertIsInstance(recorded, int)
        self.assertEqual(len(self.server.requests_to("/v1/messages/count_tokens")), 1)

    def test_the_sdk_object_and_null_still_record_and_replay(self) -> None:
        client = anthropic.Anthropic(base_url=self.server.url, api_key=self.key)
        self.addCleanup(client.close)
        recorded, _ = self.count(
            "auto",
            lambda: client.messages.count_tokens(
                model=MODEL, messages=self.MESSAGES, tools=self.TOOLS
            ),
        )  # type: ignore[arg-type]
        replayed, _ = self.count("replay", lambda: None)
        self.assertIsInstance(replayed, anthropic.types.MessageTokensCount)
        self.assertEqual(replayed.input_tokens, recorded.input_tokens)
        self.count("record", lambda: None)  # the original's Promise<number | null>
        self.assertIsNone(self.count("replay", lambda: 1)[0])

    def test_what_replay_would_refuse_is_never_written(self) -> None:
        # On main each of these was written, and then refused by its own replay.
        for value, problem in (
            ("12", "response: a string, not a token count or an API error"),
            (12.5, "response: a number, not a token count or an API error"),
            (-1, "response: -1 is not a token count"),
        ):
            with self.subTest(value=value):
                with self.assertRaises(vcr_kit.FixtureValueError) as caught:
                    self.count("auto", lambda value=value: value)
                path = caught.exception.path
                self.assertEqual(
                    str(caught.exception),
                    f"Cannot record {path}: {problem}. The played function of a 'token_count' "
                    "cassette returns a MessageTokensCount or a number, or raises an API error.",
                )
                self.assertEqual(self.files(), [])


# -- the proxy ------------------------------------------------------------------------------


@pytest.mark.inprocess
class ProxyTest(UnearnedTestCase):
    def test_the_proxy_keeps_neither_a_401_nor_a_cut_stream_and_logs_why(self) -> None:
        bad = recording_key()
        self.server.refused_keys.add(bad)
        log = io.StringIO()
        with (
            vcr_kit.proxy(mode="auto", fixtures_dir=self.fixtures, upstream=self.server.url) as url,
            redirect_stderr(log),
        ):
            with anthropic.Anthropic(base_url=url, api_key=bad, max_retries=0) as client:
                with self.assertRaises(anthropic.AuthenticationError):
                    create(client, "Proxy hello")
            with anthropic.Anthropic(base_url=url, api_key=self.key, max_retries=0) as client:
                with client.messages.create(
                    model=MODEL, max_tokens=16, messages=user("Proxy [[stream-cut]]"), stream=True
                ) as stream:
                    types = [event.type for event in stream]
                # The head went out before the break: the SDK's stream raises it as it is.
                with self.assertRaises(sdk_library().RemoteProtocolError):
                    with client.messages.create(
                        model=MODEL,
                        max_tokens=16,
                        messages=user("Proxy [[stream-drop]]"),
                        stream=True,
                    ) as stream:
                        list(stream)
                self.assertEqual(self.files(), [])
                self.assertEqual(create(client, "Proxy hello").content[0].text, "Echo: Proxy hello")
        self.assertEqual(types, ["message_start", "content_block_start"])
        self.assertEqual(len(self.files()), 1)  # the fixed key's answer
        self.assertEqual(
            log.getvalue().splitlines(),
            [
                f"vcr_kit proxy: POST /v1/messages not recorded: {AUTH}",
                f"vcr_kit proxy: POST /v1/messages not recorded: {CUT}",
                "vcr_kit proxy: POST /v1/messages not recorded: the upstream broke off its "
                "answer (RemoteProtocolError: peer closed connection without sending complete "
                "message body (incomplete chunked read))",
            ],
        )


# -- fixtures main wrote: check reports them, replay names them --------------------------


@pytest.mark.inprocess
class StoredBeforeTest(UnearnedTestCase):
    """Each file below has the shape main wrote for such an answer."""

    def setUp(self) -> None:
        super().setUp()
        create(self.client(), "Old answer")
        with self.client().messages.create(
            model=MODEL, max_tokens=16, messages=user("Old stream"), stream=True
        ) as stream:
            list(stream)
        with vcr_kit.streaming_cassette(
            user("Old cassette stream"), mode="auto", fixtures_dir=self.fixtures
        ) as c:
            client = anthropic.Anthropic(base_url=self.server.url, api_key=self.key)
            self.addCleanup(client.close)
            list(
                c.play(
                    lambda: client.messages.create(
                        model=MODEL,
                        max_tokens=16,
                        messages=user("Old cassette stream"),
                        stream=True,
                    )
                )
            )
        self.cassette_stream = c.path
        docs = {p: json.loads(p.read_text()) for p in self.files()}
        self.answer = next(p for p, d in docs.items() if "body" in d["response"])
        self.stream = next(p for p, d in docs.items() if "events" in d.get("response", {}))
        self.server.reset_log()

    def edit(self, path: Path, change: Callable[[Any], None]) -> None:
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc))

    def replay_error(self, text: str, *, stream: bool = False) -> BaseException:
        for mode in ("auto", "replay"):  # with a key and a miss-free file: never a call
            with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                if stream:
                    with self.client(mode=mode).messages.create(
                        model=MODEL, max_tokens=16, messages=user(text), stream=True
                    ) as events:
                        list(events)
                else:
                    create(self.client(mode=mode), text)
        self.assertEqual(self.server.log, [])
        return caught.exception

    def stored_401(self, doc: Any) -> None:
        doc["response"] = {
            "status": 401,
            "headers": {"content-type": "application/json", "request-id": "req_0123"},
            "body": {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
        }
        doc["usage"] = []

    def test_a_stored_401_is_refused_with_the_file_named_until_re_recorded(self) -> None:
        self.edit(self.answer, self.stored_401)
        error = self.replay_error("Old answer")
        self.assertEqual(
            str(error),
            corrupt_message(self.answer).format(f"response.status: {AUTH}{NEVER}"),
        )
        # Record mode replaces it with what the request earns.
        self.assertEqual(
            create(self.client(mode="record"), "Old answer").content[0].text, "Echo: Old answer"
        )
        self.assertEqual(
            create(self.client(mode="replay"), "Old answer").content[0].text, "Echo: Old answer"
        )

    @staticmethod
    def cut(doc: Any) -> None:
        """What main stored for a stream cut in its 4th event: the half event as text."""
        events = doc["response"]["events"][:3]
        half = json.dumps(doc["response"]["events"][3]["data"])[:30]
        doc["response"]["events"] = [*events, {"event": "content_block_delta", "data_text": half}]

    def test_a_stored_stream_cut_mid_event_is_refused_not_a_json_decode_error(self) -> None:
        self.edit(self.stream, self.cut)
        error = self.replay_error("Old stream", stream=True)
        self.assertEqual(
            str(error), corrupt_message(self.stream).format(f"response.events: {CUT}{NEVER}")
        )

    def test_a_stored_stream_without_its_final_event_is_refused(self) -> None:
        self.edit(self.stream, lambda doc: doc["response"]["events"].__delitem__(slice(-2, None)))
        error = self.replay_error("Old stream", stream=True)
        self.assertRegex(
            str(error),
            r"response\.events: the stream ended after \d+ events, before its final event "
            r"\(message_stop\); such an answer is never stored",
        )

    def test_stored_cassette_answers_the_request_did_not_earn_are_refused(self) -> None:
        self.edit(self.cassette_stream, lambda doc: doc["response"].pop())
        with (
            vcr_kit.streaming_cassette(
                user("Old cassette stream"), mode="replay", fixtures_dir=self.fixtures
            ) as c,
            self.assertRaises(vcr_kit.FixtureCorruptError) as caught,
        ):
            list(c.play(lambda: None))
        self.assertRegex(
            str(caught.exception),
            rf"\AFixture {self.cassette_stream} cannot be replayed: response: the stream ended "
            r"after \d+ events, before its final event \(message_stop\)",
        )
        messages = user("Old 401")
        path = self.fixtures / vcr_kit.cassette(messages).path.name
        error = {
            "class": "AuthenticationError",
            "status": 401,
            "message": "invalid x-api-key",
            "body": None,
            "request_id": "req_0123",
            "method": "POST",
            "path": "/v1/messages",
        }
        path.write_text(
            json.dumps(
                {
                    "vcr_kit_format": 1,
                    "kind": "message",
                    "request": {"messages": [{"role": "user", "content": "Old 401"}]},
                    "response": {"$error": error},
                    "usage": [],
                }
            )
        )
        with vcr_kit.cassette(messages, mode="auto", fixtures_dir=self.fixtures) as c:
            with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                c.play(lambda: self.fail("a corrupt fixture is not re-recorded in auto mode"))
        self.assertEqual(
            str(caught.exception),
            corrupt_message(path).format(f"response.$error.status: {AUTH}{NEVER}"),
        )

    def test_check_reports_each_of_them_by_file(self) -> None:
        self.assertEqual(cli("check", str(self.fixtures))[0], 0)
        self.edit(self.answer, self.stored_401)
        self.edit(self.stream, self.cut)  # on main: "0 problems"
        self.edit(self.cassette_stream, lambda doc: doc["response"].pop())
        status, out, _ = cli("check", str(self.fixtures))
        self.assertEqual(status, 1)
        lines = out.splitlines()
        self.assertEqual(len(lines), 4, lines)
        self.assertIn(f"{self.answer}: response.status: {AUTH}{NEVER}", lines)
        self.assertIn(f"{self.stream}: response.events: {CUT}{NEVER}", lines)
        self.assertTrue(
            any(
                line.startswith(f"{self.cassette_stream}: response: the stream ended after ")
                and line.endswith(f"before its final event (message_stop){NEVER}")
                for line in lines
            ),
            lines,
        )
        self.assertEqual(lines[-1], "vcr_kit: 3 fixtures checked, 3 problems")


# -- the summary line at exit --------------------------------------------------------------

SUMMARY_SCRIPT = """
import sys, vcr_kit, anthropic
with vcr_kit.client(mode="auto", fixtures_dir=sys.argv[1], base_url=sys.argv[2],
                    api_key=sys.argv[3], max_retries=0) as client:
    for _ in range(2):
        try:
            client.messages.create(model="claude-opus-4-7", max_tokens=16,
                                   messages=[{"role": "user", "content": "Hi"}])
        except anthropic.AuthenticationError:
            pass
"""


@pytest.mark.child
class SummaryTest(UnearnedTestCase):
    def test_the_summary_says_why_nothing_was_written(self) -> None:
        bad = recording_key()
        self.server.refused_keys.add(bad)
        env = {**environ_without_vcr(), "VCR_REPORT": "1", "PYTHONPATH": str(ROOT)}
        done = driver().run("code", [SUMMARY_SCRIPT, str(self.fixtures), self.server.url, bad],
                            cwd=ROOT, env=env, timeout=120)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(
            done.stderr.strip().splitlines()[-1],
            f"vcr_kit: 0 replayed, 0 recorded, 0 missing, 2 live (not recorded: {AUTH} (x2)); "
            f"$0.0000 of API calls replayed, $0.0000 recorded; {self.fixtures}/ (0 files)",
        )
        self.assertEqual(self.files(), [])


if __name__ == "__main__":
    unittest.main()
