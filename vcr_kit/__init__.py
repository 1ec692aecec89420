"""vcr_kit: record real Anthropic API responses once, replay them offline in tests."""

from __future__ import annotations

from ._cassette import Recording, fixture
from ._config import Mode
from ._cost import ModelCost, SessionCost, reset_session_cost, session_cost, set_price
from ._kinds import (
    MessageCassette,
    StreamingCassette,
    TokenCountCassette,
    cassette,
    streaming_cassette,
    token_count_cassette,
)
from ._prices import Price
from ._proxy import proxy
from ._testcase import VCRMixin, VCRTestCase
from ._transport import async_client, client
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


def __getattr__(name: str) -> object:
    # VCRTransport extends the transport classes of the SDK's own HTTP library (httpx2,
    # or httpx for anthropic 0.x): built on first use, so importing vcr_kit imports neither.
    if name == "VCRTransport":
        from ._transport import transport_class

        return transport_class()
    raise AttributeError(f"module 'vcr_kit' has no attribute {name!r}")

__all__ = [
    "ConfigError",
    "FixtureCorruptError",
    "FixtureMissingError",
    "FixtureValueError",
    "FixtureWriteError",
    "LockTimeoutError",
    "MessageCassette",
    "Mode",
    "ModelCost",
    "Price",
    "Recording",
    "SecretLeakError",
    "SessionCost",
    "StreamingCassette",
    "TokenCountCassette",
    "VCRError",
    "VCRMixin",
    "VCRTestCase",
    "VCRTransport",
    "__version__",
    "async_client",
    "cassette",
    "client",
    "fixture",
    "proxy",
    "reset_session_cost",
    "session_cost",
    "set_price",
    "streaming_cassette",
    "token_count_cassette",
]
