"""A fixture as a person reads it: the request, the answer, usage and cost.

Pure functions from a parsed fixture to lines of text. A stream is joined into its
final message (text, tool calls with their JSON input assembled from the deltas,
thinking) by ``_core.stream_message``, as the SDK's ``get_final_message()`` would; an
API error shows its status, type and message.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any, Final

from .._core.providers import Provider, provider_named
from .._core.stream_message import assemble_message
from ._render_text import content_lines
from ._render_text import short as _short
from ._render_text import text_lines as _text_lines


def _untag(value: Any) -> Any:
    if isinstance(value, dict) and "$sdk" in value:
        return value.get("data")
    return value


def answer_lines(answer: Any) -> list[str]:
    """A message, an error body, a token count or any JSON value."""
    if isinstance(answer, list):
        return [line for item in answer for line in answer_lines(_untag(item))]
    if not isinstance(answer, dict):
        return _text_lines("", _short(answer))
    if answer.get("type") == "message":
        lines = content_lines(str(answer.get("role", "assistant")), answer.get("content"))
        lines.append(f"stop_reason: {answer.get('stop_reason')}")
        return lines
    if answer.get("type") == "error" and isinstance(answer.get("error"), dict):
        error = answer["error"]
        return [f"error {error.get('type')}: {error.get('message')}"]
    if set(answer) == {"input_tokens"}:
        return [f"input_tokens: {answer['input_tokens']}"]
    if "$error" in answer and isinstance(answer["$error"], dict):
        error = answer["$error"]
        return [f"{error.get('class')} {error.get('status')}: {error.get('message')}"]
    if isinstance(answer.get("data"), list):  # a page (models.list)
        return [f"- {_short(item.get('id', item) if isinstance(item, dict) else item)}"
                for item in answer["data"]]
    return json.dumps(answer, indent=2, ensure_ascii=False).splitlines()


def _conversation_lines(body: dict[str, Any]) -> list[str]:
    """Parameters, system prompt, tools and messages of a request body."""
    lines = []
    shown = {"messages", "system", "tools"}
    params = {k: v for k, v in body.items() if k not in shown}
    if params:
        lines.append("parameters: " + ", ".join(f"{k}={_short(v)}" for k, v in params.items()))
    system = body.get("system")
    if system:
        if isinstance(system, list):
            system = "\n".join(str(b.get("text", b)) if isinstance(b, dict) else str(b)
                               for b in system)
        lines += _text_lines("[system] ", str(system))
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        names = [str(t.get("name")) if isinstance(t, dict) else _short(t) for t in tools]
        lines.append("tools: " + ", ".join(names))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            lines += content_lines(str(message.get("role")), message.get("content"))
    return lines


def _http_request_lines(request: dict[str, Any]) -> list[str]:
    lines = [f"{request.get('method')} {request.get('path')}"]
    if "anthropic-beta" in request:
        lines.append(f"anthropic-beta: {request['anthropic-beta']}")
    given = request.get("body")
    return lines + _conversation_lines(given if isinstance(given, dict) else {})


def _input_lines(request: dict[str, Any]) -> list[str]:
    return _text_lines("input: ", json.dumps(request, ensure_ascii=False))


def _http_answer_lines(response: Any) -> list[str]:
    if not isinstance(response, dict):
        return answer_lines(response)
    lines = [f"status {response.get('status')}"]
    if "events" in response:
        events = [e.get("data") for e in response["events"] if isinstance(e, dict)]
        final = assemble_message(events)
        lines.append(f"(a stream of {len(events)} events, joined)")
        errors = [e for e in events if isinstance(e, dict) and e.get("type") == "error"]
        lines += answer_lines(final) if final else []
        for error in errors:
            lines += answer_lines(error)
        return lines
    if "body" in response:
        return lines + answer_lines(response["body"])
    if "text" in response:
        return lines + _text_lines("", str(response["text"]))
    return [*lines, "(binary body)"]


def _stream_answer_lines(response: Any) -> list[str]:
    if not isinstance(response, list):
        return answer_lines(response)
    events = [_untag(e) for e in response]
    final = assemble_message(events)
    head = [f"(a stream of {len(events)} events, joined)"]
    return head + (answer_lines(final) if final else [])


def _tagged_answer_lines(response: Any) -> list[str]:
    return answer_lines(_untag(response) if isinstance(response, dict) else response)


#: How each kind of fixture (see ``_core.kinds.KINDS``) reads: its request, its answer.
#: A kind missing here reads as a plain conversation and a plain JSON answer.
View = tuple[Callable[[dict[str, Any]], list[str]], Callable[[Any], list[str]]]
VIEWS: Final[dict[str, View]] = {
    "http": (_http_request_lines, _http_answer_lines),
    "message": (_conversation_lines, _tagged_answer_lines),
    "stream": (_conversation_lines, _stream_answer_lines),
    "token_count": (_conversation_lines, _tagged_answer_lines),
    "generic": (_input_lines, answer_lines),
}
_PLAIN_VIEW: Final[View] = (_conversation_lines, answer_lines)


def _provider(doc: dict[str, Any]) -> Provider | None:
    """Another provider's HTTP fixture: its stored request names the provider."""
    request = doc.get("request")
    if doc.get("kind") != "http" or not isinstance(request, dict):
        return None
    return provider_named(request.get("provider"))


def request_lines(doc: dict[str, Any]) -> list[str]:
    request = doc.get("request")
    if not isinstance(request, dict):
        return _text_lines("input: ", _short(request))
    provider = _provider(doc)
    if provider is not None:
        from ._render_providers import provider_request_lines

        return provider_request_lines(provider, request)
    return VIEWS.get(str(doc.get("kind")), _PLAIN_VIEW)[0](request)


def response_lines(doc: dict[str, Any]) -> list[str]:
    provider = _provider(doc)
    if provider is not None:
        from ._render_providers import provider_answer_lines

        return provider_answer_lines(provider, doc.get("response"))
    return VIEWS.get(str(doc.get("kind")), _PLAIN_VIEW)[1](doc.get("response"))


def usage_lines(doc: dict[str, Any]) -> list[str]:
    from .._ledger.cost import cost_of, price_for

    lines = []
    for entry in doc.get("usage") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("usage"), dict):
            continue
        model, usage = str(entry.get("model")), entry["usage"]
        tokens = ", ".join(f"{k}={v}" for k, v in usage.items() if isinstance(v, int))
        if price_for(model) is None:
            lines.append(f"usage: {model}: {tokens}; cost unknown (no price for this model)")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            usd = cost_of(model, usage).usd
        lines.append(f"usage: {model}: {tokens}; ${usd:.6f}")
    return lines


def render(doc: dict[str, Any]) -> list[str]:
    """The whole fixture: kind, request, answer, usage and cost."""
    provider = _provider(doc)
    return [
        f"kind: {doc.get('kind')}",
        *([f"provider: {provider.title}"] if provider is not None else []),
        "--- request",
        *request_lines(doc),
        "--- answer",
        *response_lines(doc),
        *(["--- usage", *usage_lines(doc)] if doc.get("usage") else []),
    ]
