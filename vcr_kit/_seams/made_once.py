"""Seam wrappers made once per process.

Every test installs the seams and removes them again when it ends, so that outside
tests every client behaves as if vcr_kit were not there. Installing is a few
``setattr``s; making the wrappers (``functools.wraps`` copies names and docs, a closure
per wrapped method) cost more than the rest of a test's set-up together. A wrapper
depends only on what it wraps and on the session finder it asks, so the one made for
those is kept and installed again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["made_once"]

T = TypeVar("T")

_made: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def made_once(make: Callable[..., T], *args: Any) -> T:
    """``make(*args)``, the same object for the same ``make`` and ``args`` (which must
    be hashable: the functions and classes wrapped, the session finder)."""
    key = (make, *args)
    made = _made.get(key)
    if made is None:
        with _lock:
            made = _made.get(key)
            if made is None:
                made = _made[key] = make(*args)
    result: T = made
    return result
