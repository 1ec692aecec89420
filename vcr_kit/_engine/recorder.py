"""Record and replay at the HTTP layer: every endpoint, streaming included.

``HttpRecorder`` is what every seam hands a request to (the transport patch, the
transparent client, the proxy). Its way down, each step entered once: the request's
key (``_core.http_request``), the replay-or-record policy (``policy``, which reads
and writes through the store), the answer rebuilt by the HTTP codec
(``http_codec``), and one note in the ledger. ``handle`` and ``ahandle`` drive the
same body (``exchange``, see ``steps``). vcr_kit's own errors are raised as
themselves; getting them through the SDK's retry loop is the seam's job
(``_seams.sdk_errors``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .._core.config import Mode, Settings, cloud_base_urls, load_settings
from .._core.credentials import (
    credentials_in,
    has_real_key,
    query_credentials,
    uses_stand_in_key,
)
from .._core.http_request import (
    RequestParts,
    name_and_stored,
    quick_name,
    request_parts,
    undehydrated_name,
    with_live_ids,
)
from .._core.platforms import platform_of
from .._core.providers import provider_named
from .._core.schema import FORMAT_KEY, FORMAT_VERSION, Document, problems
from .._core.storable import answer_refusal
from .._ledger.notes import Event, note, note_replay
from .._store.cache import CachedFixture
from .._store.files import unreadable
from ..errors import (
    ConfigError,
    FixtureCorruptError,
    FixtureMissingError,
    FixtureValueError,
    VCRError,
)
from .http_codec import (
    passthrough,
    rebuild_large_response,
    rebuild_response,
    response_from_head,
    store_response_with_ids,
    usage_of,
)
from .live import live_call, to_local_proxy
from .misses import keyless_missing_message, near_miss_hint
from .policy import Outcome, replay_or_record
from .prepared import answer_head, fixture_note, prepared_replay, rendered
from .steps import Steps, run_awaiting, run_blocking

if TYPE_CHECKING:  # at run time a request may be httpx2's or httpx's (anthropic 0.x): same API
    import httpx2

__all__ = ["NOT_RECORDED", "AsyncLiveSend", "HttpRecorder", "LiveSend", "LookedUp"]

LiveSend = Callable[["httpx2.Request"], "httpx2.Response"]
AsyncLiveSend = Callable[["httpx2.Request"], Awaitable["httpx2.Response"]]
#: ``send`` for the body: a ``LiveSend`` under ``handle``, an ``AsyncLiveSend`` under
#: ``ahandle``; the driver calls or awaits what it returns.
Send = Callable[["httpx2.Request"], Any]
#: The ``extensions`` key of a live answer handed back unsaved: why it was not recorded
#: (the proxy logs it; the journal has it too).
NOT_RECORDED: Final = "vcr_kit_not_recorded"


class LookedUp(NamedTuple):
    """What ``HttpRecorder.look_up`` found: the replayed answer, or what the full way
    goes on from (the request parsed, and its name with no rule applied: None in mode
    record, or when nothing was parsed)."""

    response: httpx2.Response | None
    parts: RequestParts | None
    undehydrated: tuple[str, str] | None


_NOT_LOOKED_UP: Final = LookedUp(None, None, None)


class _Declined(Exception):
    """Internal: the live answer must reach the caller but not the disk."""

    def __init__(self, response: httpx2.Response, reason: str) -> None:
        self.response = response
        self.reason = reason


def _query_credentials(request: httpx2.Request, stored: Any) -> list[tuple[str, str]]:
    """The credentials in the request's query, where its provider takes one there."""
    provider = provider_named(stored.get("provider")) if isinstance(stored, dict) else None
    if provider is None or not provider.credential_query:
        return []
    return query_credentials(
        request.url.query.decode("ascii", "replace"), provider.credential_query
    )


def _credentials(request: httpx2.Request, stored: Any) -> list[tuple[str, str]]:
    """Every credential the request carries (headers and query): never to be written."""
    return [*credentials_in(request.headers), *_query_credentials(request, stored)]


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
        #: Whether replay looks a request up by orjson's parse before the exact one:
        #: yes while the requests it sees name their fixtures as they are. A client
        #: whose requests the rules change (Claude Code's hold this folder and today's
        #: date) would have each parsed twice; the exact way's look-up re-enables it.
        self._quick_first = True

    def handle(self, request: httpx2.Request, live: LiveSend) -> httpx2.Response:
        """The answer to ``request``: replayed, or recorded by calling ``live``."""

        def whole(sent: httpx2.Request) -> httpx2.Response:
            response = live(sent)
            try:
                response.read()
            finally:
                response.close()
            return response

        looked = self.look_up(request)
        if looked.response is not None:  # a prepared fixture: no steps to drive
            return looked.response
        return run_blocking(self.exchange(request, live, whole, looked))

    async def ahandle(self, request: httpx2.Request, live: AsyncLiveSend) -> httpx2.Response:
        """``handle`` for async clients."""

        async def whole(sent: httpx2.Request) -> httpx2.Response:
            response = await live(sent)
            try:
                await response.aread()
            finally:
                await response.aclose()
            return response

        looked = self.look_up(request)  # reads a small fixture file in this thread, as before
        if looked.response is not None:
            return looked.response
        return await run_awaiting(self.exchange(request, live, whole, looked))

    def look_up(self, request: httpx2.Request) -> LookedUp:
        """The replay of a prepared fixture (``prepared_replay``) when the request as it is
        names one, served at once: the common replay, with no steps driven. Otherwise
        what was parsed on the way, for ``exchange`` to go on from."""
        if to_local_proxy(request) or self.settings.mode is Mode.OFF:
            return _NOT_LOOKED_UP
        try:
            folder = self.settings.fixtures_dir
            if self._quick_first and self.settings.mode is not Mode.RECORD:
                quick = quick_name(request)  # the body parsed by orjson, when it is in use
                found = None if quick is None else prepared_replay(folder, quick, quick=True)
                if found is not None:
                    return LookedUp(self._replayed(*found, request), None, None)
            parts = request_parts(request)  # the exact parse, which every other way needs
            if self.settings.mode is Mode.RECORD:
                return LookedUp(None, parts, None)
            undehydrated = undehydrated_name(parts)
            found = prepared_replay(folder, undehydrated)
            self._quick_first = found is not None  # the next request is likely alike
            if found is None:
                return LookedUp(None, parts, undehydrated)
            return LookedUp(self._replayed(*found, request), parts, undehydrated)
        except VCRError as exc:
            raise exc from None  # as ``exchange`` raises it
        except Exception as exc:
            raise self._own_fault(exc, request) from exc

    def exchange(
        self, request: httpx2.Request, live: Send, whole: Send, looked: LookedUp
    ) -> Steps[httpx2.Response]:
        """The one body of ``handle`` and ``ahandle``, after ``look_up`` found no prepared
        fixture (``looked``: what it parsed). ``live`` sends a request upstream;
        ``whole`` also reads its answer to the end (the one to store)."""
        upstream: list[BaseException] = []
        path: Path | None = None
        try:
            if to_local_proxy(request):  # the proxy of this process records it
                passed: httpx2.Response = yield from _live(live, request, upstream)
                return passed
            if self.settings.mode is Mode.OFF:
                response: httpx2.Response = yield from _live(live, request, upstream)
                _note_live(request)
                return response
            parts = looked.parts if looked.parts is not None else request_parts(request)
            undehydrated = looked.undehydrated
            # A miss that no rule can change keeps the name just computed (not hashed again).
            name, stored_request = name_and_stored(request, parts, undehydrated)
            path = self.settings.fixtures_dir / name
            ids: dict[str, str] = {}

            def record() -> Steps[Document]:
                self._check_can_record(path, request, stored_request)
                answer = yield from _live(whole, with_live_ids(request), upstream)
                return self._document(answer, path, stored_request, ids)

            try:
                outcome = yield from replay_or_record(
                    path,
                    self.settings,
                    record,
                    lambda: _credentials(request, stored_request),
                    stored_request,
                    kind="http",
                    live_request=stored_request,
                )
            except _Declined as declined:
                _note_live(request, path, f"not recorded: {declined.reason}")
                passed = passthrough(declined.response, request)
                passed.extensions[NOT_RECORDED] = declined.reason
                return passed
            except FixtureMissingError:
                note(Event.MISSING, path)
                raise
            return self._answer(outcome, path, request, ids)
        except VCRError as exc:
            raise exc from None  # vcr_kit's own word: the caller needs no chain below it
        except Exception as exc:
            if any(exc is seen for seen in upstream):
                if not to_local_proxy(request):  # an attempt to reach the API: counted too
                    _note_failed(request, path, exc)
                raise  # the upstream's own error (a refused connection): the SDK retries it
            raise self._own_fault(exc, request) from exc

    def _document(
        self, response: httpx2.Response, path: Path, stored_request: Any, ids: dict[str, str]
    ) -> Document:
        provider = provider_named(stored_request.get("provider"))
        stored, stored_to_live = store_response_with_ids(
            response, seed=path.name, vocabulary=None if provider is None else provider.ids
        )
        refusal = answer_refusal(stored, stored_request)
        if refusal is not None:
            raise _Declined(response, refusal.reason)
        doc: Document = {
            "kind": "http",
            "request": stored_request,
            "response": stored,
            "usage": usage_of(stored, stored_request),
        }
        # What replay would refuse is not written either (a JSON answer to a request for
        # a stream, say): the upstream's answer, not the caller's fault.
        found = problems({FORMAT_KEY: FORMAT_VERSION, **doc}, path.name, replay=True)
        if found:
            raise _Declined(response, f"its replay would fail: {found[0]}")
        ids.update(stored_to_live)
        return doc

    def _check_can_record(self, path: Path, request: httpx2.Request, stored: Any) -> None:
        url = request.url
        platform = platform_of(url.host, url.port, cloud_base_urls())
        provider = provider_named(stored.get("provider")) if isinstance(stored, dict) else None
        in_query = _query_credentials(request, stored)
        if not uses_stand_in_key(request.headers, in_query) and (
            # A first-party key comes from the environment (a key written in a test is
            # often a dummy); a cloud client brings its platform's own credentials, and
            # another provider's client its own key (never Anthropic's), in a header or
            # in the query (Gemini's ``?key=``).
            (self.can_record and provider is None)
            or (
                (platform is not None or provider is not None)
                and has_real_key(request.headers, in_query)
            )
        ):
            return
        if self.settings.mode is Mode.RECORD and path.is_file():
            # Not "missing": the file is there, record mode just never replays it.
            variable = "ANTHROPIC_API_KEY" if provider is None else provider.key_variables[0][0]
            raise ConfigError(
                f"Recording {path} needs an API key: mode record calls the API for every "
                f"request, even one already recorded. Set {variable} (in the "
                "environment or in .env), or use mode auto (unset VCR_MODE=record) to "
                "replay the recorded fixture.",
                path,
            )
        hint = near_miss_hint(path, stored)  # a local miss shows its diff, key or no key
        raise FixtureMissingError(keyless_missing_message(path, hint, platform, provider), path)

    def _answer(
        self, outcome: Outcome | None, path: Path, request: httpx2.Request, ids: dict[str, str]
    ) -> httpx2.Response:
        if outcome is None:  # pragma: no cover - the recorder raises instead of declining
            raise RuntimeError(f"nothing recorded for {path}")
        # One just recorded (its answer may be of any size; one call to the API costs
        # far more than the slower writer), or one too large to be kept: piece by piece.
        rebuild = rebuild_large_response if outcome.recorded or outcome.large else rebuild_response
        try:
            response = rebuild(
                outcome.doc["response"],
                request,
                fixture_stem=path.stem,
                live_ids=ids if outcome.recorded else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise unreadable(path, f"{type(exc).__name__}: {exc}") from exc
        event = Event.RECORDED if outcome.recorded else Event.REPLAYED
        note(event, path, usage=outcome.doc.get("usage") or (), changed=outcome.changed)
        return response

    def _replayed(
        self, path: Path, fixture: CachedFixture, request: httpx2.Request
    ) -> httpx2.Response:
        """The answer of a fixture ``prepared_replay`` found, rendered once per process."""
        try:
            response = response_from_head(
                answer_head(fixture), rendered(fixture), request, path.stem
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise unreadable(path, f"{type(exc).__name__}: {exc}") from exc
        note_replay(fixture_note(fixture))
        return response

    def _own_fault(self, exc: Exception, request: httpx2.Request) -> VCRError:
        """What to raise for an exception inside vcr_kit's handling of ``request``.

        Anything but the upstream's own errors (a fixture of a shape no check foresaw, a
        file system that fails in a new way) would reach the SDK as an ``Exception``, be
        retried with back-off and reported as "Connection error.", with the API called
        again on each attempt: it becomes a ``FixtureCorruptError`` naming the fixture.
        """
        try:
            path: Path | None = self.settings.fixtures_dir / name_and_stored(request)[0]
        except Exception:  # the key itself failed: there is no file to name
            path = None
        if path is not None and not path.is_file():
            # Not a fixture's fault: there is none (a live answer that could not be
            # stored, say a cut-off JSON body). Blaming a file that does not exist
            # would send the user looking for it.
            return FixtureValueError(
                f"vcr_kit could not store the answer to {request.method} {request.url.path}: "
                f"{type(exc).__name__}: {exc}. Nothing was written ({path} does not exist); "
                "run again, and if it happens again, report it.",
                None,
            )
        where = "this request" if path is None else str(path)
        return FixtureCorruptError(
            f"vcr_kit could not handle the fixture of {where}: {type(exc).__name__}: {exc}. "
            "Run `python -m vcr_kit check` on the folder; delete the fixture or re-record it "
            "with VCR_MODE=record.",
            path,
        )


def _live(send: Send, request: httpx2.Request, upstream: list[BaseException]) -> Steps[Any]:
    """vcr_kit's own call to the API (the seams let it through); what it raises is noted
    as the upstream's, for the SDK to retry as it is."""
    with live_call(), _noted(upstream):
        return (yield lambda: send(request))


@contextmanager
def _noted(upstream: list[BaseException]) -> Iterator[None]:
    try:
        yield
    except BaseException as exc:
        upstream.append(exc)
        raise


def _note_failed(request: httpx2.Request, path: Path | None, exc: BaseException) -> None:
    """An attempt to reach the API that got no answer (refused, a name not found, a
    timeout): noted as a live call all the same, for "no silent live calls" holds for
    the attempts too (``assertNoLiveCalls``, the summary)."""
    why = f"no answer ({type(exc).__name__}: {exc})" if str(exc) else type(exc).__name__
    if path is None:  # mode off: no fixture to name
        _note_live(request, None, f"{request.method} {request.url}: {why}")
    else:
        _note_live(request, path, f"not recorded: {why}")


def _note_live(request: httpx2.Request, path: Path | None = None, why: str = "") -> None:
    """A call that went to the API and was not kept: the journal must still show it,
    and ``why`` (nothing was written: the summary and ``assertNoLiveCalls`` say so)."""
    note(Event.LIVE, path, detail=why or f"{request.method} {request.url}")
