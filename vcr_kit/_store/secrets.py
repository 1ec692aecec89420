"""The last check before a fixture reaches the disk: no key may be in it.

Headers that carry credentials are never stored in the first place; this scan
catches what slips through anyway (a key echoed in a prompt, a tool result that
printed the environment) by looking at the exact bytes about to be written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from .._core.credentials import live_secrets
from .._core.paths import display_path
from ..errors import SecretLeakError

_KEY_SHAPES: Final = (
    ("an Anthropic key (sk-ant-...)", re.compile(rb"sk-ant-[A-Za-z0-9_\-]{20,}")),
    ("a bearer token", re.compile(rb"Bearer [A-Za-z0-9._~+/\-]{20,}=*")),
)


#: Delta fields whose pieces make up one streamed block's text.
_DELTA_FIELDS: Final = ("text", "partial_json", "thinking")


def streamed_texts(value: Any) -> list[str]:
    """The text of every streamed content block, joined from its deltas.

    A stream sends a block in small pieces ("key sk-a", "nt-api03...") and no piece
    holds a whole key, so the byte scan alone would let a streamed key through.
    """
    blocks: dict[tuple[int, object], list[str]] = {}
    stream = [0]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            kind = node.get("type")
            if kind == "message_start":
                stream[0] += 1
            delta = node.get("delta")
            if kind == "content_block_delta" and isinstance(delta, dict):
                pieces = blocks.setdefault((stream[0], node.get("index")), [])
                pieces.extend(delta[f] for f in _DELTA_FIELDS if isinstance(delta.get(f), str))
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return ["".join(pieces) for pieces in blocks.values() if pieces]


def find_secret(
    data: bytes, extra: Iterable[tuple[str, str]] = (), document: Any = None
) -> tuple[str, str] | None:
    """(what, where) of the first live key value or key-shaped string in ``data`` or in a
    streamed block of ``document``; None if there is none. Never the secret itself."""
    secrets = live_secrets(extra)
    found = _find(data, secrets, "at byte")
    for number, text in enumerate(streamed_texts(document), start=1):
        found = found or _find(
            text.encode("utf-8"), secrets, f"in streamed block {number}, at byte"
        )
    return found


def _find(data: bytes, secrets: list[tuple[str, str]], where: str) -> tuple[str, str] | None:
    for label, value in secrets:
        position = data.find(value.encode("utf-8"))
        if position >= 0:
            return f"the value of {label}", f"{where} {position}"
    for label, shape in _KEY_SHAPES:
        match = shape.search(data)
        if match:
            return label, f"{where} {match.start()}"
    return None


def scan_for_secrets(
    data: bytes, path: Path, extra: Iterable[tuple[str, str]] = (), document: Any = None
) -> None:
    """Raise ``SecretLeakError`` if ``data`` (or a streamed block of ``document``) holds a
    live key value or a key-shaped string. The message says where, never what."""
    found = find_secret(data, extra, document)
    if found is not None:
        _refuse(path, *found)


def scan_request(request: Any, path: Path, extra: Iterable[tuple[str, str]] = ()) -> None:
    """Before the API is called: refuse a request whose own stored form holds a key.

    Its fixture would be refused after the call anyway (the request is stored in it),
    so the call would be paid for on every run and never kept.
    """
    data = json.dumps(request, ensure_ascii=False).encode("utf-8")
    found = find_secret(data, extra)
    if found is None:
        return
    what, where = found
    raise SecretLeakError(
        f"Refusing to record fixture {display_path(path)}: the request itself contains "
        f"{what} ({where} of its stored form). The API was not called. Keep secrets out "
        "of prompts and tool results, or add a dehydrate rule that replaces them.",
        path,
    )


def _refuse(path: Path, what: str, where: str) -> None:
    raise SecretLeakError(
        f"Refusing to write fixture {display_path(path)}: it contains {what} {where}. "
        "Nothing was written. Keep secrets out of prompts and tool results, "
        "or add a dehydrate rule that replaces them, then record again.",
        path,
    )
