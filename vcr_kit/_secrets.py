"""The last check before a fixture reaches the disk: no key may be in it.

Headers that carry credentials are never stored in the first place; this scan
catches what slips through anyway (a key echoed in a prompt, a tool result that
printed the environment) by looking at the exact bytes about to be written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from .errors import SecretLeakError

#: Environment variables whose values must never appear in a fixture.
SECRET_ENV_VARS: Final = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_ADMIN_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
)
#: Shorter values would match ordinary text ("test", "dummy"): only real keys count.
_MIN_SECRET_LENGTH: Final = 16
_KEY_SHAPES: Final = (
    ("an Anthropic key (sk-ant-...)", re.compile(rb"sk-ant-[A-Za-z0-9_\-]{20,}")),
    ("a bearer token", re.compile(rb"Bearer [A-Za-z0-9._~+/\-]{20,}=*")),
)


def live_secrets(extra: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(label, value) pairs: the key variables of the environment plus ``extra``."""
    found = [(name, os.environ.get(name, "")) for name in SECRET_ENV_VARS]
    found.extend(extra)
    return [(label, value) for label, value in found if len(value) >= _MIN_SECRET_LENGTH]


def scan_for_secrets(data: bytes, path: Path, extra: Iterable[tuple[str, str]] = ()) -> None:
    """Raise ``SecretLeakError`` if ``data`` holds a live key value or a key-shaped string.

    The message says where, never what: the secret itself must not reach a log.
    """
    for label, value in live_secrets(extra):
        position = data.find(value.encode("utf-8"))
        if position >= 0:
            _refuse(path, f"the value of {label}", position)
    for label, shape in _KEY_SHAPES:
        match = shape.search(data)
        if match:
            _refuse(path, label, match.start())


def _refuse(path: Path, what: str, position: int) -> None:
    from ._store import display_path

    raise SecretLeakError(
        f"Refusing to write fixture {display_path(path)}: it contains {what} at byte "
        f"{position}. Nothing was written. Keep secrets out of prompts and tool results, "
        "or add a dehydrate rule that replaces them, then record again.",
        path,
    )
