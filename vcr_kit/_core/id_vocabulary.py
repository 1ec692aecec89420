"""The ids a provider's answers give out, as ``_core.ids`` needs to know them.

Anthropic's vocabulary is ``ids``'s own; every other provider's module gives one of
these (``providers``). Pure data: the patterns are compiled where they are used. Tuples,
not mappings: a vocabulary is hashable, so its patterns are compiled once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["IdVocabulary"]


class IdVocabulary(NamedTuple):
    """A provider's ids. Each prefix includes its separator (``"chatcmpl-"``,
    ``"resp_"``); a stand-in is the prefix, ``vcr`` and 21 hex digits."""

    #: Ids given to tool calls, quoted back with their results: stored as stand-ins and
    #: served as stored (``call_``).
    tool_prefixes: tuple[str, ...]
    #: Ids of answers and their parts: given afresh on replay, and a later request that
    #: quotes one is keyed by its stored stand-in (``resp_`` in ``previous_response_id``).
    other_prefixes: tuple[str, ...]
    #: Fields whose value is an id with no prefix of its own (Gemini's ``responseId``),
    #: and the prefix its stand-in gets.
    id_fields: tuple[tuple[str, str], ...]
    #: Fields that differ on every call and say nothing about the request (``created``,
    #: ``system_fingerprint``): stored as this fixed value, so a re-record changes no
    #: byte. Only a value of the same JSON type is replaced.
    fixed_fields: tuple[tuple[str, Any], ...]
    #: The ``"object"`` kinds whose fields are facts, never volatile: their ``created``
    #: is left as it is (a model's release, in ``GET /v1/models``).
    stable_objects: tuple[str, ...] = ()
