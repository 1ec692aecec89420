"""Whether a fixture's answer was written for its own request: an answer names the
model that gave it, and a Messages request names the model it asks. A file whose
answer comes from another model answers another request: replay would serve one
model's words to a test that asks another (``vcr_kit drift --update --model`` wrote
such files before it wrote under the changed request's own name).

The API answers an alias with the model it stands for (``claude-sonnet-4-0`` with
``claude-sonnet-4-20250514``, ``claude-3-5-sonnet-latest`` with
``claude-3-5-sonnet-20241022``): both are one model here. Pure: no disk, no SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["answered_model", "foreign_answer", "same_model"]

#: What an alias or a snapshot adds to a model's id: ``-latest``, a date
#: (``-20250514``, ``-2025-04-14``, Vertex's ``@20240620``), a version (``-v2:0``).
_SUFFIX: Final = re.compile(r"(?:-latest|-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-v\d+(?::\d+)?)$")
#: ``claude-sonnet-4-0`` is the alias of ``claude-sonnet-4-<date>``.
_ZERO_MINOR: Final = re.compile(r"(?<=\d)-0$")


def _base(model: str) -> str:
    base = model.strip().lower()
    while (shorter := _SUFFIX.sub("", base)) != base:
        base = shorter
    return _ZERO_MINOR.sub("", base)


def same_model(asked: str, answered: str) -> bool:
    """Whether the model ``answered`` is the one ``asked`` names (itself, its alias or
    a snapshot of it)."""
    return asked == answered or _base(asked) == _base(answered)


def answered_model(response: Any) -> str | None:
    """The model a stored HTTP answer names: a message's ``model``, or a stream's
    ``message_start`` message's; None when it names none."""
    if not isinstance(response, Mapping):
        return None
    body = response.get("body")
    if isinstance(body, Mapping) and body.get("type") == "message":
        model = body.get("model")
        return model if isinstance(model, str) else None
    events = response.get("events")
    if isinstance(events, list):
        for event in events:
            data = event.get("data") if isinstance(event, Mapping) else None
            if isinstance(data, Mapping) and data.get("type") == "message_start":
                message = data.get("message")
                model = message.get("model") if isinstance(message, Mapping) else None
                return model if isinstance(model, str) else None
    return None


def foreign_answer(doc: Mapping[str, Any]) -> str | None:
    """The finding when the HTTP fixture ``doc`` holds an answer another model gave
    than the one its request asks, else None (and for anything it cannot tell)."""
    if doc.get("kind") != "http":
        return None
    request = doc.get("request")
    body = request.get("body") if isinstance(request, Mapping) else None
    asked = body.get("model") if isinstance(body, Mapping) else None
    answered = answered_model(doc.get("response"))
    if not isinstance(asked, str) or answered is None or same_model(asked, answered):
        return None
    return (
        f"response: the answer is {answered}'s, but the stored request asks {asked}: this "
        "file answers another request (an earlier vcr_kit drift --update --model wrote "
        "such files). Delete it and record again"
    )
