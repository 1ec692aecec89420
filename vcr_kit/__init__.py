"""vcr_kit: record real Anthropic API responses once, replay them offline in tests."""

from __future__ import annotations

from ._cassette import Recording, fixture
from ._config import Mode
from ._cost import ModelCost, SessionCost, reset_session_cost, session_cost, set_price
from ._prices import Price
from .errors import (
    ConfigError,
    FixtureCorruptError,
    FixtureMissingError,
    FixtureValueError,
    FixtureWriteError,
    LockTimeoutError,
    SecretLeakError,
    VCRError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "FixtureCorruptError",
    "FixtureMissingError",
    "FixtureValueError",
    "FixtureWriteError",
    "LockTimeoutError",
    "Mode",
    "ModelCost",
    "Price",
    "Recording",
    "SecretLeakError",
    "SessionCost",
    "VCRError",
    "__version__",
    "fixture",
    "reset_session_cost",
    "session_cost",
    "set_price",
]
