"""Faults do what they say, as rules over their classes:

- every spec the parser accepts works end to end, and any other is a ``ConfigError``
  naming the value (hypothesis over spec strings, replayed through the real SDK);
- every injected wait ends at the client's own timeout, with the client's own timeout
  error, on every seam (httpx2 and httpx, sync and async; aiohttp, plain and the SDK's;
  the proxy for other processes);
- a fault counts only when the client met it (a stream fault when it read up to it);
- in a test, ``VCR_FAULTS``'s schedule is the test's own: results never depend on order.

Fixtures are recorded once from the loopback server, then replayed with it stopped.
"""

from __future__ import annotations

import asyncio
import time
import unittest
import unittest.mock
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, recording_key
from tests.support.helpers.env import installed, patch_env
from tests.support.helpers.examples import examples
from tests.support.servers.loopback_server import LoopbackServer
from vcr_kit._core.faults import FAULTS, PRESETS, Kind, parse_spec, render_spec
from vcr_kit._core.httplib import sdk_library
from vcr_kit._integrations.session import vcr_session
from vcr_kit._proxy.server import Proxy

pytestmark = pytest.mark.inprocess

HELLO = [{"role": "user", "content": "Say hello to the promises."}]
STORY = [{"role": "user", "content": "Tell a story to the promises."}]
ECHO_HELLO = "Echo: Say hello to the promises."
ECHO_STORY = "Echo: Tell a story to the promises."
#: Where a replay must never go: nothing listens on the discard port.
NOWHERE = "http://127.0.0.1:9"
#: A client's timeout against an injected wait far longer: compared as a ratio.
TIMEOUT, WAIT = 0.15, 5.0
#: Through the proxy the first event crosses a real socket: a timeout a loaded machine meets.
PROXY_TIMEOUT = 0.5
HAS_AIOHTTP = installed("aiohttp") and installed("anthropic._vendor.httpx_aiohttp")


def _session_body(messages: list[dict[str, str]]) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "stream": True, "messages": messages}


_HEADERS = {"x-api-key": "replay", "anthropic-version": "2023-06-01"}


class _Recorded(unittest.TestCase):
    """Fixtures recorded once for the class: a message, a stream, a plain aiohttp stream."""

    fixtures: ClassVar[Path]
    #: Each test runs in a replaying session (not one that runs VCRTestCases itself).
    in_session: ClassVar[bool] = True

    @classmethod
    def setUpClass(cls) -> None:
        import tempfile

        folder = tempfile.TemporaryDirectory()
        cls.addClassCleanup(folder.cleanup)
        cls.fixtures = Path(folder.name) / "fixtures"
        with (
            unittest.mock.patch.dict("os.environ", {"VCR_REPORT": "0"}),
            LoopbackServer() as server,
            vcr_kit.client(
                mode="record", fixtures_dir=cls.fixtures, api_key=recording_key(),
                base_url=server.url,
            ) as client,
        ):  # fmt: skip
            client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
            with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream:
                stream.get_final_message()
        # A plain aiohttp session's stream (_aiohttp_read) sends the SDK's body: one fixture.

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        stack = ExitStack()
        self.addCleanup(stack.close)
        if not self.in_session:
            return
        self.journal = stack.enter_context(vcr_session(mode="replay", fixtures_dir=self.fixtures))

    def sdk(self, **options: Any) -> anthropic.Anthropic:
        client = anthropic.Anthropic(base_url=NOWHERE, api_key="replay", **options)
        self.addCleanup(client.close)
        return client


async def _aiohttp_read(url: str, timeout: Any, *, events: int | None = None) -> int:
    """A plain aiohttp session's stream read line by line (``events``: stop after that
    many); the events read."""
    import aiohttp

    options = {} if timeout is None else {"timeout": timeout}
    seen = 0
    async with aiohttp.ClientSession(**options) as session:
        async with session.post(
            url + "/v1/messages", json=_session_body(STORY), headers=_HEADERS
        ) as answer:
            async for line in answer.content:
                seen += line.startswith(b"event: ")
                if events is not None and seen >= events:
                    break
    return seen


def _elapsed(call: Callable[[], object]) -> tuple[BaseException | object, float]:
    started = time.monotonic()
    try:
        got: BaseException | object = call()
    except Exception as exc:  # what the client raised is the result
        got = exc
    return got, time.monotonic() - started


# -- every injected wait ends at the client's timeout, on every seam ---------------------


class WaitsEndAtTheClientsTimeout(_Recorded):
    def story_sync(self) -> str:
        client = self.sdk(max_retries=0, timeout=TIMEOUT)
        with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream:
            return str(stream.get_final_message().content[0].text)

    async def story_async(self, http_client: Any = None) -> str:
        options: dict[str, Any] = {} if http_client is None else {"http_client": http_client}
        async with anthropic.AsyncAnthropic(
            base_url=NOWHERE, api_key="replay", max_retries=0, timeout=TIMEOUT, **options
        ) as client:
            async with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream:
                return str((await stream.get_final_message()).content[0].text)

    def assert_gives_up(
        self, spec: str, call: Callable[[], object], expected: type[BaseException]
    ) -> None:
        with vcr_kit.faults(spec) as plan:
            got, elapsed = _elapsed(call)
        self.assertIs(type(got), expected, f"{spec}: {got!r}")
        # At the client's timeout: not at once, and nowhere near the injected wait.
        self.assertGreater(elapsed / TIMEOUT, 0.8, spec)
        self.assertLess(elapsed / WAIT, 0.5, spec)
        self.assertEqual(plan.count, 1, spec)

    def test_httpx2_sync_and_async(self) -> None:
        lib = sdk_library()
        for spec, expected in (
            (f"slow_first:{WAIT:g}", anthropic.APITimeoutError),
            # Met while the stream is read: the SDK passes the transport's error on.
            (f"delay:{WAIT:g}", lib.ReadTimeout),
        ):
            with self.subTest(spec):
                self.assert_gives_up(spec, self.story_sync, expected)
                self.assert_gives_up(spec, lambda: asyncio.run(self.story_async()), expected)

    @unittest.skipUnless(installed("httpx"), "httpx (anthropic 0.x's library) is not installed")
    def test_httpx_sync_and_async(self) -> None:  # pragma: no cover - where httpx is installed
        import httpx

        def sync() -> int:
            with (
                httpx.Client(timeout=TIMEOUT) as client,
                client.stream(
                    "POST", NOWHERE + "/v1/messages", json=_session_body(STORY), headers=_HEADERS
                ) as answer,
            ):
                return sum(1 for _ in answer.iter_lines())

        async def read() -> int:
            async with (
                httpx.AsyncClient(timeout=TIMEOUT) as client,
                client.stream(
                    "POST", NOWHERE + "/v1/messages", json=_session_body(STORY), headers=_HEADERS
                ) as answer,
            ):
                return len([line async for line in answer.aiter_lines()])

        for spec in (f"slow_first:{WAIT:g}", f"delay:{WAIT:g}"):
            with self.subTest(spec):
                self.assert_gives_up(spec, sync, httpx.ReadTimeout)
                self.assert_gives_up(spec, lambda: asyncio.run(read()), httpx.ReadTimeout)

    @unittest.skipUnless(HAS_AIOHTTP, "aiohttp or the SDK's aiohttp client is not installed")
    def test_aiohttp_plain_and_the_sdks(self) -> None:
        import aiohttp

        lib = sdk_library()
        socket_timeout = getattr(aiohttp, "SocketTimeoutError", aiohttp.ServerTimeoutError)
        per_read = aiohttp.ClientTimeout(sock_read=TIMEOUT)
        in_all = aiohttp.ClientTimeout(total=TIMEOUT)
        for spec, sdk_error in (
            (f"slow_first:{WAIT:g}", anthropic.APITimeoutError),
            (f"delay:{WAIT:g}", lib.ReadTimeout),
        ):
            with self.subTest(spec):
                self.assert_gives_up(
                    spec,
                    lambda: asyncio.run(self.story_async(anthropic.DefaultAioHttpClient())),
                    sdk_error,
                )
                self.assert_gives_up(
                    spec, lambda: asyncio.run(_aiohttp_read(NOWHERE, per_read)), socket_timeout
                )
                # A total timeout is aiohttp's asyncio.TimeoutError, the body's read included.
                self.assert_gives_up(
                    spec, lambda: asyncio.run(_aiohttp_read(NOWHERE, in_all)), asyncio.TimeoutError
                )

    def test_the_proxy_for_other_processes(self) -> None:
        lib = sdk_library()
        for spec, expected in (
            (f"slow_first:{WAIT:g}", anthropic.APITimeoutError),
            (f"delay:{WAIT:g}", lib.ReadTimeout),
        ):
            with self.subTest(spec):
                proxy = Proxy(
                    mode="replay", fixtures_dir=self.fixtures, upstream=NOWHERE, faults=spec,
                    log=lambda line: None,
                ).start()  # fmt: skip
                self.addCleanup(proxy.stop)
                client = anthropic.Anthropic(
                    base_url=proxy.url, api_key="replay", max_retries=0, timeout=PROXY_TIMEOUT
                )
                self.addCleanup(client.close)

                def story(client: anthropic.Anthropic = client) -> str:
                    with client.messages.stream(
                        model=MODEL, max_tokens=64, messages=STORY
                    ) as stream:
                        return str(stream.get_final_message().content[0].text)

                got, elapsed = _elapsed(story)
                self.assertIs(type(got), expected, f"{spec}: {got!r}")
                self.assertLess(elapsed / WAIT, 0.5, spec)

    def test_a_wait_within_the_timeout_is_waited_out(self) -> None:
        with vcr_kit.faults("slow_first:0.01,delay:0.001"):
            self.assertEqual(self.story_sync(), ECHO_STORY)
            self.assertEqual(asyncio.run(self.story_async()), ECHO_STORY)


# -- a fault counts when the client met it --------------------------------------------


class FaultsCountWhenMet(_Recorded):
    def read_sync(self, events: int | None) -> int:
        client = self.sdk(max_retries=0)
        seen = 0
        with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream:
            for _ in stream:
                seen += 1
                if seen == events:
                    break
        return seen

    async def read_async(self, events: int | None, http_client: Any = None) -> int:
        options: dict[str, Any] = {} if http_client is None else {"http_client": http_client}
        seen = 0
        async with (
            anthropic.AsyncAnthropic(
                base_url=NOWHERE, api_key="replay", max_retries=0, **options
            ) as client,
            client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as stream,
        ):
            async for _ in stream:
                seen += 1
                if seen == events:
                    break
        return seen

    def readers(self) -> dict[str, Callable[[int | None], object]]:
        found: dict[str, Callable[[int | None], object]] = {
            "httpx2 sync": self.read_sync,
            "httpx2 async": lambda n: asyncio.run(self.read_async(n)),
        }
        if HAS_AIOHTTP:
            found["the SDK's aiohttp"] = lambda n: asyncio.run(
                self.read_async(n, anthropic.DefaultAioHttpClient())
            )
            found["plain aiohttp"] = lambda n: asyncio.run(_aiohttp_read(NOWHERE, None, events=n))
        return found

    def test_a_stream_fault_the_client_never_read_up_to_is_not_counted(self) -> None:
        for name, read in self.readers().items():
            for spec in ("cut_after:3", "error_after:3", "delay:0.001"):
                with self.subTest(reader=name, spec=spec):
                    before = self.journal.faults
                    with vcr_kit.faults(spec) as plan:
                        self.assertEqual(read(1), 1)
                    self.assertEqual((plan.count, self.journal.faults), (0, before))

    def test_a_stream_fault_read_up_to_is_counted_once(self) -> None:
        for name, read in self.readers().items():
            for spec in ("cut_after:3", "error_after:3", "delay:0.001"):
                with self.subTest(reader=name, spec=spec):
                    before = self.journal.faults
                    with vcr_kit.faults(spec) as plan:
                        _elapsed(lambda read=read: read(None))  # type: ignore[misc]
                    self.assertEqual(plan.names(), [spec.split(":")[0]])
                    self.assertEqual(self.journal.faults, before + 1)

    def test_a_cut_past_the_streams_end_is_never_met(self) -> None:
        with vcr_kit.faults("cut_after:1000000") as plan:
            self.assertGreater(self.read_sync(None), 3)
        self.assertEqual(plan.count, 0)


# -- every spec the parser accepts works; any other is a ConfigError naming it ---------

#: The pieces of a spec: mostly well formed (to reach the end-to-end check), some not.
_SECONDS = ("0", "0.001", "0.01", "1e-9", "2.5", "86400")
_EVENTS = ("0", "1", "3", "1000000")
_NUMBERS = ("86401", "1e12", "1e400", "-1", "nan", "inf", "1_0", "0x10", "٣", "²", "", "x")
_NAMES = (*sorted(FAULTS), *sorted(PRESETS), "overloded", "", " reset ", "cut")
_COUNTS = ("1", "2", "always", "0", "-1", "1000001", "two", "")
_FILTERS = ("@model:claude-*", "@model:other-*", "@text:story", "@tool:x", "@every:1",
            "@every:2", "@every:0", "@chance:0.5@seed:1", "@chance:2", "@seed:1",
            "@often:1", "@model:", "@every:٣")  # fmt: skip


@st.composite
def _items(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(_NAMES))
    text = name
    well_formed = draw(st.integers(0, 4)) > 0
    kind = FAULTS.get(name)
    if well_formed and kind is not None and kind.arg:
        if kind.arg_required or draw(st.booleans()):
            text += ":" + draw(st.sampled_from(_EVENTS if kind.arg == "int" else _SECONDS))
    elif not well_formed and draw(st.booleans()):
        text += ":" + draw(st.sampled_from(_NUMBERS + _SECONDS))
    if draw(st.integers(0, 3)) == 0:
        text += "*" + draw(st.sampled_from(_COUNTS[:3] if well_formed else _COUNTS))
    for _ in range(draw(st.integers(0, 2))):
        text += draw(st.sampled_from(_FILTERS[:6] if well_formed else _FILTERS))
    return text


_SPECS = st.lists(_items(), min_size=1, max_size=3).map(",".join)
#: The client's timeout in the property: every wait past it ends there.
_QUICK = 0.05


_CLIENTS = ("sync", "async", *(("aiohttp",) if HAS_AIOHTTP else ()))


class EverySpecWorksOrIsRefused(_Recorded):
    def outcome(self, spec: str, stream: bool, seam: str) -> tuple[object, list[str]]:
        """What the SDK's ``seam`` client gets under ``spec`` (one attempt), and the
        faults the plan says it met."""

        async def call_async() -> str:
            http = {"http_client": anthropic.DefaultAioHttpClient()} if seam == "aiohttp" else {}
            async with anthropic.AsyncAnthropic(
                base_url=NOWHERE, api_key="replay", max_retries=0, timeout=_QUICK, **http
            ) as client:
                if not stream:
                    reply = await client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
                    return str(reply.content[0].text)
                async with client.messages.stream(
                    model=MODEL, max_tokens=64, messages=STORY
                ) as events:
                    return str((await events.get_final_message()).content[0].text)

        def call() -> str:
            if seam != "sync":
                return asyncio.run(call_async())
            client = self.sdk(max_retries=0, timeout=_QUICK)
            if not stream:
                reply = client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
                return str(reply.content[0].text)
            with client.messages.stream(model=MODEL, max_tokens=64, messages=STORY) as events:
                return str(events.get_final_message().content[0].text)

        with vcr_kit.faults(spec) as plan:
            got, _ = _elapsed(call)
        return got, [injected.name for injected in plan.injected]

    def assert_as_documented(self, spec: str, stream: bool, seam: str) -> None:
        got, met = self.outcome(spec, stream, seam)
        answer = ECHO_STORY if stream else ECHO_HELLO
        said = f"{spec!r} ({seam}, stream={stream}): {got!r}"
        if not met:
            self.assertEqual(got, answer, f"no fault met: {said}")
            return
        self.assertEqual(len(met), 1, said)  # one attempt, no retries: one fault at most
        name = met[0]
        kind = FAULTS[name]
        lib = sdk_library()
        if kind.kind is Kind.API:
            self.assertIsInstance(got, anthropic.APIStatusError, said)
            self.assertEqual(got.status_code, kind.status, said)  # type: ignore[union-attr]
        elif name == "read_timeout":
            self.assertIsInstance(got, anthropic.APITimeoutError, said)
        elif kind.kind is Kind.TRANSPORT:
            self.assertIs(type(got), anthropic.APIConnectionError, said)
        elif name == "cut_after":  # as a real drop reaches each client
            cut = lib.ReadError if seam == "aiohttp" else lib.RemoteProtocolError
            self.assertIs(type(got), cut, said)
        elif name == "error_after":
            self.assertIsInstance(got, anthropic.APIStatusError, said)
        else:  # slow_first, delay: past the client's timeout, its timeout error
            expected = anthropic.APITimeoutError if name == "slow_first" else lib.ReadTimeout
            self.assertTrue(got == answer or type(got) is expected, said)

    @settings(max_examples=examples(60), deadline=None)
    @given(spec=_SPECS, stream=st.booleans(), seam=st.sampled_from(_CLIENTS))
    @example(spec="rate_limit:1e12", stream=False, seam="sync")
    @example(spec="overloaded:1e308", stream=False, seam="async")
    @example(spec="slow_first:86400", stream=True, seam="sync")
    @example(spec="cut_after:1000000", stream=True, seam="sync")
    @example(spec="cut_after:٣", stream=True, seam="sync")
    @example(spec="delay:1e400", stream=True, seam="sync")
    def test_a_spec_works_end_to_end_or_is_a_config_error_naming_it(
        self, spec: str, stream: bool, seam: str
    ) -> None:
        try:
            parse_spec(spec, "faults")  # as a block, a marker or VCR_FAULTS parses it
        except vcr_kit.ConfigError as exc:
            self.assertTrue(str(exc).startswith(f"faults={spec!r}: "), str(exc))
            return
        self.assert_as_documented(spec, stream, seam)

    @settings(max_examples=examples(300), deadline=None)
    @given(text=st.lists(st.sampled_from([*_NAMES, *_NUMBERS, *_SECONDS, *_FILTERS, ":",
                                          "*", "@", ","]),
                         max_size=8).map("".join) | st.text(max_size=30))  # fmt: skip
    def test_the_parser_answers_any_text_with_a_spec_or_a_config_error(self, text: str) -> None:
        try:
            spec = parse_spec(text, "faults")
        except vcr_kit.ConfigError as exc:
            self.assertTrue(str(exc).startswith(f"faults={text!r}: "), str(exc))
            return
        self.assertEqual(parse_spec(render_spec(spec)), spec)

    def test_the_bounds_are_in_the_message(self) -> None:
        with self.assertRaises(vcr_kit.ConfigError) as caught, vcr_kit.faults("rate_limit:1e12"):
            pass
        self.assertEqual(
            str(caught.exception),
            "faults='rate_limit:1e12': rate_limit:1e12: SECONDS is a number from 0 to 86400 "
            "(a day). A fault spec is a comma-separated list of NAME, NAME:ARG, NAME*N or "
            "NAME@FILTER (see https://vcr-kit.github.io/vcr_kit/faults/).",
        )


# -- VCR_FAULTS: a schedule per test, one per proxy lifetime ---------------------------


class VcrFaultsPerTest(_Recorded):
    in_session = False

    def test_each_test_meets_vcr_faults_afresh_in_any_order(self) -> None:
        fixtures = self.fixtures
        patch_env(self, VCR_FAULTS="overloaded")

        class Outage(vcr_kit.VCRTestCase):
            vcr_mode = "replay"
            vcr_fixtures_dir = fixtures

            def ask(self) -> None:
                client = anthropic.Anthropic(base_url=NOWHERE, max_retries=0)
                self.addCleanup(client.close)
                with self.assertRaises(anthropic.APIStatusError) as caught:
                    client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
                self.assertEqual(caught.exception.status_code, 529)
                self.assertFaults(1)

            def test_first(self) -> None:
                self.ask()

            def test_second(self) -> None:
                self.ask()

        for order in (["test_first", "test_second"], ["test_second", "test_first"]):
            with self.subTest(order=order):
                result = unittest.TestResult()
                unittest.TestSuite(Outage(name) for name in order).run(result)
                self.assertEqual((result.testsRun, result.failures, result.errors), (2, [], []))

    def test_a_proxy_keeps_one_schedule_for_its_lifetime(self) -> None:
        proxy = Proxy(
            mode="replay", fixtures_dir=self.fixtures, upstream=NOWHERE, faults="overloaded",
            log=lambda line: None,
        ).start()  # fmt: skip
        self.addCleanup(proxy.stop)
        statuses = []
        for _ in range(2):  # two clients, as two processes would be
            client = anthropic.Anthropic(base_url=proxy.url, api_key="replay", max_retries=0)
            self.addCleanup(client.close)
            try:
                client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
                statuses.append(200)
            except anthropic.APIStatusError as exc:
                statuses.append(exc.status_code)
        self.assertEqual(statuses, [529, 200])


if __name__ == "__main__":
    unittest.main()
