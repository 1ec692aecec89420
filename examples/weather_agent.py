"""A tool-using agent loop: Claude asks for the weather, we run the tool, Claude answers.

Note that it builds its own ``anthropic.Anthropic()``: nothing is injected for the
tests. Under a ``VCRTestCase`` test, vcr_kit records and replays it anyway.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anthropic

MODEL = "claude-opus-4-7"
WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
}
# Our "weather service": fixed, so the second turn's request is the same on every run.
FORECASTS = {"Rome": "sunny, 24 degrees", "Oslo": "snow, -3 degrees"}


def get_weather(location: str, unit: str = "celsius") -> str:
    return FORECASTS.get(location, "cloudy, 15 degrees")


@dataclass
class AgentRun:
    answer: str
    turns: int
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


def ask(question: str, *, max_turns: int = 5) -> AgentRun:
    """Run the agent loop until Claude stops asking for tools."""
    client = anthropic.Anthropic()
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    run = AgentRun(answer="", turns=0)
    try:
        for _ in range(max_turns):
            response = client.messages.create(
                model=MODEL, max_tokens=512, tools=[WEATHER_TOOL], messages=messages
            )
            run.turns += 1
            run.input_tokens += response.usage.input_tokens
            run.output_tokens += response.usage.output_tokens
            messages.append({"role": "assistant", "content": response.content})
            if response.stop_reason != "tool_use":
                run.answer = "".join(b.text for b in response.content if b.type == "text")
                return run
            results = []
            for block in response.content:
                if block.type == "tool_use":
                    run.tool_calls.append({"name": block.name, "input": block.input})
                    output = get_weather(**block.input)
                    results.append(
                        {"type": "tool_result", "tool_use_id": block.id, "content": output}
                    )
            messages.append({"role": "user", "content": results})
        raise RuntimeError(f"no answer after {max_turns} turns: {json.dumps(run.tool_calls)}")
    finally:
        client.close()


async def ask_async(question: str) -> str:
    """The same first turn with the async client (one call, no tools)."""
    client = anthropic.AsyncAnthropic()
    try:
        response = await client.messages.create(
            model=MODEL, max_tokens=256, messages=[{"role": "user", "content": question}]
        )
        return "".join(b.text for b in response.content if b.type == "text")
    finally:
        await client.close()
