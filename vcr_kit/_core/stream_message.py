"""The message a stream of Messages API events delivers, assembled as the SDK does.

One fold for every reader of a stored stream: ``show`` (the joined answer), the answer
verdict (the message a stream delivers) and cost (a streamed answer's usage). It
follows the SDK's own accumulation (``accumulate_event`` in
``anthropic/lib/streaming/_messages.py``, with the beta one's additions, since a stored
stream may come from either):

- ``message_start`` gives the snapshot; events before it, and a second one, change
  nothing;
- ``content_block_start`` appends its block; ``content_block_delta`` changes the block
  at its ``index`` when the kinds match: text to a text block, thinking and signature
  to a thinking block, citations to a text block, the partial JSON of a tool input to a
  ``tool_use``, ``server_tool_use`` or ``mcp_tool_use`` block (joined, then read as the
  SDK does, partial JSON allowed: a tool input cut by ``max_tokens`` is the object read
  so far);
- ``content_block_stop`` and ``message_stop`` change nothing: the snapshots the SDK's
  helper events carry are not read, the events are;
- ``message_delta`` sets ``stop_reason``, ``stop_sequence`` and ``stop_details``, and
  every other field of its delta (``container``) that is not null; each of its usage
  counts that is not null replaces the snapshot's (they are running totals).

Where the SDK would raise (an index no block has, a tool input that is not JSON) the
event is skipped, or the input kept as its text: a reader of a fixture must not fail.
Pure, over plain JSON dicts; the events given are never changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["TOOL_INPUT_BLOCKS", "apply_message_delta", "assemble_message", "start_snapshot"]

#: The blocks whose input arrives as ``input_json_delta`` pieces (the SDK's
#: ``TRACKS_TOOL_INPUT``; ``mcp_tool_use`` is the beta one's).
TOOL_INPUT_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
#: Set by every ``message_delta``, null when its delta leaves them out (as the SDK does).
_ALWAYS_SET: Final = ("stop_reason", "stop_sequence", "stop_details")
#: A beta ``message_delta``'s own fields (beside its delta) the SDK copies when not null.
_EVENT_FIELDS: Final = ("context_management", "input_transformations")
#: The deltas that add free text: delta type -> the block type they add to, which is
#: also the name of the block's field and of the delta's.
_TEXT_DELTAS: Final = {"text_delta": "text", "thinking_delta": "thinking"}


def start_snapshot(event: Any) -> dict[str, Any] | None:
    """The message a ``message_start`` event starts (a copy the fold may change: its
    content blocks and usage copied too, usage ``{}`` where it has none, so that
    ``message_delta`` counts have a place), or None for any other event."""
    if not isinstance(event, Mapping) or event.get("type") != "message_start":
        return None
    message = event.get("message")
    if not isinstance(message, Mapping):
        return None
    snapshot = dict(message)
    content = message.get("content")
    snapshot["content"] = [_own_block(b) for b in content] if isinstance(content, list) else []
    usage = message.get("usage")
    snapshot["usage"] = dict(usage) if isinstance(usage, Mapping) else {}
    return snapshot


def apply_message_delta(snapshot: dict[str, Any], event: Mapping[str, Any]) -> None:
    """``snapshot`` (``start_snapshot``'s) changed by a ``message_delta`` event."""
    delta = event.get("delta")
    delta = delta if isinstance(delta, Mapping) else {}
    for name in _ALWAYS_SET:
        snapshot[name] = delta.get(name)
    for name, value in delta.items():
        if value is not None and name not in _ALWAYS_SET:
            snapshot[name] = value
    for name in _EVENT_FIELDS:
        value = event.get(name)
        if value is not None:
            snapshot[name] = value
    usage = event.get("usage")
    if isinstance(usage, Mapping):
        # start_snapshot gave the snapshot a usage dict of its own: changed in place.
        snapshot["usage"].update({k: v for k, v in usage.items() if v is not None})


def assemble_message(events: Iterable[Any]) -> dict[str, Any] | None:
    """The message that a stream's events (their data: ``{"type": ..., ...}``) deliver,
    or None when no ``message_start`` comes. Anything not an event object is skipped."""
    snapshot: dict[str, Any] | None = None
    # Text and thinking pieces, and tool input JSON, by block index: joined once at the
    # end (adding each piece to the block's string would copy it each time).
    pieces: dict[int, list[str]] = {}
    json_pieces: dict[int, list[str]] = {}
    for event in events:
        if not isinstance(event, Mapping):
            continue
        if snapshot is None:
            snapshot = start_snapshot(event)
            continue
        kind = event.get("type")
        content: list[Any] = snapshot["content"]
        if kind == "content_block_delta":
            _apply_block_delta(content, event, pieces, json_pieces)
        elif kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, Mapping):
                content.append(_own_block(block))
                if block.get("type") == "fallback":  # beta: the model that served it
                    target = block.get("to")
                    if isinstance(target, Mapping) and "model" in target:
                        snapshot["model"] = target["model"]
        elif kind == "message_delta":
            apply_message_delta(snapshot, event)
    if snapshot is not None:
        _join_pieces(snapshot["content"], pieces, json_pieces)
    return snapshot


def _own_block(block: Any) -> Any:
    """A block the fold may change (its citations list too), leaving the event's alone."""
    if not isinstance(block, Mapping):
        return block
    owned = dict(block)
    if isinstance(owned.get("citations"), list):
        owned["citations"] = list(owned["citations"])
    return owned


def _apply_block_delta(
    content: list[Any],
    event: Mapping[str, Any],
    pieces: dict[int, list[str]],
    json_pieces: dict[int, list[str]],
) -> None:
    index, delta = event.get("index"), event.get("delta")
    if not (isinstance(index, int) and 0 <= index < len(content) and isinstance(delta, Mapping)):
        return
    block = content[index]
    if not isinstance(block, dict):
        return
    kind, block_kind = delta.get("type"), block.get("type")
    # Each delta kind changes only its own kind of block; another it leaves alone.
    field = _TEXT_DELTAS.get(str(kind))
    if field is not None and field == block_kind:  # text or thinking: named as the block
        pieces.setdefault(index, []).append(_text(delta.get(field)))
    elif kind == "input_json_delta" and block_kind in TOOL_INPUT_BLOCKS:
        json_pieces.setdefault(index, []).append(_text(delta.get("partial_json")))
    elif kind == "citations_delta" and block_kind == "text":
        citations = block.get("citations")
        if isinstance(citations, list):  # _own_block copied it: appended in place
            citations.append(delta.get("citation"))
        else:
            block["citations"] = [delta.get("citation")]
    elif kind == "signature_delta" and block_kind == "thinking":
        block["signature"] = delta.get("signature")
    elif kind == "compaction_delta" and block_kind == "compaction":  # beta
        block["content"] = delta.get("content")
        block["encrypted_content"] = delta.get("encrypted_content")


def _join_pieces(
    content: list[Any], pieces: dict[int, list[str]], json_pieces: dict[int, list[str]]
) -> None:
    for index, parts in pieces.items():
        block = content[index]
        field = block["type"]  # a text or thinking block: its text is under its type
        block[field] = "".join([_text(block.get(field)), *parts])
    for index, parts in json_pieces.items():
        text = "".join(parts)
        if text:  # the SDK keeps the start's input when no JSON came
            content[index]["input"] = _tool_input(text)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _tool_input(text: str) -> Any:
    """A tool input's JSON, read as the SDK reads it (jiter, partial JSON allowed: the
    object so far when the stream stopped inside it); the text when it is not JSON."""
    from jiter import from_json  # the SDK's own reader, loaded only when an input comes

    try:
        return from_json(text.encode("utf-8"), partial_mode=True)
    except ValueError:
        return text
