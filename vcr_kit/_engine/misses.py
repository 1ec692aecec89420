"""What a miss says: where the fixture should be, why it was not recorded, and what to do.

Only a failing test comes here, so the nearest recorded fixture may be looked up
(``near_miss``); the replay path never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from .._core.config import replay_mode_forced
from .._core.platforms import Platform
from .._core.providers import Provider
from .near_miss import describe_near_miss

__all__ = [
    "NEEDS_KEY",
    "keyless_missing_message",
    "missing_message",
    "near_miss_hint",
    "replay_missing_message",
]


def missing_message(path: Path, hint: str = "") -> str:
    # The absolute path: the run may have started anywhere, and the folder it looked in
    # is what tells a user that it was the wrong one.
    message = (
        f"Fixture missing: {path}. Re-run the tests with VCR_RECORD=1, then commit the result."
    )
    return f"{message}\n{hint}" if hint else message


NEEDS_KEY: Final = (
    "Recording it needs an API key: set ANTHROPIC_API_KEY (in the environment or in .env) "
    "and run again."
)


def keyless_missing_message(
    path: Path,
    hint: str = "",
    platform: Platform | None = None,
    provider: Provider | None = None,
) -> str:
    """A miss where recording was allowed but no key was given: the advice is the key
    (``VCR_RECORD=1`` is for CI, where it would change nothing here); for a cloud
    client's request, the platform's own credentials; for another provider's, its key."""
    needs = NEEDS_KEY
    if provider is not None:
        variables = " or ".join(" / ".join(group) for group in provider.key_variables)
        article = "an" if provider.title[:1] in "AEIOU" else "a"  # an OpenAI, a Google
        needs = (
            f"Recording it needs {article} {provider.title} API key: set {variables} (in the "
            "environment or in .env; no Anthropic API key is needed), and run again."
        )
    elif platform is not None:
        needs = (
            f"Recording it needs {platform.name} credentials: {platform.credentials} "
            "(no Anthropic API key is needed), and run again."
        )
    message = f"Fixture missing: {path}.\n{needs}"
    return f"{message}\n{hint}" if hint else message


def replay_missing_message(path: Path, hint: str = "") -> str:
    """A miss in replay mode: in CI, ``VCR_RECORD=1`` lets the run record; when
    ``VCR_MODE=replay`` itself is set, it would not (``VCR_MODE`` wins), so say that."""
    if replay_mode_forced():
        message = (
            f"Fixture missing: {path}. VCR_MODE=replay never records: run the tests with "
            "VCR_MODE=auto and an API key, then commit the result."
        )
        return f"{message}\n{hint}" if hint else message
    return missing_message(path, hint)


def near_miss_hint(path: Path, request: Any) -> str:
    """Point at the recorded fixture nearest to a missing one (same conversation prefix)."""
    try:
        return describe_near_miss(path, request)
    except Exception:  # a hint must never hide the real error
        return ""
