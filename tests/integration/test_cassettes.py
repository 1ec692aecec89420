"""``cassette()``, ``streaming_cassette()`` and ``token_count_cassette()`` around real SDK calls.

A plain ``anthropic.Anthropic`` client talks to the loopback server; the cassette
records what the played function returned or raised, and replays it as the same
SDK types, with fresh message ids, without calling the function.
"""

from __future__ import annotations

import hashlib
import json
import unittest
from pathlib import Path
from typing import Any, NoReturn

import anthropic
import pytest
from anthropic._models import construct_type
from anthropic.types import Message

import vcr_kit
from tests.support.children.sdk_scenarios import MODEL, WEATHER_TOOL, fixture_files, recording_key
from tests.support.helpers.env import patch_env, start_server, temp_dir, user, vcr_environ

pytestmark = pytest.mark.inprocess

#: 529's class (exported at the top level only since anthropic 1.0).
OVERLOADED = anthropic._exceptions.OverloadedError

WIRE_MESSAGE: dict[str, Any] = {
    "id": "msg_01live",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "Hi!"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 4},
}
# Opus 4.7, USD per million tokens: input, 5-minute write, 1-hour write, cache read, output.
OPUS_4_7 = (5.0, 6.25, 10.0, 0.5, 25.0)


def content_hash(content: Any) -> str:
    """The original scheme, recomputed: SHA1 of the text, or of canonical JSON; 6 hex."""
    if isinstance(content, str):
        data = content.encode("utf-8")
    else:
        text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        data = text.encode("utf-8")
    return hashlib.sha1(data).hexdigest()[:6]


def without_id(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = message.to_dict(mode="json")
    data.pop("id")
    return data


def must_not_run() -> NoReturn:
    raise AssertionError("a replay called the played function")


async def must_not_run_async() -> NoReturn:
    raise AssertionError("a replay called the played function")


class CassetteTestCase(unittest.TestCase):
    """Clean environment, temporary fixtures folder, loopback server, plain SDK client."""

    def setUp(self) -> None:
        patch_env(self)
        self.tmp = temp_dir(self, prefix="vcr-cassettes-")
        self.server = start_server(self)
        self.client = anthropic.Anthropic(api_key=recording_key(), base_url=self.server.url)
        self.addCleanup(self.client.close)

    def cassette(self, messages: Any, mode: str | None) -> vcr_kit.MessageCassette:
        return vcr_kit.cassette(messages, mode=mode, fixtures_dir=self.tmp)

    def create(self, messages: list[dict[str, Any]], **params: Any) -> Message:
        message: Message = self.client.messages.create(
            model=MODEL, max_tokens=64, messages=messages, **params
        )
        return message

    def files(self) -> list[str]:
        return sorted(fixture_files(self.tmp)) if self.tmp.exists() else []

    def json_files(self) -> list[str]:
        return [name for name in self.files() if not name.startswith(".locks/")]


class NameTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self)

    def test_one_six_hex_hash_per_message_content(self) -> None:
        tool_result = [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18 C"}]
        messages = [
            {"role": "user", "content": "Hello there"},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]},
            {"role": "user", "content": tool_result},
        ]
        expected = "-".join(
            [
                content_hash("Hello there"),
                content_hash([{"type": "text", "text": "Hi!"}]),
                content_hash(tool_result),
            ]
        )
        c = vcr_kit.cassette(messages, fixtures_dir="/tmp/fixtures-x")
        self.assertEqual(c.path, Path("/tmp/fixtures-x") / f"{expected}.json")

    def test_role_is_not_part_of_the_name(self) -> None:
        as_user = vcr_kit.cassette([{"role": "user", "content": "Same words"}])
        as_assistant = vcr_kit.cassette([{"role": "assistant", "content": "Same words"}])
        self.assertEqual(as_user.path, as_assistant.path)
        self.assertEqual(as_user.path.name, content_hash("Same words") + ".json")

    def test_sdk_message_and_dict_give_the_same_name(self) -> None:
        message = construct_type(type_=Message, value=WIRE_MESSAGE)
        self.assertIsInstance(message, Message)
        as_object = vcr_kit.cassette([*user("Greet me"), message])
        as_dict = vcr_kit.cassette(
            [*user("Greet me"), {"role": "assistant", "content": WIRE_MESSAGE["content"]}]
        )
        self.assertEqual(as_object.path, as_dict.path)
        self.assertEqual(
            as_object.path.name,
            f"{content_hash('Greet me')}-{content_hash(WIRE_MESSAGE['content'])}.json",
        )


class ReplayTest(CassetteTestCase):
    def test_replay_returns_messages_with_request_ids_and_fresh_ids(self) -> None:
        messages = user("What is the weather in Oslo?")
        with self.cassette(messages, "record") as c:
            recorded = c.play(lambda: self.create(messages, tools=[WEATHER_TOOL]))
        self.assertTrue(c.recorded)
        self.assertFalse(c.replayed)
        self.assertEqual(len(self.server.log), 1)
        stored = json.loads(c.path.read_bytes())["response"]
        self.assertEqual(stored["$sdk"], "Message")
        self.assertEqual(stored["data"]["id"], "msg_vcr_0")
        stored_tool_id = stored["data"]["content"][1]["id"]
        self.assertRegex(stored_tool_id, r"\Atoolu_vcr[0-9a-f]{21}\Z")

        replays = []
        for _ in range(2):
            with self.cassette(messages, "replay") as c:
                replays.append(c.play(must_not_run))
            self.assertTrue(c.replayed)
            self.assertFalse(c.recorded)
        self.assertEqual(len(self.server.log), 1)

        ids = [m.id for m in (recorded, *replays)]
        self.assertEqual(len(set(ids)), 3)
        request_ids = [m._request_id for m in (recorded, *replays)]
        self.assertEqual(len(set(request_ids)), 3)
        for message in (recorded, *replays):
            self.assertIs(type(message), Message)
            self.assertRegex(message.id, r"\Amsg_vcr_[0-9a-f]{16,}\Z")
            self.assertRegex(message._request_id or "", r"\Areq_vcr_[0-9a-f]{16,}\Z")
            self.assertEqual(without_id(message), without_id(recorded))
            (tool_use,) = [b for b in message.content if b.type == "tool_use"]
            self.assertEqual(tool_use.id, stored_tool_id)
            self.assertEqual(tool_use.input, {"location": "Oslo", "unit": "celsius"})

    def test_auto_mode_records_once_then_replays(self) -> None:
        messages = user("Once, then from the file")
        calls = []

        def call() -> Message:
            calls.append(1)
            return self.create(messages)

        with self.cassette(messages, "auto") as first:
            one = first.play(call)
        with self.cassette(messages, "auto") as second:
            two = second.play(call)
        self.assertEqual((first.recorded, first.replayed), (True, False))
        self.assertEqual((second.recorded, second.replayed), (False, True))
        self.assertEqual(len(calls), 1)
        self.assertEqual(without_id(one), without_id(two))

    def test_unknown_block_types_survive(self) -> None:
        wire = {
            **WIRE_MESSAGE,
            "content": [{"type": "future_block", "x": 1}, *WIRE_MESSAGE["content"]],
        }
        live = construct_type(type_=Message, value=wire)
        messages = user("Show me the future")
        with self.cassette(messages, "record") as c:
            c.play(lambda: live)
        stored = json.loads(c.path.read_bytes())["response"]["data"]
        self.assertEqual(stored["content"], wire["content"])
        with self.cassette(messages, "replay") as c:
            replayed = c.play(must_not_run)
        self.assertIs(type(replayed), Message)
        self.assertIs(type(replayed.content[0]), type(live.content[0]))
        self.assertEqual(replayed.content[0].type, "future_block")
        self.assertEqual(replayed.content[0].x, 1)  # type: ignore[union-attr]
        self.assertEqual(replayed.content[1].to_dict(), {"type": "text", "text": "Hi!"})
        replayed_wire = replayed.to_dict(mode="json", warnings=False)
        self.assertRegex(replayed_wire.pop("id"), r"\Amsg_vcr_[0-9a-f]{16,}\Z")
        self.assertEqual(replayed_wire, {k: v for k, v in wire.items() if k != "id"})

    def test_a_list_of_messages(self) -> None:
        messages = user("Two answers")
        with self.cassette(messages, "record") as c:
            recorded = c.play(lambda: [self.create(user("First")), self.create(user("Second"))])
        stored = json.loads(c.path.read_bytes())["response"]
        self.assertEqual([m["data"]["id"] for m in stored], ["msg_vcr_0", "msg_vcr_1"])
        with self.cassette(messages, "replay") as c:
            replayed = c.play(must_not_run)
        self.assertIsInstance(replayed, list)
        self.assertEqual([type(m) for m in replayed], [Message, Message])
        self.assertEqual([m.content[0].text for m in replayed], ["Echo: First", "Echo: Second"])
        self.assertEqual([without_id(m) for m in replayed], [without_id(m) for m in recorded])
        ids = [m.id for m in replayed] + [m.id for m in recorded]
        self.assertEqual(len(set(ids)), 4)
        for message in replayed:
            self.assertRegex(message._request_id or "", r"\Areq_vcr_[0-9a-f]{16,}\Z")

    def test_api_errors_are_recorded_and_raised_again(self) -> None:
        for status, cls in ((400, anthropic.BadRequestError), (404, anthropic.NotFoundError)):
            with self.subTest(status=status):
                messages = user(f"Fail with [[error:{status}]]")
                with self.cassette(messages, "record") as c, self.assertRaises(cls) as recorded:
                    c.play(lambda messages=messages: self.create(messages))
                self.assertTrue(c.path.exists())
                stored = json.loads(c.path.read_bytes())["response"]["$error"]
                self.assertEqual(stored["status"], status)
                with self.cassette(messages, "replay") as c, self.assertRaises(cls) as replayed:
                    c.play(must_not_run)
                one, two = recorded.exception, replayed.exception
                self.assertIs(type(two), cls)
                self.assertEqual(two.status_code, status)
                self.assertEqual(str(two), str(one))
                self.assertEqual(two.message, one.message)
                self.assertEqual(two.request_id, one.request_id)
                self.assertRegex(two.request_id or "", r"\Areq_[A-Za-z0-9]{24}\Z")
                self.assertEqual(two.body, one.body)
                self.assertEqual(two.response.status_code, status)
                body = two.body if isinstance(two.body, dict) else {}
                self.assertEqual(body["error"]["type"], one.body["error"]["type"])  # type: ignore[index]
        self.assertEqual(len(self.server.log), 2)

    def test_transient_overloaded_error_is_not_saved(self) -> None:
        messages = user("Always busy [[overloaded-always]]")
        with anthropic.Anthropic(
            api_key=recording_key(), base_url=self.server.url, max_retries=0
        ) as client:
            with (
                self.cassette(messages, "record") as c,
                self.assertRaises(OVERLOADED) as caught,
            ):
                c.play(
                    lambda: client.messages.create(model=MODEL, max_tokens=16, messages=messages)
                )
        self.assertEqual(caught.exception.status_code, 529)
        self.assertFalse(c.recorded)
        self.assertFalse(c.path.exists())
        self.assertEqual(self.json_files(), [])
        self.assertEqual(len(self.server.log), 1)

    def test_passthrough_when_not_active(self) -> None:
        for ci in ("", "true"):  # CI makes replay the default, but only where vcr_kit is active
            with self.subTest(CI=ci), vcr_environ(CI=ci):
                messages = user("Just call it")
                results = []
                for _ in range(2):
                    with vcr_kit.cassette(messages, fixtures_dir=self.tmp) as c:
                        results.append(c.play(lambda messages=messages: self.create(messages)))
                    self.assertFalse(c.active)
                    self.assertFalse(c.recorded)
                    self.assertFalse(c.replayed)
                self.assertRegex(results[0].id, r"\Amsg_01")  # the server's own ids
                self.assertNotEqual(results[0].id, results[1].id)
        self.assertEqual(len(self.server.log), 4)
        self.assertEqual(self.files(), [])

    def test_token_count_cassette(self) -> None:
        messages = user("Count me")

        def count() -> Any:
            return self.client.messages.count_tokens(
                model=MODEL, messages=messages, tools=[WEATHER_TOOL]
            )

        with vcr_kit.token_count_cassette(
            messages, [WEATHER_TOOL], mode="record", fixtures_dir=self.tmp
        ) as c:
            recorded = c.play(count)
        self.assertRegex(c.path.name, r"\Atoken-count-[0-9a-f]{12}\.json\Z")
        with vcr_kit.token_count_cassette(
            messages, [WEATHER_TOOL], mode="replay", fixtures_dir=self.tmp
        ) as c:
            replayed = c.play(must_not_run)
        self.assertIs(type(replayed), type(recorded))
        self.assertEqual(replayed.to_dict(), recorded.to_dict())
        self.assertEqual(sorted(replayed.to_dict()), ["input_tokens"])


class CostTest(CassetteTestCase):
    def expected_usd(self, usage: Any) -> float:
        rate_in, rate_5m, rate_1h, rate_read, rate_out = OPUS_4_7
        total = usage.input_tokens * rate_in + usage.output_tokens * rate_out
        total += 1000 * rate_5m + 2000 * rate_1h + 5000 * rate_read
        return total / 1_000_000

    def test_replay_adds_the_same_cost_as_the_recording(self) -> None:
        messages = user("Spend with the cache [[cache]]")
        vcr_kit.reset_session_cost()
        with self.cassette(messages, "record") as c:
            message = c.play(lambda: self.create(messages))
        recorded = vcr_kit.session_cost()
        self.assertEqual(message.usage.input_tokens, 1200)
        self.assertEqual(recorded.calls, 1)
        self.assertEqual(recorded.input_tokens, 1200)
        self.assertEqual(recorded.output_tokens, message.usage.output_tokens)
        self.assertEqual(recorded.cache_write_5m_tokens, 1000)
        self.assertEqual(recorded.cache_write_1h_tokens, 2000)
        self.assertEqual(recorded.cache_read_tokens, 5000)
        self.assertEqual(recorded.usd, self.expected_usd(message.usage))
        self.assertEqual(list(recorded.by_model), [MODEL])

        vcr_kit.reset_session_cost()
        with self.cassette(messages, "replay") as c:
            c.play(must_not_run)
        self.assertEqual(vcr_kit.session_cost(), recorded)
        with self.cassette(messages, "replay") as c:
            c.play(must_not_run)
        twice = vcr_kit.session_cost()
        self.assertEqual(twice.calls, 2)
        self.assertEqual(twice.cache_read_tokens, 10_000)
        self.assertEqual(twice.usd, recorded.usd * 2)

    def test_a_replayed_stream_costs_what_its_message_costs(self) -> None:
        messages = user("Stream with the cache [[cache]]")
        vcr_kit.reset_session_cost()
        with vcr_kit.streaming_cassette(messages, mode="record", fixtures_dir=self.tmp) as c:
            events = list(
                c.play(
                    lambda: self.client.messages.create(
                        model=MODEL, max_tokens=64, messages=messages, stream=True
                    )
                )
            )
        recorded = vcr_kit.session_cost()
        vcr_kit.reset_session_cost()
        with vcr_kit.streaming_cassette(messages, mode="replay", fixtures_dir=self.tmp) as c:
            replayed_events = list(c.play(must_not_run))
        self.assertEqual(vcr_kit.session_cost(), recorded)
        self.assertEqual([e.type for e in replayed_events], [e.type for e in events])
        self.assertEqual(recorded.calls, 1)
        (delta,) = [e for e in events if e.type == "message_delta"]
        self.assertEqual(recorded.output_tokens, delta.usage.output_tokens)
        self.assertEqual(recorded.cache_write_1h_tokens, 2000)
        self.assertEqual(recorded.usd, self.expected_usd(delta.usage))


class AsyncCassetteTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        patch_env(self)
        self.tmp = temp_dir(self, prefix="vcr-cassettes-")
        self.server = start_server(self)

    async def asyncSetUp(self) -> None:
        self.client = anthropic.AsyncAnthropic(api_key=recording_key(), base_url=self.server.url)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def create(self, messages: list[dict[str, Any]]) -> Message:
        message: Message = await self.client.messages.create(
            model=MODEL, max_tokens=64, messages=messages
        )
        return message

    async def test_async_replay_returns_messages_with_fresh_ids(self) -> None:
        messages = user("Async hello")
        async with vcr_kit.cassette(messages, mode="record", fixtures_dir=self.tmp) as c:
            recorded = await c.play(lambda: self.create(messages))
        self.assertTrue(c.recorded)
        replays = []
        for _ in range(2):
            async with vcr_kit.cassette(messages, mode="replay", fixtures_dir=self.tmp) as c:
                replays.append(await c.play(must_not_run_async))
            self.assertTrue(c.replayed)
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual(len({m.id for m in (recorded, *replays)}), 3)
        for message in replays:
            self.assertIs(type(message), Message)
            self.assertEqual(without_id(message), without_id(recorded))
            self.assertRegex(message._request_id or "", r"\Areq_vcr_[0-9a-f]{16,}\Z")

    async def test_async_stream_replays_its_events(self) -> None:
        messages = user("Async stream")

        def stream() -> Any:
            return self.client.messages.create(
                model=MODEL, max_tokens=64, messages=messages, stream=True
            )

        async with vcr_kit.streaming_cassette(messages, mode="record", fixtures_dir=self.tmp) as c:
            recorded = [event async for event in c.play(stream)]
        async with vcr_kit.streaming_cassette(messages, mode="replay", fixtures_dir=self.tmp) as c:
            replayed = [event async for event in c.play(must_not_run_async)]
        self.assertEqual(len(self.server.log), 1)
        self.assertEqual([type(e) for e in replayed], [type(e) for e in recorded])
        self.assertEqual(replayed[0].type, "message_start")
        self.assertEqual(replayed[-1].type, "message_stop")
        self.assertNotEqual(replayed[0].message.id, recorded[0].message.id)
        text = "".join(e.delta.text for e in replayed if e.type == "content_block_delta")
        self.assertEqual(text, "Echo: Async stream")

    async def test_async_error_is_recorded_and_raised_again(self) -> None:
        messages = user("Async [[error:400]]")
        with self.assertRaises(anthropic.BadRequestError) as recorded:
            async with vcr_kit.cassette(messages, mode="record", fixtures_dir=self.tmp) as c:
                await c.play(lambda: self.create(messages))
        with self.assertRaises(anthropic.BadRequestError) as replayed:
            async with vcr_kit.cassette(messages, mode="replay", fixtures_dir=self.tmp) as c:
                await c.play(must_not_run_async)
        self.assertEqual(str(replayed.exception), str(recorded.exception))
        self.assertEqual(replayed.exception.request_id, recorded.exception.request_id)
        self.assertEqual(len(self.server.log), 1)

    async def test_async_transient_error_is_not_saved(self) -> None:
        messages = user("Async busy [[overloaded-always]]")
        async with anthropic.AsyncAnthropic(
            api_key=recording_key(), base_url=self.server.url, max_retries=0
        ) as client:
            with self.assertRaises(OVERLOADED):
                async with vcr_kit.cassette(messages, mode="record", fixtures_dir=self.tmp) as c:
                    await c.play(
                        lambda: client.messages.create(
                            model=MODEL, max_tokens=16, messages=messages
                        )
                    )
        self.assertFalse(c.path.exists())
        self.assertEqual(
            [name for name in fixture_files(self.tmp) if not name.startswith(".locks/")], []
        )

    async def test_async_passthrough_when_not_active(self) -> None:
        messages = user("Async, just call it")
        async with vcr_kit.cassette(messages, fixtures_dir=self.tmp) as c:
            message = await c.play(lambda: self.create(messages))
        self.assertFalse(c.active)
        self.assertRegex(message.id, r"\Amsg_01")
        self.assertFalse(self.tmp.joinpath(c.path.name).exists())
        self.assertEqual(fixture_files(self.tmp), {})


if __name__ == "__main__":
    unittest.main()


class KindsDoNotCollideTest(unittest.TestCase):
    """The same conversation as a message and as a stream: two fixtures, never mixed up."""

    def setUp(self) -> None:
        patch_env(self)

    def test_message_and_stream_of_one_conversation_are_two_files(self) -> None:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            messages = [{"role": "user", "content": "same words"}]
            with vcr_kit.cassette(messages, mode="record", fixtures_dir=folder) as c:
                c.play(lambda: {"as": "message"})
            # A stream is stored only when complete: here, its final event alone.
            stop = anthropic.types.RawMessageStopEvent(type="message_stop")
            with vcr_kit.streaming_cassette(messages, mode="record", fixtures_dir=folder) as s:
                list(s.play(lambda: iter([stop])))
            self.assertEqual(s.path.name, c.path.name.removesuffix(".json") + "-stream.json")
            with vcr_kit.cassette(messages, mode="replay", fixtures_dir=folder) as c:
                self.assertEqual(c.play(lambda: None), {"as": "message"})

            # A file of the other kind under the name is refused, not replayed as the wrong type.
            Path(c.path).write_bytes(Path(s.path).read_bytes())
            with vcr_kit.cassette(messages, mode="replay", fixtures_dir=folder) as c:
                with self.assertRaises(vcr_kit.FixtureCorruptError) as caught:
                    c.play(lambda: None)
            self.assertEqual(
                str(caught.exception),
                f"Fixture {c.path} cannot be replayed: it holds a 'stream' fixture, not "
                "'message'. Delete it, or re-record it with VCR_MODE=record.",
            )
