"""The example program's tests: recorded once against the API, replayed offline since.

Run them offline (CI=true makes a missing fixture fail instead of calling the API):

    CI=true python -m unittest discover -s examples -t . -v
"""

from __future__ import annotations

import unittest

import vcr_kit
from examples import streamed_answer, token_budget, weather_agent


class WeatherAgentTest(vcr_kit.VCRTestCase):
    def test_agent_calls_the_tool_then_answers(self) -> None:
        run = weather_agent.ask("What is the weather in Rome?")

        self.assertEqual(run.turns, 2)
        self.assertEqual(
            run.tool_calls,
            [{"name": "get_weather", "input": {"location": "Rome", "unit": "celsius"}}],
        )
        self.assertEqual(run.answer, "The tool said: sunny, 24 degrees")
        self.assertGreater(run.input_tokens, 0)

    def test_costs_are_tracked_on_replay_too(self) -> None:
        vcr_kit.reset_session_cost()
        weather_agent.ask("What is the weather in Oslo?")
        cost = vcr_kit.session_cost()
        self.assertEqual(cost.calls, 2)
        self.assertGreater(cost.usd, 0)
        self.assertEqual(set(cost.by_model), {"claude-opus-4-7"})


class StreamedAnswerTest(vcr_kit.VCRTestCase):
    def test_pieces_arrive_in_order_and_join_to_the_final_text(self) -> None:
        pieces = list(streamed_answer.stream_answer(self.anthropic, "Tell me a short story"))
        final = streamed_answer.final_answer(self.anthropic, "Tell me a short story")

        self.assertGreater(len(pieces), 1)
        self.assertEqual("".join(pieces), "Echo: Tell me a short story")
        self.assertEqual(final.content[0].text, "".join(pieces))  # type: ignore[union-attr]
        self.assertEqual(final.stop_reason, "end_turn")


class TokenBudgetTest(vcr_kit.VCRTestCase):
    def test_a_short_prompt_fits_and_a_tiny_budget_does_not(self) -> None:
        messages = [{"role": "user", "content": "Summarise the plot of Hamlet."}]
        tokens = token_budget.prompt_tokens(self.anthropic, messages)

        self.assertTrue(token_budget.fits_budget(self.anthropic, messages, tokens))
        self.assertFalse(token_budget.fits_budget(self.anthropic, messages, tokens - 1))


class AsyncAgentTest(vcr_kit.VCRMixin, unittest.IsolatedAsyncioTestCase):
    async def test_async_client_built_by_the_code_is_replayed(self) -> None:
        answer = await weather_agent.ask_async("Say hello")
        self.assertEqual(answer, "Echo: Say hello")


if __name__ == "__main__":
    unittest.main()
