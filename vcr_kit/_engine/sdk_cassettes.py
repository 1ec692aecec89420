"""The three cassettes of the original: messages, streams and token counts.

``cassette(messages)`` is ``withVCR``, ``streaming_cassette(messages)`` is
``withStreamingVCR`` and ``token_count_cassette(messages, tools)`` is
``withTokenCountVCR``. They differ from the generic fixture only in how they are
named and in that their results are SDK objects (stored as wire JSON, built back
with the SDK's own constructor) and cost money (tracked on every play).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from .._core.config import Mode
from .._core.fixture_names import cassette_name, message_content, token_count_name
from .._core.jsonable import to_jsonable
from .._core.kinds import sdk_stream_refusal
from .._ledger.cost import usage_entries
from .._ledger.notes import Event, note
from ..dehydrate import dehydrate_json
from .cassette import Recording, maybe_await
from .sdk_codec import (
    decode_value,
    encode_error,
    encode_value,
    plain,
    refresh_message_ids,
    stabilize_ids,
    unearned_error,
)

__all__ = ["MessageCassette", "StreamingCassette", "TokenCountCassette"]


def _stored_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """The conversation as stored in the fixture: role and dehydrated content."""
    stored = []
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        stored.append(
            {"role": role, "content": dehydrate_json(to_jsonable(message_content(message)))}
        )
    return stored


class MessageCassette(Recording):
    """``c.play(fn)`` where ``fn`` returns a ``Message``, a list of SDK objects, or raises
    an API error; replays the same types with fresh message ids."""

    kind: ClassVar[str] = "message"
    holds: ClassVar[str] = "a Message, a list of SDK objects, or raises an API error"
    name_suffix: ClassVar[str] = ""

    def __init__(
        self,
        messages: Iterable[Any],
        *,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
    ) -> None:
        messages = list(messages)
        super().__init__(
            cassette_name(messages, self.name_suffix),
            {"messages": _stored_messages(messages)},
            mode=mode,
            fixtures_dir=fixtures_dir,
        )

    def encode(self, result: Any) -> Any:
        return stabilize_ids(encode_value(result), seed=self._name)

    def encode_error(self, exc: Exception) -> Any:
        return encode_error(exc)

    def unearned(self, exc: Exception) -> str | None:
        return unearned_error(exc)

    def decode(self, response: Any) -> Any:
        return decode_value(refresh_message_ids(response), request_ids=True)

    def usage(self, response: Any) -> list[dict[str, Any]]:
        return usage_entries(plain(response))


def _live_events(source: Any) -> Iterator[Any]:
    """Events of a live stream: a ``Stream``, any iterator, or a ``MessageStreamManager``
    (entered, as ``with client.messages.stream(...) as s`` would)."""
    if hasattr(source, "__enter__") and not hasattr(source, "__iter__"):
        with source as stream:
            yield from stream
    else:
        yield from source


async def _async_live_events(source: Any) -> AsyncIterator[Any]:
    if hasattr(source, "__aenter__") and not hasattr(source, "__aiter__"):
        async with source as stream:
            async for event in stream:
                yield event
    else:
        async for event in source:
            yield event


class StreamingCassette(MessageCassette):
    """``c.play(fn)`` where ``fn()`` returns a stream of SDK events. Recording consumes
    it fully first (a generator cannot be stored half-read); both paths then yield
    the events one by one, in order. Under ``async with``, ``async for``."""

    kind: ClassVar[str] = "stream"
    holds: ClassVar[str] = "a stream of SDK events (or a messages.stream() manager)"
    name_suffix: ClassVar[str] = "-stream"

    def play(self, fn: Callable[[], Any]) -> Any:
        if self._is_async(fn):
            return self._aiterate(fn)
        if not self.active:
            note(Event.PASSED_THROUGH, None)
            return _live_events(fn())
        return iter(self._replay_or_record(fn))

    async def _aiterate(self, fn: Callable[[], Any]) -> AsyncIterator[Any]:
        if not self.active:
            note(Event.PASSED_THROUGH, None)
            async for event in _async_live_events(await maybe_await(fn())):
                yield event
            return
        for event in await self._areplay_or_record(fn):
            yield event

    def collect(self, fn: Callable[[], Any]) -> Any:
        return list(_live_events(fn()))

    async def acollect(self, fn: Callable[[], Any]) -> Any:
        return [event async for event in _async_live_events(await maybe_await(fn()))]

    def refusal(self, response: Any) -> str | None:
        # Only a whole stream is stored: one cut short would replay as if it were whole.
        return sdk_stream_refusal(response) if isinstance(response, list) else None

    def decode(self, response: Any) -> Any:
        # Stream events are not top-level responses: no request id on each of them.
        return decode_value(refresh_message_ids(response))


class TokenCountCassette(Recording):
    """``c.play(fn)`` for ``count_tokens``; keyed with the deeper normalisation
    (cwd slug, UUIDs, timestamps) so the key is the same on every machine and run."""

    kind: ClassVar[str] = "token_count"
    holds: ClassVar[str] = "a MessageTokensCount or a number, or raises an API error"

    def __init__(
        self,
        messages: Any,
        tools: Any = (),
        *,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
    ) -> None:
        request = {"messages": to_jsonable(messages), "tools": to_jsonable(tools)}
        super().__init__(
            token_count_name(messages, tools),
            dehydrate_json(request),
            mode=mode,
            fixtures_dir=fixtures_dir,
        )

    def encode(self, result: Any) -> Any:
        return encode_value(result)

    def encode_error(self, exc: Exception) -> Any:
        return encode_error(exc)

    def unearned(self, exc: Exception) -> str | None:
        return unearned_error(exc)

    def decode(self, response: Any) -> Any:
        return decode_value(response, request_ids=True)


def cassette(
    messages: Iterable[Any],
    *,
    mode: str | Mode | None = None,
    fixtures_dir: str | Path | None = None,
) -> MessageCassette:
    """Record/replay what ``fn`` returns for this conversation (the original's ``withVCR``).

    ``fixtures/<h1>-<h2>-...json``: one 6-hex hash per message's dehydrated content.
    """
    return MessageCassette(messages, mode=mode, fixtures_dir=fixtures_dir)


def streaming_cassette(
    messages: Iterable[Any],
    *,
    mode: str | Mode | None = None,
    fixtures_dir: str | Path | None = None,
) -> StreamingCassette:
    """Record/replay a stream of events for this conversation (``withStreamingVCR``)."""
    return StreamingCassette(messages, mode=mode, fixtures_dir=fixtures_dir)


def token_count_cassette(
    messages: Any,
    tools: Any = (),
    *,
    mode: str | Mode | None = None,
    fixtures_dir: str | Path | None = None,
) -> TokenCountCassette:
    """Record/replay a ``count_tokens`` result (``withTokenCountVCR``)."""
    return TokenCountCassette(messages, tools, mode=mode, fixtures_dir=fixtures_dir)
