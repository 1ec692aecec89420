"""The last check before a fixture reaches the disk: no key may be in it.

Headers that carry credentials are never stored in the first place; this scan
catches what slips through anyway (a key echoed in a prompt, a tool result that
printed the environment) by looking at the exact bytes about to be written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from .._core.config import allowed_secrets
from .._core.credentials import live_secrets
from .._core.paths import display_path
from ..errors import SecretLeakError
from .secret_shapes import NOTHING_ALLOWED, find_hit, locate, streamed_texts

__all__ = ["find_secret", "scan_for_secrets", "scan_request"]

_ADVICE: Final = (
    "Keep secrets out of prompts and tool results, or add a dehydrate rule that replaces them"
)
#: Said only of a shape: a live key is a secret whatever it looks like.
_ALLOW_ADVICE: Final = (
    " If it is not a secret, list it (or a re: pattern) in VCR_ALLOW_SECRETS."
)
#: Said of a live value when an allowlist is set: its entries are not the way out.
_LIVE_ADVICE: Final = (
    " VCR_ALLOW_SECRETS never admits a credential of this process, in any encoding."
)


def find_secret(
    data: bytes, extra: Iterable[tuple[str, str]] = (), document: Any = None, root: str = ""
) -> tuple[str, str] | None:
    """(what, where) of the first live key value or key-shaped string in ``data`` (the
    serialized ``document``) or in a streamed block of ``document``; None if there is
    none. ``where`` is the JSON path under ``root`` when ``document`` is given, else a
    byte offset. Never the secret itself."""
    secrets = live_secrets(extra)
    allowed = allowed_secrets()
    hit = find_hit(data, secrets, allowed)  # the one pass every write pays
    if hit is None:
        for number, text in enumerate(streamed_texts(document), start=1):
            hit = find_hit(text.encode("utf-8", "surrogatepass"), secrets, allowed)
            if hit is not None:
                return hit.kind, f"in streamed block {number} (joined from its deltas)"
        return None
    if document is None:
        return hit.kind, f"at byte {hit.start}"
    found = locate(document, root, secrets, allowed)
    if found is None:  # split across strings in a way no single one shows
        return hit.kind, f"at byte {hit.start} of the file"
    where, located = found
    return located.kind, f"at {where or 'the top level'}"


def scan_for_secrets(
    data: bytes, path: Path, extra: Iterable[tuple[str, str]] = (), document: Any = None
) -> None:
    """Raise ``SecretLeakError`` if ``data`` (or a streamed block of ``document``) holds a
    live key value or a key-shaped string. The message says where, never what."""
    found = find_secret(data, extra, document)
    if found is not None:
        what, where = found
        raise SecretLeakError(
            f"Refusing to write fixture {display_path(path)}: it contains {what} {where}. "
            f"Nothing was written. {_ADVICE}, then record again.{_allow_advice(what)}",
            path,
        )


def scan_request(request: Any, path: Path, extra: Iterable[tuple[str, str]] = ()) -> None:
    """Before the API is called: refuse a request whose own stored form holds a key.

    Its fixture would be refused after the call anyway (the request is stored in it),
    so the call would be paid for on every run and never kept.
    """
    data = json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")
    found = find_secret(data, extra, request, root="request")
    if found is None:
        return
    what, where = found
    raise SecretLeakError(
        f"Refusing to record fixture {display_path(path)}: the request itself contains "
        f"{what} {where}. The API was not called. {_ADVICE}.{_allow_advice(what)}",
        path,
    )


def _allow_advice(what: str) -> str:
    if not what.startswith("the value of "):
        return _ALLOW_ADVICE
    return _LIVE_ADVICE if allowed_secrets() != NOTHING_ALLOWED else ""
