"""Frameworks on an OpenAI model, each run inside a real ``VCRTestCase`` test.

Run as a script: ``python tests/support/children/openai_framework_scenarios.py NAME...
--fixtures DIR``. The named scenarios run, one after the other, inside one
``VCRTestCase`` test whose fixtures live in DIR; it prints one JSON object: what each
scenario observed (``values``), what the test's journal noted (``journal``) and the
session's cost (``cost``: a priced model's calls must cost the same replayed as
recorded). ``tests/clients/test_frameworks_openai.py`` records them against the
loopback OpenAI server (``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` set), then replays
them with the network removed, no key and no base URL.

Nothing here builds a client through vcr_kit: langchain-openai, pydantic-ai and litellm
build their own, from the environment, as user code does. Not imported by the test
modules (it runs as a script, where ``tests`` is not importable).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import unittest
from collections.abc import Callable
from typing import Any

import vcr_kit

#: A model with a price row (``vcr_kit/_ledger/provider_prices.py``): its calls cost.
MODEL = "gpt-5.4-mini"
SCENARIOS: dict[str, Callable[[], Any]] = {}


def scenario(fn: Callable[[], Any]) -> Callable[[], Any]:
    SCENARIOS[fn.__name__] = fn
    return fn


def get_weather(location: str) -> str:
    """The weather in a city."""
    return f"Sunny in {location}"


@scenario
def langchain_openai() -> Any:
    """langchain-openai's ``ChatOpenAI``: ``invoke``, ``stream`` and ``bind_tools`` (it
    builds the ``openai`` SDK's clients itself, from ``OPENAI_API_KEY`` and
    ``OPENAI_BASE_URL``)."""
    from langchain_openai import ChatOpenAI

    # stream_usage given: langchain-openai asks a stream's usage only of OpenAI's own
    # host by default, so the recording (at a base URL) and the replay (at the default
    # host) would send two requests.
    chat = ChatOpenAI(model=MODEL, max_retries=0, timeout=30, stream_usage=True)
    answer = chat.invoke("Hello from langchain-openai")
    streamed = "".join(str(c.content) for c in chat.stream("Stream from langchain-openai"))
    tool_call = chat.bind_tools([get_weather]).invoke("What is the weather in Rome?")
    return {
        "invoke": answer.content,
        "stream": streamed,
        "tool_calls": [(c["name"], c["args"]) for c in tool_call.tool_calls],
    }


@scenario
def pydantic_ai_openai() -> Any:
    """pydantic-ai: an ``Agent`` on ``openai:`` (the Responses API), and one on the
    Chat Completions model with a tool it calls, the answer quoting the tool's result
    (its provider builds an ``AsyncOpenAI`` on an HTTP client of its own)."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel

    plain = Agent(f"openai:{MODEL}").run_sync("Hello from pydantic-ai")
    # The tool turn on Chat Completions: the loopback server's Responses endpoint takes
    # a function_call_output only after a previous_response_id, and pydantic-ai sends
    # the whole conversation instead (as the real API allows).
    agent = Agent(OpenAIChatModel(MODEL), tools=[get_weather])
    tooled = agent.run_sync("What is the weather in Oslo?")
    return {"output": plain.output, "with_tool": tooled.output}


@scenario
def litellm_openai() -> Any:
    """litellm with an ``openai/`` model: sync, async and streamed."""
    import litellm

    asks: dict[str, Any] = {"model": f"openai/{MODEL}", "max_tokens": 20}

    def said(text: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": text}]

    async def asynchronous() -> list[str]:
        plain = await litellm.acompletion(messages=said("litellm async"), **asks)
        parts = []
        # stream_options given: litellm asks a stream's usage only of OpenAI's own host.
        streamed = await litellm.acompletion(
            messages=said("litellm stream"),
            stream=True,
            stream_options={"include_usage": True},
            **asks,
        )
        async for chunk in streamed:
            parts.append((chunk.choices[0].delta.content or "") if chunk.choices else "")
        return [plain.choices[0].message.content, "".join(parts)]

    sync = litellm.completion(messages=said("litellm sync"), **asks)
    return [sync.choices[0].message.content, *asyncio.run(asynchronous())]


def run(names: list[str], fixtures: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"values": {}}

    class Scenarios(vcr_kit.VCRTestCase):
        vcr_fixtures_dir = fixtures

        def test_scenarios(self) -> None:
            vcr_kit.reset_session_cost()
            for name in names:
                seen["values"][name] = SCENARIOS[name]()
            cost = vcr_kit.session_cost()
            seen["cost"] = {"calls": cost.calls, "usd": round(cost.usd, 12)}
            seen["journal"] = sorted({e.event.value for e in self.vcr_journal.entries})

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Scenarios)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
    problems = [text for _, text in [*result.errors, *result.failures]]
    return {"ok": result.wasSuccessful(), "problems": problems, **seen}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", choices=sorted(SCENARIOS))
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    outcome = run(args.names, args.fixtures)
    print(json.dumps(outcome, sort_keys=True, default=str))
    return 0 if outcome["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
