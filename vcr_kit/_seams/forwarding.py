"""What the proxy forwards while it records: the live answer as it arrives, with the
fixture's tool ids already in it.

The client's next request quotes the tool ids it saw; on replay it will see the
fixture's stable ids (see ``_core.ids``), so while recording it must see them too,
or its next request would be keyed differently on replay. An SSE answer goes out
one whole event at a time; a JSON body once complete (it is one value).
"""

from __future__ import annotations

import json
import re
from typing import Final

from .._core.ids import replace_tool_ids, stable_tool_ids
from .._engine.http_codec import parse_sse, render_sse

__all__ = ["BodyForwarder", "SseForwarder"]

_EVENT_END: Final = re.compile(rb"\r?\n\r?\n")
_TOOL_ID_MARK: Final = b"toolu_"  # toolu_, srvtoolu_ and mcptoolu_ all contain it


class SseForwarder:
    """Whole SSE events out as they complete, tool ids already the fixture's ones."""

    def __init__(self, seed: str) -> None:
        self.pending = b""
        self.tool_id = stable_tool_ids(seed) if seed else None

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
        if self.tool_id is None or _TOOL_ID_MARK not in block:
            return block
        events = parse_sse(block.decode("utf-8"))
        for event in events:
            if "data" in event:
                event["data"] = replace_tool_ids(event["data"], self.tool_id)
        return render_sse(events).encode("utf-8")


class BodyForwarder:
    """A JSON body out when complete (it is one value), tool ids rewritten."""

    def __init__(self, seed: str) -> None:
        self.parts: list[bytes] = []
        self.seed = seed

    def feed(self, chunk: bytes) -> bytes:
        self.parts.append(chunk)
        return b""

    def flush(self) -> bytes:
        body = b"".join(self.parts)
        if not self.seed or _TOOL_ID_MARK not in body:
            return body
        try:
            value = json.loads(body)
        except ValueError:
            return body
        value = replace_tool_ids(value, stable_tool_ids(self.seed))
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
