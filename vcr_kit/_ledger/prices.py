"""The price table: USD per million tokens, as data, each row with its source and date.

Rates come from Anthropic's pricing pages (platform docs, about-claude/pricing and
the per-model pages), as gathered in shared/SDK-NOTES.md on the date given in each
row. Prices change: override or extend them with ``vcr_kit.set_price``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

__all__ = ["PRICES", "Price", "base_model_id"]

_SOURCE: Final = "Anthropic pricing pages (docs about-claude/pricing, per-model pages)"
_CHECKED: Final = "2026-11-30"
#: The Message Batches API bills every token kind at half the model's price (same
#: source and date as the table).
BATCH_RATE: Final = 0.5


@dataclass(frozen=True)
class Price:
    """USD per million tokens. ``None`` marks a rate that could not be confirmed."""

    input: float
    cache_write_5m: float | None
    cache_write_1h: float | None
    cache_read: float | None
    output: float
    source: str = _SOURCE
    checked: str = _CHECKED
    #: Above this many prompt tokens (input + cache writes + cache reads) the
    #: ``long_context`` price applies instead (Haiku 5.5 is priced by prompt length).
    long_context_threshold: int | None = None
    long_context: Price | None = None


def _row(i: float, w5: float | None, w1: float | None, r: float | None, o: float) -> Price:
    return Price(i, w5, w1, r, o)


_FABLE_5_1 = _row(10, 12.50, 20, 0.25, 50)
_FABLE_5 = _row(10, 12.50, 20, 1.00, 50)
_OPUS_5_5 = _row(4, 5, 8, 0.20, 20)
_OPUS_4_5 = _row(5, 6.25, 10, 0.50, 25)
_OPUS_4 = _row(15, 18.75, 30, 1.50, 75)
_SONNET_5 = _row(2, 2.50, 4, 0.20, 10)
_SONNET_4 = _row(3, 3.75, 6, 0.30, 15)
_HAIKU_4_5 = _row(1, 1.25, 2, 0.10, 5)
_HAIKU_3_5 = _row(0.80, 1, 1.60, 0.08, 4)
_HAIKU_3 = _row(0.25, 0.30, 0.50, 0.03, 1.25)
# Haiku 5.5: only input, 5-minute write and output rates were published, in two tiers.
_HAIKU_5_5 = Price(
    0.10,
    0.125,
    None,
    None,
    0.50,
    long_context_threshold=100_000,
    long_context=Price(0.50, 0.625, None, None, 2.50),
)

#: Base model ids (no date suffix) to prices. Dated ids resolve through
#: ``base_model_id``; aliases such as ``claude-3-5-sonnet-latest`` too.
PRICES: Final[dict[str, Price]] = {
    "claude-fable-5-2": _FABLE_5_1,
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-2": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-mythos-preview": _FABLE_5,
    "claude-opus-5-5": _OPUS_5_5,
    "claude-opus-5": _OPUS_4_5,
    "claude-opus-4-8": _OPUS_4_5,
    "claude-opus-4-7": _OPUS_4_5,
    "claude-opus-4-6": _OPUS_4_5,
    "claude-opus-4-5": _OPUS_4_5,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-opus-4-0": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-sonnet-5-5": _SONNET_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-sonnet-4-0": _SONNET_4,
    "claude-3-7-sonnet": _SONNET_4,
    "claude-3-5-sonnet": _SONNET_4,
    "claude-haiku-5-5": _HAIKU_5_5,
    "claude-haiku-4-5": _HAIKU_4_5,
    "claude-3-5-haiku": _HAIKU_3_5,
    "claude-3-haiku": _HAIKU_3,
}

_SUFFIX = re.compile(r"-(?:\d{8}|latest|v\d+(?::\d+)?)$")
_GEOGRAPHY = re.compile(r"^(?:us|eu|apac|au|ca|jp|us-gov|global)\.(?=anthropic\.)")


@lru_cache(maxsize=256)
def base_model_id(model: str) -> str:
    """``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``; ``...-latest`` likewise."""
    model = model.strip().lower()
    # Bedrock and Vertex spell ids as "anthropic.claude-...-v1:0" and "claude-...@20250929";
    # Bedrock's inference profiles add a geography ("us.", "global.") or are ARNs
    # ("arn:aws:bedrock:...:inference-profile/us.anthropic.claude-...").
    model = model.rsplit("/", 1)[-1] if model.startswith("arn:") else model
    model = _GEOGRAPHY.sub("", model)
    model = model.removeprefix("anthropic.").split("@", 1)[0]
    while True:
        shorter = _SUFFIX.sub("", model)
        if shorter == model:
            return model
        model = shorter
