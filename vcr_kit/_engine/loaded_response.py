"""A response whose whole body is already in hand, built as the HTTP library would
leave it after reading it, without reading it again.

``Response(status, content=body)`` (``httpx2``'s, or ``httpx``'s for anthropic 0.x)
wraps the bytes in a stream, works out the headers to add, then reads the stream
back through the content decoder and the chunkers, all to end where it began: the
bytes in ``response._content``, the stream consumed and closed. A replay builds one
per call, and that round trip was a third of vcr_kit's own work per replayed call.

``loaded_response`` builds the same end state directly: the library's public
``stream=`` constructor (which reads nothing), then the three fields reading would
have set. ``_content`` is the library's own, private name for
the read body, so the first use in a process checks that a response built this way and
one built the library's way agree on every field and on everything the SDK reads; if a
future release keeps its body elsewhere, the library's own constructor is used from
then on, slower but never wrong.
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # either library's: httpx2, or httpx under anthropic 0.x (same API)
    import httpx2

__all__ = ["LAYOUT_CHECKS", "LayoutChecks", "loaded_response"]



class LayoutChecks:
    """Whether the direct build matches each library's constructor, checked once per
    library in this process."""

    __slots__ = ("agrees", "lock")

    #: Library name -> whether the direct build matches the constructor's.
    agrees: dict[str, bool]

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.agrees = {}

    def reset(self) -> None:
        """Nothing checked yet: the next build of each library checks again."""
        with self.lock:
            self.agrees.clear()


LAYOUT_CHECKS: Final = LayoutChecks()


def loaded_response(
    library: ModuleType,
    status: int,
    headers: list[tuple[bytes, bytes]],
    content: bytes,
    request: httpx2.Request,
    *,
    encoded: bool = False,
) -> httpx2.Response:
    """``library.Response(status, headers=headers, content=content, request=request)``
    as it stands once built (its body read, its stream closed). ``headers`` must hold
    the ``Content-Length`` the constructor would add (the direct build adds none).
    ``encoded``: ``headers`` hold a ``Content-Encoding`` (``http_codec.AnswerHead.plain``
    sees it once per fixture), which the library's read decodes: built its way."""
    if not encoded:
        agrees = LAYOUT_CHECKS.agrees.get(library.__name__)
        if agrees is None:
            agrees = _check(library, request)
        if agrees:
            return _direct(library, status, headers, content, request)
    built: httpx2.Response = library.Response(
        status, headers=headers, content=content, request=request
    )
    return built


def _direct(
    library: ModuleType,
    status: int,
    headers: list[tuple[bytes, bytes]],
    content: bytes,
    request: httpx2.Request,
) -> httpx2.Response:
    response: httpx2.Response = library.Response(
        status, headers=headers, stream=library.ByteStream(content), request=request
    )
    response._content = content
    response.is_stream_consumed = True
    response.is_closed = True
    return response


def _check(library: ModuleType, request: httpx2.Request) -> bool:
    """Whether ``_direct`` gives what the constructor gives, on a sample answer."""
    body = b'{"type":"message","content":[]}'
    headers = [(b"content-type", b"application/json"), (b"Content-Length", b"%d" % len(body))]
    try:
        direct = _direct(library, 200, list(headers), body, request)
        built = library.Response(200, headers=list(headers), content=body, request=request)
        agrees = _same(direct, built) and _same_after_reading(direct, built)
    except Exception:  # a layout this module does not know: the constructor's way
        agrees = False
    with LAYOUT_CHECKS.lock:
        LAYOUT_CHECKS.agrees[library.__name__] = agrees
    return agrees


def _same(one: Any, other: Any) -> bool:
    return bool(
        one.status_code == other.status_code
        and one.headers.raw == other.headers.raw
        and one.content == other.content
        and one.is_closed == other.is_closed
        and one.is_stream_consumed == other.is_stream_consumed
        and one.request is other.request
        and one.extensions == other.extensions
        and one.http_version == other.http_version
        and one.num_bytes_downloaded == other.num_bytes_downloaded
        # The read kept its content decoder: the one field a direct build has no use for.
        and vars(one).keys() - {"_decoder"} == vars(other).keys() - {"_decoder"}
    )


def _same_after_reading(one: Any, other: Any) -> bool:
    """Both read again as the SDK reads them (whole, in chunks, as text and JSON)."""
    return bool(
        one.read() == other.read()
        and list(one.iter_bytes(7)) == list(other.iter_bytes(7))
        and one.text == other.text
        and one.json() == other.json()
    )
