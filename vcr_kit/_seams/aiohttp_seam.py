"""Record and replay requests sent with ``aiohttp``: a seam of its own.

``aiohttp`` has no transport object to patch the way ``httpx2``/``httpx`` have, and
every client built on it (a plain ``aiohttp.ClientSession``, the SDK's own
``DefaultAioHttpClient``, litellm's aiohttp transport) sends through
``ClientSession._request``: that is the seam. A request the running test wants (the
same rules as the transport seam: an Anthropic host, or the ``anthropic-version``
header) is handed to ``HttpRecorder.ahandle`` as an ``httpx2`` request; the answer
comes back as a real ``aiohttp.ClientResponse`` whose payload stream holds the
replayed bytes, so ``read()``, ``json()``, ``content.iter_chunked()`` and SSE
parsing run aiohttp's own code.

vcr_kit never imports aiohttp: when it is already loaded as a test starts, it is
patched then; otherwise an import hook patches it the moment something imports it
(while a test runs), and goes away with the other seams.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, Protocol

from .._core.httplib import sdk_library
from .._engine import faults
from .._engine.live import in_live_call
from .._engine.patience import Patience
from .._engine.recorder import HttpRecorder
from .patches import PATCHES, patch
from .sdk_errors import delivered

if TYPE_CHECKING:
    import httpx2

__all__ = ["install", "is_patched"]

#: Headers of a live answer that no longer hold once its body is read and decoded.
_FRAMING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
#: ``_request`` arguments that build the request itself; the others (timeouts, TLS,
#: proxies) are passed on to the live call unchanged.
_REQUEST_ARGUMENTS = frozenset({"params", "data", "json", "headers"})


class Interception(Protocol):
    """What the seam needs of the running test's interception (see ``intercept``)."""

    @property
    def recorder(self) -> HttpRecorder: ...

    def wants(self, request: httpx2.Request) -> bool: ...


_CLIENT_MODULE: Final = "aiohttp.client"


def install(group: str, current: Callable[[], Interception | None]) -> None:
    """Patch aiohttp now if it is loaded, else as soon as it is imported (in ``group``)."""
    PATCHES.when_imported(group, _CLIENT_MODULE, lambda module: _patch(group, module, current))


def is_patched() -> bool:
    module = sys.modules.get(_CLIENT_MODULE)
    return module is not None and PATCHES.is_patched(module.ClientSession, "_request")


def _patch(
    group: str, client_module: ModuleType, current: Callable[[], Interception | None]
) -> None:
    PATCHES.apply(group, (patch(client_module.ClientSession, "_request", _seam, current),))


def _seam(original: Callable[..., Any], current: Callable[[], Interception | None]) -> Any:
    async def _request(self: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
        session = current()
        if session is None or in_live_call():
            return await original(self, method, str_or_url, **kwargs)
        patience = _patience(self, kwargs)  # aiohttp's clock starts as _request is called
        request = _as_request(self, method, str_or_url, kwargs)
        if request is None or not session.wants(request):
            return await original(self, method, str_or_url, **kwargs)
        passed_on = {k: v for k, v in kwargs.items() if k not in _REQUEST_ARGUMENTS}

        async def live(sent: httpx2.Request) -> httpx2.Response:
            return await _send_live(original, self, sent, passed_on)

        with delivered(), _as_aiohttp_errors():
            answer = await faults.ahandle(session.recorder, request, live, patience)
        response = _as_client_response(self, request, answer)
        check = kwargs.get("raise_for_status")
        if check is None:
            check = self._raise_for_status
        if check is True:
            response.raise_for_status()
        elif callable(check):
            await check(response)
        return response

    return _request


def _patience(session: Any, kwargs: dict[str, Any]) -> Patience:
    """The request's ``ClientTimeout`` as aiohttp resolves it (the argument, else the
    session's; a bare number is a total), and what aiohttp raises when each runs out:
    ``sock_read`` per read (``SocketTimeoutError``), ``total`` for the whole exchange,
    the answer's body included (``asyncio.TimeoutError``)."""
    import aiohttp
    from aiohttp.helpers import sentinel

    timeout = kwargs.get("timeout", sentinel)
    if timeout is sentinel:
        timeout = session.timeout
    if not isinstance(timeout, aiohttp.ClientTimeout):
        timeout = aiohttp.ClientTimeout(total=timeout)
    socket_timeout = getattr(aiohttp, "SocketTimeoutError", aiohttp.ServerTimeoutError)

    def read_error(message: str) -> BaseException:
        return socket_timeout(f"Timeout on reading data from socket ({message})")

    def total_error(message: str) -> BaseException:
        return asyncio.TimeoutError(message)

    return Patience(timeout.sock_read, read_error, timeout.total, total_error)


def _as_request(session: Any, method: str, str_or_url: Any, kwargs: dict[str, Any]) -> Any:
    """The ``httpx2`` request aiohttp would send, or None if its body is not bytes
    vcr_kit can key (a form, a stream): such a request is left to the guard."""
    from yarl import URL

    url = session._build_url(str_or_url) if hasattr(session, "_build_url") else URL(str_or_url)
    params = kwargs.get("params")
    if params:
        url = url.extend_query(params)
    headers = session._prepare_headers(kwargs.get("headers"))
    data, body = kwargs.get("data"), kwargs.get("json")
    content: bytes
    if body is not None:
        content = session._json_serialize(body).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    elif data is None:
        content = b""
    elif isinstance(data, str):
        content = data.encode("utf-8")
    elif isinstance(data, (bytes, bytearray, memoryview)):
        content = bytes(data)
    else:
        return None
    library = sdk_library()
    return library.Request(method.upper(), str(url), headers=list(headers.items()), content=content)


async def _send_live(
    original: Callable[..., Any], session: Any, sent: httpx2.Request, passed_on: dict[str, Any]
) -> httpx2.Response:
    """vcr_kit's live call through aiohttp itself, read to the end and decoded."""
    options = {**passed_on, "auto_decompress": True, "raise_for_status": False}
    headers = [(k, v) for k, v in sent.headers.multi_items() if k.lower() != "content-length"]
    response = await original(
        session, sent.method, str(sent.url), headers=headers, data=sent.content or None, **options
    )
    try:
        body = await response.read()
    finally:
        response.release()
    kept = [(k, v) for k, v in response.headers.items() if k.lower() not in _FRAMING_HEADERS]
    library = sdk_library()
    answer: httpx2.Response = library.Response(
        response.status, headers=kept, content=body, request=sent
    )
    return answer


def _as_client_response(session: Any, request: httpx2.Request, answer: httpx2.Response) -> Any:
    """A real ``aiohttp.ClientResponse`` whose payload is ``answer``'s bytes."""
    from aiohttp import ClientResponse, RequestInfo
    from aiohttp.client_proto import ResponseHandler
    from aiohttp.helpers import TimerNoop
    from aiohttp.http import HttpVersion11
    from aiohttp.streams import StreamReader
    from multidict import CIMultiDict, CIMultiDictProxy
    from yarl import URL

    loop = asyncio.get_running_loop()
    url = URL(str(request.url))
    sent_headers = CIMultiDictProxy(CIMultiDict(request.headers.multi_items()))
    offered: dict[str, Any] = {
        "writer": None,
        "continue100": None,
        "timer": TimerNoop(),
        "request_info": RequestInfo(url, request.method, sent_headers, url),
        "traces": [],
        "loop": loop,
        "session": session,
        "stream_writer": _NothingLeftToWrite(),
    }
    accepted = _constructor_parameters(ClientResponse)
    response = ClientResponse(
        request.method, url, **{k: v for k, v in offered.items() if k in accepted}
    )
    headers = [(k, v) for k, v in answer.headers.multi_items()]
    response.version = HttpVersion11
    response.status = answer.status_code
    try:
        response.reason = HTTPStatus(answer.status_code).phrase
    except ValueError:
        response.reason = ""
    response._headers = CIMultiDictProxy(CIMultiDict(headers))
    response._raw_headers = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers)
    protocol = ResponseHandler(loop=loop)
    if faults.reshaped(answer):  # an injected stream fault: fed as the client reads
        # A reader waits for more only while its protocol is connected.
        protocol.connection_made(_NoSocket())
        wanted = asyncio.Event()
        stream: StreamReader = _paced_reader_class(StreamReader)(
            protocol, 2**16, loop=loop, wanted=wanted
        )
        PATCHES.hold(loop.create_task(_feed(stream, answer, wanted)))  # not collected mid-way
    else:
        stream = StreamReader(protocol, 2**16, loop=loop)
        stream.feed_data(answer.content)
        stream.feed_eof()
    response.content = stream
    return response


class _NoSocket(asyncio.Transport):
    """The connection of a faulted stream fed from memory: open until the feed ends."""

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass


def _paced_reader_class(base: type[Any]) -> type[Any]:
    """aiohttp's ``StreamReader`` that says when its reader has read all it was given and
    waits for more (``_wait``, where every read method waits): made once per class."""
    return PATCHES.made_once(_make_paced_reader, base)


def _make_paced_reader(base: type[Any]) -> type[Any]:
    class PacedReader(base):  # type: ignore[misc]
        def __init__(self, *args: Any, wanted: asyncio.Event, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._vcr_wanted = wanted

        async def _wait(self, func_name: str) -> None:
            self._vcr_wanted.set()
            await super()._wait(func_name)

    return PacedReader


async def _feed(stream: Any, answer: httpx2.Response, wanted: asyncio.Event) -> None:
    """The faulted stream's pieces, one each time the reader wants more: a fault (a cut,
    an error event, a delay) is met when the client reads up to it, and not before."""
    pieces = answer.aiter_raw()
    try:
        while True:
            await wanted.wait()
            wanted.clear()
            try:
                chunk = await pieces.__anext__()
            except StopAsyncIteration:
                break
            stream.feed_data(chunk)
    except Exception as exc:
        stream.set_exception(_aiohttp_error(exc))
    else:
        stream.feed_eof()


@contextmanager
def _as_aiohttp_errors() -> Iterator[None]:
    """An injected transport fault (raised as the SDK's HTTP library's exception) as the
    exception aiohttp raises for the same failure."""
    try:
        yield
    except sdk_library().TransportError as exc:
        raise _aiohttp_error(exc) from exc


def _aiohttp_error(exc: BaseException) -> BaseException:
    import aiohttp

    lib = sdk_library()
    if isinstance(exc, lib.TimeoutException):
        timeout = getattr(aiohttp, "SocketTimeoutError", aiohttp.ServerTimeoutError)
        return timeout(f"Timeout on reading data from socket ({exc})")
    if isinstance(exc, lib.ConnectError):
        return aiohttp.ClientOSError(111, "Connect call failed: Connection refused")
    if isinstance(exc, lib.ReadError):
        return aiohttp.ClientOSError(104, "Connection reset by peer")
    if isinstance(exc, lib.RemoteProtocolError) and "incomplete" in str(exc):
        return aiohttp.ClientPayloadError(
            "Response payload is not completed: <TransferEncodingError: 400, "
            "message='Not enough data to satisfy transfer length header.'>"
        )
    if isinstance(exc, lib.RemoteProtocolError):
        return aiohttp.ServerDisconnectedError()
    return exc


class _NothingLeftToWrite:
    """The request writer of a replayed answer: nothing was sent."""

    output_size = 0


def _constructor_parameters(cls: type[Any]) -> frozenset[str]:
    """``ClientResponse``'s keyword arguments differ between aiohttp releases (read once)."""
    return PATCHES.made_once(_parameters_of, cls)


def _parameters_of(cls: type[Any]) -> frozenset[str]:
    return frozenset(inspect.signature(cls.__init__).parameters)
