"""Ids an answer carries, the ids a later request quotes, and how both stay stable.

The API gives each answer ids of its own (a message, a batch, a file, a container),
and later requests quote them: a message thread's ``previous_message_id``, the path
of ``GET /v1/messages/batches/<id>``, a document's ``file_id``. These rules keep
such conversations content-addressed:

- In the file, ids are deterministic: message ids are ``msg_vcr_<n>``, the others
  ``<prefix>_vcr<21 hex>`` derived from the fixture name, so a re-record that
  changed nothing changes no byte.
- The caller gets the same kind of id whether the answer was just recorded or
  replayed: a fresh unique message, batch, file or container id (code that
  de-duplicates by id keeps every answer; a batch keeps one id across its create,
  retrieve and list answers), and tool-use ids as stored. So a recording run and a
  replay run observe the same values.
- A request that quotes an id vcr_kit gave out is keyed as if it quoted the
  recorded one (its *token*), so the key is the same on every run, in any order.
- An id the API repeats in a later answer keeps the stand-in it already has (a paused
  server tool's call and the result that opens the next answer share one
  ``tool_use_id``): the link the API made holds while recording and in replay.
- While recording, such a request is sent to the API with the live id the given
  one stands for (``live_ids_in``): a message thread's next turn, or a batch
  retrieve, reaches a server that knows only its own ids.

The registry is process-wide: a conversation may span threads and event loops.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final, NamedTuple

from .id_vocabulary import IdVocabulary
from .providers import PROVIDERS

__all__ = [
    "IDS",
    "ID_PREFIXES",
    "TOOL_PREFIXES",
    "IdMap",
    "IdPieces",
    "IdVocabulary",
    "forget",
    "give_ids_bytes",
    "give_ids_pieces",
    "give_ids_text",
    "holds_quoted_ids",
    "ids_giver",
    "live_ids_in",
    "quoted_tokens",
    "replace_tool_ids",
    "split_at_ids",
    "stabilizer",
    "stable_tool_ids",
]

#: Prefixes of the answer ids that later requests quote (messages are told apart
#: by their ``"type": "message"``, since ``msg_`` is also common in plain text), and
#: of tool-use ids. Every pattern below is built from these two lists.
ID_PREFIXES: Final = ("msgbatch", "file", "container", "cntr")
TOOL_PREFIXES: Final = ("toolu", "srvtoolu", "mcptoolu")
_OTHERS = "|".join(ID_PREFIXES)
_TOOLS = "|".join(TOOL_PREFIXES)
_TOOL_ID = re.compile(rf"(?:{_TOOLS})_[A-Za-z0-9_-]+")
#: The other providers' prefixes (each with its separator: ``chatcmpl-``, ``resp_``),
#: tools and the rest: a stand-in of theirs is the prefix, ``vcr`` and 21 hex digits.
_PROVIDER_TOOL_PREFIXES: Final = tuple(
    sorted({p for provider in PROVIDERS.values() for p in provider.ids.tool_prefixes})
)
_PROVIDER_PREFIXES: Final = tuple(
    sorted(
        {
            *_PROVIDER_TOOL_PREFIXES,
            *(p for provider in PROVIDERS.values() for p in provider.ids.other_prefixes),
            *(p for provider in PROVIDERS.values() for _, p in provider.ids.id_fields),
        },
        key=lambda prefix: (-len(prefix), prefix),  # the longest first: "msgbatch_" before "msg_"
    )
)
_PROVIDERS = "|".join(re.escape(prefix) for prefix in _PROVIDER_PREFIXES)
#: Stored ids given afresh on every replay: Anthropic's messages, and the answers of other
#: providers that no request quotes (``IdVocabulary.always_fresh``).
_ALWAYS_FRESH: Final = (
    "msg_vcr_",
    *(f"{p}vcr" for provider in PROVIDERS.values() for p in provider.ids.always_fresh),
)
#: A tool id vcr_kit made (``stable_tool_ids``): the form a fixture stores.
_TOOL_STAND_IN = re.compile(
    rf"(?:(?:{_TOOLS})_|{'|'.join(map(re.escape, _PROVIDER_TOOL_PREFIXES))})vcr[0-9a-f]{{21}}"
)
# The API's ids are 20-odd characters after the prefix; a shorter "file_name" in an
# answer's text is text, and is left alone.
_OTHER_ID = re.compile(rf"(?:{_OTHERS})_[A-Za-z0-9]{{16,}}")
_OTHER_ID_IN_TEXT = re.compile(rf"(?<![A-Za-z0-9_])(?:{_OTHERS})_[A-Za-z0-9]{{16,}}")
_OTHER_PREFIXES: Final = tuple(f"{prefix}_" for prefix in ID_PREFIXES)
_URL_STARTS: Final = ("https://", "http://", "/v1/")
#: The ids as stored in a fixture, inside the quotes of serialized JSON.
_STORED_ID = re.compile(
    rf'"(msg_vcr_\d+|(?:{_OTHERS}|{_TOOLS})_vcr[0-9a-f]{{21}}|(?:{_PROVIDERS})vcr[0-9a-f]{{21}})"'
)
_TOOL_PREFIXES: Final = (*(f"{prefix}_" for prefix in TOOL_PREFIXES), *_PROVIDER_TOOL_PREFIXES)
#: An id a request may quote: a live one (recording) or one vcr_kit made up (replay).
_QUOTED_ID = re.compile(rf"(?:(?:msg|{_OTHERS}|{_TOOLS})_|{_PROVIDERS})[\w-]+")
_QUOTED_PREFIXES: Final = ("msg_", *_OTHER_PREFIXES, *_TOOL_PREFIXES, *_PROVIDER_PREFIXES)


class IdMap:
    """The ids this process gave out, one registry for every thread and event loop.

    ``forget()`` (or ``reset()``) empties it: tests of vcr_kit itself start clean."""

    __slots__ = ("given_of_token", "has_live_ids", "live_of_given", "lock", "token_of_given")

    #: id given to a caller (live or fresh) -> the token a later request's key uses.
    token_of_given: dict[str, str]
    #: token -> the id given for it, for ids that must stay the same across answers
    #: (a batch's id in its create, retrieve and list answers); messages always get
    #: fresh ones.
    given_of_token: dict[str, str]
    #: id given to a caller -> the live id it stands for (only for answers recorded by
    #: this process: a replayed answer's ids exist on no server).
    live_of_given: dict[str, str]
    #: Whether ``token_of_given`` holds a live id. Until it does, every id in it whose
    #: token differs from itself was made up by ``_fresh`` and so contains ``vcr_``
    #: (tool ids are their own tokens): one substring scan then tells that a request
    #: quotes none of them.
    has_live_ids: bool

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.token_of_given = {}
        self.given_of_token = {}
        self.live_of_given = {}
        self.has_live_ids = False

    def reset(self) -> None:
        """Drop every remembered id."""
        with self.lock:
            self.token_of_given.clear()
            self.given_of_token.clear()
            self.live_of_given.clear()
            self.has_live_ids = False


IDS: Final = IdMap()
#: Searched with ``re`` rather than ``in``: on a long conversation the regular
#: expression engine's scan for a literal is two to three times faster than ``str``'s
#: (whose skip table matches most letters of English text).
_FRESH_MARK: Final = re.compile("vcr_")
#: Their twins for a body still in bytes (``holds_quoted_ids``).
_FRESH_MARK_BYTES: Final = re.compile(b"vcr_")
_QUOTED_PREFIX_BYTES: Final = tuple(prefix.encode("ascii") for prefix in _QUOTED_PREFIXES)


def _token(stored_id: str, fixture_stem: str) -> str:
    # msg_vcr_0 is the first message of *every* fixture: the fixture name tells them apart.
    return f"{stored_id}@{fixture_stem}" if stored_id.startswith("msg_vcr_") else stored_id


def _fresh(stored_id: str) -> str:
    prefix = stored_id[: stored_id.index("vcr")]  # with its separator: "msg_", "chatcmpl-"
    return f"{prefix}vcr_{os.urandom(12).hex()}"  # unique like uuid4, at a quarter of its cost


def stable_tool_ids(seed: str) -> Callable[[str], str]:
    """The tool id mapping of ``stabilizer``: the n-th distinct id seen becomes an id
    derived from ``seed`` and n, unless it already has a stand-in (``_stand_in_of``).
    A proxy that forwards a stream while it records applies it event by event, so its
    client quotes the ids that the fixture will hold."""
    tools: dict[str, str] = {}

    def tool_id(live: str) -> str:
        if live not in tools:
            prefix = live.split("_", 1)[0]
            # Counted either way: an answer's other ids keep the names they had before
            # ids were linked across answers (a re-record changes only the linked one).
            digest = hashlib.sha1(f"{seed}:{len(tools)}".encode(), usedforsecurity=False)
            tools[live] = _stand_in_of(live) or f"{prefix}_vcr{digest.hexdigest()[:21]}"
        return tools[live]

    return tool_id


def _stand_in_of(tool_id: str) -> str | None:
    """The stand-in a tool id already has, if an earlier answer gave it one.

    The API repeats ids across answers: a server tool call that ends one answer
    (``pause_turn``) has its result open the next, under the same ``tool_use_id``.
    The next request quoted the stand-in and went out with the live id it stands for
    (``live_ids_in``), so the live id is known here; a stand-in itself comes back when
    the history was replayed (or quoted by an SDK cassette's caller) and stays as it is.
    Either way the link the API made survives in the file, so in replay too."""
    if _TOOL_STAND_IN.fullmatch(tool_id):
        return tool_id
    if not IDS.has_live_ids:
        return None
    with IDS.lock:
        known = IDS.token_of_given.get(tool_id)
    # A tool id's token is its stand-in (``_token``), of the same kind as the live id.
    if known is not None and known.startswith(tool_id.split("_", 1)[0] + "_vcr"):
        return known
    return None


def replace_tool_ids(
    value: Any, tool_id: Callable[[str], str], vocabulary: IdVocabulary | None = None
) -> Any:
    """Copy ``value`` with every tool-use id replaced by ``tool_id(id)``; ``vocabulary``:
    another provider's tool ids (``call_``), found as its ``stabilizer`` finds them."""
    pattern = _TOOL_ID if vocabulary is None else _patterns(vocabulary)[0]
    if pattern is None:  # a provider whose tool calls carry no ids (Gemini)
        return value
    return _replace_matching(value, tool_id, pattern)


def _replace_matching(value: Any, tool_id: Callable[[str], str], pattern: re.Pattern[str]) -> Any:
    if isinstance(value, dict):
        return {k: _replace_matching(v, tool_id, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_matching(v, tool_id, pattern) for v in value]
    if isinstance(value, str) and pattern.fullmatch(value):
        return tool_id(value)
    return value


def stabilizer(
    seed: str, *, other_ids: bool = True, vocabulary: IdVocabulary | None = None
) -> tuple[Callable[[Any], Any], dict[str, str]]:
    """A function that gives a live answer its file ids, and the map it fills:
    stored id -> live id (what the caller gets while recording).

    Tool-use ids become ``<prefix>_vcr<21 hex>`` derived from ``seed`` and are served
    as stored (the next request quotes them in its own history, and its key must not
    change); the live ones are remembered for what a recording sends upstream.
    ``other_ids=False`` leaves batch, file and container ids alone (cassettes, which
    hand values back without an HTTP round trip). ``vocabulary``: another provider's
    ids (``providers``), instead of Anthropic's.
    """
    if vocabulary is not None:
        return _provider_stabilizer(seed, vocabulary)
    stored_to_live: dict[str, str] = {}
    live_to_stored: dict[str, str] = {}
    stable_tool_id = stable_tool_ids(seed)

    def tool_id(live: str) -> str:
        stored = stable_tool_id(live)
        stored_to_live[stored] = live
        return stored

    def message_id(live: str) -> str:
        if live not in live_to_stored:
            stored = f"msg_vcr_{sum(1 for s in stored_to_live if s.startswith('msg_vcr_'))}"
            live_to_stored[live] = stored
            stored_to_live[stored] = live
        return live_to_stored[live]

    def other_id(live: str) -> str:
        if live not in live_to_stored:
            with IDS.lock:  # an id an earlier answer gave out keeps its token (create -> list)
                known = IDS.token_of_given.get(live)
            if known is None or known.startswith("msg_"):
                prefix = live.split("_", 1)[0]
                digest = hashlib.sha1(
                    f"{seed}:{prefix}:{len(live_to_stored)}".encode(), usedforsecurity=False
                )
                known = f"{prefix}_vcr{digest.hexdigest()[:21]}"
            live_to_stored[live] = known
            stored_to_live[known] = live
        return live_to_stored[live]

    def in_text(value: str) -> str:
        # An id inside a longer string: a batch's results_url, which the SDK follows.
        return _OTHER_ID_IN_TEXT.sub(
            lambda m: m.group(0) if "_vcr" in m.group(0) else other_id(m.group(0)), value
        )

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            out = {k: walk(v) for k, v in value.items()}
            ident = out.get("id")
            if isinstance(ident, str) and out.get("type") == "message":
                out["id"] = message_id(ident)
            return out
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str) and "_" in value:
            if _TOOL_ID.fullmatch(value):
                return tool_id(value)
            if other_ids and _OTHER_ID.fullmatch(value) and "_vcr" not in value:
                return other_id(value)
            if (
                other_ids
                and value.startswith(_URL_STARTS)
                and any(p in value for p in _OTHER_PREFIXES)
            ):
                return in_text(value)
        return value

    return walk, stored_to_live


@lru_cache(maxsize=16)
def _patterns(vocabulary: IdVocabulary) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """A vocabulary's tool ids and other ids, each matched whole (the prefix a group)."""

    def pattern(prefixes: tuple[str, ...], least: int) -> re.Pattern[str] | None:
        if not prefixes:
            return None
        alternatives = "|".join(map(re.escape, sorted(prefixes, key=lambda p: -len(p))))
        return re.compile(rf"({alternatives})[A-Za-z0-9_-]{{{least},}}")

    # The APIs' ids are long (OpenAI's "call_" and 24 letters): a shorter word with
    # the prefix ("call_me") in an answer is text.
    return pattern(vocabulary.tool_prefixes, 8), pattern(vocabulary.other_prefixes, 12)


def _provider_stabilizer(
    seed: str, vocabulary: IdVocabulary
) -> tuple[Callable[[Any], Any], dict[str, str]]:
    """``stabilizer`` for another provider's answers: its tool ids and answer ids by
    their prefixes, its prefix-less ids by their fields, its volatile fields fixed."""
    stored_to_live: dict[str, str] = {}
    live_to_stored: dict[str, str] = {}
    stable_tool_id = stable_tool_ids(seed)
    tool_pattern, other_pattern = _patterns(vocabulary)
    fixed = dict(vocabulary.fixed_fields)
    id_fields = dict(vocabulary.id_fields)

    def tool_id(live: str) -> str:
        stored = stable_tool_id(live)
        stored_to_live[stored] = live
        return stored

    def other_id(live: str, prefix: str) -> str:
        if live not in live_to_stored:
            with IDS.lock:  # an id an earlier answer gave out keeps its token
                known = IDS.token_of_given.get(live)
            if known is None or not known.startswith(prefix):
                digest = hashlib.sha1(
                    f"{seed}:{prefix}:{len(live_to_stored)}".encode(), usedforsecurity=False
                )
                known = f"{prefix}vcr{digest.hexdigest()[:21]}"
            live_to_stored[live] = known
            stored_to_live[known] = live
        return live_to_stored[live]

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            stable = value.get("object") in vocabulary.stable_objects
            for key, item in value.items():
                if key in fixed and type(item) is type(fixed[key]) and not stable:
                    out[key] = fixed[key]
                elif key in id_fields and isinstance(item, str) and item:
                    out[key] = item if "vcr" in item else other_id(item, id_fields[key])
                else:
                    out[key] = walk(item)
            return out
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, str):
            if tool_pattern is not None and tool_pattern.fullmatch(value):
                return tool_id(value)
            found = other_pattern.fullmatch(value) if other_pattern is not None else None
            if found is not None and not value.startswith(f"{found.group(1)}vcr"):
                return other_id(value, found.group(1))
        return value

    return walk, stored_to_live


def give_ids_text(text: str, fixture_stem: str, live: dict[str, str] | None = None) -> str:
    """The stored ids in serialized ``text`` replaced by the ids the caller gets.

    Each id given is remembered with its token (for the keys of later requests) and,
    right after recording (``live``: stored -> live id), with the live id it stands
    for (for what a later recording sends to the API)."""
    if "vcr" not in text:  # every stand-in holds it ("msg_vcr_0", "chatcmpl-vcr...")
        return text
    return _STORED_ID.sub(_replacer(fixture_stem, live), text)


def ids_giver(fixture_stem: str, live: dict[str, str] | None = None) -> Callable[[str], str]:
    """``give_ids_text`` for the pieces of one answer, in order: the same id stored
    twice gets the same id given, as in one text."""
    replace = _replacer(fixture_stem, live)

    def give(text: str) -> str:
        return _STORED_ID.sub(replace, text) if "vcr" in text else text

    return give


#: ``give_ids_bytes`` encodes at most this many characters at once.
_ENCODE_CHUNK: Final = 1 << 20
#: An answer up to this long gets its ids in one substitution (a second text of it
#: costs little; the pieces cost more time than they save memory).
_AT_ONCE: Final = 1 << 16


def give_ids_bytes(text: str, fixture_stem: str, live: dict[str, str] | None = None) -> bytes:
    """``give_ids_text(text, ...).encode("utf-8")``, the same ids given in the same order,
    written piece by piece into one buffer: a large answer is then held as its text and
    its bytes, never also as a second text with the ids in it."""
    if "vcr" not in text:
        return text.encode("utf-8")
    if len(text) <= _AT_ONCE:  # small: one substitution in C, then its bytes
        return _STORED_ID.sub(_replacer(fixture_stem, live), text).encode("utf-8")
    replace = _replacer(fixture_stem, live)
    out = io.BytesIO()
    done = 0
    for match in _STORED_ID.finditer(text):
        _write_encoded(out, text, done, match.start())
        out.write(replace(match).encode("utf-8"))
        done = match.end()
    _write_encoded(out, text, done, len(text))
    return out.getvalue()


class IdPieces(NamedTuple):
    """A serialized answer cut at the ids a replay gives out afresh (``split_at_ids``):
    ``texts`` are its bytes between them (one more than ``ids``), ``ids`` the stored ids
    in order. Tool-use ids, served as stored, stay inside the texts."""

    texts: tuple[bytes, ...]
    ids: tuple[str, ...]


def split_at_ids(text: str) -> IdPieces:
    """``text`` cut once at its stored ids, so that each replay only joins bytes
    (``give_ids_pieces``) instead of searching the text for them again."""
    texts: list[bytes] = []
    ids: list[str] = []
    done = 0
    for match in _STORED_ID.finditer(text):
        stored = match.group(1)
        if stored.startswith(_TOOL_PREFIXES):
            continue  # a replay serves it as stored: part of the text around it
        texts.append(text[done : match.start(1)].encode("utf-8"))
        ids.append(stored)
        done = match.end(1)
    texts.append(text[done:].encode("utf-8"))
    return IdPieces(tuple(texts), tuple(ids))


def give_ids_pieces(pieces: IdPieces, fixture_stem: str) -> bytes:
    """``give_ids_bytes(text, fixture_stem)`` for the ``pieces`` of ``text``: the same
    ids given (an id repeated in the answer gets one given id), in the same order."""
    texts = pieces.texts
    if not pieces.ids:
        return texts[0]
    given_here: dict[str, bytes] = {}
    out = [texts[0]]
    for stored, text in zip(pieces.ids, texts[1:], strict=True):
        given = given_here.get(stored)
        if given is None:
            given = given_here[stored] = _give(stored, fixture_stem, False, None).encode()
        out.append(given)
        out.append(text)
    return b"".join(out)


def _write_encoded(out: io.BytesIO, text: str, start: int, end: int) -> None:
    for at in range(start, end, _ENCODE_CHUNK):
        out.write(text[at : min(at + _ENCODE_CHUNK, end)].encode("utf-8"))


def _replacer(fixture_stem: str, live: dict[str, str] | None) -> Callable[[re.Match[str]], str]:
    """What each stored id (a match of ``_STORED_ID``) becomes, for one answer."""
    given_here: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        stored = match.group(1)
        is_tool = stored.startswith(_TOOL_PREFIXES)
        if is_tool and not live:
            return match.group(0)  # served as stored; a stored id is its own token
        given = given_here.get(stored)
        if given is None:
            given = _give(stored, fixture_stem, is_tool, live.get(stored) if live else None)
            given_here[stored] = given
        return f'"{given}"'

    return replace


def _give(stored: str, fixture_stem: str, is_tool: bool, live_id: str | None) -> str:
    token = _token(stored, fixture_stem)
    is_message = stored.startswith(_ALWAYS_FRESH)
    with IDS.lock:
        known = None if is_tool or is_message else IDS.given_of_token.get(token)
        if is_tool:
            given = stored
        elif known is not None:
            given = known
        else:
            given = _fresh(stored)
            if not is_message:
                IDS.given_of_token[token] = given
        IDS.token_of_given[given] = token
        if live_id is not None:
            IDS.live_of_given[given] = live_id
            # The stored id itself may reach the caller inside a longer string (a batch's
            # results_url) and come back in a request: it stands for the live id too.
            IDS.live_of_given.setdefault(stored, live_id)
            IDS.token_of_given[live_id] = token  # a later answer that repeats it keeps the token
            IDS.has_live_ids = True
    return given


def live_ids_in(text: str) -> str:
    """``text`` (a request about to be recorded) with each id vcr_kit gave out for a
    live one replaced by that live id."""
    if not IDS.live_of_given or not any(prefix in text for prefix in _QUOTED_PREFIXES):
        return text
    return _map_quoted_ids(text, IDS.live_of_given)


def holds_quoted_ids(data: bytes) -> bool:
    """Whether ``quoted_tokens`` could change ``data`` (UTF-8) once decoded: when not,
    a body can be parsed as the bytes it is, with no decoding into a new string."""
    if not IDS.token_of_given:
        return False
    if not IDS.has_live_ids:
        return _FRESH_MARK_BYTES.search(data) is not None
    return any(prefix in data for prefix in _QUOTED_PREFIX_BYTES)


def quoted_tokens(text: str) -> str:
    """``text`` (a request's body or path) with each id vcr_kit gave out replaced by
    its token; ids it never gave (a constant in a test, say) stay as they are."""
    if not IDS.token_of_given:
        return text
    if not IDS.has_live_ids:
        # The replay hot path: one scan of the request instead of one per prefix. Only
        # an id holding the mark can map to another token (see ``IdMap.has_live_ids``).
        if _FRESH_MARK.search(text) is None:
            return text
    elif not any(prefix in text for prefix in _QUOTED_PREFIXES):
        return text
    return _map_quoted_ids(text, IDS.token_of_given)


def _map_quoted_ids(text: str, mapping: dict[str, str]) -> str:
    """Each id-shaped word of ``text`` that ``mapping`` knows, replaced by its value."""

    def replace(match: re.Match[str]) -> str:
        found = match.group(0)
        return mapping.get(found, found)

    with IDS.lock:
        return _QUOTED_ID.sub(replace, text)


def forget() -> None:
    """Drop every remembered id (tests of vcr_kit itself start from a clean slate)."""
    IDS.reset()
