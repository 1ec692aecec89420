"""Faults on demand: the spec (``"overloaded*2,cut_after:3@model:claude-haiku-*"``) and
the schedule that decides which attempt of which request gets which fault.

Pure: no clock, no I/O, no SDK. The answers themselves (status, headers, bodies, a
cut stream) are built in ``_engine.faults``; the seams ask a ``Schedule``.

The grammar, one item per fault, comma-separated::

    item   := NAME [":" ARG] ["*" COUNT] ("@" FILTER)*
    COUNT  := a whole number >= 1, or "always"   (default 1)
    FILTER := every:K | model:GLOB | text:TEXT | tool:NAME | chance:P | seed:N

``*N`` caps the faults one item gives each distinct request (its fixture key): the
SDK's retries of one request walk through the items in order, then get the recorded
answer. A preset name (``flaky``) stands for its items.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from ..errors import ConfigError

__all__ = [
    "ALWAYS",
    "FAULTS",
    "MAX_EVENTS",
    "MAX_SECONDS",
    "PRESETS",
    "Fault",
    "FaultKind",
    "Kind",
    "RequestFacts",
    "Schedule",
    "Spec",
    "facts_of",
    "parse_spec",
    "render_spec",
]

#: ``*always``: every attempt of the request gets the fault (an outage).
ALWAYS: Final = 0


class Kind(str, Enum):
    """How a fault reaches the client."""

    #: An error answer in the API's shape instead of the recorded one.
    API = "api"
    #: The transport library's own exception (no answer at all).
    TRANSPORT = "transport"
    #: The recorded stream, cut, broken by an error event, or slowed.
    STREAM = "stream"


@dataclass(frozen=True)
class FaultKind:
    """One fault name: what it does and what its argument means."""

    name: str
    kind: Kind
    #: "int" (a number of events), "seconds", or "" (no argument).
    arg: str
    #: The argument is required (a stream fault needs its N).
    arg_required: bool
    #: The argument when none is written (API errors: the retry-after given, if any).
    default: float | None
    summary: str
    #: For API errors: the status and the error type of the body.
    status: int = 0
    error_type: str = ""
    message: str = ""


def _api(
    name: str, status: int, error_type: str, message: str, *, retry_after: float | None = None
) -> FaultKind:
    summary = f"{status} {error_type}"
    return FaultKind(
        name, Kind.API, "seconds", False, retry_after, summary, status, error_type, message
    )


FAULTS: Final[Mapping[str, FaultKind]] = {
    f.name: f
    for f in (
        _api("overloaded", 529, "overloaded_error", "Overloaded"),
        _api(
            "rate_limit",
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            retry_after=1.0,
        ),
        _api("server_error", 500, "api_error", "Internal server error"),
        _api("timeout", 504, "timeout_error", "Request timed out"),
        _api("request_timeout", 408, "timeout_error", "Request timed out"),
        FaultKind(
            "reset", Kind.TRANSPORT, "", False, None, "the connection is reset before any answer"
        ),
        FaultKind("refused", Kind.TRANSPORT, "", False, None, "the connection is refused"),
        FaultKind(
            "empty",
            Kind.TRANSPORT,
            "",
            False,
            None,
            "the server closes the connection without a byte of answer",
        ),
        FaultKind(
            "read_timeout",
            Kind.TRANSPORT,
            "",
            False,
            None,
            "no answer until the client's read timeout runs out",
        ),
        FaultKind(
            "cut_after",
            Kind.STREAM,
            "int",
            True,
            None,
            "a stream stops after N events: the connection drops",
        ),
        FaultKind(
            "error_after",
            Kind.STREAM,
            "int",
            True,
            None,
            "an overloaded_error event after N events of a stream",
        ),
        FaultKind(
            "slow_first", Kind.STREAM, "seconds", True, None, "the answer starts after SECONDS"
        ),
        FaultKind(
            "delay", Kind.STREAM, "seconds", True, None, "SECONDS between the events of a stream"
        ),
    )
}

#: Names that stand for a spec: ``VCR_FAULTS=flaky``.
PRESETS: Final[Mapping[str, str]] = {
    "flaky": "overloaded*2",
    "rate_limited": "rate_limit*2",
    "outage": "overloaded*always",
    "dropped_stream": "cut_after:3",
    "hung": "read_timeout",
}

_FILTERS: Final = ("every", "model", "text", "tool", "chance", "seed")
_MAX_COUNT: Final = 1_000_000
#: The longest wait a spec may ask for (``slow_first``, ``delay``, a retry-after): a
#: day. Beyond it a date or a timer overflows, and no test means to wait that long.
MAX_SECONDS: Final = 86_400.0
#: The most events a stream fault may count (``cut_after:N``, ``error_after:N``).
MAX_EVENTS: Final = 1_000_000


@dataclass(frozen=True)
class Fault:
    """One item of a spec."""

    name: str
    arg: float | None = None
    #: Faults given to each distinct request at most (``ALWAYS``: no limit).
    count: int = 1
    every: int | None = None
    model: str | None = None
    text: str | None = None
    tool: str | None = None
    chance: float | None = None
    seed: int | None = None

    @property
    def kind(self) -> FaultKind:
        return FAULTS[self.name]

    @property
    def value(self) -> float | None:
        """The argument, or the fault's default (a rate limit's retry-after)."""
        return self.arg if self.arg is not None else self.kind.default


@dataclass(frozen=True)
class Spec:
    faults: tuple[Fault, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.faults)


@dataclass(frozen=True)
class RequestFacts:
    """What a schedule may look at in a request."""

    #: The request's fixture name: its retries share it.
    key: str
    stream: bool = False
    model: str = ""
    text: str = ""
    tools: tuple[str, ...] = ()


#: Where a path names its model and asks for a stream (Gemini's
#: ``/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse``): the body says
#: neither. Without ``alt=sse`` the chunks come as one JSON array, not a stream of events.
_PATH_MODEL: Final = re.compile(r"/models/([^/:?]+):")
_PATH_STREAM: Final = re.compile(r":stream[A-Z][^?]*\?(?:.*&)?alt=sse(?:&|$)")


def facts_of(key: str, body: bytes, target: str = "") -> RequestFacts:
    """The facts of a request with ``body`` (any body: one that is not a JSON object
    has no model, no tools, no stream flag) sent to ``target`` (its path and query)."""
    text = body.decode("utf-8", "replace")
    try:
        data: Any = json.loads(text) if text.strip() else None
    except ValueError:
        data = None
    path_model = _PATH_MODEL.search(target)
    path_stream = _PATH_STREAM.search(target) is not None
    if not isinstance(data, dict):
        return RequestFacts(
            key, stream=path_stream, model=path_model[1] if path_model else "", text=text
        )
    return RequestFacts(
        key,
        stream=data.get("stream") is True or path_stream,
        model=str(data.get("model") or (path_model[1] if path_model else "")),
        text=text,
        tools=tuple(_tool_names(data.get("tools"))),
    )


def _tool_names(tools: Any) -> Iterator[str]:
    """The names of the tools a request declares, in each provider's form: Anthropic's
    and OpenAI Responses' ``{"name"}``, Chat Completions' ``{"function": {"name"}}``,
    Gemini's ``{"functionDeclarations": [{"name"}]}``."""
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
        if "name" in tool:
            yield str(tool["name"])
        elif isinstance(function, dict) and "name" in function:
            yield str(function["name"])
        elif isinstance(declarations, list):
            yield from (str(d["name"]) for d in declarations if isinstance(d, dict) and "name" in d)


# -- parsing and rendering ---------------------------------------------------------------


class _Bad(Exception):
    """Internal: what is wrong with one item (the caller adds the whole value)."""


def parse_spec(text: str, source: str = "faults") -> Spec:
    """The spec written in ``text``; ``source`` names where it came from in an error
    (``VCR_FAULTS``, ``faults``). Empty or blank: no faults."""
    items: list[Fault] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item and not text.strip():
            continue
        try:
            if item in PRESETS:
                items.extend(parse_spec(PRESETS[item], source).faults)
                continue
            items.append(_parse_item(item))
        except _Bad as bad:
            raise ConfigError(
                f"{source}={text!r}: {bad}. A fault spec is a comma-separated list of "
                "NAME, NAME:ARG, NAME*N or NAME@FILTER (see "
                "https://vcr-kit.github.io/vcr_kit/faults/)."
            ) from None
    return Spec(tuple(items))


def _parse_item(item: str) -> Fault:
    if not item:
        raise _Bad("an empty item (two commas in a row, or one at an end)")
    head, *filters = item.split("@")
    head, star, count_text = head.partition("*")
    name, colon, arg_text = head.partition(":")
    name = name.strip()
    kind = FAULTS.get(name)
    if kind is None:
        raise _Bad(
            f"unknown fault {name!r}; the faults are {', '.join(FAULTS)}, "
            f"the presets {', '.join(PRESETS)}"
        )
    arg = _arg(kind, arg_text.strip()) if colon else None
    if arg is None and kind.arg_required:
        unit = "N (events)" if kind.arg == "int" else "SECONDS"
        raise _Bad(f"{name} needs its {unit}: write {name}:{'3' if kind.arg == 'int' else '2.5'}")
    count = _count(name, count_text.strip()) if star else 1
    found: dict[str, Any] = {}
    for raw in filters:
        key, colon, value = raw.partition(":")
        key, value = key.strip(), value.strip()  # "overloaded @model: x" reads as written
        if key not in _FILTERS or not colon or not value:
            raise _Bad(
                f"{'@' + raw!r} is not a filter; the filters are "
                + ", ".join(f"@{f}:..." for f in _FILTERS)
            )
        if key in found:
            raise _Bad(f"@{key} given twice in {item!r}")
        found[key] = _filter_value(key, value)
    if "seed" in found and "chance" not in found:
        raise _Bad(f"@seed needs @chance in {item!r}")
    return Fault(name, arg, count, **found)


def _whole(text: str) -> bool:
    """``text`` is written in ASCII digits (``str.isdigit`` takes "²" and "٣" too)."""
    return text.isascii() and text.isdigit()


def _number(text: str) -> float:
    """The number written in ``text``; NaN when it is none (NaN fails every bound)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def _arg(kind: FaultKind, text: str) -> float:
    if kind.arg == "":
        raise _Bad(f"{kind.name} takes no argument")
    if kind.arg == "int":
        if not _whole(text) or int(text) > MAX_EVENTS:
            raise _Bad(f"{kind.name}:{text}: N is a whole number of events from 0 to {MAX_EVENTS}")
        return int(text)
    value = _number(text)
    if not 0 <= value <= MAX_SECONDS:  # NaN and the infinities fail too
        raise _Bad(f"{kind.name}:{text}: SECONDS is a number from 0 to {MAX_SECONDS:g} (a day)")
    return value


def _count(name: str, text: str) -> int:
    if text == "always":
        return ALWAYS
    if not _whole(text) or not 1 <= int(text) <= _MAX_COUNT:
        raise _Bad(f"{name}*{text}: N is a whole number from 1 to {_MAX_COUNT}, or 'always'")
    return int(text)


def _filter_value(key: str, text: str) -> Any:
    if key == "every":
        if not _whole(text) or not 1 <= int(text) <= _MAX_COUNT:
            raise _Bad(f"@every:{text} needs a whole number from 1 to {_MAX_COUNT}")
        return int(text)
    if key == "seed":
        if not _whole(text) or len(text) > 20:
            raise _Bad(f"@seed:{text} needs a whole number of at most 20 digits")
        return int(text)
    if key == "chance":
        value = _number(text)
        if not 0 < value <= 1:  # NaN fails too
            raise _Bad(f"@chance:{text} needs a probability above 0, at most 1")
        return value
    return text


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def render_spec(spec: Spec) -> str:
    """The text of ``spec``, which ``parse_spec`` reads back to it."""
    return ",".join(_render(fault) for fault in spec.faults)


def _render(fault: Fault) -> str:
    text = fault.name
    if fault.arg is not None:
        text += ":" + _show(fault.arg)
    if fault.count != 1:
        text += "*" + ("always" if fault.count == ALWAYS else str(fault.count))
    for key in _FILTERS:
        value = getattr(fault, key)
        if value is not None:
            text += f"@{key}:" + (_show(value) if isinstance(value, float) else str(value))
    return text


# -- the schedule ------------------------------------------------------------------------


@dataclass
class Schedule:
    """Which attempt gets which fault: one per spec in force (a test, a block, a run).

    Thread-safe: concurrent requests of a test, or of a proxy's clients, share it.
    """

    spec: Spec
    _given: dict[tuple[int, str], int] = field(default_factory=dict)
    _matched: dict[int, int] = field(default_factory=dict)
    _attempts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_fault(self, facts: RequestFacts) -> Fault | None:
        """The fault for this attempt of the request, or None: the recorded answer."""
        with self._lock:
            attempt = self._attempts.get(facts.key, 0)
            self._attempts[facts.key] = attempt + 1
            for index, fault in enumerate(self.spec.faults):
                if not _matches(fault, facts):
                    continue
                seen = self._matched.get(index, 0) + 1
                self._matched[index] = seen
                given = self._given.get((index, facts.key), 0)
                if fault.count != ALWAYS and given >= fault.count:
                    continue
                if fault.every is not None and seen % fault.every:
                    continue
                if fault.chance is not None and _draw(fault, facts.key, attempt) >= fault.chance:
                    continue
                self._given[(index, facts.key)] = given + 1
                return fault
            return None


def _matches(fault: Fault, facts: RequestFacts) -> bool:
    if fault.kind.kind is Kind.STREAM and fault.name != "slow_first" and not facts.stream:
        return False  # a stream fault needs a stream; slow_first slows any answer
    if fault.model is not None and not fnmatch.fnmatchcase(facts.model, fault.model):
        return False
    if fault.text is not None and fault.text not in facts.text:
        return False
    return fault.tool is None or fault.tool in facts.tools


def _draw(fault: Fault, key: str, attempt: int) -> float:
    """A number in [0, 1) fixed by the seed, the request and the attempt: the same run
    draws the same faults, whatever order concurrent requests arrive in."""
    digest = hashlib.sha256(f"{fault.seed or 0}:{key}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
