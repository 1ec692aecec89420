"""Another provider's stored answer read for what it says: the final answer of a
stream, the model's turn as content blocks, and the envelope around it.

``vcr_kit show`` prints a provider's answer with these, and ``vcr_kit drift``
compares two of them with these (``answer_verdict``): OpenAI's Chat Completions
chunks are folded into the completion the SDK's ``get_final_completion()`` gives,
a Responses stream is the ``response`` of its final event, Gemini's chunks are
concatenated into one ``generateContent`` answer. The model's turn
(``as_message``) is in vcr_kit's terms, those of an Anthropic message: ``text``
and ``thinking`` blocks, ``tool_use`` blocks (a tool call's JSON arguments parsed
into its ``input``), and the provider's own finish reason as ``stop_reason``.
Pure: no SDK, no disk, no network.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "TRUNCATIONS",
    "as_message",
    "dimensions",
    "embeddings_of",
    "envelope",
    "final_body",
    "stream_form",
]

#: The finish reasons that say the answer was cut by the token limit.
TRUNCATIONS: Final = frozenset({"length", "incomplete: max_output_tokens", "MAX_TOKENS"})
#: The events that end a Responses stream with its answer.
_RESPONSES_FINAL: Final = ("response.completed", "response.incomplete")
#: A chat completion's message fields that hold the model's turn (the rest is envelope).
_CHAT_TURN: Final = ("content", "tool_calls", "refusal", "function_call", "audio")


# --------------------------------------------------------------------------- #
# A stream's final answer
# --------------------------------------------------------------------------- #


def stream_form(events: Iterable[Any]) -> str:
    """``responses`` (typed events), ``chunks`` (untyped JSON chunks)."""
    for event in events:
        if isinstance(event, Mapping) and event.get("event"):
            return "responses"
    return "chunks"


def final_body(provider: str, response: Mapping[str, Any]) -> Any:
    """The answer a stored response gives: its body, or its stream's final answer
    (None when the stream holds none: cut, or only an error)."""
    if "events" not in response:
        return response.get("body")
    events = [e for e in response["events"] if isinstance(e, Mapping)]
    datas: list[Mapping[str, Any]] = [
        e["data"] for e in events if isinstance(e.get("data"), Mapping)
    ]
    if provider == "gemini":
        return _gemini_chunks(datas)
    if stream_form(events) == "responses":
        for data in reversed(datas):
            if data.get("type") in _RESPONSES_FINAL and isinstance(data.get("response"), Mapping):
                return data["response"]
        return None
    return _chat_chunks(datas)


def _chat_chunks(chunks: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Chat Completions chunks folded into the completion: each choice's content
    joined, its tool calls assembled by index (arguments joined), its finish reason."""
    if not chunks:
        return None
    first = chunks[0]
    body: dict[str, Any] = {k: v for k, v in first.items() if k not in ("choices", "usage")}
    body["object"] = "chat.completion"
    choices: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        if isinstance(chunk.get("usage"), Mapping):
            body["usage"] = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, Mapping):
                continue
            index = choice.get("index", 0)
            into = choices.setdefault(
                index,
                {"index": index, "message": {"role": "assistant", "content": None},
                 "finish_reason": None},
            )
            if choice.get("finish_reason") is not None:
                into["finish_reason"] = choice["finish_reason"]
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                _fold_delta(into["message"], delta)
    body["choices"] = [choices[i] for i in sorted(choices, key=str)]
    return body


def _fold_delta(message: dict[str, Any], delta: Mapping[str, Any]) -> None:
    for key in ("content", "refusal"):
        if isinstance(delta.get(key), str):
            message[key] = (message.get(key) or "") + delta[key]
    if isinstance(delta.get("role"), str):
        message["role"] = delta["role"]
    for call in delta.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            continue
        calls = message.setdefault("tool_calls", [])
        index = call.get("index", len(calls))
        while len(calls) <= index:
            calls.append({"id": None, "type": "function",
                          "function": {"name": None, "arguments": ""}})
        into = calls[index]
        if call.get("id"):
            into["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, Mapping):
            if function.get("name"):
                into["function"]["name"] = function["name"]
            if isinstance(function.get("arguments"), str):
                into["function"]["arguments"] += function["arguments"]


def _gemini_chunks(chunks: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Gemini's chunks concatenated: each candidate's parts in order (neighbouring
    texts joined), its last finish reason; the last chunk's usage (running totals)."""
    if not chunks:
        return None
    body: dict[str, Any] = {}
    candidates: dict[Any, dict[str, Any]] = {}
    for chunk in chunks:
        for key, value in chunk.items():
            if key != "candidates":
                body[key] = value
        for candidate in chunk.get("candidates") or []:
            if not isinstance(candidate, Mapping):
                continue
            index = candidate.get("index", 0)
            into = candidates.setdefault(index, {"content": {"role": "model", "parts": []}})
            for key, value in candidate.items():
                if key != "content":
                    into[key] = value
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, Mapping) else None
            for part in parts if isinstance(parts, list) else []:
                _add_part(into["content"]["parts"], part)
    if candidates:
        body["candidates"] = [candidates[i] for i in sorted(candidates, key=str)]
    return body


def _add_part(parts: list[Any], part: Any) -> None:
    last = parts[-1] if parts else None
    if (
        isinstance(part, Mapping) and set(part) <= {"text", "thought"}
        and isinstance(last, dict) and set(last) <= {"text", "thought"}
        and isinstance(part.get("text"), str) and isinstance(last.get("text"), str)
        and bool(part.get("thought")) == bool(last.get("thought"))
    ):
        last["text"] += part["text"]
    else:
        parts.append(dict(part) if isinstance(part, Mapping) else part)


# --------------------------------------------------------------------------- #
# The model's turn
# --------------------------------------------------------------------------- #


def _arguments(text: Any) -> Any:
    """A tool call's arguments: parsed when they are JSON (the model's input), else as given."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tool(name: Any, call_id: Any, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": _arguments(arguments)}


def as_message(provider: str, body: Any) -> dict[str, Any] | None:
    """The model's turn in an answer body, as an Anthropic-like message; None for an
    answer that is no turn (embeddings, an error, a count)."""
    if not isinstance(body, Mapping):
        return None
    if provider == "gemini":
        return _gemini_message(body)
    if body.get("object") == "chat.completion":
        return _chat_message(body)
    if body.get("object") == "response":
        return _responses_message(body)
    return None


def _message(blocks: list[dict[str, Any]], stops: list[str]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": blocks,
            "stop_reason": ", ".join(stops) or None}


def _chat_message(body: Mapping[str, Any]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    stops: list[str] = []
    for choice in body.get("choices") or []:
        if not isinstance(choice, Mapping):
            continue
        message = choice.get("message")
        message = message if isinstance(message, Mapping) else {}
        if isinstance(message.get("content"), str):
            blocks.append({"type": "text", "text": message["content"]})
        if isinstance(message.get("refusal"), str):
            blocks.append({"type": "refusal", "text": message["refusal"]})
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                name, arguments = function.get("name"), function.get("arguments")
                blocks.append(_tool(name, call.get("id"), arguments))
        if choice.get("finish_reason") is not None:
            stops.append(str(choice["finish_reason"]))
    return _message(blocks, stops)


def _responses_message(body: Mapping[str, Any]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for item in body.get("output") or []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, Mapping) and part.get("type") == "output_text":
                    blocks.append({"type": "text", "text": part.get("text")})
                elif isinstance(part, Mapping) and part.get("type") == "refusal":
                    blocks.append({"type": "refusal", "text": part.get("refusal")})
        elif kind == "function_call":
            blocks.append(_tool(item.get("name"), item.get("call_id"), item.get("arguments")))
        elif kind == "reasoning":
            summary = item.get("summary") or []
            text = "\n".join(str(s.get("text", "")) for s in summary if isinstance(s, Mapping))
            blocks.append({"type": "thinking", "thinking": text})
        else:  # a server tool's item (web_search_call...): its kind is what it says
            blocks.append({"type": str(kind)})
    stop = str(body.get("status"))
    details = body.get("incomplete_details")
    if isinstance(details, Mapping) and details.get("reason"):
        stop = f"{stop}: {details['reason']}"
    return _message(blocks, [stop])


def _gemini_message(body: Mapping[str, Any]) -> dict[str, Any] | None:
    candidates = body.get("candidates")
    if not isinstance(candidates, list):
        return None
    blocks: list[dict[str, Any]] = []
    stops: list[str] = []
    for candidate in candidates:
        if not isinstance(candidate, Mapping):
            continue
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, Mapping) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, Mapping):
                continue
            if isinstance(part.get("text"), str):
                kind, field = ("thinking", "thinking") if part.get("thought") else ("text", "text")
                blocks.append({"type": kind, field: part["text"]})
            elif isinstance(part.get("functionCall"), Mapping):
                call = part["functionCall"]
                blocks.append(
                    {"type": "tool_use", "id": call.get("id"), "name": call.get("name"),
                     "input": call.get("args")}
                )
            else:
                blocks.append({"type": next(iter(part), "part")})
        if candidate.get("finishReason") is not None:
            stops.append(str(candidate["finishReason"]))
    return _message(blocks, stops)


def embeddings_of(provider: str, body: Any) -> list[Any] | None:
    """The vectors of an embeddings answer (OpenAI's ``data[].embedding``, Gemini's
    ``embedding.values`` or ``embeddings[].values``), or None for another answer."""
    if not isinstance(body, Mapping):
        return None
    if provider == "gemini":
        if isinstance(body.get("embedding"), Mapping):
            return [body["embedding"].get("values")]
        if isinstance(body.get("embeddings"), list):
            return [e.get("values") if isinstance(e, Mapping) else e for e in body["embeddings"]]
        return None
    if body.get("object") == "list" and isinstance(body.get("data"), list):
        items = [d for d in body["data"] if isinstance(d, Mapping) and "embedding" in d]
        return [d["embedding"] for d in items] if items else None
    return None


def dimensions(vector: Any) -> int | str:
    """An embedding's dimensions: a list's length, or the float32s in its base64 (the
    form the ``openai`` SDK asks for by default)."""
    if isinstance(vector, list):
        return len(vector)
    try:
        return len(base64.b64decode(str(vector), validate=True)) // 4
    except ValueError:
        return "not a vector"


def envelope(provider: str, body: Any) -> Any:
    """``body`` without the model's turn: what is left is the API's envelope, whose
    fields must keep their names and types whatever the model says (a chat message's
    content is null beside a tool call; a Gemini part is text or a function call)."""
    if not isinstance(body, Mapping):
        return body
    found = {k: v for k, v in body.items() if k != "incomplete_details"}
    if isinstance(found.get("choices"), list):
        found["choices"] = [
            {**c, "message": {k: v for k, v in c["message"].items() if k not in _CHAT_TURN}}
            if isinstance(c, Mapping) and isinstance(c.get("message"), Mapping) else c
            for c in found["choices"]
        ]
    if provider == "gemini" and isinstance(found.get("candidates"), list):
        found["candidates"] = [
            {k: v for k, v in c.items() if k != "content"} if isinstance(c, Mapping) else c
            for c in found["candidates"]
        ]
    return found
