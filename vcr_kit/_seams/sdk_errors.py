"""vcr_kit's errors through the SDK: a missing fixture reaches the caller at once, as itself.

The SDK catches every exception its HTTP client raises, retries it with back-off
sleeps and reports "Connection error." (0.x does so for every exception; 1.0 and
later let their own ``AnthropicError`` through). So ``SyncAPIClient.request`` and
``AsyncAPIClient.request`` are wrapped (once, and inert unless vcr_kit raises inside
them): vcr_kit's error crosses the SDK as a ``BaseException`` that no
``except Exception`` stops, and the wrapper raises the error itself again. Every
seam that runs inside an SDK client raises its errors through ``delivered``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextvars import ContextVar
from types import ModuleType
from typing import Any, Final

from ..errors import VCRError
from .patches import PATCHES, patch

__all__ = [
    "BASE_CLIENT_MODULE",
    "BASE_CLIENT_MODULES",
    "deliver",
    "delivered",
    "install_error_passage",
]

_inside_request: ContextVar[bool] = ContextVar("vcr_kit_inside_sdk_request", default=False)
#: The patch group of the SDK's wrapped ``request`` methods: applied once, never put back
#: (the wrappers are inert unless vcr_kit raises inside them).
_PASSAGE: Final = "vcr_kit errors through the SDK"


class _Escape(BaseException):
    """Carries a vcr_kit error through the SDK's ``except Exception`` retry loop."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


#: The SDK module whose ``request`` methods are wrapped: a seam that finds it not yet
#: imported asks ``patches`` to call ``install_error_passage`` once it is.
BASE_CLIENT_MODULE: Final = "anthropic._base_client"
#: Every SDK built the same way (Stainless's generator: the same retry loop, the same
#: "Connection error."): Anthropic's first, then OpenAI's.
BASE_CLIENT_MODULES: Final = (BASE_CLIENT_MODULE, "openai._base_client")


def install_error_passage(base_client: ModuleType | None = None) -> None:
    """Wrap the SDKs' ``request`` methods once each: those of ``base_client`` (the
    module just imported), else of each SDK already loaded; a no-op when none is."""
    modules = (
        [base_client]
        if base_client is not None
        else [sys.modules[name] for name in BASE_CLIENT_MODULES if name in sys.modules]
    )
    for loaded in modules:
        group = f"{_PASSAGE} ({loaded.__name__})"
        if PATCHES.holds(group):
            continue
        module: Any = loaded  # the SDK's own classes, patched in place
        PATCHES.apply(
            group,
            (
                patch(module.SyncAPIClient, "request", _passing),
                patch(module.AsyncAPIClient, "request", _apassing),
            ),
            once=True,
        )


def _passing(sync_request: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(sync_request)
    def request(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _inside_request.set(True)
        try:
            return sync_request(self, *args, **kwargs)
        except _Escape as escape:
            raise escape.error from None
        finally:
            _inside_request.reset(token)

    return request


def _apassing(async_request: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(async_request)
    async def arequest(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _inside_request.set(True)
        try:
            return await async_request(self, *args, **kwargs)
        except _Escape as escape:
            raise escape.error from None
        finally:
            _inside_request.reset(token)

    return arequest


def deliver(error: VCRError) -> BaseException:
    """What to raise from inside an HTTP client so that the caller gets ``error``."""
    if _inside_request.get():
        return _Escape(error)
    if any(name in sys.modules for name in BASE_CLIENT_MODULES):
        install_error_passage()  # for the next request; this one is already under way
    if "anthropic" in sys.modules:
        return through_sdk(error)
    return error


def through_sdk(exc: VCRError) -> VCRError:
    """``exc`` as the same class that is also an ``AnthropicError``, which anthropic 1.0
    and later re-raise unretried: the fallback for a request already under way when
    the SDK was first seen (its ``request`` could not be wrapped in time)."""
    import anthropic

    cls = type(exc)
    if isinstance(exc, anthropic.AnthropicError):
        return exc
    visible: type[VCRError] = PATCHES.made_once(_sdk_visible, cls, anthropic.AnthropicError)
    return visible(exc.message, exc.path).with_traceback(exc.__traceback__)


def _sdk_visible(cls: type[VCRError], sdk_error: type[Exception]) -> type[VCRError]:
    """``cls`` that is also the SDK's ``AnthropicError``."""
    return type(
        cls.__name__,
        (cls, sdk_error),
        {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            # Pickled as the plain vcr_kit class, which can be found by its name.
            "__reduce__": lambda self: (cls, (self.message, self.path)),
        },
    )


class _Delivered:
    """``with delivered():`` vcr_kit's errors raised in the block reach the caller as
    themselves (``deliver``), with the cause they were raised with. A class, not a
    generator-based context manager: it wraps every replayed request, and costs a
    tenth as much."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, VCRError):
            raise deliver(exc) from exc.__cause__


def delivered() -> _Delivered:
    """See ``_Delivered``: one shared, stateless instance."""
    return _DELIVERED


_DELIVERED: Final = _Delivered()
