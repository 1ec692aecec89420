"""JSON written piece by piece: the text ``json.dumps`` writes, never held whole.

A fixture that holds a 100 MB answer was held four times over while it was written:
its parsed document, the encoder's pieces, their joined text and its bytes. Here the
text goes to a sink in batches of about ``BATCH`` characters, and a string longer than
``SLICE`` characters is escaped a slice at a time (JSON escapes each character on its
own, so the slices' escapes joined are the whole string's escape). The caller encodes
each batch into one buffer of bytes: the document and those bytes are all it holds.

Only plain JSON values are written here: dicts with string keys, lists, and str, int,
float (finite), bool and None, each of exactly that type. Anything else (a tuple, a
subclass, a key that is not a string, NaN, a cycle, nesting deeper than the stack)
raises ``Unusual`` or the error ``json`` would raise, and the caller writes that value
with ``json.dumps`` as before, which then says what it says today.

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

__all__ = ["BATCH", "SLICE", "Unusual", "write_json"]

#: A string longer than this many characters is escaped a slice at a time.
SLICE: Final = 1 << 16
#: About this many characters of text are handed to the sink at once.
BATCH: Final = 1 << 16
#: Small pieces (punctuation, numbers, short strings) gathered before a batch goes.
_MAX_PARTS: Final = 4096

_escape: Final = json.encoder.encode_basestring  # ensure_ascii=False: what json.dumps uses


class Unusual(Exception):
    """A value this writer leaves to ``json.dumps`` (see the module's doc)."""


def write_json(
    value: Any,
    sink: Callable[[str], object],
    *,
    indent: int | None = None,
    on_string: Callable[[str], str] | None = None,
) -> None:
    """Hand ``sink`` the text of ``json.dumps(value, ensure_ascii=False, indent=indent)``
    (with ``separators=(",", ":")`` when ``indent`` is None), in order, in pieces.

    ``on_string``, when given, maps the escaped text of each string (key or value, its
    quotes included) before it is written, for a string that holds ``_vcr`` (an id's
    mark; such a string is never sliced, so the function sees it whole). Raises ``Unusual`` (or ``RecursionError``, ``ValueError``)
    for a value ``json.dumps`` must write; the sink may then have had part of the text.
    """
    parts: list[str] = []
    pending = [0]  # characters in parts

    def flush() -> None:
        if parts:
            sink("".join(parts))
            parts.clear()
            pending[0] = 0

    def string(text: str) -> None:
        # "_vcr" marks every id (escaping neither makes nor breaks it): a string that
        # may hold one is escaped whole, for ``on_string`` to see it whole.
        if len(text) <= SLICE or (on_string is not None and "_vcr" in text):
            escaped = _escape(text)
            if on_string is not None and "_vcr" in text:
                escaped = on_string(escaped)
            parts.append(escaped)
            pending[0] += len(escaped)
            if pending[0] >= BATCH or len(parts) >= _MAX_PARTS:
                flush()
            return
        parts.append('"')
        flush()
        for start in range(0, len(text), SLICE):
            sink(_escape(text[start : start + SLICE])[1:-1])
        parts.append('"')

    if indent is None:
        key_separator, item_separator = ":", ","
    else:
        key_separator, item_separator = ": ", ","
    step = "" if indent is None else " " * indent

    def scalar(item: Any) -> str | None:
        kind = type(item)
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if kind is int:
            return int.__repr__(item)
        if kind is float:
            if item != item or item in (float("inf"), float("-inf")):
                raise Unusual("not a finite number")
            return float.__repr__(item)
        return None

    def one(item: Any, level: int) -> None:
        kind = type(item)
        if kind is str:
            string(item)
        elif kind is dict:
            mapping(item, level)
        elif kind is list:
            sequence(item, level)
        else:
            text = scalar(item)
            if text is None:
                raise Unusual(f"a value of type {kind.__name__}")
            parts.append(text)

    def opening(bracket: str, level: int) -> tuple[str, str]:
        """The bracket with the new line after it, and the text between two items."""
        if indent is None:
            parts.append(bracket)
            return item_separator, ""
        inner = "\n" + step * (level + 1)
        parts.append(bracket + inner)
        return item_separator + inner, "\n" + step * level

    def mapping(items: dict[Any, Any], level: int) -> None:
        if not items:
            parts.append("{}")
            return
        between, closing = opening("{", level)
        first = True
        for key, item in items.items():
            if type(key) is not str:
                raise Unusual("a key that is not a string")
            if not first:
                parts.append(between)
            first = False
            string(key)
            parts.append(key_separator)
            one(item, level + 1)
            if len(parts) >= _MAX_PARTS:
                flush()
        parts.append(closing + "}")

    def sequence(items: list[Any], level: int) -> None:
        if not items:
            parts.append("[]")
            return
        between, closing = opening("[", level)
        first = True
        for item in items:
            if not first:
                parts.append(between)
            first = False
            one(item, level + 1)
            if len(parts) >= _MAX_PARTS:
                flush()
        parts.append(closing + "]")

    try:
        one(value, 0)
        flush()
    finally:
        # The functions above refer to one another: a cycle that would keep the sink
        # (and the caller's buffer, the whole text) alive until a garbage collection.
        del one, mapping, sequence
