"""Record and replay the SDK clients that the code under test builds itself.

The seam, and the only thing vcr_kit ever patches: ``send`` of the SDK's own
default HTTP client classes (``anthropic._base_client.SyncHttpxClientWrapper``
and ``AsyncHttpxClientWrapper``), which every ``anthropic.Anthropic()`` /
``AsyncAnthropic()`` built without an ``http_client=`` uses. It is installed
when the first ``VCRTestCase`` test starts and removed when the last one ends
(a failing or erroring test included), so outside tests every client behaves as
if vcr_kit were not installed. Clients built with a custom ``http_client`` are
not intercepted: use ``vcr_kit.client()`` or ``VCRTransport`` for those.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2

from ._http import HttpRecorder

_lock = threading.RLock()
_recorders: list[HttpRecorder] = []
# (class, attribute) -> the function it had in its own __dict__, or None if inherited.
_saved: dict[type[Any], Any] = {}


def _current() -> HttpRecorder | None:
    return _recorders[-1] if _recorders else None


def _wrapper_classes() -> tuple[type[httpx2.Client], type[httpx2.AsyncClient]]:
    from anthropic import _base_client

    return _base_client.SyncHttpxClientWrapper, _base_client.AsyncHttpxClientWrapper


def _install() -> None:
    sync_cls, async_cls = _wrapper_classes()
    original_send = sync_cls.send
    original_asend = async_cls.send

    def send(self: httpx2.Client, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        recorder = _current()
        if recorder is None:
            live: httpx2.Response = original_send(self, request, **kwargs)
            return live
        return recorder.handle(request, lambda r: original_send(self, r, **kwargs))

    async def asend(
        self: httpx2.AsyncClient, request: httpx2.Request, **kwargs: Any
    ) -> httpx2.Response:
        recorder = _current()
        if recorder is None:
            passed: httpx2.Response = await original_asend(self, request, **kwargs)
            return passed

        async def live(r: httpx2.Request) -> httpx2.Response:
            answer: httpx2.Response = await original_asend(self, r, **kwargs)
            return answer

        return await recorder.ahandle(request, live)

    for cls, replacement in ((sync_cls, send), (async_cls, asend)):
        _saved[cls] = cls.__dict__.get("send")
        cls.send = replacement  # type: ignore[method-assign]


def _uninstall() -> None:
    for cls, own in _saved.items():
        if own is None:
            del cls.send
        else:
            cls.send = own
    _saved.clear()


@contextmanager
def intercepting(recorder: HttpRecorder) -> Iterator[None]:
    """While the block runs, SDK clients with the default HTTP client go through ``recorder``."""
    with _lock:
        _recorders.append(recorder)
        if len(_recorders) == 1:
            _install()
    try:
        yield
    finally:
        with _lock:
            _recorders.remove(recorder)
            if not _recorders:
                _uninstall()


def is_installed() -> bool:
    with _lock:
        return bool(_saved)
