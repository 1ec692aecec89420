"""What the proxy forwards while it records: the live answer as it arrives, with the
fixture's tool ids already in it.

The client's next request quotes the tool ids it saw; on replay it will see the
fixture's stable ids (see ``_core.ids``), so while recording it must see them too,
or its next request would be keyed differently on replay. An SSE answer goes out
one whole event at a time; a JSON body once complete (it is one value).
"""

from __future__ import annotations

import base64
import json
import re
import struct
from typing import Final

from .._core.aws_eventstream import decode_frames, encode_frame
from .._core.id_vocabulary import IdVocabulary
from .._core.ids import replace_tool_ids, stable_tool_ids
from .._engine.http_codec import parse_sse, render_sse

__all__ = ["BodyForwarder", "EventStreamForwarder", "SseForwarder"]

_EVENT_END: Final = re.compile(rb"\r?\n\r?\n")
_TOOL_ID_MARK: Final = b"toolu_"  # toolu_, srvtoolu_ and mcptoolu_ all contain it


def _marks(vocabulary: IdVocabulary | None) -> tuple[bytes, ...]:
    """What a piece of an answer holds if it may hold a tool id: looked for before
    parsing it (most pieces hold none)."""
    if vocabulary is None:
        return (_TOOL_ID_MARK,)
    return tuple(prefix.encode("ascii") for prefix in vocabulary.tool_prefixes)


def _may_hold(piece: bytes, marks: tuple[bytes, ...]) -> bool:
    return any(mark in piece for mark in marks)


class SseForwarder:
    """Whole SSE events out as they complete, tool ids already the fixture's ones."""

    def __init__(self, seed: str, vocabulary: IdVocabulary | None = None) -> None:
        self.pending = b""
        self.tool_id = stable_tool_ids(seed) if seed else None
        self.vocabulary = vocabulary
        self.marks = _marks(vocabulary)

    def feed(self, chunk: bytes) -> bytes:
        self.pending += chunk
        out: list[bytes] = []
        while True:
            end = _EVENT_END.search(self.pending)
            if end is None:
                return b"".join(out)
            block, self.pending = self.pending[: end.end()], self.pending[end.end() :]
            out.append(self._rewrite(block))

    def flush(self) -> bytes:
        block, self.pending = self.pending, b""
        return block

    def _rewrite(self, block: bytes) -> bytes:
        if self.tool_id is None or not _may_hold(block, self.marks):
            return block
        events = parse_sse(block.decode("utf-8"))
        for event in events:
            if "data" in event:
                event["data"] = replace_tool_ids(event["data"], self.tool_id, self.vocabulary)
        return render_sse(events).encode("utf-8")


class BodyForwarder:
    """A JSON body out when complete (it is one value), tool ids rewritten."""

    def __init__(self, seed: str, vocabulary: IdVocabulary | None = None) -> None:
        self.parts: list[bytes] = []
        self.seed = seed
        self.vocabulary = vocabulary

    def feed(self, chunk: bytes) -> bytes:
        self.parts.append(chunk)
        return b""

    def flush(self) -> bytes:
        body = b"".join(self.parts)
        if not self.seed or not _may_hold(body, _marks(self.vocabulary)):
            return body
        try:
            value = json.loads(body)
        except ValueError:
            return body
        value = replace_tool_ids(value, stable_tool_ids(self.seed), self.vocabulary)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class EventStreamForwarder:
    """Whole AWS event-stream frames out as they complete (Bedrock), each chunk's tool
    ids already the fixture's ones: a Bedrock client quotes them in its next request."""

    def __init__(self, seed: str) -> None:
        self.pending = b""
        self.tool_id = stable_tool_ids(seed) if seed else None

    def feed(self, chunk: bytes) -> bytes:
        self.pending += chunk
        out: list[bytes] = []
        while len(self.pending) >= 4:
            (total,) = struct.unpack_from(">I", self.pending)
            if total < 16 or len(self.pending) < total:
                break
            frame, self.pending = self.pending[:total], self.pending[total:]
            out.append(self._rewrite(frame))
        return b"".join(out)

    def flush(self) -> bytes:
        rest, self.pending = self.pending, b""
        return rest

    def _rewrite(self, frame: bytes) -> bytes:
        if self.tool_id is None:
            return frame
        try:
            ((headers, payload),) = decode_frames(frame)
            wrapped = json.loads(payload)
            event = base64.b64decode(wrapped["bytes"])
        except (ValueError, TypeError, KeyError):
            return frame  # not a chunk with an event: forwarded as it came
        if _TOOL_ID_MARK not in event:
            return frame
        value = replace_tool_ids(json.loads(event), self.tool_id)
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        wrapped["bytes"] = base64.b64encode(text).decode("ascii")
        return encode_frame(headers, json.dumps(wrapped, separators=(",", ":")).encode("utf-8"))
