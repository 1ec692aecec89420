"""The two places where the SDK itself, not its HTTP library, stands in vcr_kit's way.

1. **Errors.** The SDK catches every exception its HTTP client raises, retries it with
   back-off sleeps and reports "Connection error." (0.x does so for every
   exception; 1.0 and later let their own ``AnthropicError`` through). A missing
   fixture must reach the caller at once and as itself. So ``SyncAPIClient.request``
   and ``AsyncAPIClient.request`` are wrapped (once, and inert unless vcr_kit raises
   inside them): vcr_kit's error crosses the SDK as a ``BaseException`` that no
   ``except Exception`` stops, and the wrapper raises the error itself again.
2. **Credentials of clients built before the test.** ``client = anthropic.Anthropic()``
   at module level, with no key yet (replay) or the key only in ``.env`` (read
   later), fails while the SDK builds the request, before any transport runs. While
   a test runs, ``_validate_headers`` of ``Anthropic`` and ``AsyncAnthropic`` first
   fills in a missing key: the environment's (``.env`` included), else vcr_kit's
   stand-in, which a replay never sends anywhere and a miss explains.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from ..errors import VCRError

__all__ = ["REPLAY_API_KEY", "deliver", "filling_credentials", "install_error_passage"]

#: Given to a client that has no credentials, so the SDK builds requests; a replay
#: never sends it anywhere, and a miss explains that recording needs a real key.
REPLAY_API_KEY: Final = "vcr-kit-replay-no-key"
CREDENTIAL_VARS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

_inside_request: ContextVar[bool] = ContextVar("vcr_kit_inside_sdk_request", default=False)
_lock = threading.RLock()
_passage_installed: list[bool] = []
_credential_saved: dict[type[Any], Any] = {}
_credential_users = [0]


class _Escape(BaseException):
    """Carries a vcr_kit error through the SDK's ``except Exception`` retry loop."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


# -- 1. errors ----------------------------------------------------------------------


def install_error_passage() -> None:
    """Wrap the SDK's ``request`` methods once (only if the SDK is loaded already)."""
    if _passage_installed or "anthropic" not in sys.modules:
        return
    with _lock:
        if _passage_installed:
            return
        from anthropic import _base_client

        sync_request = _base_client.SyncAPIClient.request
        async_request = _base_client.AsyncAPIClient.request

        @functools.wraps(sync_request)
        def request(self: Any, *args: Any, **kwargs: Any) -> Any:
            token = _inside_request.set(True)
            try:
                return sync_request(self, *args, **kwargs)
            except _Escape as escape:
                raise escape.error from None
            finally:
                _inside_request.reset(token)

        @functools.wraps(async_request)
        async def arequest(self: Any, *args: Any, **kwargs: Any) -> Any:
            token = _inside_request.set(True)
            try:
                return await async_request(self, *args, **kwargs)
            except _Escape as escape:
                raise escape.error from None
            finally:
                _inside_request.reset(token)

        _base_client.SyncAPIClient.request = request  # type: ignore[method-assign]
        _base_client.AsyncAPIClient.request = arequest  # type: ignore[method-assign]
        _passage_installed.append(True)


def deliver(error: VCRError) -> BaseException:
    """What to raise from inside an HTTP client so that the caller gets ``error``."""
    if _inside_request.get():
        return _Escape(error)
    if "anthropic" in sys.modules:
        install_error_passage()  # for the next request; this one is already under way
        return through_sdk(error)
    return error


_SDK_VISIBLE: dict[type[VCRError], type[VCRError]] = {}


def through_sdk(exc: VCRError) -> VCRError:
    """``exc`` as the same class that is also an ``AnthropicError``, which anthropic 1.0
    and later re-raise unretried: the fallback for a request already under way when
    the SDK was first seen (its ``request`` could not be wrapped in time)."""
    import anthropic

    cls = type(exc)
    if isinstance(exc, anthropic.AnthropicError):
        return exc
    visible = _SDK_VISIBLE.get(cls)
    if visible is None:
        visible = type(
            cls.__name__,
            (cls, anthropic.AnthropicError),
            {
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                # Pickled as the plain vcr_kit class, which can be found by its name.
                "__reduce__": lambda self: (cls, (self.message, self.path)),
            },
        )
        _SDK_VISIBLE[cls] = visible
    return visible(exc.message, exc.path).with_traceback(exc.__traceback__)


# -- 2. credentials -----------------------------------------------------------------


def current_key() -> str:
    """The key a client without one gets during a test: the environment's, else the
    stand-in (``.env`` was loaded when the test started)."""
    for name in CREDENTIAL_VARS[:1]:
        value = os.environ.get(name)
        if value:
            return value
    return REPLAY_API_KEY


def _has_auth(headers: Any, extra: tuple[Any, ...]) -> bool:
    if headers.get("Authorization") or headers.get("X-Api-Key"):
        return True
    if headers.get("authorization") or headers.get("x-api-key"):
        return True
    omitted = extra[0] if extra else None
    if isinstance(omitted, (set, frozenset)):  # 1.0 and later: names the user omitted
        return bool({name.lower() for name in omitted} & {"authorization", "x-api-key"})
    if omitted is not None and hasattr(omitted, "get"):  # 0.x: custom headers, Omit marks
        return any(
            type(omitted.get(name)).__name__ == "Omit" for name in ("X-Api-Key", "Authorization")
        )
    return False


def _filling(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def validate(self: Any, headers: Any, *extra: Any, **kwargs: Any) -> None:
        if not _has_auth(headers, extra):
            headers["X-Api-Key"] = current_key()
        original(self, headers, *extra, **kwargs)

    return validate


@contextmanager
def filling_credentials() -> Iterator[None]:
    """While the block runs, SDK clients built without a key get one per request."""
    with _lock:
        _credential_users[0] += 1
        if _credential_users[0] == 1 and "anthropic" in sys.modules:
            _patch_credentials()
    try:
        yield
    finally:
        with _lock:
            _credential_users[0] -= 1
            if _credential_users[0] == 0:
                for cls, own in _credential_saved.items():
                    cls._validate_headers = own
                _credential_saved.clear()


def _patch_credentials() -> None:
    import anthropic

    for cls in (anthropic.Anthropic, anthropic.AsyncAnthropic):
        own = cls.__dict__.get("_validate_headers")
        if own is None or cls in _credential_saved:
            continue
        _credential_saved[cls] = own
        cls._validate_headers = _filling(own)  # type: ignore[method-assign]
