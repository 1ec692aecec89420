"""litellm's sync, async and streamed calls to Anthropic, inside a vcr_kit session.

``python tests/support/children/litellm_scenario.py BASE_URL FIXTURES_DIR`` imports litellm
inside the session (so ``httpx``, which litellm sends its sync calls with, is first
imported while the test runs, and its async calls go through aiohttp), and prints
JSON: the answers and the journal's events. A script, so a replay can run under
``unshare -n``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def main(base_url: str, fixtures: str) -> None:
    from vcr_kit._integrations.session import vcr_session

    outcome: dict[str, Any] = {}
    with vcr_session(fixtures_dir=fixtures) as journal:
        import litellm

        key = os.environ.get("ANTHROPIC_API_KEY") or "no-key-given"
        asks: dict[str, Any] = {"model": "anthropic/claude-opus-4-7", "max_tokens": 20}
        asks.update(api_base=base_url, api_key=key)

        def said(text: str) -> list[dict[str, str]]:
            return [{"role": "user", "content": text}]

        async def asynchronous() -> list[str]:
            plain = await litellm.acompletion(messages=said("litellm async"), **asks)
            parts = []
            async for chunk in await litellm.acompletion(
                messages=said("litellm stream"), stream=True, **asks
            ):
                parts.append(chunk.choices[0].delta.content or "")
            return [plain.choices[0].message.content, "".join(parts)]

        try:
            sync = litellm.completion(messages=said("litellm sync"), **asks)
            outcome["answers"] = [sync.choices[0].message.content, *asyncio.run(asynchronous())]
        except Exception as exc:  # shown by the test as the user would see it
            outcome["error"] = f"{type(exc).__name__}: {exc}"
        outcome["events"] = [entry.event.value for entry in journal.entries]
    print(json.dumps(outcome))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
