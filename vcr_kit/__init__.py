"""vcr_kit: record real Anthropic API responses once, replay them offline in tests."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:  # the type checker sees every name; at run time each loads on first use
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
    from ._transport import VCRTransport, async_client, client

__version__ = "0.1.0"

#: Public name -> the private module that defines it. Loaded on first access (PEP 562):
#: `import vcr_kit` stays cheap, and a test that uses only the generic `fixture` never
#: loads the test-case, proxy or transport layers (nor http.server, unittest, ...).
_LAZY: dict[str, str] = {
    "Recording": "_cassette",
    "fixture": "_cassette",
    "Mode": "_config",
    "ModelCost": "_cost",
    "SessionCost": "_cost",
    "reset_session_cost": "_cost",
    "session_cost": "_cost",
    "set_price": "_cost",
    "MessageCassette": "_kinds",
    "StreamingCassette": "_kinds",
    "TokenCountCassette": "_kinds",
    "cassette": "_kinds",
    "streaming_cassette": "_kinds",
    "token_count_cassette": "_kinds",
    "Price": "_prices",
    "proxy": "_proxy",
    "VCRMixin": "_testcase",
    "VCRTestCase": "_testcase",
    "async_client": "_transport",
    "client": "_transport",
}


def __getattr__(name: str) -> Any:
    # VCRTransport extends the transport classes of the SDK's own HTTP library (httpx2,
    # or httpx for anthropic 0.x): built on first use, so importing vcr_kit imports neither.
    if name == "VCRTransport":
        from ._transport import transport_class

        return transport_class()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vcr_kit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
