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
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .._core.credentials import environment_key
from .made_once import made_once

__all__ = ["filling_credentials"]

_lock = threading.RLock()
_credential_saved: dict[type[Any], Any] = {}
_credential_users = [0]


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
        cls._validate_headers = made_once(_filling, own)  # type: ignore[method-assign]
