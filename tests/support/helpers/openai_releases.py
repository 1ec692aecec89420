"""The few places where the supported ``openai`` releases differ in shape, not behaviour.

The tests run on the newest ``openai`` and on the oldest release we support (tox's
``sdk-0.125`` env pins it). Where an older release spells the same thing differently,
the tests go through here, so both releases check the same behaviour of the loopback
server and of vcr_kit:

- the Chat Completions stream helper moved (after 1.66) from
  ``client.beta.chat.completions.stream`` to ``client.chat.completions.stream`` (the
  same helper, out of beta);
- a status error's text: newer releases render ``Error code: 400 - <the message>``,
  older ones ``Error code: 400 - <the whole error body>``.
"""

from __future__ import annotations

from typing import Any

import openai

__all__ = ["status_error_texts", "stream_chat"]


def stream_chat(client: openai.OpenAI | openai.AsyncOpenAI) -> Any:
    """The client's Chat Completions stream helper (sync or async, as the client is)."""
    completions = client.chat.completions
    if hasattr(completions, "stream"):
        return completions.stream
    return client.beta.chat.completions.stream  # type: ignore[attr-defined]


def status_error_texts(error: openai.APIStatusError, message: str) -> set[str]:
    """The two texts a release may give ``error`` whose body's message is ``message``."""
    status = f"Error code: {error.status_code}"
    return {f"{status} - {message}", f"{status} - {error.response.json()}"}
