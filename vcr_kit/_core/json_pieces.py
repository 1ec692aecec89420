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
import math
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
    quotes included) before it is written, for a string that holds ``vcr`` (an id's
    mark; such a string is never sliced, so the function sees it whole). Raises
    ``Unusual`` (or ``RecursionError``, ``ValueError``) for a value ``json.dumps`` must
    write; the sink may then have had part of the text.
    """
    writer = _Writer(sink, indent, on_string)
    writer.one(value, 0)
    writer.flush()


class _Writer:
    """One document's writing: the pieces gathered, and how they are separated."""

    def __init__(
        self,
        sink: Callable[[str], object],
        indent: int | None,
        on_string: Callable[[str], str] | None,
    ) -> None:
        self.sink = sink
        self.on_string = on_string
        self.parts: list[str] = []
        self.pending = 0  # characters in parts
        self.indent = indent
        self.key_separator = ":" if indent is None else ": "
        self.step = "" if indent is None else " " * indent

    def flush(self) -> None:
        if self.parts:
            self.sink("".join(self.parts))
            self.parts.clear()
            self.pending = 0

    def string(self, text: str) -> None:
        # "vcr" marks every id, "msg_vcr_0" and "chatcmpl-vcr..." (escaping neither
        # makes nor breaks it): a string that may hold one is escaped whole, for
        # ``on_string`` to see it whole.
        marked = self.on_string is not None and "vcr" in text
        if len(text) <= SLICE or marked:
            escaped = _escape(text)
            if marked:
                assert self.on_string is not None
                escaped = self.on_string(escaped)
            self.parts.append(escaped)
            self.pending += len(escaped)
            if self.pending >= BATCH or len(self.parts) >= _MAX_PARTS:
                self.flush()
            return
        self.parts.append('"')
        self.flush()
        for start in range(0, len(text), SLICE):
            self.sink(_escape(text[start : start + SLICE])[1:-1])
        self.parts.append('"')

    def one(self, item: Any, level: int) -> None:
        kind = type(item)
        if kind is str:
            self.string(item)
        elif kind is dict:
            self.mapping(item, level)
        elif kind is list:
            self.sequence(item, level)
        else:
            self.parts.append(_scalar(item))

    def opening(self, bracket: str, level: int) -> tuple[str, str]:
        """Write the bracket (and the new line after it); return the text between two
        items and the text before the closing bracket."""
        if self.indent is None:
            self.parts.append(bracket)
            return ",", ""
        inner = "\n" + self.step * (level + 1)
        self.parts.append(bracket + inner)
        return "," + inner, "\n" + self.step * level

    def mapping(self, items: dict[Any, Any], level: int) -> None:
        if not items:
            self.parts.append("{}")
            return
        between, closing = self.opening("{", level)
        parts = self.parts
        first = True
        for key, item in items.items():
            if type(key) is not str:
                raise Unusual("a key that is not a string")
            if not first:
                parts.append(between)
            first = False
            self.string(key)
            parts.append(self.key_separator)
            self.one(item, level + 1)
            if len(parts) >= _MAX_PARTS:
                self.flush()
        parts.append(closing + "}")

    def sequence(self, items: list[Any], level: int) -> None:
        if not items:
            self.parts.append("[]")
            return
        between, closing = self.opening("[", level)
        parts = self.parts
        first = True
        for item in items:
            if not first:
                parts.append(between)
            first = False
            self.one(item, level + 1)
            if len(parts) >= _MAX_PARTS:
                self.flush()
        parts.append(closing + "]")


_INFINITIES: Final = (float("inf"), float("-inf"))


def _scalar(item: Any) -> str:
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
        if math.isnan(item) or item in _INFINITIES:
            raise Unusual("not a finite number")
        return float.__repr__(item)
    raise Unusual(f"a value of type {kind.__name__}")
