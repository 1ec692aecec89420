"""The pieces of text every fixture view is made of: a value in one line, a text
under a prefix, one message's content blocks (text, tool calls and their results,
thinking), tagged with the role."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["content_lines", "short", "text_lines"]

def short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def text_lines(prefix: str, text: str) -> list[str]:
    lines = text.splitlines() or [""]
    pad = " " * len(prefix)
    return [prefix + lines[0], *(pad + line for line in lines[1:])]


def content_lines(role: str, content: Any) -> list[str]:
    """One message's content: text as it is, other blocks tagged with their type."""
    if isinstance(content, str):
        return text_lines(f"[{role}] ", content)
    if not isinstance(content, list):
        return text_lines(f"[{role}] ", short(content))
    lines: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            lines += text_lines(f"[{role}] ", short(block))
            continue
        kind = block.get("type")
        if kind == "text":
            lines += text_lines(f"[{role}] ", str(block.get("text", "")))
        elif kind in ("tool_use", "server_tool_use"):
            lines.append(
                f"[{role} calls {block.get('name')} ({block.get('id')})] "
                f"{short(block.get('input'))}"
            )
        elif kind == "tool_result":
            inner = block.get("content")
            text = inner if isinstance(inner, str) else short(inner)
            lines += text_lines(f"[{role}: result for {block.get('tool_use_id')}] ", text)
        elif kind == "thinking":
            lines += text_lines(f"[{role} thinking] ", str(block.get("thinking", "")))
        elif kind == "redacted_thinking":
            lines.append(f"[{role} thinking] (redacted)")
        else:
            rest = {k: v for k, v in block.items() if k != "type"}
            lines.append(f"[{role} {kind}] {short(rest)}")
    return lines
