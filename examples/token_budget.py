"""A token-count check: does a prompt fit the budget before we send it?"""

from __future__ import annotations

from typing import Any

import anthropic

MODEL = "claude-opus-4-7"


def prompt_tokens(client: anthropic.Anthropic, messages: list[dict[str, Any]]) -> int:
    return client.messages.count_tokens(model=MODEL, messages=messages).input_tokens  # type: ignore[arg-type]


def fits_budget(client: anthropic.Anthropic, messages: list[dict[str, Any]], budget: int) -> bool:
    return prompt_tokens(client, messages) <= budget
