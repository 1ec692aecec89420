"""Two answers to one request, compared: identical, benign, regression or API drift.

The answers are in their stored form (``http_codec``'s: ``{"status", "headers",
"body" | "events" | "jsonl" | ...}``), the recorded one and a live one. What counts:

- **identical**: the same answer (ids, request ids and usage aside: they differ on
  every call and say nothing of what the model answered);
- **benign**: other wording, the same structure: content block kinds and order, tool
  names, tool input keys and types, stop reason, the JSON shape of a structured
  output all kept;
- **regression**: a structural change: the stop reason (a truncation by
  ``max_tokens`` among them), a tool called or not, another tool, a tool input of
  another shape, another block kind, a structured output of another shape, success
  against error;
- **API drift**: the answer's envelope moved whatever the model said: a field new,
  gone or of another type (in the message, its usage, a block, an SSE event's data),
  another content type, SSE event types new or gone.

The worst finding decides (drift over regression over benign); every finding is a
reason. Pure: no disk, no network, no SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .kinds import KINDS
from .provider_answer import (
    TRUNCATIONS,
    as_message,
    dimensions,
    embeddings_of,
    envelope,
    final_body,
)
from .providers import provider_named
from .stream_message import assemble_message

__all__ = [
    "API_DRIFT",
    "BENIGN",
    "IDENTICAL",
    "REGRESSION",
    "VERDICTS",
    "Verdict",
    "compare_answers",
    "compare_documents",
    "worst",
]

IDENTICAL: Final = "identical"
BENIGN: Final = "benign"
REGRESSION: Final = "regression"
API_DRIFT: Final = "api drift"
#: From the best to the worst.
VERDICTS: Final = (IDENTICAL, BENIGN, REGRESSION, API_DRIFT)

#: Fields whose values differ on every call, or that count rather than say.
_VOLATILE: Final = frozenset({"id", "usage", "request_id", "created_at", "ended_at",
                              "expires_at", "results_url", "archived_at",
                              "cancel_initiated_at"})
#: The free text of a block: its wording, not its structure.
_WORDING: Final = ("text", "thinking")
_TOOL_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


@dataclass(frozen=True)
class Verdict:
    """The class of the change (one of ``VERDICTS``) and why, one line per finding."""

    verdict: str
    reasons: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """A change a test suite should hear about: a regression or API drift."""
        return self.verdict in (REGRESSION, API_DRIFT)


def worst(verdicts: Iterable[str]) -> str:
    """The worst of ``verdicts`` (``identical`` for none)."""
    return max(verdicts, key=VERDICTS.index, default=IDENTICAL)


class _Findings:
    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, verdict: str, reason: str) -> None:
        if (verdict, reason) not in self.items:
            self.items.append((verdict, reason))

    def verdict(self) -> Verdict:
        if not self.items:
            return Verdict(IDENTICAL)
        ordered = sorted(self.items, key=lambda item: -VERDICTS.index(item[0]))
        return Verdict(worst(v for v, _ in ordered), tuple(f"{v}: {r}" for v, r in ordered))


def compare_documents(recorded: Mapping[str, Any], live: Mapping[str, Any]) -> Verdict:
    """Two fixture documents of the same request (``compare_answers`` of their
    ``response``); another kind, or another request, is a finding too."""
    found = _Findings()
    if recorded.get("kind") != live.get("kind"):
        found.add(API_DRIFT, f"kind {recorded.get('kind')} -> {live.get('kind')}")
        return found.verdict()
    if recorded.get("kind") != "http":
        # A cassette's answer: SDK objects ({"$sdk", "data"}) or an API error.
        _compare_values(_unwrap(recorded.get("response")), _unwrap(live.get("response")), found)
        return found.verdict()
    # An answer replay would refuse (not an HTTP answer, not its endpoint's shape) is
    # said to be so, never walked: a hand-edited file must not crash the comparison.
    for label, doc in (("recorded", recorded), ("live", live)):
        broken: list[str] = []
        KINDS["http"].check(doc.get("request"), doc.get("response"), "", True, broken)
        if broken:
            found.add(API_DRIFT, f"the {label} answer cannot be compared: {broken[0]}")
    if found.items:
        return found.verdict()
    answer = compare_answers(
        recorded.get("response") or {}, live.get("response") or {}, recorded.get("request")
    )
    return answer


def compare_answers(
    recorded: Mapping[str, Any], live: Mapping[str, Any], request: Any = None
) -> Verdict:
    """The verdict on ``live`` against ``recorded``, both stored HTTP answers to the
    stored ``request``: another provider's answers (its ``"provider"``) are compared
    as that provider's (``_compare_provider``), not as Anthropic messages."""
    found = _Findings()
    provider = provider_named(request.get("provider")) if isinstance(request, Mapping) else None
    _compare_http(recorded, live, found, None if provider is None else provider.name)
    return found.verdict()


# --------------------------------------------------------------------------- #
# HTTP answers
# --------------------------------------------------------------------------- #


def _is_success(answer: Mapping[str, Any]) -> bool:
    status = answer.get("status")
    return isinstance(status, int) and 200 <= status < 300


def _mime(answer: Mapping[str, Any]) -> str:
    headers = answer.get("headers")
    value = headers.get("content-type", "") if isinstance(headers, Mapping) else ""
    return str(value).split(";")[0].strip().lower()


def _body_form(answer: Mapping[str, Any]) -> str:
    for form in ("body", "events", "jsonl", "frames", "text", "base64"):
        if form in answer:
            return form
    return "nothing"


def _compare_http(
    recorded: Mapping[str, Any], live: Mapping[str, Any], found: _Findings,
    provider: str | None = None,
) -> None:
    was_ok, is_ok = _is_success(recorded), _is_success(live)
    if was_ok != is_ok:
        before = "success" if was_ok else _error_words(recorded)
        after = "success" if is_ok else _error_words(live)
        found.add(REGRESSION, f"{before} -> {after}")
        return
    if not was_ok:
        if recorded.get("status") != live.get("status") or _error_type(recorded) != _error_type(
            live
        ):
            found.add(REGRESSION, f"{_error_words(recorded)} -> {_error_words(live)}")
        elif _message_text(recorded) != _message_text(live):
            found.add(BENIGN, "the error says it in other words")
        return
    if _mime(recorded) != _mime(live):
        found.add(API_DRIFT, f"content-type {_mime(recorded) or '-'} -> {_mime(live) or '-'}")
    form, live_form = _body_form(recorded), _body_form(live)
    if form != live_form:
        found.add(API_DRIFT, f"answer form {form} -> {live_form}")
        return
    if provider is not None and form in ("events", "body"):
        _compare_provider(provider, recorded, live, found)
    elif form == "events":
        _compare_events(recorded["events"], live["events"], found)
    elif form == "jsonl":
        _compare_lines(recorded["jsonl"], live["jsonl"], found)
    elif form == "body":
        _compare_values(recorded["body"], live["body"], found)
    elif recorded.get(form) != live.get(form):
        found.add(BENIGN, f"the {form} differs")


def _error_body(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    body = answer.get("body")
    error = body.get("error") if isinstance(body, Mapping) else None
    return error if isinstance(error, Mapping) else {}


def _error_type(answer: Mapping[str, Any]) -> Any:
    error = _error_body(answer)
    # Gemini's error names its kind in "status" (INVALID_ARGUMENT), the others in "type".
    return error.get("type", error.get("status"))


def _message_text(answer: Mapping[str, Any]) -> Any:
    return _error_body(answer).get("message")


def _error_words(answer: Mapping[str, Any]) -> str:
    kind = _error_type(answer)
    return f"error {answer.get('status')}" + (f" {kind}" if kind else "")


# --------------------------------------------------------------------------- #
# A JSON value: a message, a token count, a batch, anything else
# --------------------------------------------------------------------------- #


def _unwrap(value: Any) -> Any:
    """A cassette's stored value with its SDK tags taken off (``{"$sdk", "data"}`` is
    its ``data``; a stream, a list of them, is the message it assembles)."""
    if isinstance(value, list) and all(isinstance(v, Mapping) and "$sdk" in v for v in value):
        return assemble_message(v["data"] for v in value)
    if isinstance(value, Mapping) and "$sdk" in value:
        return _unwrap(value.get("data"))
    if isinstance(value, Mapping) and "$error" in value:
        return {"type": "error", "error": value["$error"].get("body")}
    return value


def _compare_values(recorded: Any, live: Any, found: _Findings, where: str = "") -> None:
    _compare_shapes(_shape(recorded), _shape(live), found, where)
    if _is_message(recorded) and _is_message(live):
        _compare_messages(recorded, live, found, where)
    elif _without_volatile(recorded) != _without_volatile(live):
        both_objects = isinstance(recorded, Mapping) and isinstance(live, Mapping)
        changed = _changed_fields(recorded, live)
        if changed or not both_objects:  # else only fields new or gone: drift said it
            found.add(BENIGN, f"{where}values differ: {', '.join(changed) or 'the value'}")


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "message"


def _changed_fields(recorded: Any, live: Any) -> list[str]:
    if not (isinstance(recorded, Mapping) and isinstance(live, Mapping)):
        return []
    return sorted(
        key
        for key in set(recorded) & set(live)
        if key not in _VOLATILE and _without_volatile(recorded[key]) != _without_volatile(live[key])
    )


def _without_volatile(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


# --------------------------------------------------------------------------- #
# Shapes: which fields, of which JSON type, at which path
# --------------------------------------------------------------------------- #


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "null"


def _shape(value: Any) -> dict[str, str]:
    """Every field path (a typed object's type in brackets: ``content[tool_use].name``)
    with its JSON type; null is left out (an optional field), a tool's input too (its
    keys are the model's, see ``_compare_tools``)."""
    shape: dict[str, str] = {}
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, Mapping):
            kind = item.get("type")
            if isinstance(kind, str):
                path = f"{path}[{kind}]"
            shape.setdefault(path or ".", "object")
            for key, child in item.items():
                child_path = f"{path}.{key}"
                if key == "input" and kind in _TOOL_BLOCKS:
                    shape[child_path] = _type_of(child)
                    continue
                if child is not None:
                    shape.setdefault(child_path, _type_of(child))
                    pending.append((child_path, child))
        elif isinstance(item, list):
            pending.extend((f"{path}[]", child) for child in item)
    return shape


def _owner(path: str) -> str:
    """The object a field belongs to: ``.content[text].citations`` -> ``.content[text]``."""
    return path[: path.rfind(".")] or "."


def _compare_shapes(
    recorded: Mapping[str, str], live: Mapping[str, str], found: _Findings, where: str
) -> None:
    for path in sorted(set(recorded) | set(live)):
        before, after = recorded.get(path), live.get(path)
        if before == after or path.endswith("]"):
            continue  # a typed object (a block kind) is the model's choice, not a field
        owner = _owner(path)
        if owner not in recorded or owner not in live:
            continue  # an object only one answer has (a tool_use block): not the envelope's
        name = f"{where}{path.lstrip('.')}"
        if before is None:
            found.add(API_DRIFT, f"new field {name} ({after})")
        elif after is None:
            found.add(API_DRIFT, f"field {name} is gone (was {before})")
        else:
            found.add(API_DRIFT, f"field {name}: {before} -> {after}")


# --------------------------------------------------------------------------- #
# Messages
# --------------------------------------------------------------------------- #


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _compare_messages(
    recorded: Mapping[str, Any], live: Mapping[str, Any], found: _Findings, where: str
) -> None:
    was, now = recorded.get("stop_reason"), live.get("stop_reason")
    if was != now:
        if now == "max_tokens":
            found.add(REGRESSION, f"{where}truncated by max_tokens (stop reason was {was})")
        else:
            found.add(REGRESSION, f"{where}stop reason {was} -> {now}")
    _compare_turns(recorded, live, found, where)
    if recorded.get("stop_sequence") != live.get("stop_sequence"):
        found.add(BENIGN, f"{where}stop sequence {recorded.get('stop_sequence')!r} -> "
                  f"{live.get('stop_sequence')!r}")


def _compare_turns(
    recorded: Mapping[str, Any], live: Mapping[str, Any], found: _Findings, where: str
) -> None:
    """The content of two turns: the tools called, the block kinds, each block."""
    old, new = _blocks(recorded), _blocks(live)
    old_tools = [str(b.get("name")) for b in old if b.get("type") in _TOOL_BLOCKS]
    new_tools = [str(b.get("name")) for b in new if b.get("type") in _TOOL_BLOCKS]
    if old_tools != new_tools:
        if not old_tools:
            found.add(REGRESSION, f"{where}a tool is called now: {', '.join(new_tools)}")
        elif not new_tools:
            found.add(REGRESSION, f"{where}no tool is called now (was {', '.join(old_tools)})")
        else:
            found.add(
                REGRESSION, f"{where}tools {', '.join(old_tools)} -> {', '.join(new_tools)}"
            )
    kinds, new_kinds = [b.get("type") for b in old], [b.get("type") for b in new]
    if kinds != new_kinds:
        if old_tools == new_tools:  # else the tool finding says it already
            found.add(
                REGRESSION,
                f"{where}content blocks {_kinds(kinds)} -> {_kinds(new_kinds)}",
            )
        return
    for index, (block, other) in enumerate(zip(old, new, strict=True)):
        _compare_blocks(index, block, other, found, where)


def _kinds(kinds: list[Any]) -> str:
    return ", ".join(str(k) for k in kinds) or "none"


def _compare_blocks(
    index: int,
    block: Mapping[str, Any],
    other: Mapping[str, Any],
    found: _Findings,
    where: str,
) -> None:
    kind = block.get("type")
    if kind in _TOOL_BLOCKS:
        name = block.get("name")
        before, after = block.get("input"), other.get("input")
        if _input_shape(before) != _input_shape(after):
            found.add(
                REGRESSION,
                f"{where}tool {name} input {_describe_input(before)} -> {_describe_input(after)}",
            )
        elif before != after:
            found.add(BENIGN, f"{where}tool {name} input: other values")
        return
    for field in _WORDING:
        text, new_text = block.get(field), other.get(field)
        if text == new_text:
            continue
        shape, new_shape = _json_shape(text), _json_shape(new_text)
        if shape is not None and shape != new_shape:
            what = "is no longer JSON" if new_shape is None else "has another JSON shape"
            found.add(REGRESSION, f"{where}structured output in block {index} {what}")
        else:
            found.add(BENIGN, f"{where}other wording in block {index} ({kind})")
    rest = {k: v for k, v in block.items() if k not in (*_WORDING, "signature", "id")}
    other_rest = {k: v for k, v in other.items() if k not in (*_WORDING, "signature", "id")}
    if rest != other_rest:
        found.add(BENIGN, f"{where}block {index} ({kind}) differs")


def _input_shape(value: Any) -> Any:
    """A tool input's keys and value types, all the way down (lists by their items)."""
    if isinstance(value, Mapping):
        return {k: _input_shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return ["array", sorted({json.dumps(_input_shape(v), sort_keys=True) for v in value})]
    return _type_of(value)


def _describe_input(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_type_of(v)}" for k, v in value.items()) + "}"
    return _type_of(value)


def _json_shape(text: Any) -> Any:
    """The shape of a structured output (a text that is a JSON object or array), or
    None for prose."""
    if not isinstance(text, str) or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return _input_shape(value)


# --------------------------------------------------------------------------- #
# Streams and JSON Lines
# --------------------------------------------------------------------------- #


def _event_name(event: Mapping[str, Any]) -> str:
    data = event.get("data")
    kind = data.get("type") if isinstance(data, Mapping) else None
    return str(event.get("event") or kind or "message")


def _compare_events(recorded: Any, live: Any, found: _Findings) -> None:
    old = [e for e in recorded if isinstance(e, Mapping)] if isinstance(recorded, list) else []
    new = [e for e in live if isinstance(e, Mapping)] if isinstance(live, list) else []
    names, new_names = {_event_name(e) for e in old}, {_event_name(e) for e in new}
    for name in sorted(new_names - names):
        found.add(API_DRIFT, f"new SSE event type {name}")
    for name in sorted(names - new_names):
        found.add(API_DRIFT, f"SSE event type {name} is gone")
    for name in sorted(names & new_names):
        _compare_shapes(_events_shape(old, name), _events_shape(new, name), found, f"{name} ")
    message = assemble_message(e.get("data") for e in old)
    new_message = assemble_message(e.get("data") for e in new)
    if message is None or new_message is None:
        if message != new_message:
            found.add(REGRESSION, "the stream no longer delivers a message")
        return
    _compare_messages(message, new_message, found, "")


def _events_shape(events: list[Mapping[str, Any]], name: str) -> dict[str, str]:
    shape: dict[str, str] = {}
    for event in events:
        if _event_name(event) == name:
            # The delta of a block's text is the wording, not a field of the envelope.
            shape.update(_shape(event.get("data")))
    return shape


def _compare_lines(recorded: Any, live: Any, found: _Findings) -> None:
    """Batch results: each request's result, matched by ``custom_id``."""
    old = _by_custom_id(recorded)
    new = _by_custom_id(live)
    for custom_id in sorted(set(old) | set(new)):
        where = f"{custom_id}: "
        if custom_id not in new or custom_id not in old:
            found.add(REGRESSION, f"{where}{'no result now' if custom_id in old else 'new result'}")
            continue
        result, new_result = old[custom_id].get("result"), new[custom_id].get("result")
        result = result if isinstance(result, Mapping) else {}
        new_result = new_result if isinstance(new_result, Mapping) else {}
        if result.get("type") != new_result.get("type"):
            found.add(REGRESSION, f"{where}{result.get('type')} -> {new_result.get('type')}")
        elif _is_message(result.get("message")) and _is_message(new_result.get("message")):
            _compare_values(result["message"], new_result["message"], found, where)
        else:
            _compare_values(result, new_result, found, where)


def _by_custom_id(lines: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(lines, list):
        return {}
    return {
        str(line.get("custom_id")): line for line in lines if isinstance(line, Mapping)
    }


# --------------------------------------------------------------------------- #
# Another provider's answers (OpenAI, Gemini)
# --------------------------------------------------------------------------- #

#: Fields of another provider's answers that differ on every call or count rather
#: than say (beyond ``_VOLATILE``): compared as fields, never as values.
_PROVIDER_VOLATILE: Final = frozenset({"created", "system_fingerprint", "responseId",
                                       "usageMetadata", "sequence_number", "obfuscation"})


def _compare_provider(
    provider: str, recorded: Mapping[str, Any], live: Mapping[str, Any], found: _Findings
) -> None:
    """Two successes of another provider, field-aware: a stream's event types, the
    envelope's fields (``provider_answer.envelope``), then the model's turn (the text
    of the choices, output items or candidates; the tool calls and their input
    shapes; the finish reasons) or an embedding's count and dimensions."""
    if "events" in recorded:
        names = {_provider_event(e) for e in recorded["events"] if isinstance(e, Mapping)}
        new_names = {_provider_event(e) for e in live["events"] if isinstance(e, Mapping)}
        for name in sorted(new_names - names):
            found.add(API_DRIFT, f"new SSE event type {name}")
        for name in sorted(names - new_names):
            found.add(API_DRIFT, f"SSE event type {name} is gone")
    body, new_body = final_body(provider, recorded), final_body(provider, live)
    if body is None or new_body is None:
        if body != new_body:
            found.add(REGRESSION, "the stream no longer delivers an answer")
        return
    kept, new_kept = envelope(provider, body), envelope(provider, new_body)
    _compare_shapes(_shape(kept), _shape(new_kept), found, "")
    turn, new_turn = as_message(provider, body), as_message(provider, new_body)
    vectors, new_vectors = embeddings_of(provider, body), embeddings_of(provider, new_body)
    if turn is not None and new_turn is not None:
        was, now = turn.get("stop_reason"), new_turn.get("stop_reason")
        if was != now:
            if now in TRUNCATIONS:
                found.add(
                    REGRESSION, f"truncated by the token limit (finish reason {was} -> {now})"
                )
            else:
                found.add(REGRESSION, f"finish reason {was} -> {now}")
        _compare_turns(turn, new_turn, found, "")
    elif vectors is not None and new_vectors is not None:
        _compare_vectors(vectors, new_vectors, found)
    if found.items:
        return
    # Nothing the model said moved, nor a field: a value of the envelope may have (a
    # service tier; any field of an answer that is no turn: a count, a list).
    kept, new_kept = _without_provider_volatile(kept), _without_provider_volatile(new_kept)
    if kept != new_kept:
        changed = ", ".join(_changed_fields(kept, new_kept)) or "the value"
        found.add(BENIGN, f"values differ: {changed}")


def _provider_event(event: Mapping[str, Any]) -> str:
    """A stream event's type; a Responses stream may end complete or incomplete (the
    finish reason says which), so both final events are one type here."""
    name = str(event.get("event") or "chunk")
    return "response.completed" if name == "response.incomplete" else name


def _without_provider_volatile(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: _without_provider_volatile(v)
            for k, v in value.items()
            if k not in _VOLATILE and k not in _PROVIDER_VOLATILE
        }
    if isinstance(value, list):
        return [_without_provider_volatile(v) for v in value]
    return value


def _compare_vectors(vectors: list[Any], new_vectors: list[Any], found: _Findings) -> None:
    if len(vectors) != len(new_vectors):
        found.add(REGRESSION, f"{len(vectors)} embeddings -> {len(new_vectors)}")
        return
    sizes = {dimensions(v) for v in vectors}
    new_sizes = {dimensions(v) for v in new_vectors}
    if sizes != new_sizes:
        found.add(REGRESSION, f"embedding dimensions {_sizes(sizes)} -> {_sizes(new_sizes)}")
    elif vectors != new_vectors:
        found.add(BENIGN, "other embedding values")


def _sizes(sizes: set[Any]) -> str:
    return ", ".join(sorted(str(s) for s in sizes))
