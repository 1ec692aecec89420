"""Canonical JSON through orjson when it is installed: the same bytes, about 20x faster.

Optional (``pip install 'vcr_kit[fast]'``): the key of a request is the SHA1 of its
canonical JSON, and for a long conversation ``json.dumps(sort_keys=True)`` was the
largest part of vcr_kit's work on replay. orjson writes exactly what
``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` writes
(keys in code point order, the same escapes, Python's float repr) except for:

- floats below 1e-4 in magnitude (``0.00001`` and ``1e-7`` where Python writes
  ``1e-05`` and ``1e-07``): the output then holds ``.0000`` or ``e-``;
- NaN and infinities, which it writes as ``null`` (Python refuses them here);
- integers beyond 64 bits, lone surrogates and non-string keys, which it refuses.

Any output holding one of those marks, or any refusal, falls back to the standard
library, so the bytes are always the standard library's (a fast path that could
change a key would orphan committed fixtures). ``VCR_PURE_JSON=1`` turns it off.

Replay also parses a request with orjson first (``quick_loads``, ``quick_canonical``):
a look-up key only, whose fixture is served when the exact parse would name the same
one (``_core.http_request.quick_name``, ``_engine.prepared.prepared_replay``).
"""

from __future__ import annotations

from typing import Any, Final

from .config import pure_json_wanted

__all__ = ["HUGE_FLOAT", "available", "canonical", "holds_huge_float", "quick_canonical",
           "quick_loads"]

try:
    if pure_json_wanted():
        raise ImportError("VCR_PURE_JSON is set")
    import orjson
except ImportError:
    _dumps: Any = None
    _loads: Any = None
    _SORTED = 0
else:
    _dumps = orjson.dumps
    _loads = orjson.loads
    _SORTED = orjson.OPT_SORT_KEYS

#: orjson parses an integer beyond 64 bits (below -2**63, above 2**64 - 1) as the
#: nearest float, where the standard library keeps it exact: a float this large may
#: stand for such an integer. It is the one value orjson's parse gives silently where
#: the standard library's differs (NaN, infinities, lone surrogates: it refuses them).
HUGE_FLOAT: Final = 2.0**63


def available() -> bool:
    """Whether the fast path is in use."""
    return _dumps is not None


def canonical(value: Any, *, finite: bool = False, floats: bool = True) -> bytes | None:
    """``value``'s canonical JSON, or None when the standard library must write it.

    ``finite``: the caller knows ``value`` holds no NaN or infinity (it was parsed
    with those refused), which spares one scan of the output. ``floats=False``: the
    caller knows it holds no float at all (its parser saw none), which spares the two
    scans for the float spellings orjson writes otherwise (on a long conversation,
    each costs about as much as the write itself).
    """
    if _dumps is None:
        return None
    try:
        data: bytes = _dumps(value, option=_SORTED)
    except TypeError:  # a big integer, a surrogate, a non-string key: the slow path says
        return None
    if floats and (b".0000" in data or _has_exponent(data)):
        return None
    if not finite and b"null" in data:
        return None
    return data


def _has_exponent(data: bytes) -> bool:
    """Whether ``data`` holds a number written with a negative exponent (``1e-7``): a
    digit before ``e-``. Text has ``e-`` too (every ``claude-`` model name): each
    occurrence costs a look at one byte, the search itself one pass."""
    at = data.find(b"e-")
    while at > 0:
        if 48 <= data[at - 1] <= 57:  # b"0" to b"9"
            return True
        at = data.find(b"e-", at + 2)
    return False


def quick_loads(text: str | bytes) -> Any:
    """``text`` (or its UTF-8 bytes, which orjson checks itself) parsed by orjson (two to
    three times as fast as the standard library on a long conversation). Raises
    ``ValueError`` where orjson refuses it (invalid UTF-8 included), ``LookupError`` when
    orjson is not in use (``available`` tells first). The tree equals
    ``json.loads(text)`` except where an integer beyond 64 bits became a float
    (``holds_huge_float`` of it, or of what its canonical bytes are compared with,
    tells)."""
    if _loads is None:
        raise LookupError("orjson is not in use")
    return _loads(text)


def quick_canonical(value: Any) -> bytes | None:
    """orjson's canonical JSON of ``value``, with none of ``canonical``'s checks of its
    float spellings: bytes equal to the standard library's wherever they are compared
    with bytes it wrote (a float spelled otherwise only makes them differ), or None
    where orjson refuses ``value``."""
    try:
        data: bytes = _dumps(value, option=_SORTED)
    except TypeError:
        return None
    return data


def holds_huge_float(value: Any) -> bool:
    """Whether ``value`` (a JSON tree) holds a float of magnitude ``HUGE_FLOAT`` or more
    (or NaN, an infinity): one that orjson's parse may have made of a huge integer."""
    todo = [value]
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is float:
            if not -HUGE_FLOAT < item < HUGE_FLOAT:  # NaN fails both comparisons
                return True
        elif kind is dict:
            todo.extend(item.values())
        elif kind is list:
            todo.extend(item)
    return False
