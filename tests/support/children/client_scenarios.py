"""Code that calls Claude its own way, each run inside a real ``VCRTestCase`` test.

Run as a script: ``python tests/support/children/client_scenarios.py NAME --fixtures DIR``.
It runs the scenario NAME inside a ``VCRTestCase`` whose fixtures live in DIR and prints one JSON
object: what the code observed (``value``) and what the test's journal noted
(``journal``). ``tests/clients/test_every_client.py`` records each scenario against the
loopback server, then replays it in a process with no network, no key and no
``ANTHROPIC_BASE_URL``, and compares the two.

Nothing here builds a client through vcr_kit: the SDK's own helpers (a tool runner
with message threads, message batches) and real frameworks (langchain-anthropic,
pydantic-ai) build theirs, as user code does. Not imported by the test modules (it
also runs as a script, where ``tests`` is not importable).
"""

from __future__ import annotations

import argparse
import json
import sys
import unittest
from collections.abc import Callable
from typing import Any

import vcr_kit

MODEL = "claude-opus-4-7"
SCENARIOS: dict[str, Callable[[], Any]] = {}


def scenario(fn: Callable[[], Any]) -> Callable[[], Any]:
    SCENARIOS[fn.__name__] = fn
    return fn


@scenario
def tool_runner_threads() -> Any:
    """The SDK's beta tool runner with message threads: each turn after the first
    quotes the previous answer's id (``thread.previous_message_id``)."""
    import anthropic
    from anthropic import beta_tool

    @beta_tool
    def get_weather(location: str, unit: str = "celsius") -> str:
        """The weather in a city.

        Args:
            location: the city
            unit: celsius or fahrenheit
        """
        return f"Sunny, 21 degrees {unit} in {location}"

    client = anthropic.Anthropic(max_retries=0)
    runner = client.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=200,
        tools=[get_weather],
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
    )
    turns, ids = [], []
    for message in runner:
        ids.append(message.id)
        turns.append(
            {
                "stop_reason": message.stop_reason,
                "blocks": [
                    {"type": b.type, "text": getattr(b, "text", None), "id": getattr(b, "id", None)}
                    for b in message.content
                ],
            }
        )
    return {"turns": turns, "distinct_ids": len(set(ids)) == len(ids)}


@scenario
def batches() -> Any:
    """Message batches: create, then retrieve by the id the create answered, then results."""
    import anthropic

    client = anthropic.Anthropic(max_retries=0)
    created = client.messages.batches.create(
        requests=[
            {
                "custom_id": f"q{i}",
                "params": {
                    "model": MODEL,
                    "max_tokens": 50,
                    "messages": [{"role": "user", "content": f"Batch question {i}"}],
                },
            }
            for i in range(2)
        ]
    )
    retrieved = client.messages.batches.retrieve(created.id)
    results = sorted(
        (r.custom_id, r.result.message.content[0].text)  # type: ignore[union-attr]
        for r in client.messages.batches.results(created.id)
    )
    return {
        "same_id": retrieved.id == created.id,
        "id_prefix": created.id.split("_", 1)[0],
        "status": retrieved.processing_status,
        "results": results,
    }


@scenario
def langchain() -> Any:
    """langchain-anthropic: ``invoke``, ``stream`` and ``bind_tools`` (its client is a
    subclass of ``anthropic.DefaultHttpxClient`` that it builds itself)."""
    from langchain_anthropic import ChatAnthropic

    chat = ChatAnthropic(model_name=MODEL, max_tokens=100, max_retries=0, timeout=30, stop=None)
    answer = chat.invoke("Hello from langchain")
    streamed = "".join(str(chunk.content) for chunk in chat.stream("Stream from langchain"))

    def get_weather(location: str) -> str:
        """The weather in a city."""
        return f"Sunny in {location}"

    tool_call = chat.bind_tools([get_weather]).invoke("What is the weather in Rome?")
    return {
        "invoke": answer.content,
        "stream": streamed,
        "tool_calls": [(c["name"], c["args"]) for c in tool_call.tool_calls],
    }


@scenario
def pydantic_ai() -> Any:
    """pydantic-ai: an ``Agent`` on an Anthropic model (it hands the SDK a plain
    ``httpx2.AsyncClient`` of its own)."""
    from pydantic_ai import Agent

    agent = Agent(f"anthropic:{MODEL}")
    result = agent.run_sync("Hello from pydantic-ai")
    return {"output": result.output}


@scenario
def instructor() -> Any:
    """instructor: structured output through a tool call, on the client it wraps
    (instructor 1.17 pins anthropic 0.93, built on httpx)."""
    import anthropic
    import instructor as instructor_lib
    from pydantic import BaseModel

    class Person(BaseModel):
        name: str
        age: int

    client = instructor_lib.from_anthropic(anthropic.Anthropic(max_retries=0))
    person = client.messages.create(
        model=MODEL,
        max_tokens=100,
        response_model=Person,
        messages=[{"role": "user", "content": 'Who? [[tool:Person {"name": "Ada", "age": 36}]]'}],
    )
    return person.model_dump()


def run(name: str, fixtures: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    class Scenario(vcr_kit.VCRTestCase):
        vcr_fixtures_dir = fixtures

        def test_scenario(self) -> None:
            seen["value"] = SCENARIOS[name]()
            seen["journal"] = sorted(e.event.value for e in self.vcr_journal.entries)

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Scenario)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
    problems = [text for _, text in [*result.errors, *result.failures]]
    return {"ok": result.wasSuccessful(), "problems": problems, **seen}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(SCENARIOS))
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    outcome = run(args.name, args.fixtures)
    print(json.dumps(outcome, sort_keys=True, default=str))
    return 0 if outcome["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
