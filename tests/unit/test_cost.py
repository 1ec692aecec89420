"""Cost tracking: the price table, the arithmetic, and replays counting as live calls."""

from __future__ import annotations

import io
import os
import unittest
import warnings
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import vcr_kit
from tests.support.helpers.env import patch_env, temp_dir
from tests.support.servers.loopback_server import LoopbackServer
from vcr_kit._ledger import cost as _cost
from vcr_kit._ledger import prices as _prices

pytestmark = pytest.mark.inprocess

MODEL = "claude-opus-4-7"
KEY = "sk-ant-test-" + "c" * 32
# The loopback server's [[cache]] answer: fixed usage, cache writes split 5m / 1h.
CACHE_USAGE = {
    "input_tokens": 1200,
    "output_tokens": 4,
    "cache_creation_input_tokens": 3000,
    "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
    "cache_read_input_tokens": 5000,
}
# By hand, Opus 4.7 (USD per million: in 5, 5m write 6.25, 1h write 10, read 0.50, out 25):
# 1200*5 + 1000*6.25 + 2000*10 + 5000*0.50 + 4*25 = 6000 + 6250 + 20000 + 2500 + 100
CACHE_CALL_USD = 34_850 / 1_000_000


class CostArithmeticTest(unittest.TestCase):
    def setUp(self) -> None:
        vcr_kit.reset_session_cost()
        self.addCleanup(vcr_kit.reset_session_cost)

    def test_replays_of_many_fixtures_each_count_once(self) -> None:
        # A replay's cost is counted and added up later (and at a bound, for a long run
        # that prices fixtures anew): many distinct pricings, some counted twice.
        entry = {"model": MODEL, "usage": {"input_tokens": 10, "output_tokens": 1}}
        kept = [_cost.priced_usage([entry]) for _ in range(3000)]
        for priced in kept:
            self.assertEqual(_cost.add_priced(priced), priced.usd)
        for priced in kept[:500]:
            _cost.add_priced(priced)
        total = vcr_kit.session_cost()
        self.assertEqual(total.calls, 3500)
        self.assertEqual(total.input_tokens, 35_000)
        self.assertAlmostEqual(total.usd, 3500 * kept[0].usd)
        _cost.add_priced(kept[0])  # counted after the sum was asked: in the next one
        self.assertEqual(vcr_kit.session_cost().calls, 3501)

    def test_batch_results_count_at_the_batch_rate(self) -> None:
        from vcr_kit._engine import http_codec

        message = {"type": "message", "model": MODEL, "usage": CACHE_USAGE}
        stored = {
            "status": 200,
            "jsonl": [
                {"custom_id": "a", "result": {"type": "succeeded", "message": message}},
                {"custom_id": "b", "result": {"type": "errored", "error": {"type": "x"}}},
            ],
        }
        usd = _cost.add_usage(http_codec.usage_of(stored))
        self.assertAlmostEqual(usd, CACHE_CALL_USD * _prices.BATCH_RATE)
        self.assertEqual(vcr_kit.session_cost().calls, 1)

    def test_cache_writes_split_5m_1h_and_reads(self) -> None:
        cost = _cost.cost_of(MODEL, CACHE_USAGE)
        self.assertAlmostEqual(cost.usd, CACHE_CALL_USD, places=12)
        self.assertEqual(
            (cost.input_tokens, cost.output_tokens, cost.cache_write_5m_tokens),
            (1200, 4, 1000),
        )
        self.assertEqual((cost.cache_write_1h_tokens, cost.cache_read_tokens), (2000, 5000))

    def test_without_a_split_cache_writes_count_at_the_5_minute_rate(self) -> None:
        usage = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 1_000_000}
        self.assertAlmostEqual(_cost.cost_of("claude-sonnet-4-6", usage).usd, 3.75)

    def test_dated_ids_and_aliases_resolve_to_their_base_price(self) -> None:
        for model, base in [
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
            ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
            ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ]:
            with self.subTest(model=model):
                self.assertEqual(_prices.base_model_id(model), base)
                self.assertIs(_cost.price_for(model), _prices.PRICES[base])

    def test_every_price_row_has_a_source_and_date(self) -> None:
        for model, price in _prices.PRICES.items():
            with self.subTest(model=model):
                self.assertTrue(price.source)
                self.assertRegex(price.checked, r"^\d{4}-\d{2}-\d{2}$")

    def test_haiku_5_5_is_priced_by_prompt_length(self) -> None:
        short = _cost.cost_of("claude-haiku-5-5", {"input_tokens": 100_000, "output_tokens": 0})
        long = _cost.cost_of("claude-haiku-5-5", {"input_tokens": 100_001, "output_tokens": 0})
        self.assertAlmostEqual(short.usd, 100_000 * 0.10 / 1e6)
        self.assertAlmostEqual(long.usd, 100_001 * 0.50 / 1e6)

    def test_an_unknown_model_counts_tokens_and_warns_once(self) -> None:
        usage = {"input_tokens": 7, "output_tokens": 3}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vcr_kit._ledger.cost.add_usage([{"model": "claude-unknown-9", "usage": usage}] * 3)
        self.assertEqual(len(caught), 1)
        self.assertIs(caught[0].category, _cost.UnknownModelPriceWarning)
        self.assertEqual(
            str(caught[0].message),
            "vcr_kit: no price for model 'claude-unknown-9'; its tokens are counted, its cost "
            "is 0. Add one with vcr_kit.set_price().",
        )
        total = vcr_kit.session_cost()
        self.assertEqual((total.calls, total.input_tokens, total.output_tokens), (3, 21, 9))
        self.assertEqual(total.usd, 0)

    def test_users_can_add_and_override_prices(self) -> None:
        self.addCleanup(_cost.COST.reset)
        vcr_kit.set_price("my-model-20260101", vcr_kit.Price(2, 0, 0, 0, 4))
        self.assertAlmostEqual(
            _cost.cost_of("my-model", {"input_tokens": 10**6, "output_tokens": 10**6}).usd, 6
        )
        vcr_kit.set_price(MODEL, vcr_kit.Price(1, 1, 1, 1, 1))
        self.assertAlmostEqual(_cost.cost_of(MODEL, {"input_tokens": 10**6}).usd, 1)

    def test_a_stream_counts_once_with_the_final_output_tokens(self) -> None:
        events = [
            {
                "type": "message_start",
                "message": {
                    "type": "message",
                    "model": MODEL,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}},
            {"type": "message_delta", "usage": {"output_tokens": 40}},
            {"type": "message_stop"},
        ]
        self.assertEqual(
            _cost.usage_entries(events),
            [{"model": MODEL, "usage": {"input_tokens": 10, "output_tokens": 40}}],
        )

    def test_a_stream_s_final_counts_replace_the_start_s_as_the_sdk_does(self) -> None:
        # message_delta's counts are running totals (a compaction or a server tool
        # reads more input): each one given replaces message_start's, a null one keeps it.
        start_usage = {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 100,
            "output_tokens": 1,
        }
        events = [
            {
                "type": "message_start",
                "message": {"type": "message", "model": MODEL, "usage": start_usage},
            },
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {
                    "input_tokens": 30,
                    "cache_creation_input_tokens": None,
                    "cache_read_input_tokens": 250,
                    "output_tokens": 40,
                    "server_tool_use": {"web_search_requests": 1},
                },
            },
            {"type": "message_stop"},
        ]
        self.assertEqual(
            _cost.usage_entries(events),
            [
                {
                    "model": MODEL,
                    "usage": {
                        "input_tokens": 30,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 250,
                        "output_tokens": 40,
                        "server_tool_use": {"web_search_requests": 1},
                    },
                }
            ],
        )
        self.assertEqual(start_usage["input_tokens"], 10, "the event was changed")

    @given(
        st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7)
    )
    def test_cost_is_linear_in_each_kind_of_token(
        self, inp: int, out: int, w5: int, read: int
    ) -> None:
        usage = {
            "input_tokens": inp,
            "output_tokens": out,
            "cache_creation_input_tokens": w5,
            "cache_read_input_tokens": read,
        }
        expected = (inp * 3 + out * 15 + w5 * 3.75 + read * 0.30) / 1e6
        self.assertAlmostEqual(_cost.cost_of("claude-sonnet-4-6", usage).usd, expected, places=6)


class ReplayedCostTest(unittest.TestCase):
    """The same conversation costs the same, by hand, when recorded and when replayed."""

    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.fixtures = temp_dir(self)
        self.addCleanup(vcr_kit.reset_session_cost)

    def run_conversation(self, base_url: str) -> vcr_kit.SessionCost:
        fixtures = self.fixtures
        costs: list[vcr_kit.SessionCost] = []

        class Conversation(vcr_kit.VCRTestCase):
            vcr_fixtures_dir = fixtures

            def test_it(self) -> None:
                vcr_kit.reset_session_cost()
                client = vcr_kit.client(base_url=base_url)
                self.addCleanup(client.close)
                question = [{"role": "user", "content": "[[cache]] price check"}]
                client.messages.create(model=MODEL, max_tokens=10, messages=question)
                with client.messages.stream(model=MODEL, max_tokens=10, messages=question) as s:
                    s.get_final_message()
                with vcr_kit.cassette(question) as c:
                    c.play(
                        lambda: client.messages.create(
                            model=MODEL, max_tokens=10, messages=question
                        )
                    )
                costs.append(vcr_kit.session_cost())

        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Conversation)
        result = unittest.TextTestRunner(stream=io.StringIO()).run(suite)
        self.assertTrue(
            result.wasSuccessful(), [text for _, text in result.errors + result.failures]
        )
        return costs[0]

    def test_session_cost_matches_the_hand_computed_value_live_and_replayed(self) -> None:
        with LoopbackServer() as server, mock.patch.dict(os.environ, {"ANTHROPIC_API_KEY": KEY}):
            recorded = self.run_conversation(server.url)
        replayed = self.run_conversation("http://127.0.0.1:9")  # server gone: replay only

        for label, cost in (("recorded", recorded), ("replayed", replayed)):
            with self.subTest(label):
                # create + stream + cassette: 3 calls. The cassette's function replays the
                # create's fixture when recording; that response is counted once, not twice.
                self.assertEqual(cost.calls, 3)
                self.assertAlmostEqual(cost.usd, 3 * CACHE_CALL_USD, places=12)
                self.assertEqual(
                    (cost.input_tokens, cost.cache_write_5m_tokens, cost.cache_write_1h_tokens),
                    (3 * 1200, 3 * 1000, 3 * 2000),
                )
                self.assertEqual((cost.cache_read_tokens, cost.output_tokens), (3 * 5000, 3 * 4))
                self.assertEqual(list(cost.by_model), [MODEL])
        self.assertEqual(recorded, replayed)


if __name__ == "__main__":
    unittest.main()
