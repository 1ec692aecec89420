"""What the API answers that is never stored: failures the SDK retries.

One list for every place that decides (the HTTP codec, the cassettes' error codec,
the fixture schema): a status treated as transient in one of them and not in
another would store an answer that replay then loops on.
"""

from __future__ import annotations

from typing import Final

__all__ = ["TRANSIENT_ERROR_TYPES", "TRANSIENT_STATUSES", "is_transient"]

#: Statuses the SDK retries (besides every 5xx), never a fixture.
TRANSIENT_STATUSES: Final = frozenset({408, 409, 429})
#: SSE ``error`` events of these types are transient, like a 529 before the stream.
TRANSIENT_ERROR_TYPES: Final = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


def is_transient(status: int) -> bool:
    """Whether an answer with this status is a failure the SDK retries."""
    return status in TRANSIENT_STATUSES or status >= 500
