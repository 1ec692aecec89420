"""Every SDK call shape vcr_kit must record and replay, run through one style.

``run_scenarios(style, base_url, fixtures_dir)`` runs each scenario twice, with
the sync and with the async SDK client, and returns what the code under test
observed (texts, blocks, events, usage, final messages, exception facts) plus
every message, tool use and request id it saw. Recording and replaying the same
scenarios must give equal observations; the ids say whether replay handed out
fresh message ids.

Styles:

``client``
    ``vcr_kit.client()`` / ``vcr_kit.async_client()``: the transparent client.
``cassette``
    plain ``anthropic.Anthropic`` clients whose calls are wrapped in
    ``vcr_kit.cassette`` / ``streaming_cassette`` / ``token_count_cassette``.

The mode comes from the environment (``VCR_MODE``, ``CI``, ...), the key from
``ANTHROPIC_API_KEY``. As a script, for a subprocess (``unshare -n`` for an
offline replay)::

    python tests/support/children/sdk_scenarios.py --style client --fixtures DIR \\
        [--base-url URL] --out FILE

To re-record the committed fixtures (from the repository root)::

    rm -rf fixtures/sdk_client && VCR_MODE=record ANTHROPIC_API_KEY=sk-ant-test-... \\
        python tests/support/children/sdk_scenarios.py --style client \\
        --fixtures fixtures/sdk_client --loopback \\
        --expected-out tests/support/expected/sdk_client.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import string
import sys
from pathlib import Path
from typing import Any

import anthropic

import vcr_kit

__all__ = [
    "MODEL",
    "PROMPTS",
    "STYLES",
    "expected_view",
    "fixture_files",
    "main",
    "recording_key",
    "run_scenarios",
    "sent_key",
]

MODEL = "claude-opus-4-7"
STYLES = ("client", "cassette")
#: The SDK needs some key to build a request; a replaying cassette never sends it.
DUMMY_KEY = "replay-needs-no-key"
WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather at a place.",
    "input_schema": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["location"],
    },
}
THINKING: dict[str, Any] = {"type": "enabled", "budget_tokens": 1024}
TOOL_RESULT = "18 C and sunny"

#: One prompt per scenario, so that no two scenarios share a fixture. The sync and
#: async runs share a prompt (and a fixture) except where the live answer is not
#: the same twice: an error carries the server's request id, and the 529 trigger
#: fires once per distinct body.
PROMPTS: dict[str, str] = {
    "create": "Say hello to the replay suite.",
    "stream_create": "Count to three, streaming.",
    "stream_helper": "Tell a short story through the stream helper.",
    "count_tokens": "How many tokens does this weather question take?",
    "tool_use": "What is the weather in Rome?",
    "thinking": "Think about the number seven.",
    "error:sync": "Break this request [[error:400]] (sync).",
    "error:async": "Break this request [[error:400]] (async).",
    "overloaded:sync": "Answer after one overload [[overloaded-once]] (sync).",
    "overloaded:async": "Answer after one overload [[overloaded-once]] (async).",
}


def sent_key(headers: dict[str, str]) -> str | None:
    """The API key a request carried: SDK 2.x sends ``authorization: Bearer``, 1.x ``x-api-key``."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token if scheme == "Bearer" else None


def recording_key() -> str:
    """A fresh key-shaped recording key: it travels in headers only, so no fixture may hold it."""
    alphabet = string.ascii_letters + string.digits
    return "sk-ant-test-" + "".join(secrets.choice(alphabet) for _ in range(32))


def fixture_files(folder: str | Path) -> dict[str, bytes]:
    """Every file below ``folder`` (lock files included), by relative path, with its bytes;
    not the run records in ``.runs/``, which each process that ends writes anew."""
    root = Path(folder)
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.relative_to(root).parts[0] != ".runs"
    }


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def without_message_ids(value: Any) -> Any:
    """``value`` with the ``id`` of every message dropped (replay makes fresh ones);
    tool use ids stay: they must be the recorded ones."""
    if isinstance(value, dict):
        is_message = value.get("type") == "message"
        return {
            k: without_message_ids(v) for k, v in value.items() if not (is_message and k == "id")
        }
    if isinstance(value, list):
        return [without_message_ids(v) for v in value]
    return value


class Seen:
    """Everything a run observed, and the ids it was handed."""

    def __init__(self) -> None:
        self.message_ids: list[str] = []
        self.tool_use_ids: list[str] = []
        self.request_ids: list[str | None] = []

    def message(self, message: Any, *, top_level: bool = True) -> dict[str, Any]:
        """Note a final ``Message`` and return its observation."""
        self.message_ids.append(message.id)
        if top_level:
            self.request_ids.append(message._request_id)
        for block in message.content:
            if block.type == "tool_use":
                self.tool_use_ids.append(block.id)
        return {
            "class": type(message).__name__,
            "block_types": [block.type for block in message.content],
            "texts": [block.text for block in message.content if block.type == "text"],
            "stop_reason": message.stop_reason,
            "usage": message.usage.to_dict(mode="json", warnings=False),
            "message": without_message_ids(message.to_dict(mode="json", warnings=False)),
        }

    def raw_events(self, events: list[Any]) -> dict[str, Any]:
        """Observation of ``create(stream=True)``'s raw events."""
        starts = [e.message.id for e in events if e.type == "message_start"]
        self.message_ids.extend(starts)
        return {
            "event_types": [e.type for e in events],
            "text_deltas": [
                e.delta.text
                for e in events
                if e.type == "content_block_delta" and e.delta.type == "text_delta"
            ],
            "events": [without_message_ids(e.to_dict(mode="json", warnings=False)) for e in events],
        }


def error_facts(exc: anthropic.APIStatusError) -> dict[str, Any]:
    body = exc.body if isinstance(exc.body, dict) else {}
    return {
        "class": type(exc).__name__,
        "status_code": exc.status_code,
        "message": str(exc),
        "request_id": exc.request_id,
        "error_type": (body.get("error") or {}).get("type"),
        "body": exc.body,
    }


def helper_events_view(seen: Seen, events: list[Any]) -> dict[str, Any]:
    """Observation of the events ``messages.stream()`` yields (the SDK's helper events)."""
    (start,) = [e for e in events if e.type == "message_start"]
    (stop,) = [e for e in events if e.type == "message_stop"]
    final = stop.message
    return {
        "helper_event_types": [e.type for e in events],
        "text": "".join(e.text for e in events if e.type == "text"),
        "final_id_is_start_id": final.id == start.message.id,
        "final": seen.message(final, top_level=False),
        "events": [without_message_ids(e.to_dict(mode="json", warnings=False)) for e in events],
    }


def tool_turns(first: Any) -> list[dict[str, Any]]:
    """The second turn's conversation: the assistant's tool use and its result."""
    (tool_use,) = [block for block in first.content if block.type == "tool_use"]
    return [
        *user(PROMPTS["tool_use"]),
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tool_use.id, "content": TOOL_RESULT}
            ],
        },
    ]


def thinking_view(seen: Seen, thought: Any) -> dict[str, Any]:
    """The thinking answer as observed: the message, and each thinking block's signature."""
    return {
        **seen.message(thought),
        "thinking": [
            {"thinking": b.thinking, "signature": b.signature}
            for b in thought.content
            if b.type == "thinking"
        ],
    }


def tool_view(seen: Seen, first: Any, second: Any) -> dict[str, Any]:
    (tool_use,) = [block for block in first.content if block.type == "tool_use"]
    return {
        "turn1": seen.message(first),
        "tool_name": tool_use.name,
        "tool_input": tool_use.input,
        "turn2": seen.message(second),
    }


# -- the sync side ---------------------------------------------------------------------


class SyncCalls:
    """The SDK calls of the scenarios, made through one style."""

    def __init__(self, style: str, client: anthropic.Anthropic, fixtures_dir: str) -> None:
        self.style = style
        self.client = client
        self.dir = fixtures_dir

    def create(self, messages: list[dict[str, Any]], **params: Any) -> Any:
        def call() -> Any:
            return self.client.messages.create(
                model=MODEL, max_tokens=2048, messages=messages, **params
            )

        if self.style == "client":
            return call()
        with vcr_kit.cassette(messages, fixtures_dir=self.dir) as c:
            return c.play(call)

    def stream_events(self, messages: list[dict[str, Any]]) -> tuple[str, list[Any]]:
        def call() -> Any:
            return self.client.messages.create(
                model=MODEL, max_tokens=2048, messages=messages, stream=True
            )

        if self.style == "client":
            with call() as stream:
                return type(stream).__name__, list(stream)
        with vcr_kit.streaming_cassette(messages, fixtures_dir=self.dir) as c:
            events = c.play(call)
            return type(events).__name__, list(events)

    def helper(self, messages: list[dict[str, Any]]) -> Any:
        return self.client.messages.stream(model=MODEL, max_tokens=2048, messages=messages)

    def count_tokens(self, messages: list[dict[str, Any]]) -> Any:
        def call() -> Any:
            return self.client.messages.count_tokens(
                model=MODEL, messages=messages, tools=[WEATHER_TOOL]
            )

        if self.style == "client":
            return call()
        with vcr_kit.token_count_cassette(messages, [WEATHER_TOOL], fixtures_dir=self.dir) as c:
            return c.play(call)


def run_sync(calls: SyncCalls, seen: Seen) -> dict[str, Any]:
    obs: dict[str, Any] = {}
    obs["create"] = seen.message(calls.create(user(PROMPTS["create"])))

    stream_class, events = calls.stream_events(user(PROMPTS["stream_create"]))
    obs["stream_create"] = {"stream_class": stream_class, **seen.raw_events(events)}

    helper = user(PROMPTS["stream_helper"])
    if calls.style == "client":
        with calls.helper(helper) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
            obs["stream_helper_text_stream"] = {
                "stream_class": type(stream).__name__,
                "text": text,
                "final": seen.message(final, top_level=False),
            }
        with calls.helper(helper) as stream:
            helper_events = list(stream)
            final = stream.get_final_message()
        view = helper_events_view(seen, helper_events)
        view["get_final_message"] = without_message_ids(final.to_dict(mode="json", warnings=False))
        view["get_final_message_is_stop_message"] = final.id == helper_events[-1].message.id
        obs["stream_helper_events"] = view
    else:
        with vcr_kit.streaming_cassette(helper, fixtures_dir=calls.dir) as c:
            helper_events = list(c.play(lambda: calls.helper(helper)))
        obs["stream_helper_events"] = helper_events_view(seen, helper_events)

    obs["count_tokens"] = calls.count_tokens(user(PROMPTS["count_tokens"])).to_dict(
        mode="json", warnings=False
    )

    first = calls.create(user(PROMPTS["tool_use"]), tools=[WEATHER_TOOL])
    second = calls.create(tool_turns(first), tools=[WEATHER_TOOL])
    obs["tool_use"] = tool_view(seen, first, second)

    thought = calls.create(user(PROMPTS["thinking"]), thinking=THINKING)
    obs["thinking"] = thinking_view(seen, thought)

    try:
        calls.create(user(PROMPTS["error:sync"]))
    except anthropic.APIStatusError as exc:
        obs["error"] = error_facts(exc)
    else:  # pragma: no cover - the scenario is broken
        raise AssertionError("the [[error:400]] request did not raise")

    obs["overloaded_once"] = seen.message(calls.create(user(PROMPTS["overloaded:sync"])))

    if calls.style == "client":
        page = calls.client.models.list()
        obs["models"] = {
            "page_class": type(page).__name__,
            "data": [m.to_dict(mode="json", warnings=False) for m in page.data],
        }
    return obs


# -- the async side --------------------------------------------------------------------


class AsyncCalls:
    def __init__(self, style: str, client: anthropic.AsyncAnthropic, fixtures_dir: str) -> None:
        self.style = style
        self.client = client
        self.dir = fixtures_dir

    async def create(self, messages: list[dict[str, Any]], **params: Any) -> Any:
        def call() -> Any:  # a coroutine: both styles await it
            return self.client.messages.create(
                model=MODEL, max_tokens=2048, messages=messages, **params
            )

        if self.style == "client":
            return await call()
        async with vcr_kit.cassette(messages, fixtures_dir=self.dir) as c:
            return await c.play(call)

    async def stream_events(self, messages: list[dict[str, Any]]) -> tuple[str, list[Any]]:
        def call() -> Any:
            return self.client.messages.create(
                model=MODEL, max_tokens=2048, messages=messages, stream=True
            )

        if self.style == "client":
            async with await call() as stream:
                return type(stream).__name__, [event async for event in stream]
        async with vcr_kit.streaming_cassette(messages, fixtures_dir=self.dir) as c:
            events = c.play(call)
            return type(events).__name__, [event async for event in events]

    def helper(self, messages: list[dict[str, Any]]) -> Any:
        return self.client.messages.stream(model=MODEL, max_tokens=2048, messages=messages)

    async def count_tokens(self, messages: list[dict[str, Any]]) -> Any:
        def call() -> Any:
            return self.client.messages.count_tokens(
                model=MODEL, messages=messages, tools=[WEATHER_TOOL]
            )

        if self.style == "client":
            return await call()
        async with vcr_kit.token_count_cassette(
            messages, [WEATHER_TOOL], fixtures_dir=self.dir
        ) as c:
            return await c.play(call)


async def run_async(calls: AsyncCalls, seen: Seen) -> dict[str, Any]:
    obs: dict[str, Any] = {}
    obs["create"] = seen.message(await calls.create(user(PROMPTS["create"])))

    stream_class, events = await calls.stream_events(user(PROMPTS["stream_create"]))
    obs["stream_create"] = {"stream_class": stream_class, **seen.raw_events(events)}

    helper = user(PROMPTS["stream_helper"])
    if calls.style == "client":
        async with calls.helper(helper) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
            obs["stream_helper_text_stream"] = {
                "stream_class": type(stream).__name__,
                "text": text,
                "final": seen.message(final, top_level=False),
            }
        async with calls.helper(helper) as stream:
            helper_events = [event async for event in stream]
            final = await stream.get_final_message()
        view = helper_events_view(seen, helper_events)
        view["get_final_message"] = without_message_ids(final.to_dict(mode="json", warnings=False))
        view["get_final_message_is_stop_message"] = final.id == helper_events[-1].message.id
        obs["stream_helper_events"] = view
    else:
        async with vcr_kit.streaming_cassette(helper, fixtures_dir=calls.dir) as c:
            helper_events = [event async for event in c.play(lambda: calls.helper(helper))]
        obs["stream_helper_events"] = helper_events_view(seen, helper_events)

    obs["count_tokens"] = (await calls.count_tokens(user(PROMPTS["count_tokens"]))).to_dict(
        mode="json"
    )

    first = await calls.create(user(PROMPTS["tool_use"]), tools=[WEATHER_TOOL])
    second = await calls.create(tool_turns(first), tools=[WEATHER_TOOL])
    obs["tool_use"] = tool_view(seen, first, second)

    thought = await calls.create(user(PROMPTS["thinking"]), thinking=THINKING)
    obs["thinking"] = thinking_view(seen, thought)

    try:
        await calls.create(user(PROMPTS["error:async"]))
    except anthropic.APIStatusError as exc:
        obs["error"] = error_facts(exc)
    else:  # pragma: no cover - the scenario is broken
        raise AssertionError("the [[error:400]] request did not raise")

    obs["overloaded_once"] = seen.message(await calls.create(user(PROMPTS["overloaded:async"])))

    if calls.style == "client":
        page = await calls.client.models.list()
        obs["models"] = {
            "page_class": type(page).__name__,
            "data": [m.to_dict(mode="json", warnings=False) for m in page.data],
        }
    return obs


# -- running ---------------------------------------------------------------------------


def _client_options(style: str, base_url: str | None) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if base_url is not None:
        options["base_url"] = base_url
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key:
        options["api_key"] = key
    elif style == "cassette":
        options["api_key"] = DUMMY_KEY  # vcr_kit.client() brings its own
    return options


def _make_client(style: str, fixtures_dir: str, options: dict[str, Any]) -> anthropic.Anthropic:
    if style == "client":
        return vcr_kit.client(fixtures_dir=fixtures_dir, **options)
    return anthropic.Anthropic(**options)


def _make_async_client(
    style: str, fixtures_dir: str, options: dict[str, Any]
) -> anthropic.AsyncAnthropic:
    if style == "client":
        return vcr_kit.async_client(fixtures_dir=fixtures_dir, **options)
    return anthropic.AsyncAnthropic(**options)


def run_scenarios(style: str, base_url: str | None, fixtures_dir: str) -> dict[str, Any]:
    """Run every scenario, sync then async, through ``style``; return a JSON-able result:
    ``observations`` (``sync`` and ``async``), ``message_ids``, ``tool_use_ids``,
    ``request_ids``."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    options = _client_options(style, base_url)
    seen = Seen()
    with _make_client(style, fixtures_dir, options) as client:
        sync_obs = run_sync(SyncCalls(style, client, fixtures_dir), seen)

    async def run() -> dict[str, Any]:
        async with _make_async_client(style, fixtures_dir, options) as aclient:
            return await run_async(AsyncCalls(style, aclient, fixtures_dir), seen)

    async_obs = asyncio.run(run())
    return {
        "observations": {"sync": sync_obs, "async": async_obs},
        "message_ids": seen.message_ids,
        "tool_use_ids": seen.tool_use_ids,
        "request_ids": seen.request_ids,
    }


def expected_view(result: dict[str, Any]) -> dict[str, Any]:
    """What a replay must reproduce exactly: the observations and the tool use ids
    (message and request ids are fresh on every replay)."""
    return {"observations": result["observations"], "tool_use_ids": result["tool_use_ids"]}


def write_json(path: str | Path, value: Any) -> None:
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    Path(path).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run every SDK scenario through vcr_kit in one style; write the result."
    )
    parser.add_argument("--style", choices=STYLES, required=True)
    parser.add_argument("--fixtures", required=True, metavar="DIR")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--base-url", default=None, metavar="URL")
    where.add_argument(
        "--loopback",
        action="store_true",
        help="serve tests/support/servers/loopback_server.py in this process",
    )
    parser.add_argument("--out", metavar="FILE", help="write the whole result here")
    parser.add_argument("--expected-out", metavar="FILE", help="write expected_view() here")
    args = parser.parse_args(argv)

    def run(base_url: str | None) -> dict[str, Any]:
        return run_scenarios(args.style, base_url, args.fixtures)

    if args.loopback:
        sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
        from tests.support.servers.loopback_server import LoopbackServer

        with LoopbackServer() as server:
            result = run(server.url)
    else:
        result = run(args.base_url)
    if args.out:
        write_json(args.out, result)
    if args.expected_out:
        write_json(args.expected_out, expected_view(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
