"""One conversation through each of the SDK's cloud clients, inside a vcr_kit session.

``python tests/support/children/cloud_scenarios.py PLATFORM FIXTURES_DIR`` builds the platform's
sync and async clients (inside the session, as code under test would), asks each
for one plain and one streamed answer, and prints JSON: the answers, the journal's
events and costs. Credentials come from the environment the caller gives it (the
Google token from ``VCR_TEST_GOOGLE_TOKEN``, handed to the client as a code under test
would hand its own); base URLs from the platforms' own variables, or the platform's
default host when unset. Run as a script so a replay can run under ``unshare -n``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

#: platform -> (model id as the platform spells it, path prefix its base URL keeps)
MODELS = {
    "bedrock": "global.anthropic.claude-opus-4-7-v1:0",
    "bedrock_mantle": "anthropic.claude-opus-4-7",
    "aws": "claude-opus-4-7",
    "vertex": "claude-opus-4-7@20260101",
    "google_cloud": "claude-opus-4-7",
    "foundry": "claude-opus-4-7",
}
#: The part of each platform's default base URL after the host: a recording's base URL
#: keeps it, so the fixture is the same on the platform's own host.
BASE_PATHS = {
    "bedrock": "",
    "bedrock_mantle": "/anthropic",
    "aws": "",
    "vertex": "/v1",
    "google_cloud": "/v1/projects/vcr-kit-test/locations/global/workspaces/wrkspc_test/invoke",
    "foundry": "/anthropic/",
}


def build(platform: str, asynchronous: bool) -> Any:
    import anthropic

    prefix = "Async" if asynchronous else ""
    common: dict[str, Any] = {"max_retries": 0}
    if platform == "bedrock":
        cls = getattr(anthropic, f"{prefix}AnthropicBedrock")
        return cls(aws_region="us-east-1", **common)
    if platform == "bedrock_mantle":
        cls = getattr(anthropic, f"{prefix}AnthropicBedrockMantle")
        return cls(aws_region="us-east-1", **common)
    if platform == "aws":
        cls = getattr(anthropic, f"{prefix}AnthropicAWS")
        return cls(aws_region="us-east-1", workspace_id="wrkspc_test", **common)
    token = os.environ.get("VCR_TEST_GOOGLE_TOKEN")
    if platform == "vertex":
        cls = getattr(anthropic, f"{prefix}AnthropicVertex")
        return cls(region="us-east5", project_id="vcr-kit-test", access_token=token, **common)
    if platform == "google_cloud":
        cls = getattr(anthropic, f"{prefix}AnthropicGoogleCloud")
        provider = None if token is None else (lambda: token)
        return cls(
            project="vcr-kit-test",
            location="global",
            workspace_id="wrkspc_test",
            token_provider=provider,
            **common,
        )
    cls = getattr(anthropic, f"{prefix}AnthropicFoundry")
    if os.environ.get("ANTHROPIC_FOUNDRY_BASE_URL"):  # the SDK refuses both at once
        return cls(**common)
    return cls(resource="vcr-kit-test", **common)


def ask(platform: str) -> list[str]:
    model = MODELS[platform]
    client = build(platform, asynchronous=False)
    plain = client.messages.create(
        model=model, max_tokens=20, messages=[{"role": "user", "content": f"{platform} sync"}]
    )
    with client.messages.stream(
        model=model, max_tokens=20, messages=[{"role": "user", "content": f"{platform} stream"}]
    ) as stream:
        streamed = stream.get_final_text()
    return [plain.content[0].text, plain.model, streamed]


async def aask(platform: str) -> list[str]:
    model = MODELS[platform]
    client = build(platform, asynchronous=True)
    async with client:
        plain = await client.messages.create(
            model=model, max_tokens=20, messages=[{"role": "user", "content": f"{platform} async"}]
        )
        async with client.messages.stream(
            model=model,
            max_tokens=20,
            messages=[{"role": "user", "content": f"{platform} astream"}],
        ) as stream:
            streamed = await stream.get_final_text()
    return [plain.content[0].text, plain.model, streamed]


def main(platform: str, fixtures: str) -> None:
    from vcr_kit._integrations.session import vcr_session

    outcome: dict[str, Any] = {}
    with vcr_session(fixtures_dir=fixtures) as journal:
        try:
            outcome["answers"] = [*ask(platform), *asyncio.run(aask(platform))]
        except Exception as exc:  # the test shows what failed, as the user would see it
            outcome["error"] = f"{type(exc).__name__}: {exc}"
        outcome["events"] = [entry.event.value for entry in journal.entries]
        outcome["costs"] = [round(entry.cost_usd, 9) for entry in journal.entries]
    print(json.dumps(outcome))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
