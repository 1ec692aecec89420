"""The kinds of fixture, one class each: what a kind's fixture must hold to replay as it
was recorded (``check``) and the name today's rules give its request (``rekey``).

A new kind is a new class here and one entry in ``KINDS``; nothing else branches on a
kind's name. Its codec (how a live result becomes a stored answer and back) lives
in the engine: the HTTP codec (``_engine.http_codec``) for ``http``, a ``Recording``
subclass for each cassette kind. Pure: no disk, no SDK import, nothing but walking
values, so ``check`` can run over thousands of files and replay can afford it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, TypeGuard

from .fixture_names import cassette_name, fixture_name, http_name, token_count_name
from .providers import provider_named
from .storable import answer_refusal, error_refusal, stream_refusal

__all__ = ["KINDS", "CannotRekey", "FixtureKind", "check_usage", "sdk_stream_refusal"]

_HTTP_BODIES: Final = ("body", "events", "frames", "jsonl", "text", "base64")
_MAX_TOKENS: Final = 10**12
#: Ends each finding about an answer that is never stored (see ``storable``).
_NEVER_STORED: Final = "; such an answer is never stored (delete it and record again)"
_MAX_MODEL_ID: Final = 256
_EVENT_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_HTTP_NAME: Final = re.compile(r"[a-z0-9-]+-[0-9a-f]{12}\.json")
_SDK_TAG: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|anthropic(\.[A-Za-z_][A-Za-z0-9_]*)+")


class CannotRekey(ValueError):
    """The stored request does not say enough to name the fixture."""


class FixtureKind:
    """One kind of fixture. ``check`` appends a line per problem to ``found``; with
    ``replay``, only what replay itself reads is checked (the answer; the stored
    request and the name's form are for ``check`` and a miss's diff)."""

    name: ClassVar[str]

    def check(self, request: Any, response: Any, name: str, replay: bool, found: list[str]) -> None:
        """Every reason why this fixture (the file ``name``) would not replay."""
        self.check_exchange(request, response, "" if replay else name, found)

    def check_exchange(self, request: Any, response: Any, name: str, found: list[str]) -> None:
        """``check`` for a kind whose checks take the name only outside replay ("" there)."""

    def rekey(self, request: Any, name: str) -> str:
        """The fixture name of ``request`` (already dehydrated with today's rules); raises
        ``CannotRekey``, ``KeyError`` or ``TypeError`` if the request cannot say."""
        raise NotImplementedError


def _is_int(value: Any) -> TypeGuard[int]:
    return type(value) is int  # bool is an int subclass, and never a status or version


def _status_in(
    status: Any, span: tuple[int, int], where: str, what: str, found: list[str]
) -> TypeGuard[int]:
    """Whether ``status`` is a whole number within ``span``; if not, that is a finding
    about the field ``where``."""
    low, high = span
    if _is_int(status) and low <= status <= high:
        return True
    found.append(f"{where}: {status!r} is not {what} ({low}-{high})")
    return False


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def check_usage(usage: Any, found: list[str]) -> None:
    if not isinstance(usage, list):
        found.append(f"usage: {_type_name(usage)}, not a list")
        return
    for i, entry in enumerate(usage):
        where = f"usage[{i}]"
        if not isinstance(entry, dict):
            found.append(f"{where}: {_type_name(entry)}, not an object")
        elif not isinstance(entry.get("model"), str):
            found.append(f"{where}.model: missing or not a string")
        elif len(entry["model"]) > _MAX_MODEL_ID:  # no model id is this long: a damaged file
            found.append(f"{where}.model: {len(entry['model'])} characters, not a model id")
        elif not isinstance(entry.get("usage"), dict):
            found.append(f"{where}.usage: missing or not an object")
        else:
            _check_token_counts(entry["usage"], f"{where}.usage", found)


def _check_token_counts(usage: Mapping[str, Any], where: str, found: list[str]) -> None:
    # Cost tracking adds these up on every replay: a string there would fail in the
    # middle of the caller's test instead of naming the file.
    for key, value in usage.items():
        if isinstance(value, dict):
            _check_token_counts(value, f"{where}.{key}", found)
        elif key.endswith("_tokens") and value is not None:
            if not _is_int(value):
                found.append(f"{where}.{key}: {_type_name(value)}, not a token count")
            elif not 0 <= value <= _MAX_TOKENS:  # cost is a float: 10**400 would overflow
                found.append(f"{where}.{key}: {value} is not a token count")


#: A method that streams by its name (Gemini's ``:streamGenerateContent``), not its body.
_STREAM_METHOD: Final = re.compile(r":stream[A-Z][A-Za-z]*$")


def _asks_for_stream(request: Any) -> bool:
    if not isinstance(request, dict):
        return False
    body = request.get("body")
    if isinstance(body, dict) and body.get("stream") is True:
        return True
    path = request.get("path")
    if not (isinstance(path, str) and _STREAM_METHOD.search(path) is not None):
        return False
    return not _streams_as_array(request)


def _streams_as_array(request: Any) -> bool:
    """Gemini streams SSE only when asked with ``alt=sse``; without it, its chunks come
    as one JSON array (the only list a body may be)."""
    path = request.get("path") if isinstance(request, dict) else None
    return (
        isinstance(path, str)
        and _STREAM_METHOD.search(path) is not None
        and request.get("provider") == "gemini"
        and ["alt", "sse"] not in (request.get("query") or [])
    )


def _check_http(request: Any, response: Any, name: str, found: list[str]) -> None:
    if name and not _HTTP_NAME.fullmatch(name):
        found.append("kind: an 'http' fixture must be named <method>-<path>-<12 hex>.json")
    if not name:  # replay: ``request`` is the live one, which was just keyed
        pass
    elif not isinstance(request, dict):
        found.append(f"request: {_type_name(request)}, not an object")
    else:
        if not isinstance(request.get("method"), str):
            found.append("request.method: missing or not a string")
        path = request.get("path")
        if not (isinstance(path, str) and path.startswith("/")):
            found.append("request.path: missing or not a path starting with '/'")
    if not isinstance(response, dict):
        found.append(f"response: {_type_name(response)}, not an object with a status")
        return
    status = response.get("status")
    if _status_in(status, (100, 599), "response.status", "an HTTP status", found):
        refusal = answer_refusal(response, request)
        if refusal is not None:
            found.append(f"{refusal.field}: {refusal.reason}{_NEVER_STORED}")
    bodies = [key for key in _HTTP_BODIES if key in response]
    if len(bodies) != 1:
        what = "none" if not bodies else ", ".join(bodies)
        found.append(f"response: exactly one of {', '.join(_HTTP_BODIES)} is needed ({what})")
    headers = response.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        found.append("response.headers: not an object of strings")
        headers = {}
    content_type = str(headers.get("content-type", ""))
    if "events" in response:
        # Another provider's events may have no name (OpenAI's chat chunks, Gemini's).
        named = not (isinstance(request, dict) and provider_named(request.get("provider")))
        _check_events(response["events"], found, named=named)
        if not _asks_for_stream(request):
            found.append(
                'response.events: an SSE answer to a request without "stream": true '
                "(the SDK would parse it as JSON)"
            )
        if content_type and not content_type.startswith("text/event-stream"):
            found.append(f"response.headers.content-type: {content_type!r} for an SSE answer")
    elif "frames" in response:
        _check_frames(response["frames"], found)
    elif _asks_for_stream(request) and _is_int(status) and 200 <= status < 300:
        found.append("response.events: missing: the request asked for a stream")
    if "body" in response and "json" not in content_type and content_type:
        found.append(f"response.headers.content-type: {content_type!r} for a JSON body")
    _check_plain_bodies(response, status, found, chunks=_streams_as_array(request))


def _check_plain_bodies(
    response: dict[str, Any], status: Any, found: list[str], *, chunks: bool = False
) -> None:
    """The non-stream answers: a JSON body (with ``chunks``, a list of objects: Gemini's
    stream without ``alt=sse``), JSON Lines, text, bytes."""
    if "jsonl" in response:
        lines = response["jsonl"]
        if not isinstance(lines, list) or not all(isinstance(x, dict) for x in lines):
            found.append("response.jsonl: not a list of objects")
    body = response.get("body", {})
    # The API answers every endpoint with an object; an empty answer (204) is stored as
    # null. A scalar or a list would be parsed by the SDK into a wrong, silent value.
    if chunks and isinstance(body, list) and all(isinstance(x, dict) for x in body):
        pass
    elif not isinstance(body, dict) and not (body is None and status != 200):
        found.append(f"response.body: {_type_name(body)}, not an object")
    if "text" in response and not isinstance(response["text"], str):
        found.append(f"response.text: {_type_name(response['text'])}, not a string")
    if "base64" in response:
        try:
            base64.b64decode(str(response["base64"]).encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            found.append("response.base64: not base64")


def _check_frames(frames: Any, found: list[str]) -> None:
    """An AWS event stream (Bedrock): each frame has its headers and one payload."""
    if not isinstance(frames, list):
        found.append(f"response.frames: {_type_name(frames)}, not a list")
        return
    for i, frame in enumerate(frames):
        if not isinstance(frame, dict) or not isinstance(frame.get("headers"), dict):
            found.append(f"response.frames[{i}]: not an object with headers")
        elif sum(key in frame for key in ("chunk", "body", "text")) != 1:
            found.append(f"response.frames[{i}]: exactly one of chunk, body, text is needed")


def _check_events(events: Any, found: list[str], *, named: bool = True) -> None:
    if not isinstance(events, list):
        found.append(f"response.events: {_type_name(events)}, not a list")
        return
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            found.append(f"response.events[{i}]: {_type_name(event)}, not an object")
        elif "data" not in event and "data_text" not in event:
            found.append(f"response.events[{i}]: no 'data'")
        elif any(not isinstance(event.get(k, ""), str) for k in ("event", "id", "retry")):
            found.append(f"response.events[{i}]: event, id and retry must be strings")
        elif "event" not in event:  # the SDK silently drops an event without a name
            if named:
                found.append(f"response.events[{i}].event: missing")
        elif not _EVENT_NAME.fullmatch(event["event"]):  # ...and one it does not know
            found.append(f"response.events[{i}].event: not an SSE event name")
        elif "data" in event and not isinstance(event["data"], dict):
            found.append(f"response.events[{i}].data: {_type_name(event['data'])}, not an object")
        elif "data_text" in event and not isinstance(event["data_text"], str):
            found.append(f"response.events[{i}].data_text: not a string")


def _check_messages(request: Any, found: list[str]) -> None:
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list):
        found.append("request.messages: missing or not a list")


def _check_tagged(value: Any, where: str, found: list[str]) -> None:
    """SDK objects (``$sdk``) and API errors (``$error``) anywhere inside ``value``."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_tagged(item, f"{where}[{i}]", found)
    elif isinstance(value, dict):
        if "$sdk" in value:
            tag = value["$sdk"]
            if not (isinstance(tag, str) and _SDK_TAG.fullmatch(tag)):
                found.append(f"{where}.$sdk: {tag!r} is not an anthropic class name")
            if not isinstance(value.get("data"), dict):
                found.append(f"{where}.data: missing or not an object")
        elif "$error" in value:
            _check_error(value["$error"], f"{where}.$error", found)
        else:
            for key, item in value.items():
                _check_tagged(item, f"{where}.{key}", found)


def _check_error(error: Any, where: str, found: list[str]) -> None:
    if not isinstance(error, dict):
        found.append(f"{where}: {_type_name(error)}, not an object")
        return
    status = error.get("status")
    # 200: an SSE error event, which the SDK raises with the stream's own status.
    if status == 200 or _status_in(status, (400, 599), f"{where}.status", "an error status", found):
        refused = error_refusal(status, error.get("body"))
        if refused is not None:
            found.append(f"{where}.status: {refused}{_NEVER_STORED}")
    for key in ("class", "message", "request_id", "method", "path"):
        if error.get(key) is not None and not isinstance(error[key], str):
            found.append(f"{where}.{key}: {_type_name(error[key])}, not a string")


def _check_stream(response: Any, found: list[str]) -> None:
    if isinstance(response, dict) and "$error" in response:  # the stream failed to open
        _check_error(response["$error"], "response.$error", found)
        return
    if not isinstance(response, list):
        found.append(f"response: {_type_name(response)}, not a list of events")
        return
    before = len(found)
    for i, event in enumerate(response):
        if not (isinstance(event, dict) and "$sdk" in event):
            found.append(f'response[{i}]: not an SDK event ({{"$sdk": ..., "data": ...}})')
        else:
            _check_tagged(event, f"response[{i}]", found)
    refused = sdk_stream_refusal(response) if len(found) == before else None
    if refused is not None:
        found.append(f"response: {refused}{_NEVER_STORED}")


def sdk_stream_refusal(events: list[Any]) -> str | None:
    """``storable.stream_refusal`` for a stream of SDK events as a cassette stores them
    (``{"$sdk": ..., "data": {"type": ...}}``), where an event's name is its type; None
    for a list that holds anything else (the stream kind's check refuses it)."""
    named: list[tuple[Any, dict[str, Any]]] = []
    for event in events:
        data = event.get("data") if isinstance(event, dict) and "$sdk" in event else None
        if not isinstance(data, dict):
            return None
        named.append((data.get("type"), data))
    return stream_refusal(named)


def _check_token_count(request: Any, response: Any, name: str, found: list[str]) -> None:
    if name and not name.startswith("token-count-"):
        found.append("kind: a 'token_count' fixture must be named token-count-<12 hex>.json")
    if name and not (isinstance(request, dict) and "messages" in request):
        found.append("request.messages: missing")
    if response is None:  # the original's withTokenCountVCR: a number, or null
        return
    if _is_int(response):
        if not 0 <= response <= _MAX_TOKENS:
            found.append(f"response: {response} is not a token count")
    elif not (isinstance(response, dict) and ("$sdk" in response or "$error" in response)):
        found.append(f"response: {_type_name(response)}, not a token count or an API error")
    else:
        _check_tagged(response, "response", found)


class HttpKind(FixtureKind):
    """One HTTP exchange, as the transparent client and the proxy record it."""

    name = "http"
    check_exchange = staticmethod(_check_http)

    def rekey(self, request: Any, name: str) -> str:
        if not isinstance(request, dict):
            raise CannotRekey("request: not an object")
        return http_name(str(request["method"]), str(request["path"]), request)


class MessageKind(FixtureKind):
    """``cassette(messages)``: SDK objects or an API error, for a conversation."""

    name = "message"
    #: Tells the kinds apart that share the conversation naming scheme.
    suffix: ClassVar[str] = ""
    misnamed: ClassVar[str] = "kind: a 'message' fixture under a stream name (*-stream.json)"

    def check(self, request: Any, response: Any, name: str, replay: bool, found: list[str]) -> None:
        self.check_response(response, found)
        if name.endswith("-stream.json") != bool(self.suffix):
            found.append(self.misnamed)
        if not replay:
            _check_messages(request, found)

    def check_response(self, response: Any, found: list[str]) -> None:
        _check_tagged(response, "response", found)

    def rekey(self, request: Any, name: str) -> str:
        # The stored messages are {"role", "content"}: the content is what is hashed.
        return cassette_name(request["messages"], self.suffix)


class StreamKind(MessageKind):
    """``streaming_cassette(messages)``: the events of a stream, in order."""

    name = "stream"
    suffix = "-stream"
    misnamed = "kind: a 'stream' fixture under a name without '-stream'"

    def check_response(self, response: Any, found: list[str]) -> None:
        _check_stream(response, found)


class TokenCountKind(FixtureKind):
    """``token_count_cassette(messages, tools)``: a ``MessageTokensCount``, a plain number
    (or null, as the original's ``withTokenCountVCR`` returns), or an API error."""

    name = "token_count"
    check_exchange = staticmethod(_check_token_count)

    def rekey(self, request: Any, name: str) -> str:
        return token_count_name(request["messages"], request.get("tools", []))


class GenericKind(FixtureKind):
    """``fixture(input, name)``: any JSON value, handed back as it is."""

    name = "generic"

    def rekey(self, request: Any, name: str) -> str:
        prefix, dash, digest = name.removesuffix(".json").rpartition("-")
        if not dash or len(digest) != 12:
            raise CannotRekey("a generic fixture's name must end in -<12 hex>")
        return fixture_name(request, prefix)


#: Every kind, by the name stored in a fixture's ``kind`` field.
KINDS: Final[Mapping[str, FixtureKind]] = {
    kind.name: kind
    for kind in (HttpKind(), MessageKind(), StreamKind(), TokenCountKind(), GenericKind())
}
