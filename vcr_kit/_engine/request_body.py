"""The proxy's reading of a request body, as its headers frame it.

A client may send anything: a ``Content-Length`` that is not a number, two that
differ, a chunk size that is not hexadecimal, a body shorter than announced, or
nothing at all for a long time. Each is a ``BadRequest`` (a status, the API's error
type and a message) that the proxy answers in the API's error shape, never a
dropped connection; nothing is sent upstream.
"""

from __future__ import annotations

from email.message import Message
from typing import Final, Protocol

__all__ = ["BODY_TIMEOUT", "MAX_BODY", "BadRequest", "read_body"]

#: A client that sends nothing for this long mid-body is answered 408 and dropped: on
#: loopback a live client never pauses that long, and a stalled one would hold a
#: thread (and ``stop()``) for ever. A per-read limit: a slow, steady upload is fine.
BODY_TIMEOUT: Final = 5.0
#: Larger than any request the API takes (the Files API's 500 MB): refused unread.
MAX_BODY: Final = 512 * 1024 * 1024
_READ_PIECE: Final = 1024 * 1024
#: A chunk-size line longer than this is no chunk size.
_MAX_LINE: Final = 4096
_MAX_TRAILERS: Final = 100
_PREFIX: Final = "vcr_kit proxy cannot read the request: "
_NOTHING_SENT: Final = " Nothing was sent upstream."


class Reader(Protocol):
    """What the body is read from: the handler's buffered socket file."""

    def read(self, size: int = ..., /) -> bytes: ...

    def readline(self, size: int = ..., /) -> bytes: ...


class BadRequest(Exception):
    """The request cannot be read (its framing is wrong, or it stopped arriving): the
    client gets an answer in the API's error shape, and the connection is closed."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message


def read_body(rfile: Reader, headers: Message, timeout: float, *, http10: bool = False) -> bytes:
    """The request body, as ``headers`` frame it (RFC 9112 §6.3; ``http10``: the
    request is HTTP/1.0); ``BadRequest`` when they frame it wrongly, when it ends
    early, or when it stops arriving (the caller's socket times out after ``timeout``
    seconds without a byte)."""
    try:
        if _chunked(headers, http10):
            return _read_chunked(rfile)
        return _read_exactly(rfile, _content_length(headers), "Content-Length")
    except TimeoutError:
        raise BadRequest(
            408,
            "timeout_error",
            f"{_PREFIX}its body stopped arriving (nothing for {timeout:g} seconds)."
            f"{_NOTHING_SENT}",
        ) from None


def _bad_framing(problem: str) -> BadRequest:
    return BadRequest(400, "invalid_request_error", f"{_PREFIX}{problem}{_NOTHING_SENT}")


def _too_large(size: str) -> BadRequest:
    return BadRequest(
        413,
        "request_too_large",
        f"{_PREFIX}its body{size} is larger than the proxy takes ({MAX_BODY} bytes)."
        f"{_NOTHING_SENT}",
    )


def _chunked(headers: Message, http10: bool) -> bool:
    """Whether the body is chunked; ``BadRequest`` for a Transfer-Encoding that leaves
    the body's length in doubt, which RFC 9112 §6.1 and §6.3 have a server refuse."""
    given = headers.get_all("transfer-encoding") or []
    if not given:
        return False
    shown = ", ".join(given)
    if http10:
        raise _bad_framing(
            f"An HTTP/1.0 request has Transfer-Encoding {shown!r}, which HTTP/1.0 does not "
            "have (RFC 9112 §6.1)."
        )
    if headers.get_all("content-length"):
        raise _bad_framing(
            f"The request has both Transfer-Encoding {shown!r} and Content-Length "
            "(RFC 9112 §6.3): send one of them."
        )
    codings = [c.strip().lower() for value in given for c in value.split(",") if c.strip()]
    if not codings or codings[-1] != "chunked" or codings.count("chunked") > 1:
        raise _bad_framing(
            f"Transfer-Encoding {shown!r} does not end in chunked, once (RFC 9112 §6.3)."
        )
    if len(codings) > 1:
        raise BadRequest(
            501,
            "invalid_request_error",
            f"{_PREFIX}Transfer-Encoding {shown!r}: the proxy decodes chunked alone."
            f"{_NOTHING_SENT}",
        )
    return True


def _content_length(headers: Message) -> int:
    values = {v.strip() for v in headers.get_all("content-length") or []}
    if not values:
        return 0
    if len(values) > 1:
        shown = ", ".join(sorted(values))
        raise _bad_framing(f"Content-Length is given twice, with different values ({shown}).")
    (value,) = values
    if not (value.isascii() and value.isdigit()):
        raise _bad_framing(f"Content-Length {value!r} is not a number of bytes.")
    length = int(value)
    if length > MAX_BODY:
        raise _too_large(f" ({length} bytes)")
    return length


def _read_exactly(rfile: Reader, length: int, framing: str) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < length:  # in pieces: a false length reserves no memory
        piece = rfile.read(min(_READ_PIECE, length - got))
        if not piece:
            raise _bad_framing(
                f"The request body ended after {got} of the {length} bytes its "
                f"{framing} announced."
            )
        parts.append(piece)
        got += len(piece)
    return b"".join(parts)


def _read_chunked(rfile: Reader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = rfile.readline(_MAX_LINE)
        if not line.endswith(b"\n"):
            raise _bad_framing("The chunked request body ended before its last chunk.")
        text = line.split(b";", 1)[0].strip()
        if not text or not all(c in b"0123456789abcdefABCDEF" for c in text):
            shown = text.decode("ascii", "replace")
            raise _bad_framing(f"Chunk size {shown!r} is not a hexadecimal number of bytes.")
        size = int(text, 16)
        if size == 0:
            for _ in range(_MAX_TRAILERS):  # trailers (dropped: never forwarded), a blank line
                if not rfile.readline(_MAX_LINE).strip():
                    return b"".join(parts)
            raise _bad_framing(f"The chunked body has more than {_MAX_TRAILERS} trailer lines.")
        total += size
        if total > MAX_BODY:
            raise _too_large("")
        parts.append(_read_exactly(rfile, size, "chunk size"))
        if rfile.readline(_MAX_LINE) not in (b"\r\n", b"\n"):
            raise _bad_framing(f"A chunk of {size} bytes is not followed by a line end.")
