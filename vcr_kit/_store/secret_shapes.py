"""What a secret looks like: the token shapes, the live values, and their encodings.

Pure: bytes in, a ``Hit`` (which kind of secret, where) out, never the secret itself.
The gate in ``_store.secrets`` runs this on every write and, before paying, on every
recorded request, so the common case (no secret at all) must be cheap on a large
request: each shape's expression begins with a literal (``sk-ant-``, ``AKIA``,
``bearer`` in any case), which the engine finds at memory speed; base64-looking runs
(20 letters or more) are found by one expression, decoded, and scanned together as
one text. Only a hit walks the JSON document to name the place. Nothing here copies
the whole text: a fixture's bytes may be a 100 MB answer.

A live value (a credential of this process) is looked for as it is and in every form
a text carries it in: inside base64 (standard or URL-safe, at any of the three
alignments a text may give it), URL-encoded, and any of those inside the others. No
``VCR_ALLOW_SECRETS`` entry admits one: the allowlist is for look-alike shapes only.

Prefixes that the issuer defines (``AKIA``, ``ghp_``, ``sk-ant-``) are matched as
issued; the words around a credential (``Authorization``, ``Bearer``,
``aws_secret_access_key``) in any case.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple
from urllib.parse import unquote_to_bytes

from .._core.config import AllowedSecrets

__all__ = ["SHAPES", "Hit", "find_hit", "live_forms", "locate", "streamed_texts"]

# Between a label and its value: quotes (escaped too, as in serialized JSON), spaces,
# and one ":" or "=".
_SEP: Final = rb"""[\s"'\\]*[:=][\s"'\\]*"""
#: The characters of a token after a scheme or a label.
_TOKEN: Final = rb"[a-z0-9._~+/\-]"  # matched in any case


class Shape(NamedTuple):
    label: str
    #: Each begins with a literal, which the regular expression engine looks for at
    #: memory speed (one expression of many branches tries each at every byte: 200 ms
    #: a megabyte, measured).
    patterns: tuple[re.Pattern[bytes], ...]
    #: Matched in any case (ASCII, as ``bytes.lower`` lowers): words around a
    #: credential. The patterns are written in lower case, and each begins with the
    #: word in ``literals`` (same order), found in a lower-cased window of the text.
    lowered: bool = False
    literals: tuple[bytes, ...] = ()


def _shape(label: str, *patterns: bytes, lowered: bool = False) -> Shape:
    flags = re.IGNORECASE if lowered else 0  # matched where the literal is, in any case
    return Shape(
        label,
        tuple(re.compile(p, flags) for p in patterns),
        lowered,
        tuple(_leading_literal(p) for p in patterns) if lowered else (),
    )


def _leading_literal(pattern: bytes) -> bytes:
    """The word every match of ``pattern`` begins with: its leading letters and dashes,
    less a last one that a quantifier makes optional."""
    word = re.match(rb"[a-z\-]+", pattern)
    assert word is not None, pattern
    literal = word.group()
    if pattern[len(literal) : len(literal) + 1] in (b"?", b"*", b"{"):
        literal = literal[:-1]
    assert literal, pattern
    return literal


#: A group named ``t`` is the token itself (what an allowed value is compared with);
#: without one the whole match is the token.
SHAPES: Final = (
    _shape("an Anthropic key (sk-ant-...)", rb"sk-ant-[A-Za-z0-9_\-]{20,}"),
    _shape("an OpenAI key (sk-proj-...)", rb"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"),
    _shape("a Stripe key (sk_live_...)", rb"k(?<=[rs]k)_live_[A-Za-z0-9]{20,}"),
    _shape(
        "an AWS access key id (AKIA...)",
        rb"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _shape(
        "an AWS secret access key",
        rb"secret_?access_?key" + _SEP + rb"(?P<t>[a-z0-9/+]{40})(?![a-z0-9/+])",
        lowered=True,
    ),
    _shape("a Google API key (AIza...)", rb"AIza[0-9A-Za-z_\-]{35}"),
    _shape("a Google OAuth token (ya29....)", rb"ya29\.[0-9A-Za-z_\-]{20,}"),
    _shape(
        "an Azure key (AccountKey=...)",
        rb"accountkey" + _SEP + rb"(?P<t>[a-z0-9+/]{30,}={0,2})",
        rb"sharedaccesskey" + _SEP + rb"(?P<t>[a-z0-9+/]{30,}={0,2})",
        lowered=True,
    ),
    _shape(
        "a GitHub token (ghp_...)",
        rb"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{36,}",
        rb"github_pat_[A-Za-z0-9_]{22,}",
    ),
    _shape("a GitLab token (glpat-...)", rb"glpat-[A-Za-z0-9_\-]{20,}"),
    _shape("a Slack token (xox?-...)", rb"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    _shape(
        "a JSON web token (eyJ...)",
        rb"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    _shape("a private key block", rb"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
    _shape(
        "a credential header",
        *(
            name + _SEP + rb"(?:(?:bearer|basic|token)\s+)?(?P<t>" + _TOKEN + rb"{20,}=*)"
            for name in (rb"authorization", rb"api-key")  # proxy-authorization, x-api-key
        ),
        lowered=True,
    ),
    _shape("a bearer token", rb"bearer\s+(?P<t>" + _TOKEN + rb"{20,}=*)", lowered=True),
)

#: A base64-looking run: ``_MIN_RUN`` letters or more (standard or URL-safe) and its
#: padding. Long enough that a word is rarely one, short enough for the base64 of the
#: shortest token (a 15-byte Slack token: 20 letters and a "=").
_MIN_RUN: Final = 20
_RUN: Final = re.compile(rb"[A-Za-z0-9+/_\-]{%d,}=*" % _MIN_RUN)
_BASE64_LETTERS: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
#: Every base64 letter to "a", any other byte to " ": a run's start is then a search
#: for ``_RUN_START``.
_RUN_MASK: Final = bytes(ord("a") if c in _BASE64_LETTERS else ord(" ") for c in range(256))
_RUN_START: Final = b"a" * _MIN_RUN
#: An API id (``toolu_01...``, ``msg_01...``, ``req_...``), not base64: an agent's
#: request holds thousands, and none needs decoding. Only the API's own prefixes: a
#: secret's base64 behind any other word and "_" is still decoded.
_ID: Final = re.compile(
    rb"(?:toolu|srvtoolu|mcptoolu|msg|req|msgbatch|file|batch|skill|container)_[A-Za-z0-9_]+"
)
#: Runs up to this long are also decoded from their second, third and fourth letters.
_SHIFTED_MAX: Final = 4096
#: Base64 inside base64 inside base64 is no longer an accident anyone makes.
_MAX_DEPTH: Final = 2
_URLSAFE: Final = bytes.maketrans(b"-_", b"+/")


NOTHING_ALLOWED: Final = AllowedSecrets()


@dataclass(frozen=True)
class Hit:
    """A secret found: what kind, and where (a byte offset until ``locate`` names a path)."""

    what: str
    start: int
    #: How the text carried it ("base64-encoded", "URL-encoded"); "" as it is. When
    #: found by decoding base64, the offset is the run's.
    encoding: str = ""

    @property
    def encoded(self) -> bool:
        return bool(self.encoding)

    @property
    def kind(self) -> str:
        return f"{self.what}, {self.encoding}" if self.encoding else self.what


class _Live(NamedTuple):
    """A live value: its label, and each form a text may carry it in (the text to look
    for, and how it is encoded)."""

    label: str
    forms: tuple[tuple[bytes, str], ...]


def find_hit(
    data: bytes, live: Sequence[tuple[str, str]], allowed: AllowedSecrets = NOTHING_ALLOWED
) -> Hit | None:
    """The first secret in ``data``: a live value in any of its forms (never allowed),
    a token of a known shape that ``allowed`` does not allow, or either one inside
    base64; None if none."""
    values = [_Live(label, live_forms(value.encode("utf-8", "surrogatepass")))
              for label, value in live]  # fmt: skip
    return _scan(data, values, allowed, 0)


_BASE64: Final = "base64-encoded"
#: Base64 of a text: which leading letters of each alignment (0, 1 or 2 bytes before
#: the value in its group of three) depend on the bytes before the value.
_LEADING_MIXED: Final = (0, 2, 3)


@functools.lru_cache(maxsize=64)
def live_forms(value: bytes) -> tuple[tuple[bytes, str], ...]:
    """``value`` and the letters that any base64 text holding it must contain: for each
    alignment, the letters made of the value's bits alone (those its neighbours share
    are left off), in both alphabets."""
    forms = [(value, "")]
    for before in range(3):
        length = before + len(value)
        encoded = base64.b64encode(bytes(before) + value).rstrip(b"=")
        # A last group of one or two bytes: the letter it shares with what follows is off.
        end = length // 3 * 4 + length % 3
        core = encoded[_LEADING_MIXED[before] : end]
        forms.append((core, _BASE64))
        urlsafe = core.translate(_TO_URLSAFE)
        if urlsafe != core:
            forms.append((urlsafe, _BASE64))
    return tuple(forms)


_TO_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")
_PERCENT: Final = re.compile(rb"%[0-9A-Fa-f]{2}")


def _live_hit(data: bytes, live: list[_Live], depth: int = 0) -> Hit | None:
    """A live value in ``data``: as it is, URL-encoded, and (in a text that base64
    gave, where base64 may be nested) in base64; the base64 runs of the text itself are
    ``_scan_base64``'s. Not asked of the allowlist: no entry admits a credential of
    this process."""
    for label, forms in live:
        for form, encoding in forms if depth else forms[:1]:
            position = data.find(form)
            if position >= 0:
                return Hit(f"the value of {label}", position, encoding)
    if not live:
        return None
    reach = 3 * max(len(form) for _, forms in live for form, _ in forms)
    for start, decoded in _url_decoded_windows(data, reach):
        for label, forms in live:
            for form, encoding in forms:
                if form in decoded:
                    return Hit(f"the value of {label}", start, encoding or "URL-encoded")
    return None


def _encoded_live_hit(
    runs: Iterable[tuple[int, bytes]], live: list[_Live]
) -> Hit | None:
    """A live value's base64 form in one of ``runs`` (its letters at any alignment, in
    either alphabet), found without decoding."""
    for start, run in runs:
        for label, forms in live:
            for form, encoding in forms[1:]:
                position = run.find(form)
                if position >= 0:
                    return Hit(f"the value of {label}", start + position, encoding)
    return None


def _url_decoded_windows(data: bytes, reach: int) -> Iterator[tuple[int, bytes]]:
    """(where, text) of each window of ``data`` that holds a percent escape, decoded
    (any case of hex, any choice of characters escaped): a window at a time, each
    reaching far enough past its end that an escaped form starting in it is seen whole,
    never the whole text at once."""
    escape = _PERCENT.search(data)
    if escape is None:
        return
    for start in range(max(escape.start() - reach, 0), len(data), _WINDOW):
        end = start + _WINDOW + reach
        if _PERCENT.search(data, start, end) is not None:  # no copy of a window without one
            yield start, unquote_to_bytes(data[start:end])


def _scan(data: bytes, live: list[_Live], allowed: AllowedSecrets, depth: int) -> Hit | None:
    hit = _live_hit(data, live, depth)
    if hit is not None:
        return hit
    windows = _Windows(data)
    for shape in SHAPES:
        for number, pattern in enumerate(shape.patterns):
            if shape.lowered:
                matches = _matches_any_case(pattern, shape.literals[number], windows)
            else:
                matches = pattern.finditer(data)
            for match in matches:
                whole = data[match.start() : match.end()]
                token = whole
                if "t" in pattern.groupindex:
                    token = data[match.start("t") : match.end("t")]
                if not (allowed.allows(whole) or allowed.allows(token)):
                    return Hit(shape.label, match.start())
    del windows  # its lowered window: not kept while the runs are decoded
    if depth < _MAX_DEPTH:
        return _scan_base64(data, live, allowed, depth + 1)
    return None


def _scan_base64(
    data: bytes, live: list[_Live], allowed: AllowedSecrets, depth: int
) -> Hit | None:
    """A secret inside what a base64-looking run decodes to. All runs are decoded and
    scanned as one text; only a hit goes back to find its run. A run the allowlist
    admits is still looked into for live values (an entry admits shapes, never a
    credential of this process), and so is base64 wrapped in lines (as ``base64`` and
    MIME write it): its runs joined."""
    runs = list(_runs(data))
    if live:  # every run, admitted or not, and base64 wrapped in lines, joined
        hit = _encoded_live_hit([*runs, *_wrapped(data, runs)], live)
        if hit is not None:
            return hit
    decoded = [
        (start, text, allowed.allows(run))
        for start, run in runs
        for text in _decodings(run)
    ]
    if not decoded:
        return None
    shapes = b"\n".join(t for _, t, admitted in decoded if not admitted)
    found = _scan(shapes, live, allowed, depth) is not None
    admitted_only = [t for _, t, admitted in decoded if admitted]
    if not found and live:  # each on its own: one text's bytes may not be text
        found = any(_live_hit(text, live, depth) is not None for text in admitted_only)
    if not found:
        return None
    for start, text, admitted in decoded:
        inner = _live_hit(text, live, depth) if admitted else _scan(text, live, allowed, depth)
        if inner is not None:
            return Hit(inner.what, start, _BASE64)
    return None  # a secret across two runs' texts is no secret of either


#: What stands between two lines of wrapped base64 (in a JSON string, escaped).
_LINE_BREAKS: Final = frozenset({b"\n", b"\r\n", b"\\n", b"\\r\\n"})


#: The rest of a JSON-escaped line break before a run that took its last "n".
_ESCAPED_BREAKS: Final = frozenset({b"\\", b"\\r\\"})
#: The last line of wrapped base64, shorter than a run, after its line break.
_LAST_LINE: Final = re.compile(rb"(?:\r?\n|\\r\\n|\\n)([A-Za-z0-9+/_\-]{1,%d}=*)" % (_MIN_RUN - 1))


def _wrapped(data: bytes, runs: list[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """Each chain of runs that only line breaks part (wrapped base64, its last line
    however short), as one run."""
    chain: list[bytes] = []
    chain_start = end = 0
    for start, run in runs:
        gap = data[end:start]
        if chain and gap in _ESCAPED_BREAKS and run.startswith(b"n"):
            chain.append(run[1:])  # "\n" in a JSON string: the run took its "n"
        elif chain and gap in _LINE_BREAKS:
            chain.append(run)
        else:
            yield from _chain(data, chain_start, chain, end)
            chain, chain_start = [run], start
        end = start + len(run)
    yield from _chain(data, chain_start, chain, end)


def _chain(data: bytes, start: int, chain: list[bytes], end: int) -> Iterator[tuple[int, bytes]]:
    last = _LAST_LINE.match(data, end)
    if last is not None:
        chain = [*chain, last.group(1)]
    if len(chain) > 1:
        yield start, b"".join(chain)


def _runs(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Each base64-looking run of ``data`` and where it starts, as
    ``_RUN.finditer(data)`` gives them (API ids left out). The starts are found in a
    translated window of the text (a run of 20 letters is one substring search there),
    each run's end by ``_RUN`` itself."""
    windows = _Windows(data, _MIN_RUN - 1, _RUN_MASK)
    cursor = 0
    while cursor < len(data):
        start, mask = windows.at(cursor)
        found = mask.find(_RUN_START, cursor - start)
        if found < 0:
            cursor = start + _WINDOW  # every start before it was in this window
            continue
        match = _RUN.match(data, start + found)
        assert match is not None  # it starts with _MIN_RUN letters
        run = match.group()
        if b"_" not in run or not _ID.fullmatch(run):
            yield match.start(), run
        cursor = match.end()


#: The text is lowered or translated this many bytes at a time: a copy of a window,
#: never of a whole large fixture.
_WINDOW: Final = 1 << 16


class _Windows:
    """``data`` lowered (or translated by ``table``) a window at a time; each window
    reaches ``overlap`` bytes past its end, so that a word of up to ``overlap + 1``
    bytes starting in it is seen whole."""

    def __init__(self, data: bytes, overlap: int = 64, table: bytes | None = None) -> None:
        self.data = data
        self.overlap = overlap
        self.table = table
        self._kept: tuple[int, bytes] | None = None
        self._first: tuple[int, bytes] | None = None

    def at(self, position: int) -> tuple[int, bytes]:
        """The window holding ``position``: where it starts, and its text."""
        for kept in (self._kept, self._first):
            if kept is not None and kept[0] <= position < kept[0] + _WINDOW:
                return kept
        piece = self.data[position : position + _WINDOW + self.overlap]
        window = (position, piece.lower() if self.table is None else piece.translate(self.table))
        self._kept = window
        if position == 0:
            self._first = window  # every pattern starts there: a small text is lowered once
        return window


def _matches_any_case(
    pattern: re.Pattern[bytes], literal: bytes, windows: _Windows
) -> Iterator[re.Match[bytes]]:
    """``pattern.finditer(data)`` for a pattern matched in any case whose every match
    begins with ``literal`` (lower-case): tried only where the lowered text has it."""
    data = windows.data
    cursor = 0
    while cursor < len(data):
        start, lowered = windows.at(cursor)
        found = lowered.find(literal, cursor - start)
        if found < 0:
            cursor = start + _WINDOW
            continue
        match = pattern.match(data, start + found)
        if match is None:
            cursor = start + found + 1
            continue
        yield match
        cursor = match.end()


def _decodings(run: bytes) -> Iterator[bytes]:
    """What ``run`` may encode. A word may be stuck in front of the encoding
    ("secret_" + base64): a short run is read from each of its first four letters; a
    long one (an image, a file) from its start, or, if padded to a length that is not a
    multiple of 4, from where the padding says the encoding starts."""
    letters = run.rstrip(b"=").translate(_URLSAFE)
    if len(letters) <= _SHIFTED_MAX:
        starts: Iterable[int] = range(4)
    else:
        starts = (len(run) % 4 if len(letters) != len(run) else 0,)
    for start in starts:
        body = letters[start:]
        if len(body) % 4 == 1:  # no encoding ends so: a stray last letter
            body = body[:-1]
        try:
            yield binascii.a2b_base64(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            continue


#: Delta fields whose pieces make up one streamed block's text.
_DELTA_FIELDS: Final = ("text", "partial_json", "thinking")
#: The fields of a Chat Completions chunk's ``delta`` that stream text in pieces (its
#: tool calls' ``function.arguments`` too).
_CHAT_DELTA_FIELDS: Final = ("content", "refusal", "reasoning_content", "reasoning")


def _block_key(value: Any) -> int | str:
    # Any JSON in a hand-edited file: a key as text.
    return value if type(value) is int else json.dumps(value, sort_keys=True)


def streamed_texts(value: Any) -> list[str]:
    """The text of every streamed content block, joined from its deltas.

    A stream sends a block in small pieces ("key sk-a", "nt-api03...") and no piece
    holds a whole key, so the byte scan alone would let a streamed key through. Every
    provider's stream is joined by its wire shape: Anthropic's ``content_block_delta``
    events, OpenAI's chat chunks (each choice's ``delta``) and Responses' typed
    ``*.delta`` events, Gemini's chunks (each candidate's parts continue the last's).
    """
    blocks: dict[tuple[Any, ...], list[str]] = {}
    stream = [0]

    def add(key: tuple[Any, ...], piece: Any) -> None:
        if isinstance(piece, str):
            blocks.setdefault((stream[0], *key), []).append(piece)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            kind = node.get("type")
            if kind in ("message_start", "response.created"):
                stream[0] += 1
            delta = node.get("delta")
            if kind == "content_block_delta" and isinstance(delta, dict):
                key = _block_key(node.get("index"))
                pieces = blocks.setdefault((stream[0], key), [])
                pieces.extend(delta[f] for f in _DELTA_FIELDS if isinstance(delta.get(f), str))
            elif isinstance(kind, str) and kind.endswith(".delta"):  # a Responses event
                parts = ("item_id", "output_index", "content_index", "summary_index")
                add((kind, *(_block_key(node.get(part)) for part in parts)), delta)
            if node.get("object") == "chat.completion.chunk":
                _chat_pieces(node, add)
            candidates = node.get("candidates")
            if isinstance(candidates, list):  # Gemini: a candidate's parts, chunk after chunk
                _gemini_pieces(candidates, add)
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return ["".join(pieces) for pieces in blocks.values() if pieces]


def _chat_pieces(chunk: dict[str, Any], add: Callable[[tuple[Any, ...], Any], None]) -> None:
    """A Chat Completions chunk's pieces: each choice's text fields, each tool call's
    arguments (a call is told by its ``index``; the chunk's ``id`` tells streams apart)."""
    choices = chunk.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        at = ("chat", _block_key(chunk.get("id")), _block_key(choice.get("index")))
        for field in _CHAT_DELTA_FIELDS:
            add((*at, field), delta.get(field))
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                add((*at, "tool", _block_key(call.get("index"))), function.get("arguments"))


def _gemini_pieces(candidates: list[Any], add: Callable[[tuple[Any, ...], Any], None]) -> None:
    for candidate in candidates:
        content = candidate.get("content") if isinstance(candidate, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                add(("candidate", _block_key(candidate.get("index", 0))), part.get("text"))


_PLAIN_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def locate(
    document: Any,
    root: str,
    live: Sequence[tuple[str, str]],
    allowed: AllowedSecrets = NOTHING_ALLOWED,
) -> tuple[str, Hit] | None:
    """The JSON path (``request.body.messages[0].content``) of the first string of
    ``document`` that holds a secret, with the hit; None if no single string does.
    Walked only after a hit (the common case never pays for it), without recursion: a
    fixture may be nested deeper than Python's stack."""

    def check(text: str) -> Hit | None:
        return find_hit(text.encode("utf-8", "surrogatepass"), live, allowed)

    pending: list[tuple[str, Any]] = [(root, document)]
    while pending:
        path, node = pending.pop()
        if isinstance(node, str):
            hit = check(node)
            if hit is not None:
                return path, hit
        elif isinstance(node, list):
            pending.extend(reversed([(f"{path}[{i}]", child) for i, child in enumerate(node)]))
        elif isinstance(node, dict):
            children = []
            for key, child in node.items():
                where = _step(path, str(key))
                hit = check(str(key))
                if hit is not None:
                    return f"{where} (the name)", hit
                if isinstance(child, str) and check(child) is None:
                    # A label and its value are two strings: "aws_secret_access_key": "...".
                    hit = check(json.dumps({str(key): child}, ensure_ascii=False))
                    if hit is not None:
                        return where, hit
                children.append((where, child))
            pending.extend(reversed(children))
    return None


def _step(path: str, key: str) -> str:
    if not _PLAIN_KEY.fullmatch(key):
        return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
    return f"{path}.{key}" if path else key
