"""The transparent client: an SDK client whose HTTP goes through vcr_kit.

The whole integration is one httpx2 transport handed to the SDK (its documented
``http_client`` seam); nothing of the SDK is patched. The real network transport
is created only on the first miss, so a replaying client makes no connection.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx2

from ._config import Mode, load_dotenv_once
from ._http import HttpRecorder

if TYPE_CHECKING:  # imported on first use: `import anthropic` costs most of a second
    import anthropic

__all__ = ["VCRTransport", "async_client", "client"]

#: Given to a client that has no credentials, so the SDK builds requests; a replay
#: never sends it anywhere, and a miss explains that recording needs a real key.
REPLAY_API_KEY: Final = "vcr-kit-replay-no-key"
_CREDENTIAL_VARS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


class VCRTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An httpx2 transport that records and replays; usable by sync and async clients."""

    def __init__(
        self,
        *,
        mode: str | Mode | None = None,
        fixtures_dir: str | Path | None = None,
        live: httpx2.BaseTransport | None = None,
        async_live: httpx2.AsyncBaseTransport | None = None,
        can_record: bool = True,
    ) -> None:
        self.recorder = HttpRecorder(mode=mode, fixtures_dir=fixtures_dir, can_record=can_record)
        self._live = live
        self._async_live = async_live

    def _live_transport(self) -> httpx2.BaseTransport:
        if self._live is None:
            self._live = httpx2.HTTPTransport()
        return self._live

    def _async_live_transport(self) -> httpx2.AsyncBaseTransport:
        if self._async_live is None:
            self._async_live = httpx2.AsyncHTTPTransport()
        return self._async_live

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self.recorder.handle(request, lambda r: self._live_transport().handle_request(r))

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        async def live(r: httpx2.Request) -> httpx2.Response:
            return await self._async_live_transport().handle_async_request(r)

        return await self.recorder.ahandle(request, live)

    def close(self) -> None:
        if self._live is not None:
            self._live.close()

    async def aclose(self) -> None:
        if self._async_live is not None:
            await self._async_live.aclose()


def _credentials(kwargs: dict[str, Any]) -> bool:
    """Whether the client will have a real credential; if not, give it the dummy key."""
    load_dotenv_once()
    if kwargs.get("api_key") not in (None, "", REPLAY_API_KEY) or kwargs.get("auth_token"):
        return True
    if has_real_credentials():
        return True
    kwargs["api_key"] = REPLAY_API_KEY
    return False


def has_real_credentials() -> bool:
    """A key in the environment that is not vcr_kit's own stand-in (set during tests)."""
    values = (os.environ.get(name) for name in _CREDENTIAL_VARS)
    return any(value and value != REPLAY_API_KEY for value in values)


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    if "http_client" in kwargs:
        raise TypeError(
            "vcr_kit.client() builds its own http_client (that is how it records); "
            "pass the other options only."
        )


def client(
    *, mode: str | Mode | None = None, fixtures_dir: str | Path | None = None, **kwargs: Any
) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` that records and replays every request.

    ``kwargs`` go to ``anthropic.Anthropic`` (``base_url``, ``max_retries``, ...).
    With no key in the arguments or the environment, replay still works.
    """
    import anthropic

    _check_kwargs(kwargs)
    transport = VCRTransport(mode=mode, fixtures_dir=fixtures_dir, can_record=_credentials(kwargs))
    return anthropic.Anthropic(
        http_client=anthropic.DefaultHttpxClient(transport=transport), **kwargs
    )


def async_client(
    *, mode: str | Mode | None = None, fixtures_dir: str | Path | None = None, **kwargs: Any
) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` that records and replays every request."""
    import anthropic

    _check_kwargs(kwargs)
    transport = VCRTransport(mode=mode, fixtures_dir=fixtures_dir, can_record=_credentials(kwargs))
    return anthropic.AsyncAnthropic(
        http_client=anthropic.DefaultAsyncHttpxClient(transport=transport), **kwargs
    )
