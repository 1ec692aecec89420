"""OpenAI and Gemini price rows, and a usage entry naming its provider priced from them."""

from __future__ import annotations

import re
import unittest
import warnings
from typing import Any

import pytest

import vcr_kit
from vcr_kit._ledger import cost as _cost
from vcr_kit._ledger import provider_prices as _pp
from vcr_kit._ledger.prices import PRICES

pytestmark = pytest.mark.inprocess


def _entry(provider: str, model: str, **usage: Any) -> dict[str, Any]:
    return {"provider": provider, "model": model, "usage": usage}


def _usd(provider: str, model: str, **usage: Any) -> float:
    return _cost.cost_of(model, usage, provider).usd


class PriceRowsTest(unittest.TestCase):
    def test_every_row_has_a_source_and_a_date(self) -> None:
        for provider, table in _pp.PROVIDER_PRICES.items():
            for model, price in table.items():
                with self.subTest(provider=provider, model=model):
                    self.assertRegex(price.source, r"https://")
                    self.assertRegex(price.checked, r"^2026-\d{2}-\d{2}$")
                    self.assertLessEqual(price.checked, "2026-12-03")
                    long = price.long_context
                    self.assertEqual(long is None, price.long_context_threshold is None)
                    if long is not None:
                        self.assertGreater(long.input, price.input)
                        self.assertEqual((long.source, long.checked), (price.source, price.checked))

    def test_rows_are_keyed_by_their_base_id(self) -> None:
        for provider, table in _pp.PROVIDER_PRICES.items():
            for model in table:
                with self.subTest(model=model):
                    self.assertEqual(_pp.provider_base_model_id(provider, model), model)

    def test_the_anthropic_rows_are_untouched(self) -> None:
        self.assertFalse(set(PRICES) & set(_pp.OPENAI_PRICES))
        self.assertFalse(set(PRICES) & set(_pp.GEMINI_PRICES))
        self.assertTrue(all(m.startswith("claude-") for m in PRICES))


class BaseModelIdTest(unittest.TestCase):
    def test_spellings_resolve_to_their_row(self) -> None:
        for provider, model, base in [
            ("openai", "gpt-5.4-mini-2026-03-17", "gpt-5.4-mini"),
            ("openai", "GPT-6.2-Sol", "gpt-6.2-sol"),
            ("openai", "openai/gpt-6.1-terra", "gpt-6.1-terra"),
            ("openai", "text-embedding-3-small", "text-embedding-3-small"),
            ("openai", "gpt-4.1-2025-04-14", "gpt-4.1"),
            ("openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gemini", "models/gemini-2.5-flash", "gemini-2.5-flash"),
            ("gemini", "publishers/google/models/gemini-3.8-flash", "gemini-3.8-flash"),
            ("gemini", "gemini-2.5-pro-001", "gemini-2.5-pro"),
            ("gemini", "gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
            ("gemini", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview"),
        ]:
            with self.subTest(model=model):
                self.assertEqual(_pp.provider_base_model_id(provider, model), base)
                self.assertIs(_cost.price_for(model, provider), _pp.PROVIDER_PRICES[provider][base])

    def test_ids_that_are_not_a_row_stay_what_they_are(self) -> None:
        # A dated id of another model, a fine-tuned model (priced apart), an unknown one.
        self.assertEqual(_pp.provider_base_model_id("openai", "gpt-4-0613"), "gpt-4")
        tuned = "ft:gpt-5.4-mini-2026-03-17:acme::abc123"
        self.assertEqual(_pp.provider_base_model_id("openai", tuned), tuned)
        self.assertIsNone(_cost.price_for(tuned, "openai"))
        self.assertEqual(
            _pp.provider_base_model_id("gemini", "gemini-9-ultra-preview-01-02"),
            "gemini-9-ultra-preview",
        )

    def test_a_provider_s_entry_is_never_priced_from_another_s_table(self) -> None:
        self.assertIsNone(_cost.price_for("claude-opus-4-7", "openai"))
        self.assertIsNone(_cost.price_for("gpt-6.2-sol"))
        self.assertIsNone(_cost.price_for("gemini-2.5-pro", "openai"))
        self.assertIsNone(_pp.provider_price("mistral", "gpt-6.2-sol"))


class ProviderArithmeticTest(unittest.TestCase):
    def setUp(self) -> None:
        vcr_kit.reset_session_cost()
        self.addCleanup(_cost.COST.reset)

    def test_openai_cached_reasoning_and_written_tokens(self) -> None:
        # GPT-6.2 Sol (USD per million: in 2, cached 0.10, 30-min write 2.50, 12-hour
        # write 5, out 10). Reasoning tokens are inside output_tokens, billed as output.
        usage = {
            "input_tokens": 1000,
            "cache_read_input_tokens": 5000,
            "cache_creation_input_tokens": 2000,
            "cache_creation": {"ephemeral_5m_input_tokens": 1500, "ephemeral_1h_input_tokens": 500},
            "output_tokens": 300,
            "reasoning_tokens": 200,
        }
        # 1000*2 + 5000*0.10 + 1500*2.50 + 500*5 + 300*10 = 2000+500+3750+2500+3000
        usd = _cost.add_usage([{"provider": "openai", "model": "gpt-6.2-sol", "usage": usage}])
        self.assertAlmostEqual(usd, 11_750 / 1e6, places=12)
        total = vcr_kit.session_cost()
        self.assertEqual((total.input_tokens, total.cache_read_tokens), (1000, 5000))
        self.assertEqual((total.cache_write_5m_tokens, total.cache_write_1h_tokens), (1500, 500))
        self.assertEqual(total.output_tokens, 300)
        # The reasoning share changes nothing: it is already in output_tokens.
        del usage["reasoning_tokens"]
        self.assertAlmostEqual(_cost.cost_of("gpt-6.2-sol", usage, "openai").usd, usd)

    def test_an_openai_write_with_no_split_counts_at_30_minutes(self) -> None:
        # (100K: a million written tokens would be a long prompt, at twice the rate)
        self.assertAlmostEqual(
            _usd("openai", "gpt-6.1-terra", cache_creation_input_tokens=100_000), 0.125
        )

    def test_before_gpt_5_6_a_cache_write_costs_what_input_costs(self) -> None:
        written = _usd("openai", "gpt-5.4-mini", cache_creation_input_tokens=10**6)
        self.assertAlmostEqual(written, _usd("openai", "gpt-5.4-mini", input_tokens=10**6))
        self.assertAlmostEqual(written, 0.75)
        self.assertAlmostEqual(_usd("openai", "gpt-5.4-mini", cache_read_input_tokens=10**6), 0.075)

    def test_openai_bills_a_prompt_over_272k_in_full_at_the_long_rates(self) -> None:
        # GPT-6.1 Terra: 2x input and cache rates, 1.5x output, for the whole request.
        at = {"input_tokens": 200_000, "cache_read_input_tokens": 72_000, "output_tokens": 1000}
        over = dict(at, input_tokens=200_001)
        self.assertAlmostEqual(
            _cost.cost_of("gpt-6.1-terra", at, "openai").usd,
            (200_000 * 1.00 + 72_000 * 0.05 + 1000 * 5.00) / 1e6,
        )
        self.assertAlmostEqual(
            _cost.cost_of("gpt-6.1-terra", over, "openai").usd,
            (200_001 * 2.00 + 72_000 * 0.10 + 1000 * 7.50) / 1e6,
        )

    def test_a_long_gemini_pro_prompt_counts_its_cached_tokens_toward_200k(self) -> None:
        # Gemini 2.5 Pro, prompts > 200k: input 2.50, cached 0.25, output (thinking
        # included) 15; up to 200k: 1.25, 0.125, 10.
        short = {"input_tokens": 140_000, "cache_read_input_tokens": 60_000, "output_tokens": 1000}
        long = dict(short, input_tokens=150_000)
        self.assertAlmostEqual(
            _cost.cost_of("gemini-2.5-pro", short, "gemini").usd,
            (140_000 * 1.25 + 60_000 * 0.125 + 1000 * 10) / 1e6,
        )
        self.assertAlmostEqual(
            _cost.cost_of("models/gemini-2.5-pro", long, "gemini").usd,
            (150_000 * 2.50 + 60_000 * 0.25 + 1000 * 15) / 1e6,
        )
        self.assertAlmostEqual(
            _usd("gemini", "gemini-3.1-pro-preview", input_tokens=200_001, output_tokens=10),
            (200_001 * 4.00 + 10 * 18.00) / 1e6,
        )

    def test_gemini_thinking_tokens_are_billed_as_output(self) -> None:
        # The provider module adds thoughtsTokenCount (1000) to candidatesTokenCount (100).
        usd = _usd(
            "gemini",
            "gemini-3.8-flash",
            input_tokens=400,
            cache_read_input_tokens=600,
            output_tokens=1100,
            reasoning_tokens=1000,
        )
        self.assertAlmostEqual(usd, (400 * 0.75 + 600 * 0.075 + 1100 * 3.75) / 1e6)

    def test_embeddings_bill_their_input(self) -> None:
        self.assertAlmostEqual(_usd("openai", "text-embedding-3-small", input_tokens=10**6), 0.02)
        self.assertAlmostEqual(_usd("openai", "text-embedding-3-large", input_tokens=10**6), 0.13)

    def test_set_price_overrides_a_provider_row(self) -> None:
        vcr_kit.set_price("gpt-6.2-sol", vcr_kit.Price(1, 1, 1, 1, 1))
        self.assertAlmostEqual(_usd("openai", "gpt-6.2-sol", input_tokens=10**6), 1)
        vcr_kit.set_price("gpt-99-nova", vcr_kit.Price(3, None, None, None, 6))
        self.assertAlmostEqual(_usd("openai", "gpt-99-nova-2027-01-01", output_tokens=10**6), 6)


class ProviderWarningsTest(unittest.TestCase):
    def setUp(self) -> None:
        vcr_kit.reset_session_cost()
        self.addCleanup(_cost.COST.reset)

    def _caught(self, entries: list[dict[str, Any]]) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _cost.add_usage(entries)
        self.assertTrue(all(w.category is _cost.UnknownModelPriceWarning for w in caught))
        return [str(w.message) for w in caught]

    def test_an_unknown_model_counts_tokens_and_warns_once_as_anthropic_s_do(self) -> None:
        entry = _entry("openai", "gpt-99-nova", input_tokens=7, output_tokens=3)
        self.assertEqual(
            self._caught([entry] * 3),
            [
                "vcr_kit: no price for model 'gpt-99-nova'; its tokens are counted, its cost "
                "is 0. Add one with vcr_kit.set_price()."
            ],
        )
        total = vcr_kit.session_cost()
        self.assertEqual(
            (total.calls, total.input_tokens, total.output_tokens, total.usd), (3, 21, 9, 0)
        )

    def test_an_unconfirmed_rate_counts_at_0_and_says_which(self) -> None:
        messages = self._caught(
            [
                _entry("openai", "gpt-6.2-astra", input_tokens=10, cache_read_input_tokens=5),
                _entry(
                    "openai",
                    "gpt-6-sol",
                    cache_creation_input_tokens=4,
                    cache_creation={"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 4},
                ),
            ]
        )
        self.assertEqual(
            messages,
            [
                "vcr_kit: no confirmed price for cache reads of 'gpt-6.2-astra'; counted at 0.",
                "vcr_kit: no confirmed price for 12-hour cache writes of 'gpt-6-sol'; "
                "counted at 0.",
            ],
        )
        self.assertAlmostEqual(vcr_kit.session_cost().usd, 10 * 8.00 / 1e6)

    def test_a_dated_row_id_is_warned_about_under_its_own_name(self) -> None:
        (message,) = self._caught([_entry("gemini", "models/gemini-1.0-pro-002", input_tokens=1)])
        self.assertTrue(re.search(r"no price for model 'models/gemini-1\.0-pro-002'", message))


class StoredAnswersPricedTest(unittest.TestCase):
    """A stored answer's usage, read by its provider's rule (``http_codec.usage_of``),
    priced from that provider's rows: the two ends of the usage entry agree."""

    def setUp(self) -> None:
        vcr_kit.reset_session_cost()
        self.addCleanup(_cost.COST.reset)

    def test_an_openai_chat_completion_with_cached_and_reasoning_tokens(self) -> None:
        from vcr_kit._engine import http_codec

        usage = {
            "prompt_tokens": 3000,
            "completion_tokens": 500,
            "total_tokens": 3500,
            "prompt_tokens_details": {"cached_tokens": 2000},
            "completion_tokens_details": {"reasoning_tokens": 400},
        }
        body = {"object": "chat.completion", "model": "gpt-5.4-mini-2026-03-17", "usage": usage}
        entries = http_codec.usage_of({"status": 200, "body": body}, {"provider": "openai"})
        # GPT-5.4 mini: 1000 uncached at 0.75, 2000 cached at 0.075, 500 out at 4.50
        # (the 400 reasoning tokens inside them).
        self.assertAlmostEqual(
            _cost.add_usage(entries), (1000 * 0.75 + 2000 * 0.075 + 500 * 4.50) / 1e6
        )
        self.assertEqual(vcr_kit.session_cost().cache_read_tokens, 2000)

    def test_a_gemini_answer_with_thoughts_and_cached_content(self) -> None:
        from vcr_kit._engine import http_codec

        body = {
            "modelVersion": "gemini-3.8-flash",
            "usageMetadata": {
                "promptTokenCount": 1000,
                "cachedContentTokenCount": 600,
                "candidatesTokenCount": 100,
                "thoughtsTokenCount": 1000,
                "totalTokenCount": 2100,
            },
        }
        entries = http_codec.usage_of({"status": 200, "body": body}, {"provider": "gemini"})
        self.assertAlmostEqual(
            _cost.add_usage(entries), (400 * 0.75 + 600 * 0.075 + 1100 * 3.75) / 1e6
        )
