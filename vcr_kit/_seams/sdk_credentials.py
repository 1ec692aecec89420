"""Credentials of SDK clients built before the test.

``client = anthropic.Anthropic()`` at module level, with no key yet (replay) or the
key only in ``.env`` (read later), fails while the SDK builds the request, before any
transport runs. While a test runs, ``_validate_headers`` of ``Anthropic`` and
``AsyncAnthropic`` first fills in a missing key: the environment's (``.env``
included), else vcr_kit's stand-in, which a replay never sends anywhere and a miss
explains (see ``_core.credentials``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Final

from .._core.credentials import environment_key
from .patches import PATCHES, patch

__all__ = ["filling_credentials"]

#: The patch group (see ``patches``): entered by every running test, patched by the first.
_CREDENTIALS: Final = "SDK clients' credentials"


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
            headers["X-Api-Key"] = environment_key()
        original(self, headers, *extra, **kwargs)

    return validate


def filling_credentials() -> AbstractContextManager[None]:
    """While the block runs, SDK clients built without a key get one per request: patched
    when the first running test enters if the SDK is loaded, put back when the last leaves."""
    return PATCHES.entered(_CREDENTIALS, None, _patch_credentials, each_entry=False)


def _patch_credentials() -> None:
    anthropic = sys.modules.get("anthropic")
    if anthropic is None:
        return
    PATCHES.apply(
        _CREDENTIALS,
        (
            patch(cls, "_validate_headers", _filling)
            for cls in (anthropic.Anthropic, anthropic.AsyncAnthropic)
            if "_validate_headers" in cls.__dict__
        ),
    )
