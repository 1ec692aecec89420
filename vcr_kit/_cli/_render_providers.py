"""Another provider's fixture as a person reads it (``vcr_kit show``): the request in
that API's terms and the answer it gave.

OpenAI Chat Completions (messages in, choices out, tool calls), Responses (input,
output items, ``previous_response_id``), Embeddings (how many vectors of how many
dimensions, never the numbers), Gemini ``generateContent`` (contents and their parts,
candidates, function calls); a stream is shown as the answer it assembles into
(``_core.provider_answer``). Pure functions from the stored request and answer to lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from .._core.provider_answer import as_message, dimensions, embeddings_of, final_body
from .._core.providers import Provider
from ._render_text import content_lines
from ._render_text import short as _short
from ._render_text import text_lines as _text_lines

__all__ = ["provider_answer_lines", "provider_request_lines"]

#: Request fields shown on their own lines, not among the parameters.
_SHOWN: Final = frozenset({"messages", "input", "instructions", "tools", "contents",
                           "systemInstruction", "system_instruction", "previous_response_id",
                           "content", "requests"})


def provider_request_lines(provider: Provider, request: Mapping[str, Any]) -> list[str]:
    lines = [f"{request.get('method')} {request.get('path')}"]
    query = request.get("query")
    if isinstance(query, list) and query:
        lines.append("query: " + "&".join("=".join(map(str, pair)) for pair in query))
    for header in provider.keyed_headers:
        if isinstance(request.get(header), str):
            lines.append(f"{header}: {request[header]}")
    body = request.get("body")
    if not isinstance(body, Mapping):
        return lines
    params = {k: v for k, v in body.items() if k not in _SHOWN}
    if params:
        lines.append("parameters: " + ", ".join(f"{k}={_short(v)}" for k, v in params.items()))
    if isinstance(body.get("previous_response_id"), str):
        lines.append(f"previous_response_id: {body['previous_response_id']}")
    if body.get("instructions"):
        lines += _text_lines("[system] ", str(body["instructions"]))
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, Mapping):
        lines += _parts_lines("system", system.get("parts"))
    names = _tool_names(body.get("tools"))
    if names:
        lines.append("tools: " + ", ".join(names))
    for message in body.get("messages") or []:
        lines += _chat_message_lines(message)
    if "input" in body:
        lines += _input_lines(body["input"], embeddings=request.get("path", "").endswith(
            "/embeddings"))
    for content in body.get("contents") or []:
        if isinstance(content, Mapping):
            lines += _parts_lines(str(content.get("role", "user")), content.get("parts"))
    # Gemini's embedContent (one content) and batchEmbedContents (a request each).
    embedded = [body.get("content")] + [
        r.get("content") for r in body.get("requests") or [] if isinstance(r, Mapping)
    ]
    for content in embedded:
        if isinstance(content, Mapping):
            lines += _parts_lines("embed", content.get("parts"))
    return lines


def _tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        declared = tool.get("functionDeclarations") or tool.get("function_declarations")
        if isinstance(declared, list):  # Gemini
            names += [str(d.get("name")) for d in declared if isinstance(d, Mapping)]
        elif isinstance(tool.get("function"), Mapping):  # Chat Completions
            names.append(str(tool["function"].get("name")))
        else:  # Responses: a function's name, or a built-in tool's type
            names.append(str(tool.get("name") or tool.get("type")))
    return names


def _chat_message_lines(message: Any) -> list[str]:
    if not isinstance(message, Mapping):
        return _text_lines("[?] ", _short(message))
    role = str(message.get("role"))
    content = message.get("content")
    if role == "tool":
        text = content if isinstance(content, str) else _short(content)
        return _text_lines(f"[tool: result for {message.get('tool_call_id')}] ", text)
    lines: list[str] = []
    if isinstance(content, list):  # parts: {"type": "text", "text"}, images...
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                lines += _text_lines(f"[{role}] ", str(part.get("text", "")))
            else:
                lines.append(f"[{role} {_part_kind(part)}]")
    elif content is not None:
        lines += _text_lines(f"[{role}] ", _short(content))
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            lines.append(
                f"[{role} calls {function.get('name')} ({call.get('id')})] "
                f"{function.get('arguments')}"
            )
    return lines


def _part_kind(part: Any) -> str:
    return str(part.get("type")) if isinstance(part, Mapping) else type(part).__name__


def _input_lines(given: Any, *, embeddings: bool) -> list[str]:
    """A Responses input (a text, or items) or the texts to embed."""
    if isinstance(given, str):
        return _text_lines("[user] " if not embeddings else "[embed] ", given)
    if not isinstance(given, list):
        return _text_lines("input: ", _short(given))
    if embeddings:
        return [line for text in given for line in _text_lines("[embed] ", _short(text))]
    lines: list[str] = []
    for item in given:
        if not isinstance(item, Mapping):
            lines += _text_lines("[user] ", _short(item))
        elif item.get("type") == "function_call_output":
            lines += _text_lines(f"[tool: result for {item.get('call_id')}] ",
                                 _short(item.get("output")))
        elif item.get("type") == "function_call":
            lines.append(f"[assistant calls {item.get('name')} ({item.get('call_id')})] "
                         f"{item.get('arguments')}")
        elif "role" in item:
            role, content = str(item.get("role")), item.get("content")
            if isinstance(content, list):
                for part in content:
                    text = part.get("text") if isinstance(part, Mapping) else None
                    lines += (_text_lines(f"[{role}] ", str(text)) if isinstance(text, str)
                              else [f"[{role} {_part_kind(part)}]"])
            else:
                lines += _text_lines(f"[{role}] ", _short(content))
        else:
            lines.append(f"[{item.get('type')}] {_short(item)}")
    return lines


def _parts_lines(role: str, parts: Any) -> list[str]:
    """A Gemini content's parts: texts, function calls and their responses."""
    lines: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            lines += _text_lines(f"[{role}] ", part["text"])
        elif isinstance(part.get("functionCall"), Mapping):
            call = part["functionCall"]
            lines.append(f"[{role} calls {call.get('name')}] {_short(call.get('args'))}")
        elif isinstance(part.get("functionResponse"), Mapping):
            answer = part["functionResponse"]
            lines.append(f"[{role}: result for {answer.get('name')}] "
                         f"{_short(answer.get('response'))}")
        else:
            lines.append(f"[{role} {next(iter(part), 'part')}]")
    return lines


def provider_answer_lines(provider: Provider, response: Any) -> list[str]:
    if not isinstance(response, Mapping):
        return _text_lines("", _short(response))
    lines = [f"status {response.get('status')}"]
    if "events" in response:
        events = response["events"] if isinstance(response["events"], list) else []
        lines.append(f"(a stream of {len(events)} events, joined)")
    elif "body" not in response:
        if "text" in response:
            return lines + _text_lines("", str(response["text"]))
        return [*lines, "(binary body)"]
    body = final_body(provider.name, response)
    if body is None:
        return [*lines, "(the stream holds no final answer)"]
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("status") or error.get("code")
        return [*lines, f"error {kind}: {error.get('message')}"]
    vectors = embeddings_of(provider.name, body)
    if vectors is not None:
        sizes = sorted({dimensions(v) for v in vectors}, key=str)
        dims = ", ".join(map(str, sizes))
        return [*lines, f"embeddings: {len(vectors)} of {dims} dimensions (vectors not shown)"]
    message = as_message(provider.name, body)
    if message is None:  # another answer (a model list, a count): as JSON
        return lines + json.dumps(body, indent=2, ensure_ascii=False).splitlines()
    if isinstance(body, Mapping):
        lines += _answer_head(body)
    for block in message["content"]:
        if block.get("type") == "tool_use" and block.get("id") is None:  # Gemini's: no id
            lines.append(f"[assistant calls {block.get('name')}] {_short(block.get('input'))}")
        else:
            lines += content_lines("assistant", [block])
    lines.append(f"finish_reason: {message['stop_reason']}")
    return lines


def _answer_head(body: Mapping[str, Any]) -> list[str]:
    """Who answered: the model (and a Responses answer's id, which a later request
    quotes as its ``previous_response_id``)."""
    model = body.get("model") or body.get("modelVersion")
    head = [f"model: {model}"] if model else []
    if body.get("object") == "response" and isinstance(body.get("id"), str):
        head.append(f"response id: {body['id']}")
    return head
