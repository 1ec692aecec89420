"""The errors vcr_kit raises.

Each one subclasses the builtin that fits it (so ``except LookupError`` or
``except ValueError`` in user code keeps working), carries the fixture path it is
about, and says in its message what to do next.
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing ``typing`` or ``pathlib`` at ``import
#: vcr_kit`` (the errors load with the front door; the path is only annotated here).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "ConfigError",
    "FixtureCorruptError",
    "FixtureMissingError",
    "FixtureValueError",
    "FixtureWriteError",
    "LockTimeoutError",
    "SecretLeakError",
    "VCRError",
]


class VCRError(Exception):
    """Base class of every error vcr_kit raises on its own account."""

    path: Path | None

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        # Errors cross process boundaries (multiprocessing, xdist); keep the path.
        return (type(self), (self.message, self.path))


class ConfigError(VCRError, ValueError):
    """An environment variable or option has a value vcr_kit does not understand."""


class FixtureMissingError(VCRError, LookupError):
    """Replay was required but no fixture exists for the request."""


class FixtureCorruptError(VCRError, ValueError):
    """A fixture file exists but cannot be read back (torn, hand-edited, newer format)."""


class FixtureWriteError(VCRError, OSError):
    """A fixture could not be written (unwritable folder, full disk)."""


class FixtureValueError(VCRError, TypeError):
    """A result cannot be stored: it is not JSON-able nor an SDK object vcr_kit knows."""


class SecretLeakError(VCRError, ValueError):
    """A fixture about to be written contains an API key or a key-shaped string."""


class LockTimeoutError(VCRError, TimeoutError):
    """Another process held the fixture's lock for longer than the time-out."""
