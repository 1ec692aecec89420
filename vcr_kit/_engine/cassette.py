"""The cassette object: one class serves ``with``, ``async with`` and plain calls.

A cassette kind says three things: how its fixture is named, how a live result is
written into a fixture (``encode``), and how a fixture is turned back into the
value the caller gets (``decode``). Everything else (modes, activation, lookup,
locking, journal, cost) is here, once.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from .._core.config import Mode, Settings, is_active, load_settings
from .._core.fixture_names import fixture_name
from .._core.jsonable import to_jsonable
from .._core.paths import display_path
from .._core.schema import FORMAT_KEY, FORMAT_VERSION, Document, problems
from .._ledger.cost import counted_by_caller
from .._ledger.notes import Event, note
from .._store.files import unreadable
from ..dehydrate import dehydrate_json, hydrate_json
from ..errors import FixtureMissingError, FixtureValueError
from .policy import Outcome, replay_or_record
from .steps import Steps, run_awaiting, run_blocking

Self = TypeVar("Self", bound="Recording")


class Recording:
    """Base of every cassette kind. Subclasses set ``kind`` and may override
    ``encode``/``decode``/``usage``; they get modes, locking and the journal for free."""

    kind: ClassVar[str] = "generic"
    #: What the played function returns, for the error when it returns something else.
    holds: ClassVar[str] = "a JSON value or SDK objects"

    def __init__(
        self,
        name: str,
        request: Any,
        *,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
    ) -> None:
        self._name = name
        self._request = request
        self._mode_option = mode
        self._dir_option = fixtures_dir
        self._entered_async = False
        self._settings: Settings | None = None
        #: True once ``play`` answered from an existing fixture.
        self.replayed = False
        #: True once ``play`` called the API and wrote the fixture.
        self.recorded = False

    # -- the fixture -------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(mode=self._mode_option, fixtures_dir=self._dir_option)
        return self._settings

    @property
    def path(self) -> Path:
        """The fixture file this cassette reads or writes."""
        return self.settings.fixtures_dir / self._name

    @property
    def active(self) -> bool:
        """Whether ``play`` records/replays (True) or just calls ``fn`` (False)."""
        if self.settings.mode is Mode.OFF:
            return False
        return self._mode_option is not None or is_active(self.settings)

    # -- context manager protocol -------------------------------------------------

    def __enter__(self: Self) -> Self:
        self._settings = None  # read the environment as it is now
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    async def __aenter__(self: Self) -> Self:
        self._settings = None
        self._entered_async = True
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    # -- playing ------------------------------------------------------------------

    def play(self, fn: Callable[[], Any]) -> Any:
        """Return ``fn()``'s result, recorded or replayed.

        Under ``async with``, or when ``fn`` is a coroutine function, this returns
        an awaitable instead: ``await c.play(async_fn)``.
        """
        if self._is_async(fn):
            return self._play_async(fn)
        if not self.active:
            note(Event.PASSED_THROUGH, None)
            return fn()
        return self._replay_or_record(fn)

    async def _play_async(self, fn: Callable[[], Any]) -> Any:
        if not self.active:
            note(Event.PASSED_THROUGH, None)
            return await maybe_await(fn())
        return await self._areplay_or_record(fn)

    def _is_async(self, fn: Callable[[], Any]) -> bool:
        return self._entered_async or inspect.iscoroutinefunction(fn)

    def _replay_or_record(self, fn: Callable[[], Any]) -> Any:
        return run_blocking(self._steps(fn, self.collect))

    async def _areplay_or_record(self, fn: Callable[[], Any]) -> Any:
        return await run_awaiting(self._steps(fn, self.acollect))

    def _steps(self, fn: Callable[[], Any], collect: Callable[[Any], Any]) -> Steps[Any]:
        """The one body of a play, blocking or awaiting (see ``steps``): ``collect`` is
        ``self.collect`` or ``self.acollect``."""

        unsaved: list[Any] = []  # a live result the request did not earn

        def record() -> Steps[Document | None]:
            try:
                with counted_by_caller():
                    result = yield lambda: collect(fn)
            except Exception as exc:
                return self._error_document(exc)
            doc = self._document(result)
            if doc is None:
                unsaved.append(result)
            return doc

        try:
            outcome = yield from replay_or_record(
                self.path, self.settings, record, self._secrets, self._request, kind=self.kind
            )
        except FixtureMissingError:
            note(Event.MISSING, self.path)
            raise
        if outcome is None:  # the caller gets the live result, as without vcr_kit
            self.recorded = self.replayed = False
            return unsaved[0]
        return self._finish(outcome)

    def _error_document(self, exc: Exception) -> Document:
        stored = self.encode_error(exc)
        if stored is None:  # the played function's own error, or one never stored
            reason = self.unearned(exc)
            if reason is not None:
                note(Event.LIVE, self.path, detail=f"not recorded: {reason}")
            raise exc
        return self._wrap(stored)

    def _document(self, result: Any) -> Document | None:
        """The fixture for a live result; None when it is one never stored (noted why)."""
        try:
            response = self.encode(result)
        except (TypeError, ValueError) as exc:
            raise FixtureValueError(
                f"Cannot record {display_path(self.path)}: the result is not JSON-able "
                f"({exc}). Return JSON values or SDK objects from the played function.",
                self.path,
            ) from None
        reason = self.refusal(response)
        if reason is not None:
            note(Event.LIVE, self.path, detail=f"not recorded: {reason}")
            return None
        doc = self._wrap(response)
        # Never write what replay would refuse: the error now names the function's
        # result, where a later replay could only blame the file.
        found = problems({FORMAT_KEY: FORMAT_VERSION, **doc}, self.path.name, replay=True)
        if found:
            raise FixtureValueError(
                f"Cannot record {display_path(self.path)}: {found[0]}. The played function "
                f"of a {self.kind!r} cassette returns {self.holds}.",
                self.path,
            )
        return doc

    def _wrap(self, response: Any) -> Document:
        response = dehydrate_json(response)
        return {
            "kind": self.kind,
            "request": self._request,
            "response": response,
            "usage": self.usage(response),
        }

    def _finish(self, outcome: Outcome) -> Any:
        # Its kind and its response were checked by ``policy.served`` (a replay) or built
        # here (a recording): not again on every play.
        self.recorded = outcome.recorded
        self.replayed = not outcome.recorded
        event = Event.RECORDED if outcome.recorded else Event.REPLAYED
        note(event, self.path, usage=outcome.doc.get("usage") or (), changed=outcome.changed)
        try:
            return self.decode(hydrate_json(outcome.doc["response"]))
        except Exception as exc:
            if _is_api_error(exc):  # a recorded API error, replayed as itself
                raise
            # Whatever else breaks while decoding is the file's fault: the caller gets
            # an error that names it, never an AttributeError from deep inside the SDK.
            raise unreadable(self.path, f"{type(exc).__name__}: {exc}") from exc

    def _secrets(self) -> list[tuple[str, str]]:
        return []

    # -- what kinds override --------------------------------------------------------

    def collect(self, fn: Callable[[], Any]) -> Any:
        """Call the API (``fn``) and return the result to record."""
        return fn()

    async def acollect(self, fn: Callable[[], Any]) -> Any:
        return await maybe_await(fn())

    def encode(self, result: Any) -> Any:
        """The JSON value stored for a live result."""
        return to_jsonable(result)

    def encode_error(self, exc: Exception) -> Any:
        """The JSON stored for an error ``fn`` raised, or None to let it propagate unsaved."""
        return None

    def unearned(self, exc: Exception) -> str | None:
        """Why an error ``fn`` raised is one never stored (an API's 401, 529...), for the
        journal; None for any other error."""
        return None

    def refusal(self, response: Any) -> str | None:
        """Why an encoded result is one never stored (a stream cut short), or None."""
        return None

    def decode(self, response: Any) -> Any:
        """The value handed to the caller for a stored response (already hydrated)."""
        return response

    def usage(self, response: Any) -> list[dict[str, Any]]:
        """(model, usage) entries that cost tracking adds on every play."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {display_path(self.path)}>"


def _is_api_error(exc: Exception) -> bool:
    anthropic = sys.modules.get("anthropic")  # decode imports the SDK for what it replays
    return anthropic is not None and isinstance(exc, anthropic.APIError)


async def maybe_await(value: Any) -> Any:
    """``value``, awaited if it is awaitable (a function that may be sync or async)."""
    if isinstance(value, Awaitable):
        return await value
    return value


def fixture(
    input: Any,
    name: str,
    *,
    mode: str | Mode | None = None,
    fixtures_dir: str | Path | None = None,
) -> Recording:
    """A generic content-addressed fixture for any JSON-able result.

    ``with fixture({"q": 1}, "answer") as f: value = f.play(compute)`` stores
    ``fixtures/answer-<12 hex>.json``; the hash covers the dehydrated ``input``.
    """
    try:
        request = dehydrate_json(to_jsonable(input))
        fixture_file = fixture_name(request, name)
    except TypeError as exc:
        raise FixtureValueError(
            f"The input of fixture {name!r} cannot be a key: {exc}. "
            "Use JSON values (dict, list, str, int, float, bool, None) or SDK objects."
        ) from None
    return Recording(fixture_file, request, mode=mode, fixtures_dir=fixtures_dir)
