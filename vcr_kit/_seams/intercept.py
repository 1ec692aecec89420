"""Record and replay every client that calls the Anthropic API while a test runs.

The seam is the network transport of the HTTP library the SDK sends with:
``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request`` of
``httpx2`` (anthropic >= 1.0), and of ``httpx`` where the SDK (0.x) or a framework
already loaded it. Every client that reaches the network through its library's
own transport goes through it, whatever its class and however it was built: the
SDK's default client, one built at import time, langchain's subclass of
``DefaultHttpxClient``, pydantic-ai's plain ``AsyncClient``. Only requests to the
Anthropic API are recorded or replayed: those to an Anthropic host (see ``hosts``),
and those that carry the ``anthropic-version`` header that every Anthropic SDK
sends, whatever its ``base_url``. Every other request, and
every client whose transport never reaches the network (a test's own
``MockTransport``), is left exactly as it was.

Installed when the first test starts and removed when the last one ends (failing
tests included), through the seams' one registry (``patches.PATCHES``), so outside
tests every client behaves as if vcr_kit were not installed. Installed with it: the
aiohttp seam (``aiohttp_seam``, which takes the same requests), the cloud clients'
credential stand-ins (``cloud_credentials``), and a connection guard (``guard``) that
catches what the seams cannot see: in replay mode no connection to an Anthropic host
or address is made, and in the other modes such a connection is noted in the journal
as a live call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from .._core.httplib import SDK_LIBRARY_NAMES, loaded_libraries
from .._engine import faults
from .._engine.live import in_live_call, to_local_proxy
from .._engine.recorder import HttpRecorder
from . import aiohttp_seam, cloud_credentials, guard, lazytls
from .hosts import HostSet, anthropic_hosts
from .patches import PATCHES, Patch, patch
from .sdk_credentials import filling_credentials
from .sdk_errors import BASE_CLIENT_MODULES, delivered, install_error_passage

if TYPE_CHECKING:
    import httpx2

__all__ = ["Interception", "current", "intercepting", "is_installed"]


@dataclass(frozen=True)
class Interception:
    """What one test intercepts with: its recorder and the hosts it adds."""

    recorder: HttpRecorder
    extra_hosts: tuple[str, ...] = ()

    def hosts(self) -> HostSet:
        return anthropic_hosts(self.extra_hosts)

    def wants(self, request: httpx2.Request) -> bool:
        if to_local_proxy(request):  # a vcr_kit proxy of this process records it
            return False
        # Every Anthropic SDK (Python of any release, TypeScript, Claude Code) sends
        # anthropic-version: its requests are API calls whatever base_url they go to.
        if "anthropic-version" in request.headers:
            return True
        url = request.url
        return self.hosts().matches(url.host, url.port, url.scheme)


#: The patch group of a running test's seams (see ``patches``); its users are the
#: running tests' interceptions, the last one entered first.
_SEAMS: Final = "the test's seams"


def current() -> Interception | None:
    session: Interception | None = PATCHES.last(_SEAMS)
    return session


def _sync_seam(original: Callable[..., Any]) -> Callable[..., Any]:
    def handle_request(self: Any, request: httpx2.Request) -> httpx2.Response:
        session = current()
        if session is None or in_live_call() or not session.wants(request):
            response: httpx2.Response = original(self, request)
            return response
        with delivered():
            return faults.handle(session.recorder, request, lambda r: original(self, r))

    return handle_request


def _async_seam(original: Callable[..., Any]) -> Callable[..., Any]:
    async def handle_async_request(self: Any, request: httpx2.Request) -> httpx2.Response:
        session = current()
        if session is None or in_live_call() or not session.wants(request):
            response: httpx2.Response = await original(self, request)
            return response

        async def live(r: httpx2.Request) -> httpx2.Response:
            answer: httpx2.Response = await original(self, r)
            return answer

        with delivered():
            return await faults.ahandle(session.recorder, request, live)

    return handle_async_request


def _install() -> None:
    libraries = loaded_libraries()  # imports the SDK's library
    for library in libraries:
        _patch_library(library)
    # One imported while a test runs (litellm imports httpx on first use) is patched then.
    for name in SDK_LIBRARY_NAMES:
        if name not in sys.modules:
            PATCHES.when_imported(_SEAMS, name, _patch_library)
    # Clients built during the test set up TLS only if they go live.
    lazytls.install(_SEAMS, libraries)
    # vcr_kit's errors cross the SDK's retry loop as themselves: wrapped now if the SDK
    # is loaded, else the moment a test imports it (anthropic 0.x would otherwise turn
    # the first request's miss into "Connection error."). Never put back: see sdk_errors.
    install_error_passage()
    for base_client in BASE_CLIENT_MODULES:  # OpenAI's SDK retries the same way
        if base_client not in sys.modules:
            PATCHES.when_imported(_SEAMS, base_client, install_error_passage)
    cloud_credentials.install(_SEAMS, current)  # the cloud clients sign nothing while replaying
    aiohttp_seam.install(_SEAMS, current)  # now if aiohttp is loaded, else when it is imported
    guard.install(_SEAMS, current)


def _patch_library(library: ModuleType) -> None:
    PATCHES.apply(_SEAMS, PATCHES.made_once(_library_patches, library))


def _library_patches(library: ModuleType) -> tuple[Patch, ...]:
    return (
        patch(library.HTTPTransport, "handle_request", _sync_seam),
        patch(library.AsyncHTTPTransport, "handle_async_request", _async_seam),
    )


@contextmanager
def intercepting(recorder: HttpRecorder, extra_hosts: Sequence[str] = ()) -> Iterator[None]:
    """While the block runs, every client's requests to an Anthropic host go through
    ``recorder``, and SDK clients built without a key get one per request."""
    session = Interception(recorder, tuple(extra_hosts))
    session.hosts()  # a bad VCR_HOSTS or vcr_hosts fails when the test starts
    # _install is idempotent: it also patches a library loaded since the last test.
    # The last test to leave puts every patch back (and removes the import hooks).
    with PATCHES.entered(_SEAMS, session, _install), filling_credentials():
        yield


def is_installed() -> bool:
    return PATCHES.holds(_SEAMS)
