"""Frameworks meeting injected faults: langchain-anthropic's ``with_fallbacks`` and
pydantic-ai's retries and ``FallbackModel`` take their fallback path against recorded
answers. Each framework builds its own client, as user code does; the primary model
is in an outage (``overloaded*always@model:...``), the fallback model answers.

Run as a script (record with the loopback server up, then replay under
``unshare -n``)::

    python tests/support/children/fault_framework_scenarios.py --fixtures DIR --out FILE \\
        [--base-url URL]

Kept free of ``tests`` imports: it runs as a script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vcr_kit
from vcr_kit._integrations.session import vcr_session

PRIMARY = "claude-opus-4-7"
FALLBACK = "claude-haiku-4-5"
#: The primary model is down for the whole scenario; 10 ms retry-after keeps the SDK's
#: own retries (before a framework falls back) quick.
OUTAGE = f"overloaded:0.01*always@model:{PRIMARY}"


def langchain_fallbacks() -> dict[str, Any]:
    from langchain_anthropic import ChatAnthropic

    def chat(model: str) -> Any:
        return ChatAnthropic(model_name=model, max_tokens=64, max_retries=0, timeout=30, stop=None)

    answer = chat(PRIMARY).with_fallbacks([chat(FALLBACK)]).invoke("Hello from langchain")
    return {"text": answer.content, "model": answer.response_metadata.get("model_name")}


def pydantic_ai_fallback() -> dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.fallback import FallbackModel

    agent = Agent(FallbackModel(AnthropicModel(PRIMARY), AnthropicModel(FALLBACK)))
    result = agent.run_sync("Hello from pydantic-ai")
    return {"text": result.output, "model": result.response.model_name}


def pydantic_ai_retries() -> dict[str, Any]:
    from pydantic_ai import Agent

    result = Agent(f"anthropic:{PRIMARY}").run_sync("Retry from pydantic-ai")
    return {"text": result.output, "model": result.response.model_name}


SCENARIOS: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "langchain_fallbacks": (OUTAGE, langchain_fallbacks),
    "pydantic_ai_fallback": (OUTAGE, pydantic_ai_fallback),
    # The SDK's retries inside pydantic-ai absorb two overloads and a reset.
    "pydantic_ai_retries": ("overloaded:0.01,reset", pydantic_ai_retries),
}


def run(name: str, fixtures: Path) -> dict[str, Any]:
    spec, body = SCENARIOS[name]
    with vcr_session(fixtures_dir=fixtures) as journal, vcr_kit.faults(spec) as plan:
        seen = body()
    seen["faults"] = plan.names()
    seen["journal"] = {"faults": journal.faults, "replays": journal.replays}
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the framework fault scenarios.")
    parser.add_argument("--fixtures", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base-url")
    parser.add_argument("names", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args(argv)
    if args.base_url:  # the frameworks build their clients from the environment
        os.environ["ANTHROPIC_BASE_URL"] = args.base_url
    result = {name: run(name, args.fixtures) for name in args.names}
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
