"""OpenAI and Gemini price rows: USD per million tokens, each with its source and date.

The rows use ``Price`` from ``prices`` as the Anthropic rows do; ``cost.cost_of`` prices
a usage entry from them when the entry names its provider (``"provider": "openai"``).
A rate no page confirmed is ``None``: tokens of that kind count, at 0, with a warning.
Prices change: ``vcr_kit.set_price`` overrides a row (by its base model id).

The usage entry a provider module writes uses Anthropic's field names, so that one
arithmetic prices every provider:

- ``input_tokens``: prompt tokens neither read from nor written to a cache (OpenAI's
  ``prompt_tokens`` / ``input_tokens`` and Gemini's ``promptTokenCount`` include the
  cached ones: the provider module subtracts them);
- ``cache_read_input_tokens``: prompt tokens served from a cache (OpenAI's
  ``cached_tokens``, Gemini's ``cachedContentTokenCount``);
- ``cache_creation_input_tokens`` (OpenAI only): prompt tokens written to the cache
  (``cache_write_tokens``); its split, where OpenAI gives one, under ``cache_creation``:
  ``ephemeral_5m_input_tokens`` holds the 30-minute writes and
  ``ephemeral_1h_input_tokens`` the 12-hour ones. With no split a write counts as
  30-minute, OpenAI's default retention, as an Anthropic write counts as 5-minute;
- ``output_tokens``: every output token, reasoning included (OpenAI counts reasoning
  inside ``completion_tokens`` / ``output_tokens``; Gemini reports ``thoughtsTokenCount``
  apart from ``candidatesTokenCount`` and the provider module adds the two);
- ``reasoning_tokens``: the reasoning share of ``output_tokens``, shown, never priced apart.

How each provider prices cached and reasoning tokens:

- OpenAI (model pages on developers.openai.com; prompt caching guide): reasoning tokens
  are billed as output tokens. A cache read is billed at the "Cached input" rate. From
  the GPT-5.6 family on, a cache write is billed at the "Cache writes" rate (1.25x input
  for 30-minute retention; the 12-hour rate where a page gives it); before GPT-5.6 a
  write costs nothing extra (the prompt caching guide: "no additional fees"), so those
  rows bill writes at the input rate. A prompt of more than 272K input tokens is billed
  in full at 2x the input and cache rates and 1.5x the output rate (GPT-6 and GPT-5.6
  model pages): ``long_context_threshold`` / ``long_context``.
- Gemini (ai.google.dev/gemini-api/docs/pricing): output prices include thinking tokens.
  A cached token read (implicit or explicit context caching) is billed at the "context
  caching" rate; cache storage is billed per hour and is not a per-call cost, so it is
  not counted here. Pro models bill prompts over 200K tokens at a higher rate.

Batch, Flex, Fast and Priority processing are not told apart: every row is Standard.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Final

from .prices import Price

__all__ = [
    "GEMINI_PRICES",
    "OPENAI_PRICES",
    "PROVIDER_PRICES",
    "provider_base_model_id",
    "provider_price",
]

_TODAY: Final = "2026-12-03"  # the date the undated pages below were read
_OPENAI_MODELS: Final = "https://developers.openai.com/api/docs/models/"
_OPENAI_CACHING: Final = "https://developers.openai.com/docs/guides/prompt-caching"
_GEMINI_PAGE: Final = (
    "https://ai.google.dev/gemini-api/docs/pricing, as transcribed verbatim in "
    "raw.githubusercontent.com/api-evangelist/deepmind/refs/heads/main/plans/"
    "deepmind-plans-pricing.yml (page read 2026-10-07)"
)
#: OpenAI's rule for a prompt over 272K input tokens (GPT-6 and GPT-5.6 model pages).
_OPENAI_LONG: Final = 272_000
#: Gemini Pro's rule for a prompt over 200K tokens (the pricing page's "prompts > 200k").
_GEMINI_LONG: Final = 200_000


#: One row's rates, in ``Price``'s order: input, short cache write (OpenAI's 30-minute),
#: long cache write (OpenAI's 12-hour), cache read, output.
_Rates = tuple[float, float | None, float | None, float | None, float]


def _row(
    rates: _Rates,
    *,
    source: str,
    checked: str,
    long: _Rates | None = None,
    threshold: int = _OPENAI_LONG,
) -> Price:
    """One row; ``long`` is its rates for a prompt over ``threshold`` tokens."""
    return Price(
        *rates,
        source=source,
        checked=checked,
        long_context_threshold=threshold if long else None,
        long_context=Price(*long, source=source, checked=checked) if long else None,
    )


def _twice(rate: float | None) -> float | None:
    return None if rate is None else rate * 2


def _gpt6(rates: _Rates, *, source: str, checked: str = _TODAY) -> Price:
    """A GPT-6 row: over 272K input tokens, input and cache rates 2x, output 1.5x."""
    i, w30m, w12h, r, o = rates
    long = (i * 2, _twice(w30m), _twice(w12h), _twice(r), o * 1.5)
    return _row(rates, source=source, checked=checked, long=long)


def _pre_5_6(i: float, r: float | None, o: float, *, source: str, checked: str) -> Price:
    """A row of a model before GPT-5.6: a cache write costs what input costs."""
    return _row(
        (i, i, i, r, o), source=f"{source}; cache writes: {_OPENAI_CACHING}", checked=checked
    )


def _embedding(i: float, *, source: str) -> Price:
    """Embeddings bill their input only; they have no output or cache."""
    return _row((i, None, None, None, 0.0), source=source, checked=_TODAY)


_GPT_5_4_PAGE: Final = (
    "https://tokenmix.ai/blog/openai-api-cost-2026-gpt-5-5-5-4-nano-batch "
    "(quoting OpenAI's pricing page, data verified 2026-06-04)"
)
_GPT_5_5_PAGE: Final = (
    "https://www.morphllm.com/openai-api-pricing (OpenAI's pricing page, June 2026)"
)
_EMBEDDINGS_PAGE: Final = "https://docs.praison.ai/docs/embeddings/providers/openai"
# OpenAI's pricing page no longer lists GPT-4.x, still billable: this page says so and
# gives their input and output rates (cache reads: unconfirmed).
_GPT_4_PAGE: Final = "https://raw.githubusercontent.com/Sraleik/undetermini/HEAD/PRICING.md"

#: Base model ids (``provider_base_model_id``) to prices. Not here, for want of a page
#: confirming the current rate: gpt-5.6-sol (its page gave a promotional price "at least
#: until November 21, 2026"), gpt-5.6-terra, gpt-4o and the o-series models.
#: The GPT-5.5 and GPT-5.4 rows carry no long-context tier: no page read gave one.
OPENAI_PRICES: Final[dict[str, Price]] = {
    # GPT-6.2 (released 2026-11-17). Astra: only input and output were confirmed.
    "gpt-6.2-astra": _row(
        (8.00, None, None, None, 40.00),
        source="https://dev.to/hassann/how-to-use-gpt-62-astra-api-3j9l "
        "(OpenAI's GPT-6.2 Astra model page, checked 2026-11-18)",
        checked="2026-11-18",
    ),
    "gpt-6.2-sol": _gpt6((2.00, 2.50, 5.00, 0.10, 10.00), source=_OPENAI_MODELS + "gpt-6.2-sol"),
    "gpt-6.1-sol": _gpt6(
        (2.00, 2.50, None, 0.10, 10.00),
        source="https://dev.to/hassann/how-to-use-gpt-61-sol-apl--45cg (table from OpenAI's "
        "GPT-6.1 Sol and GPT-6 Sol model pages); long-context rule: "
        "https://docs.laozhang.ai/announcements/gpt-6-1-sol-2026-10",
    ),
    "gpt-6.1-terra": _gpt6((1.00, 1.25, 2.50, 0.05, 5.00), source=_OPENAI_MODELS + "gpt-6.1-terra"),
    "gpt-6-astra": _gpt6(
        (10.00, 12.50, None, 1.00, 50.00),
        source="https://github.com/BerriAI/litellm/discussions/39633 (GPT-6 Astra pricing)",
    ),
    "gpt-6-sol": _gpt6(
        (2.00, 2.50, None, 0.20, 10.00),
        source="https://developers.openai.com/docs/models/gpt-6-sol",
    ),
    "gpt-6-luna": _gpt6(
        (0.10, 0.125, None, 0.01, 0.50),
        source="https://developers.openai.com/ja-JP/api/docs/models/gpt-6-luna",
    ),
    # GPT-5.6 Luna: writes at 1.25x input; over 272K, "2x input and 1.5x output" (the
    # page says nothing of the cache rates there: unconfirmed).
    "gpt-5.6-luna": _row(
        (0.20, 0.25, None, 0.02, 1.20),
        source=_OPENAI_MODELS + "gpt-5.6-luna",
        checked=_TODAY,
        long=(0.40, None, None, None, 1.80),
    ),
    "gpt-5.5": _pre_5_6(5.00, 0.50, 30.00, source=_GPT_5_5_PAGE, checked=_TODAY),
    "gpt-5.5-pro": _pre_5_6(30.00, None, 180.00, source=_GPT_5_5_PAGE, checked=_TODAY),
    "gpt-5.4": _pre_5_6(2.50, 0.25, 15.00, source=_GPT_5_4_PAGE, checked="2026-06-04"),
    "gpt-5.4-mini": _pre_5_6(0.75, 0.075, 4.50, source=_GPT_5_4_PAGE, checked="2026-06-04"),
    "gpt-5.4-nano": _pre_5_6(0.20, 0.02, 1.25, source=_GPT_5_4_PAGE, checked="2026-06-04"),
    "gpt-5.1": _pre_5_6(1.25, 0.125, 10.00, source=_OPENAI_MODELS + "gpt-5.1", checked=_TODAY),
    "gpt-5-nano": _pre_5_6(0.05, 0.005, 0.40, source=_OPENAI_MODELS + "gpt-5-nano", checked=_TODAY),
    "gpt-4.1": _pre_5_6(2.00, None, 8.00, source=_GPT_4_PAGE, checked="2026-05-07"),
    "gpt-4.1-mini": _pre_5_6(0.40, None, 1.60, source=_GPT_4_PAGE, checked="2026-05-07"),
    "gpt-4.1-nano": _pre_5_6(0.10, None, 0.40, source=_GPT_4_PAGE, checked="2026-05-07"),
    "gpt-4o-mini": _pre_5_6(0.15, None, 0.60, source=_GPT_4_PAGE, checked="2026-05-07"),
    "text-embedding-3-small": _embedding(0.02, source=_EMBEDDINGS_PAGE),
    "text-embedding-3-large": _embedding(0.13, source=_EMBEDDINGS_PAGE),
    "text-embedding-ada-002": _embedding(0.10, source=_EMBEDDINGS_PAGE),
}

_GEMINI_2_5_PRO_PAGE: Final = (
    "https://discuss.ai.google.dev/t/question-about-gemini-api-caching-pricing/107349 "
    "(quoting the pricing page) and https://deploybase.ai/articles/gemini-api-pricing"
)
_GEMINI_READ: Final = "2026-10-07"

#: Gemini rows. Their usage reports no cache writes (context caches are created apart
#: and billed by the hour), so the write rates are ``None``.
GEMINI_PRICES: Final[dict[str, Price]] = {
    # $0.75 / $3.75 through 2026-12-31, then $1.50 / $7.50 from 2027-01-01 (same page).
    "gemini-3.8-flash": _row(
        (0.75, None, None, 0.075, 3.75),
        source=_GEMINI_PAGE + "; cache reads: https://github.com/BerriAI/litellm/discussions/39357",
        checked=_GEMINI_READ,
    ),
    "gemini-3.5-flash": _row(
        (1.50, None, None, None, 9.00), source=_GEMINI_PAGE, checked=_GEMINI_READ
    ),
    "gemini-3.5-flash-lite": _row(
        (0.30, None, None, None, 2.50), source=_GEMINI_PAGE, checked=_GEMINI_READ
    ),
    "gemini-3.1-pro-preview": _row(
        (2.00, None, None, None, 12.00),
        source=_GEMINI_PAGE,
        checked=_GEMINI_READ,
        long=(4.00, None, None, None, 18.00),
        threshold=_GEMINI_LONG,
    ),
    "gemini-2.5-pro": _row(
        (1.25, None, None, 0.125, 10.00),
        source=_GEMINI_2_5_PRO_PAGE,
        checked="2026-01-08",
        long=(2.50, None, None, 0.25, 15.00),
        threshold=_GEMINI_LONG,
    ),
    "gemini-2.5-flash": _row(
        (0.30, None, None, None, 2.50),
        source="https://deploybase.ai/articles/gemini-api-pricing "
        "(Google's pricing page, March 2026)",
        checked="2026-01-08",
    ),
    "gemini-2.5-flash-lite": _row(
        (0.10, None, None, None, 0.40),
        source="https://hivebook.wiki/wiki/gemini-2-5-google-s-multimodal-flagship-family "
        f"(input); {_GEMINI_PAGE} (output)",
        checked=_TODAY,
    ),
    "gemini-embedding-2": _row(
        (0.20, None, None, None, 0.0), source=_GEMINI_PAGE, checked=_GEMINI_READ
    ),
}

PROVIDER_PRICES: Final[Mapping[str, Mapping[str, Price]]] = {
    "openai": OPENAI_PRICES,
    "gemini": GEMINI_PRICES,
}

# OpenAI snapshots: "gpt-4.1-2025-04-14", and the older four-digit "gpt-4-0613".
_OPENAI_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{4})$")
# Gemini versions: "gemini-2.0-flash-001", "gemini-2.5-flash-preview-05-20".
_GEMINI_VERSION = re.compile(r"(?:-\d{3}|(?<=-preview)-\d{2}-\d{2})$")


@lru_cache(maxsize=256)
def provider_base_model_id(provider: str, model: str) -> str:
    """The price table's key for a model id as a response names it.

    OpenAI: ``gpt-4.1-2025-04-14`` -> ``gpt-4.1``; a gateway's ``openai/gpt-4.1`` ->
    ``gpt-4.1``. A fine-tuned ``ft:...`` id stays as it is (its price is not the base
    model's). Azure OpenAI's answers name the model, not the deployment, so a
    deployment name never needs resolving here. Gemini: ``models/gemini-2.5-flash``
    -> ``gemini-2.5-flash``; ``-001`` and a preview's ``-MM-DD`` go; a dated preview
    of a model with a row of its own (``gemini-2.5-flash-preview-05-20``) resolves to
    that row. Any other provider: the id lowered, unchanged.
    """
    model = model.strip().lower()
    if model.startswith("ft:"):
        return model
    model = model.rsplit("/", 1)[-1]  # "models/...", "publishers/google/models/...", "openai/..."
    if provider == "openai":
        return _OPENAI_SNAPSHOT.sub("", model)
    if provider == "gemini":
        model = _GEMINI_VERSION.sub("", model)
        bare = model.removesuffix("-preview")
        return bare if model not in GEMINI_PRICES and bare in GEMINI_PRICES else model
    return model


def provider_price(provider: str, model: str) -> Price | None:
    """The provider's row for ``model`` (any spelling ``provider_base_model_id`` knows)."""
    table = PROVIDER_PRICES.get(provider)
    return None if table is None else table.get(provider_base_model_id(provider, model))
