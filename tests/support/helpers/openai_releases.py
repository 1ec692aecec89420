"""Where the supported ``openai`` releases differ in shape, not behaviour.

The tests run on the newest ``openai`` and on the oldest release we support (tox's
``sdk-0.125`` env pins it). Where an older release spells the same thing differently,
the tests go through here, so both releases check the same behaviour of the loopback
server and of vcr_kit:

- a status error's text: newer releases render ``Error code: 400 - <the message>``,
  older ones ``Error code: 400 - <the whole error body>``.
"""

from __future__ import annotations

import openai

__all__ = ["status_error_texts"]


def status_error_texts(error: openai.APIStatusError, message: str) -> set[str]:
    """The two texts a release may give ``error`` whose body's message is ``message``."""
    status = f"Error code: {error.status_code}"
    return {f"{status} - {message}", f"{status} - {error.response.json()}"}
