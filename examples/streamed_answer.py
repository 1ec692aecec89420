"""A streamed answer: show text as it arrives, keep the final message."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic

MODEL = "claude-opus-4-7"


def stream_answer(client: anthropic.Anthropic, question: str) -> Iterator[str]:
    """Yield the answer's text pieces as the API streams them."""
    with client.messages.stream(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": question}]
    ) as stream:
        yield from stream.text_stream


def final_answer(client: anthropic.Anthropic, question: str) -> anthropic.types.Message:
    with client.messages.stream(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": question}]
    ) as stream:
        return stream.get_final_message()
