"""The transparent client: an SDK client whose HTTP goes through vcr_kit.

The whole integration is one transport handed to the SDK (its documented
``http_client`` seam); nothing of the SDK is patched. The transport belongs to the
HTTP library the installed SDK uses (``httpx2``, or ``httpx`` for anthropic 0.x),
and its real network transport is created only on the first miss, so a replaying
client makes no connection.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._core.config import Mode, load_dotenv_once
from .._core.credentials import REPLAY_API_KEY, has_real_credentials
from .._core.httplib import sdk_library
from .._engine import faults
from .._engine.recorder import HttpRecorder
from .patches import PATCHES
from .sdk_errors import delivered, install_error_passage

if TYPE_CHECKING:  # imported on first use: `import anthropic` costs most of a second
    import anthropic
    import httpx2

__all__ = ["VCRTransport", "async_client", "client", "transport_class"]


class _RecordingTransport:
    """What ``VCRTransport`` does, whichever library's transport classes it extends."""

    _library: ModuleType

    def __init__(
        self,
        *,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
        live: Any = None,
        async_live: Any = None,
        can_record: bool = True,
    ) -> None:
        self.recorder = HttpRecorder(mode=mode, fixtures_dir=fixtures_dir, can_record=can_record)
        self._live = live
        self._async_live = async_live

    def _live_transport(self) -> Any:
        if self._live is None:
            self._live = self._library.HTTPTransport()
        return self._live

    def _async_live_transport(self) -> Any:
        if self._async_live is None:
            self._async_live = self._library.AsyncHTTPTransport()
        return self._async_live

    def _send(self, request: httpx2.Request) -> httpx2.Response:
        answer: httpx2.Response = self._live_transport().handle_request(request)
        return answer

    async def _asend(self, request: httpx2.Request) -> httpx2.Response:
        answer: httpx2.Response = await self._async_live_transport().handle_async_request(request)
        return answer

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        with delivered():
            if faults.in_force():
                return faults.handle(self.recorder, request, self._send)
            return self.recorder.handle(request, self._send)  # most replays: nothing between

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        with delivered():
            if faults.in_force():
                return await faults.ahandle(self.recorder, request, self._asend)
            return await self.recorder.ahandle(request, self._asend)

    def close(self) -> None:
        if self._live is not None:
            self._live.close()

    async def aclose(self) -> None:
        if self._async_live is not None:
            await self._async_live.aclose()


def transport_class(library: ModuleType | None = None) -> type[Any]:
    """``VCRTransport`` for ``library`` (default: the SDK's): sync and async in one,
    made once per library."""
    cls: type[Any] = PATCHES.made_once(_new_transport_class, library or sdk_library())
    return cls


def _new_transport_class(library: ModuleType) -> type[Any]:
    return type(
        "VCRTransport",
        (_RecordingTransport, library.BaseTransport, library.AsyncBaseTransport),
        {
            "__module__": "vcr_kit",
            "__doc__": "A transport that records and replays; usable by sync and async "
            f"{library.__name__} clients.",
            "_library": library,
        },
    )


def __getattr__(name: str) -> Any:
    if name == "VCRTransport":  # built for the SDK's library the first time it is asked for
        return transport_class()
    raise AttributeError(name)


def _credentials(kwargs: dict[str, Any]) -> bool:
    """Whether the client will have a real credential; if not, give it the dummy key."""
    load_dotenv_once()
    if kwargs.get("api_key") not in (None, "", REPLAY_API_KEY) or kwargs.get("auth_token"):
        return True
    if has_real_credentials():
        return True
    kwargs["api_key"] = REPLAY_API_KEY
    return False


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    if "http_client" in kwargs:
        raise TypeError(
            "vcr_kit.client() builds its own http_client (that is how it records); "
            "pass the other options only."
        )


def _transport(
    mode: str | Mode | None, fixtures_dir: str | Path | None, kwargs: dict[str, Any]
) -> Any:
    _check_kwargs(kwargs)
    can_record = _credentials(kwargs)
    install_error_passage()  # the SDK is loaded by now: its errors pass unretried from here on
    return transport_class()(mode=mode, fixtures_dir=fixtures_dir, can_record=can_record)


def client(
    *, mode: str | Mode | None = None, fixtures_dir: str | Path | None = None, **kwargs: Any
) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` that records and replays every request.

    ``kwargs`` go to ``anthropic.Anthropic`` (``base_url``, ``max_retries``, ...).
    With no key in the arguments or the environment, replay still works.
    """
    import anthropic

    transport = _transport(mode, fixtures_dir, kwargs)
    return anthropic.Anthropic(
        http_client=anthropic.DefaultHttpxClient(transport=transport), **kwargs
    )


def async_client(
    *, mode: str | Mode | None = None, fixtures_dir: str | Path | None = None, **kwargs: Any
) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` that records and replays every request."""
    import anthropic

    transport = _transport(mode, fixtures_dir, kwargs)
    return anthropic.AsyncAnthropic(
        http_client=anthropic.DefaultAsyncHttpxClient(transport=transport), **kwargs
    )


# Keep the name importable for type checkers (`from vcr_kit._seams.transport import ...`).
if TYPE_CHECKING:
    VCRTransport = _RecordingTransport
