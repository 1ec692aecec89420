"""Streamed blocks stored whole: a block's ``input_json_delta`` (or ``text_delta``)
pieces as one event.

The API streams a tool call's input as JSON text in small pieces
(``{"file_path": "/ho``, ``me/u/proj/a.py"}``), and text the same way. Dehydrated
piece by piece, a path split across two pieces is never seen whole and stays in the
fixture as recorded; replayed in another folder, the client reads and writes the
recording's folder, and its next request (which quotes the answer) misses. So where
dehydrating a run of pieces whole changes it otherwise than piece by piece, the
recorded stream keeps the run as one event (the first piece's, with the whole text,
and ``pieces``: the length of each piece), which the rules then see whole; every
other run is stored as sent. Replay cuts a joined event again at the same lengths,
so the client is fed the stream as it was sent (when hydrating changed the text's
length, the last piece takes up the difference).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["PIECES", "has_joined_pieces", "join_pieces", "split_pieces"]

#: The stored event's field that lists the lengths of the pieces it joined.
PIECES: Final = "pieces"
#: The delta types joined, and the field of each that holds the piece.
_JOINED: Final = {"input_json_delta": "partial_json", "text_delta": "text"}


def _unchanged(text: str) -> str:
    return text


def _piece_of(event: Any) -> tuple[Any, str, str] | None:
    """(block index, delta field, piece) of a joinable delta event, else None."""
    data = event.get("data") if isinstance(event, dict) else None
    if not isinstance(data, dict) or data.get("type") != "content_block_delta":
        return None
    delta = data.get("delta")
    if not isinstance(delta, dict):
        return None
    field = _JOINED.get(str(delta.get("type")))
    piece = None if field is None else delta.get(field)
    return (data.get("index"), field, piece) if field and isinstance(piece, str) else None


def join_pieces(events: list[Any], rewrite: Callable[[str], str] = _unchanged) -> list[Any]:
    """``events`` with each run of one block's pieces (the deltas of one type that
    follow each other) joined into the first where ``rewrite`` (dehydrating) would
    change the whole otherwise than the pieces one by one: a path cut in two. Every
    other run stays as it was sent. Only runs: anything between two pieces stays
    where it was, so that ``split_pieces`` gives back the very stream."""
    joined: list[Any] = []
    run: list[Any] = []  # the events of the current run
    key: tuple[Any, str] | None = None  # its (block index, field)

    def close_run() -> None:
        if not run:
            return
        field = key[1] if key is not None else ""
        pieces = [event["data"]["delta"][field] for event in run]
        whole = "".join(pieces)
        if len(run) == 1 or rewrite(whole) == "".join(rewrite(piece) for piece in pieces):
            joined.extend(run)
        else:
            data = run[0]["data"]
            delta = {**data["delta"], field: whole}
            joined.append(
                {**run[0], "data": {**data, "delta": delta}, PIECES: [len(p) for p in pieces]}
            )
        run.clear()

    for event in events:
        found = _piece_of(event)
        if found is not None and run and found[:2] == key:
            run.append(event)
            continue
        close_run()
        if found is None:
            joined.append(event)
        else:
            run.append(event)
            key = found[:2]
    close_run()
    return joined


def has_joined_pieces(events: list[Any]) -> bool:
    """Some event of ``events`` stands for several pieces."""
    return any(isinstance(event, dict) and PIECES in event for event in events)


def split_pieces(events: list[Any]) -> list[Any]:
    """The stream the client gets: every joined event cut again into its pieces."""
    if not has_joined_pieces(events):
        return events
    split: list[Any] = []
    for event in events:
        lengths = event.get(PIECES) if isinstance(event, dict) else None
        found = _piece_of(event)
        if found is None or not isinstance(lengths, list) or len(lengths) < 2:
            split.append(_without_lengths(event))
            continue
        _, field, text = found
        data = event["data"]
        start = 0
        for i, length in enumerate(lengths):
            last = i == len(lengths) - 1
            end = len(text) if last else min(start + int(length), len(text))
            delta = {**data["delta"], field: text[start:end]}
            split.append({**_without_lengths(event), "data": {**data, "delta": delta}})
            start = end
    return split


def _without_lengths(event: Any) -> Any:
    if isinstance(event, dict) and PIECES in event:
        return {k: v for k, v in event.items() if k != PIECES}
    return event
