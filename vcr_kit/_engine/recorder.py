"""Record and replay at the HTTP layer: every endpoint, streaming included.

One request becomes one fixture, named by method, path and the whole dehydrated
JSON body (plus the ``anthropic-beta`` header, which changes what the API does);
headers that vary by machine or SDK version are not part of the key, and the
credentials are never stored. A JSON answer is stored parsed; an SSE answer as
the list of its events, one object each; both are rebuilt into bytes on replay
and parsed by the SDK itself, so replay goes through exactly the code a live
answer goes through.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._core.config import Mode, Settings, load_settings
from .._core.httplib import library_of
from .._core.ids import give_ids_text, live_ids_in, quoted_tokens, stabilizer
from .._core.keys import http_name
from .._ledger import journal as _journal
from .._ledger.cost import add_usage, usage_entries
from .._seams.sdk_patch import REPLAY_API_KEY, deliver
from .._store.files import (
    Document,
    Outcome,
    afetch,
    fetch,
    keyless_missing_message,
    near_miss_hint,
    unreadable,
)
from ..dehydrate import dehydrate_json, hydrate_json, json_text_may_change, placeholders
from ..errors import ConfigError, FixtureCorruptError, FixtureMissingError, VCRError
from .sdk_codec import RECORDED_REQUEST_ID, fresh_request_id, is_transient

if TYPE_CHECKING:  # at run time a request may be httpx2's or httpx's (anthropic 0.x): same API
    import httpx2

#: Response headers worth keeping; every other one is volatile or re-derived.
_KEPT_HEADERS: Final = ("content-type", "request-id")
#: Request headers that change what the API answers (and so belong in the key).
_KEYED_HEADERS: Final = ("anthropic-beta",)
_SSE: Final = "text/event-stream"
#: SSE ``error`` events of these types are transient, like a 529 before the stream.
_TRANSIENT_ERROR_TYPES: Final = frozenset({"overloaded_error", "api_error", "rate_limit_error"})

LiveSend = Callable[["httpx2.Request"], "httpx2.Response"]
AsyncLiveSend = Callable[["httpx2.Request"], Awaitable["httpx2.Response"]]

#: Set while vcr_kit itself calls the API (recording, passing through), so that the
#: transport seam lets that call reach the network instead of recording it twice.
_live_call: ContextVar[bool] = ContextVar("vcr_kit_live_call", default=False)
#: How many live calls vcr_kit is making right now, in any thread: the connection
#: guard lets their host look-ups through (asyncio resolves names in a thread pool,
#: where the context variable above is not visible).
_live_calls_in_flight = [0]
_in_flight_lock = threading.Lock()


def in_live_call() -> bool:
    return _live_call.get()


def live_calls_in_flight() -> int:
    return _live_calls_in_flight[0]


@contextmanager
def live_call() -> Iterator[None]:
    """Mark the block as vcr_kit's own call to the API."""
    token = _live_call.set(True)
    with _in_flight_lock:
        _live_calls_in_flight[0] += 1
    try:
        yield
    finally:
        with _in_flight_lock:
            _live_calls_in_flight[0] -= 1
        _live_call.reset(token)


class _Declined(Exception):
    """Internal: the live answer must reach the caller but not the disk."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response


class _NotFinite(Exception):
    """Internal: the body holds NaN or an infinity (parsed the slow way instead)."""


def _refuse_constant(name: str) -> Any:
    raise _NotFinite(name)


def request_key(request: httpx2.Request) -> tuple[str, dict[str, Any]]:
    """The fixture name and the stored (dehydrated) form of ``request``."""
    body_bytes = request.content
    body: Any
    finite = True
    if not body_bytes:
        body = None
    else:
        try:
            text = quoted_tokens(body_bytes.decode("utf-8"))
            try:  # NaN refused here: the key's canonical JSON can then skip looking for it
                body = json.loads(text, parse_constant=_refuse_constant)
            except _NotFinite:
                finite = False
                body = json.loads(text)
            if isinstance(body, dict) and "metadata" in body:
                # user and session ids (Claude Code sends a random session per run): noise
                # to the answer, so neither keyed nor stored.
                body = {k: v for k, v in body.items() if k != "metadata"}
            if json_text_may_change(text):  # most requests: one scan, no walk
                body = dehydrate_json(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            # Not JSON (a file upload): key on the bytes, store only their hash.
            import hashlib

            body = {"sha1": hashlib.sha1(body_bytes, usedforsecurity=False).hexdigest()}
    path = quoted_tokens(request.url.path)  # GET /v1/messages/batches/<id>
    stored: dict[str, Any] = {"method": request.method, "path": path, "body": body}
    if request.url.query:  # parsed only when there is one (a GET with a limit, say)
        stored["query"] = sorted(request.url.params.multi_items())
    for header in _KEYED_HEADERS:
        if header in request.headers:
            stored[header] = request.headers[header]
    return http_name(request.method, path, stored, finite=finite), stored


def with_live_ids(request: httpx2.Request) -> httpx2.Request:
    """``request`` as the API must receive it: ids vcr_kit gave out (fresh on replay,
    stored tool ids) replaced by the live ids they stand for, in the path and body."""
    path = request.url.path
    live_path = live_ids_in(path)
    body = request.content
    live_body = body
    if body:
        with contextlib.suppress(UnicodeDecodeError):  # an upload: no ids to translate
            live_body = live_ids_in(body.decode("utf-8")).encode("utf-8")
    if live_path == path and live_body == body:
        return request
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
    rewritten: httpx2.Request = library_of(request).Request(
        request.method,
        request.url.copy_with(path=live_path),
        headers=headers,
        content=live_body,
        extensions=request.extensions,
    )
    return rewritten


def credentials_in(request: httpx2.Request) -> list[tuple[str, str]]:
    """The secrets this request carries, so a write can be refused if they leak."""
    found = []
    for header in ("x-api-key", "authorization", "api-key", "cookie"):
        value = request.headers.get(header)
        if value:
            found.append((f"the {header} header", value.removeprefix("Bearer ").strip()))
    return found


# -- responses: live -> stored -> rebuilt -----------------------------------------------


def parse_sse(text: str) -> list[dict[str, Any]]:
    """SSE text as ``[{"event": name, "data": json}, ...]``, in order, nothing dropped."""
    events: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event: dict[str, Any] = {}
        data_lines = []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "data":
                data_lines.append(value)
            elif field in ("event", "id", "retry"):
                event[field] = value
        if not event and not data_lines:
            continue
        data = "\n".join(data_lines)
        try:
            event["data"] = json.loads(data)
        except json.JSONDecodeError:
            event["data_text"] = data
        events.append(event)
    return events


def render_sse(events: list[dict[str, Any]]) -> str:
    parts = []
    for event in events:
        lines = [f"{field}: {event[field]}" for field in ("event", "id", "retry") if field in event]
        if "data" in event:
            data = json.dumps(event["data"], separators=(",", ":"), ensure_ascii=False)
        else:
            data = str(event.get("data_text", ""))
        lines.extend(f"data: {line}" for line in data.split("\n"))
        parts.append("\n".join(lines) + "\n\n")
    return "".join(parts)


def _stream_failed(events: list[dict[str, Any]]) -> bool:
    for event in events:
        data = event.get("data")
        if event.get("event") == "error" and isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict) and error.get("type") in _TRANSIENT_ERROR_TYPES:
                return True
    return False


def store_response(response: httpx2.Response, seed: str) -> dict[str, Any] | None:
    """The stored form of a live response (already read), or None if it is transient."""
    return store_response_with_ids(response, seed)[0]


def store_response_with_ids(
    response: httpx2.Response, seed: str
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """``store_response``, and the map from each stored id to the live one it replaced
    (the ids the caller gets while recording)."""
    if is_transient(response.status_code):
        return None, {}
    content_type = response.headers.get("content-type", "")
    stored: dict[str, Any] = {"status": response.status_code}
    stabilize, stored_to_live = stabilizer(seed)
    if content_type.startswith(_SSE):
        events = parse_sse(response.text)
        if _stream_failed(events):
            return None, {}
        stored["events"] = stabilize(events)
    elif "json" in content_type:
        stored["body"] = stabilize(json.loads(response.content or b"null"))
    elif (lines := _json_lines(response.content)) is not None:
        # Batch results: one JSON object per line. Kept as objects, so the ids in them
        # are stabilized like any answer's, and a review diff is readable.
        stored["jsonl"] = stabilize(lines)
    else:
        try:
            stored["text"] = response.content.decode("utf-8")
        except UnicodeDecodeError:
            stored["base64"] = base64.b64encode(response.content).decode("ascii")
    headers = {h: response.headers[h] for h in _KEPT_HEADERS if h in response.headers}
    if response.is_success and "request-id" in headers:
        # A success's request id differs on every call; an error's is what you would
        # quote to Anthropic, and the caller's exception carries it: keep that one.
        headers["request-id"] = RECORDED_REQUEST_ID
    stored["headers"] = headers
    dehydrated: dict[str, Any] = dehydrate_json(stored)
    return dehydrated, stored_to_live


def _json_lines(content: bytes) -> list[Any] | None:
    """The objects of a JSON Lines body, or None if it is anything else."""
    try:
        lines = [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return lines if lines and all(isinstance(line, dict) for line in lines) else None


def _render(stored: dict[str, Any]) -> str | bytes:
    if "events" in stored:
        return render_sse(stored["events"])
    if "jsonl" in stored:
        return "".join(
            json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"
            for line in stored["jsonl"]
        )
    if "body" in stored:
        return json.dumps(stored["body"], separators=(",", ":"), ensure_ascii=False)
    if "base64" in stored:
        return base64.b64decode(stored["base64"])
    return str(stored.get("text", ""))


def rebuild_response(
    stored: dict[str, Any],
    request: httpx2.Request,
    *,
    fixture_stem: str = "",
    live_ids: dict[str, str] | None = None,
) -> httpx2.Response:
    """A fresh response (of the request's own library) for a stored one: hydrated,
    with the ids the caller gets (see ``_ids``); ``live_ids`` (stored -> live id) when
    the answer was just recorded, so that later recordings can quote the live ones.

    Works on the serialized text: one ``json.dumps``, a substring check for
    placeholders (most answers have none), one regex for the ids.
    """
    content = _render(stored)
    if isinstance(content, str) and any(token in content for token in placeholders()):
        content = _render(hydrate_json(stored))
    if isinstance(content, str):
        content = give_ids_text(content, fixture_stem, live_ids).encode("utf-8")
    headers = dict(stored.get("headers") or {})
    if headers.get("request-id") == RECORDED_REQUEST_ID:
        headers["request-id"] = fresh_request_id()
    response: httpx2.Response = library_of(request).Response(
        int(stored["status"]), headers=headers, content=content, request=request
    )
    return response


def _usage(stored: dict[str, Any]) -> list[dict[str, Any]]:
    if "events" in stored:
        return usage_entries([e.get("data") for e in stored["events"]])
    if "jsonl" in stored:  # batch results: each succeeded request's message, at batch rates
        messages = [
            line["result"].get("message")
            for line in stored["jsonl"]
            if isinstance(line, dict) and isinstance(line.get("result"), dict)
        ]
        return [{**entry, "batch": True} for entry in usage_entries(messages)]
    return usage_entries(stored.get("body"))


class HttpRecorder:
    """Record/replay of single HTTP exchanges; ``live`` performs the real request."""

    def __init__(
        self,
        *,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
        can_record: bool = True,
    ) -> None:
        self.settings: Settings = load_settings(mode=mode, fixtures_dir=fixtures_dir)
        #: False when the client was given no real key: a miss then explains that.
        self.can_record = can_record

    def _prepare(self, request: httpx2.Request) -> tuple[Path, dict[str, Any], Callable[[], Any]]:
        name, stored_request = request_key(request)
        path = self.settings.fixtures_dir / name
        return path, stored_request, lambda: credentials_in(request)

    def _document(
        self, response: httpx2.Response, path: Path, stored_request: Any, ids: dict[str, str]
    ) -> Document:
        stored, stored_to_live = store_response_with_ids(response, seed=path.name)
        if stored is None:
            raise _Declined(response)
        ids.update(stored_to_live)
        return {
            "kind": "http",
            "request": stored_request,
            "response": stored,
            "usage": _usage(stored),
        }

    def _check_can_record(self, path: Path, request: httpx2.Request, stored: Any) -> None:
        if self.can_record and not _uses_stand_in_key(request):
            return
        if self.settings.mode is Mode.RECORD and path.is_file():
            # Not "missing": the file is there, record mode just never replays it.
            raise ConfigError(
                f"Recording {path} needs an API key: mode record calls the API for every "
                "request, even one already recorded. Set ANTHROPIC_API_KEY (in the "
                "environment or in .env), or use mode auto (unset VCR_MODE=record) to "
                "replay the recorded fixture.",
                path,
            )
        hint = near_miss_hint(path, stored)  # a local miss shows its diff, key or no key
        raise FixtureMissingError(keyless_missing_message(path, hint), path)

    def _answer(
        self, outcome: Outcome | None, path: Path, request: httpx2.Request, ids: dict[str, str]
    ) -> httpx2.Response:
        if outcome is None:  # pragma: no cover - the recorder raises instead of declining
            raise RuntimeError(f"nothing recorded for {path}")
        try:
            response = rebuild_response(
                outcome.doc["response"],
                request,
                fixture_stem=path.stem,
                live_ids=ids if outcome.recorded else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise unreadable(path, f"{type(exc).__name__}: {exc}") from exc
        cost = add_usage(outcome.doc.get("usage") or [])
        event = _journal.Event.RECORDED if outcome.recorded else _journal.Event.REPLAYED
        _journal.note(event, path, cost)
        return response

    def handle(self, request: httpx2.Request, live: LiveSend) -> httpx2.Response:
        """The answer to ``request``: replayed, or recorded by calling ``live``."""
        upstream: list[BaseException] = []
        try:
            return self._handle(request, live, upstream)
        except VCRError as exc:
            raise deliver(exc) from None
        except Exception as exc:
            raise _own_fault(exc, upstream, request, self.settings) from exc

    async def ahandle(self, request: httpx2.Request, live: AsyncLiveSend) -> httpx2.Response:
        upstream: list[BaseException] = []
        try:
            return await self._ahandle(request, live, upstream)
        except VCRError as exc:
            raise deliver(exc) from None
        except Exception as exc:
            raise _own_fault(exc, upstream, request, self.settings) from exc

    def _handle(
        self, request: httpx2.Request, live: LiveSend, upstream: list[BaseException]
    ) -> httpx2.Response:
        if to_local_proxy(request):  # the proxy of this process records it
            with live_call(), _noted(upstream):
                return live(request)
        if self.settings.mode is Mode.OFF:
            with live_call(), _noted(upstream):
                response = live(request)
            _note_live(request)
            return response
        path, stored_request, secrets = self._prepare(request)
        ids: dict[str, str] = {}

        def record() -> Document:
            self._check_can_record(path, request, stored_request)
            with live_call(), _noted(upstream):
                response = live(with_live_ids(request))
                try:
                    response.read()
                finally:
                    response.close()
            return self._document(response, path, stored_request, ids)

        try:
            outcome = fetch(path, self.settings, record, secrets, stored_request, kind="http")
        except _Declined as declined:
            _note_live(request, path)
            return _passthrough(declined.response, request)
        except FixtureMissingError:
            _journal.note(_journal.Event.MISSING, path)
            raise
        return self._answer(outcome, path, request, ids)

    async def _ahandle(
        self, request: httpx2.Request, live: AsyncLiveSend, upstream: list[BaseException]
    ) -> httpx2.Response:
        if to_local_proxy(request):  # the proxy of this process records it
            with live_call(), _noted(upstream):
                return await live(request)
        if self.settings.mode is Mode.OFF:
            with live_call(), _noted(upstream):
                response = await live(request)
            _note_live(request)
            return response
        path, stored_request, secrets = self._prepare(request)
        ids: dict[str, str] = {}

        async def record() -> Document:
            self._check_can_record(path, request, stored_request)
            with live_call(), _noted(upstream):
                response = await live(with_live_ids(request))
                try:
                    await response.aread()
                finally:
                    await response.aclose()
            return self._document(response, path, stored_request, ids)

        try:
            outcome = await afetch(
                path, self.settings, record, secrets, stored_request, kind="http"
            )
        except _Declined as declined:
            _note_live(request, path)
            return _passthrough(declined.response, request)
        except FixtureMissingError:
            _journal.note(_journal.Event.MISSING, path)
            raise
        return self._answer(outcome, path, request, ids)


@contextmanager
def _noted(upstream: list[BaseException]) -> Iterator[None]:
    """Note what the upstream call raised: it is the SDK's to retry, as it is."""
    try:
        yield
    except BaseException as exc:
        upstream.append(exc)
        raise


def _own_fault(
    exc: Exception, upstream: list[BaseException], request: httpx2.Request, settings: Settings
) -> BaseException:
    """What to raise for an exception inside vcr_kit's handling of ``request``.

    The upstream's own errors (a refused connection, a time-out) go on unchanged: the SDK
    retries them as it would without vcr_kit. Anything else (a fixture of a shape no
    check foresaw, a file system that fails in a new way) would reach the SDK as an
    ``Exception``, be retried with back-off and reported as "Connection error.", with
    the API called again on each attempt: it becomes a ``FixtureCorruptError`` naming
    the fixture, delivered as itself.
    """
    if any(exc is seen for seen in upstream):
        return exc
    try:
        path: Path | None = settings.fixtures_dir / request_key(request)[0]
    except Exception:  # the key itself failed: there is no file to name
        path = None
    where = "this request" if path is None else str(path)
    error = FixtureCorruptError(
        f"vcr_kit could not handle the fixture of {where}: {type(exc).__name__}: {exc}. "
        "Run `python -m vcr_kit check` on the folder; delete the fixture or re-record it "
        "with VCR_MODE=record.",
        path,
    )
    return deliver(error)


def _uses_stand_in_key(request: httpx2.Request) -> bool:
    """The request carries vcr_kit's stand-in key: nothing may be sent with it."""
    return any(value == REPLAY_API_KEY for _, value in credentials_in(request))


def has_real_key(request: httpx2.Request) -> bool:
    """The request carries a credential that is not vcr_kit's stand-in."""
    return any(value != REPLAY_API_KEY for _, value in credentials_in(request))


def to_local_proxy(request: httpx2.Request) -> bool:
    """Whether ``request`` goes to a vcr_kit proxy of this process, which records it:
    recording it here too would count it twice and lock its fixture twice (a deadlock)."""
    return is_local_proxy(request.url.host, request.url.port)


def is_local_proxy(host: str, port: int | None) -> bool:
    """Whether a vcr_kit proxy of this process listens at ``host:port``."""
    proxy = sys.modules.get("vcr_kit._seams.proxy")  # not loaded: no proxy runs
    return proxy is not None and bool(proxy.serves(host, port))


def _note_live(request: httpx2.Request, path: Path | None = None) -> None:
    """A call that went to the API and was not kept: the journal must still show it."""
    _journal.note(_journal.Event.LIVE, path, detail=f"{request.method} {request.url}")


def _passthrough(response: httpx2.Response, request: httpx2.Request) -> httpx2.Response:
    """A transient live answer handed back to the SDK (which retries it), unsaved.
    The body was decoded when read, so the encoding headers must go."""
    headers = [
        (k, v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    passed: httpx2.Response = library_of(request).Response(
        response.status_code, headers=headers, content=response.content, request=request
    )
    return passed
