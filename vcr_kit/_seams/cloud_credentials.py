"""Credentials of the SDK's cloud clients (Bedrock, Vertex, Google Cloud, AWS), only
while a test runs.

Each signs or authenticates a request in its ``_prepare_request``: SigV4 from AWS
credentials, a Google access token, looked up when the request is built. A replay
sends nothing anywhere, so while a test runs that step is wrapped: in replay mode it
is skipped (no credential look-up, no metadata server, no boto3 or google-auth
call) and the request carries vcr_kit's stand-in instead; in the other modes the
platform's own step runs, and only if it finds no credentials is the stand-in
given, so that a recorded fixture still replays and a missing one says what
recording needs. The stand-in is never sent upstream: the recorder refuses to
record with it. Foundry takes its key when built: the session sets a stand-in
``ANTHROPIC_FOUNDRY_API_KEY`` (see ``_core.credentials``). google-genai's Vertex AI
client (``genai.Client(vertexai=True, project=..., location=...)``) gets its Google
access token from ``_access_token`` (and ``_async_access_token``): wrapped the same way,
its stand-in is the token.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, Protocol

from .._core.config import Mode
from .._core.credentials import REPLAY_API_KEY
from .._core.platforms import PLATFORMS
from .._engine.recorder import HttpRecorder
from .patches import PATCHES, Patch, patch

__all__ = ["install"]

#: Modules whose errors mean "no credentials here" (or no library to find them with).
_CREDENTIAL_LIBRARIES = frozenset({"botocore", "boto3", "google"})


class Interception(Protocol):
    @property
    def recorder(self) -> HttpRecorder: ...


#: google-genai's module whose client looks its Vertex AI access token up.
_GENAI_CLIENT: Final = "google.genai._api_client"


def install(group: str, current: Callable[[], Interception | None]) -> None:
    """Wrap every cloud client class's ``_prepare_request``, and google-genai's token
    look-up (in ``group``): now if the SDK is loaded, else as soon as it is imported."""
    PATCHES.when_imported(group, "anthropic", lambda module: _patch(group, module, current))
    PATCHES.when_imported(
        group,
        _GENAI_CLIENT,
        lambda module: PATCHES.apply(group, PATCHES.made_once(_genai_patches, module, current)),
    )


def _genai_patches(
    module: ModuleType, current: Callable[[], Interception | None]
) -> tuple[Patch, ...]:
    client = module.BaseApiClient
    return (
        patch(client, "_access_token", _token_wrapped, current),
        patch(client, "_async_access_token", _token_wrapped, current),
    )


def _token_wrapped(own: Callable[..., Any], current: Callable[[], Interception | None]) -> Any:
    """``own`` (the client's token look-up), or the stand-in token: while replaying, or
    where no credentials are found."""
    if inspect.iscoroutinefunction(own):

        @functools.wraps(own)
        async def atoken(self: Any) -> Any:
            if current() is None:
                return await own(self)
            if _replaying(current):
                return REPLAY_API_KEY
            try:
                return await own(self)
            except Exception as exc:
                if not _missing_credentials(exc):
                    raise
                return REPLAY_API_KEY

        return atoken

    @functools.wraps(own)
    def token(self: Any) -> Any:
        if current() is None:
            return own(self)
        if _replaying(current):
            return REPLAY_API_KEY
        try:
            return own(self)
        except Exception as exc:
            if not _missing_credentials(exc):
                raise
            return REPLAY_API_KEY

    return token


def _patch(group: str, anthropic: ModuleType, current: Callable[[], Interception | None]) -> None:
    PATCHES.apply(group, PATCHES.made_once(_patches, anthropic, current))


def _patches(
    anthropic: ModuleType, current: Callable[[], Interception | None]
) -> tuple[Patch, ...]:
    """The SDK's cloud client classes with a signing step of their own (found once)."""
    return tuple(
        patch(cls, "_prepare_request", _wrapped, current)
        for platform in PLATFORMS
        for name in platform.clients
        if (cls := getattr(anthropic, name, None)) is not None
        and "_prepare_request" in cls.__dict__
    )


def _replaying(current: Callable[[], Interception | None]) -> bool:
    session = current()
    return session is not None and session.recorder.settings.mode is Mode.REPLAY


def _missing_credentials(exc: Exception) -> bool:
    """The platform's step failed for want of credentials (or of the library that
    finds them), not for a fault of the request."""
    if isinstance(exc, ImportError):
        return True
    if type(exc).__module__.split(".", 1)[0] in _CREDENTIAL_LIBRARIES:
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("credentials" in text or "token" in text)


def _stand_in(request: Any) -> None:
    if "authorization" not in request.headers:
        request.headers["Authorization"] = f"Bearer {REPLAY_API_KEY}"


def _wrapped(own: Callable[..., Any], current: Callable[[], Interception | None]) -> Any:
    if inspect.iscoroutinefunction(own):

        @functools.wraps(own)
        async def aprepare(self: Any, request: Any) -> None:
            if current() is None:
                await own(self, request)
            elif _replaying(current):
                _stand_in(request)
            else:
                try:
                    await own(self, request)
                except Exception as exc:
                    if not _missing_credentials(exc):
                        raise
                    _stand_in(request)

        return aprepare

    @functools.wraps(own)
    def prepare(self: Any, request: Any) -> None:
        if current() is None:
            own(self, request)
        elif _replaying(current):
            _stand_in(request)
        else:
            try:
                own(self, request)
            except Exception as exc:
                if not _missing_credentials(exc):
                    raise
                _stand_in(request)

    return prepare
