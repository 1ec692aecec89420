"""vcr_kit: record real Anthropic API responses once, replay them offline in tests."""

from __future__ import annotations

import importlib

# The errors are named again here (and in __all__): the front door lists every public
# name itself, so a reader and a type checker see them in one place.
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

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (a few ms of ``import vcr_kit``
#: on a cold interpreter; type checkers treat any name of this spelling as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker sees every name; at run time each loads on first use
    from typing import Any

    from ._core.config import Mode
    from ._engine.cassette import Recording, fixture
    from ._engine.faults import faults
    from ._engine.sdk_cassettes import (
        MessageCassette,
        StreamingCassette,
        TokenCountCassette,
        cassette,
        streaming_cassette,
        token_count_cassette,
    )
    from ._integrations.testcase import VCRMixin, VCRTestCase
    from ._ledger.cost import ModelCost, SessionCost, reset_session_cost, session_cost, set_price
    from ._ledger.prices import Price
    from ._proxy.server import proxy
    from ._seams.transport import VCRTransport, async_client, client
    from .compare import Verdict, compare_answers, compare_fixtures

__version__ = "0.1.0"

#: Public name -> the private module that defines it. Loaded on first access (PEP 562):
#: `import vcr_kit` stays cheap, and a test that uses only the generic `fixture` never
#: loads the test-case, proxy or transport layers (nor http.server, unittest, ...).
_LAZY: dict[str, str] = {
    "Recording": "_engine.cassette",
    "fixture": "_engine.cassette",
    "Mode": "_core.config",
    "ModelCost": "_ledger.cost",
    "SessionCost": "_ledger.cost",
    "reset_session_cost": "_ledger.cost",
    "session_cost": "_ledger.cost",
    "set_price": "_ledger.cost",
    "MessageCassette": "_engine.sdk_cassettes",
    "StreamingCassette": "_engine.sdk_cassettes",
    "TokenCountCassette": "_engine.sdk_cassettes",
    "cassette": "_engine.sdk_cassettes",
    "streaming_cassette": "_engine.sdk_cassettes",
    "token_count_cassette": "_engine.sdk_cassettes",
    "Price": "_ledger.prices",
    "proxy": "_proxy.server",
    "faults": "_engine.faults",
    "VCRMixin": "_integrations.testcase",
    "VCRTestCase": "_integrations.testcase",
    "async_client": "_seams.transport",
    "client": "_seams.transport",
    "Verdict": "compare",
    "compare_answers": "compare",
    "compare_fixtures": "compare",
}


def __getattr__(name: str) -> Any:
    # VCRTransport extends the transport classes of the SDK's own HTTP library (httpx2,
    # or httpx for anthropic 0.x): built on first use, so importing vcr_kit imports neither.
    if name == "VCRTransport":
        from ._seams.transport import transport_class

        return transport_class()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vcr_kit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Sorted, the errors among the rest: see the comment on the errors' import above.
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
    "Verdict",
    "__version__",
    "async_client",
    "cassette",
    "client",
    "compare_answers",
    "compare_fixtures",
    "faults",
    "fixture",
    "proxy",
    "reset_session_cost",
    "session_cost",
    "set_price",
    "streaming_cassette",
    "token_count_cassette",
]


def _forced() -> None:
    """``FORCE_VCR`` set: vcr_kit on for this whole process (the clients a script builds
    itself replay as in a test). Only then is more than the front door loaded; the
    variable's value is judged by the settings (a typo is a ``ConfigError``)."""
    import os

    if os.environ.get("FORCE_VCR", "").strip():
        # Loaded by name, as every public name is: the front door sits above the layers.
        importlib.import_module("._integrations.session", __name__).force_on()


_forced()
del _forced
