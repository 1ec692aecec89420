"""Another provider's answers read for what they say (``_core.provider_answer``) and
compared field-aware (``answer_verdict`` with the request's provider), and drift's
``--model`` in a Gemini path (``drift_rules``), on hand-made wire-format answers."""

from __future__ import annotations

import copy
import unittest
from typing import Any

import pytest

from vcr_kit._cli._render import render
from vcr_kit._core.answer_verdict import compare_answers
from vcr_kit._core.drift_rules import asked_request, describe_change
from vcr_kit._core.provider_answer import as_message, envelope, final_body

pytestmark = pytest.mark.inprocess

OPENAI = {"method": "POST", "path": "/v1/chat/completions", "provider": "openai", "body": {}}
GEMINI = {"method": "POST", "path": "/v1beta/models/gemini-2.5-flash:generateContent",
          "provider": "gemini", "body": {"contents": []}}  # fmt: skip


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"data": {"id": "chatcmpl-vcr0", "object": "chat.completion.chunk", "model": "m",
                     "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}}


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"status": 200, "headers": {"content-type": "application/json"}, "body": {
        "id": "chatcmpl-vcr0", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message},
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}}


def gemini(parts: list[dict[str, Any]], finish: str = "STOP", **more: Any) -> dict[str, Any]:
    return {"status": 200, "headers": {"content-type": "application/json"}, "body": {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish,
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 3}, "modelVersion": "g", **more}}


class FinalAnswerTest(unittest.TestCase):
    def test_chat_chunks_fold_into_the_completion_with_tool_calls_joined(self) -> None:
        events = [
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                   "function": {"name": "get_weather", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"loc'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ation": "Paris"}'}}]}),
            chunk({"content": "two"}, index=1), chunk({}, "tool_calls"), chunk({}, "stop", 1),
            {"data": {"object": "chat.completion.chunk", "choices": [], "usage": {"x": 1}}},
            {"data_text": "[DONE]"},
        ]  # fmt: skip
        body = final_body("openai", {"status": 200, "events": events})
        self.assertEqual(as_message("openai", body), {
            "type": "message", "role": "assistant", "stop_reason": "tool_calls, stop",
            "content": [
                {"type": "tool_use", "id": "call_a", "name": "get_weather",
                 "input": {"location": "Paris"}},
                {"type": "text", "text": "two"},
            ]})  # fmt: skip
        self.assertEqual(body["usage"], {"x": 1})

    def test_gemini_chunks_concatenate_texts_and_keep_function_calls(self) -> None:
        events = [
            {"data": {"candidates": [{"content": {"parts": [{"text": "It is "}]}}]}},
            {"data": {"candidates": [{"content": {"parts": [{"text": "sunny."}]}}]}},
            {"data": {"candidates": [{"content": {"parts": [
                {"functionCall": {"name": "log", "args": {"n": 1}}}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 4}}},
        ]  # fmt: skip
        body = final_body("gemini", {"status": 200, "events": events})
        self.assertEqual(body["usageMetadata"], {"promptTokenCount": 4})
        message = as_message("gemini", body)
        assert message is not None
        self.assertEqual(message["content"], [
            {"type": "text", "text": "It is sunny."},
            {"type": "tool_use", "id": None, "name": "log", "input": {"n": 1}},
        ])  # fmt: skip
        self.assertEqual(message["stop_reason"], "STOP")

    def test_a_responses_stream_is_its_final_event_and_a_cut_one_has_none(self) -> None:
        answer = {"object": "response", "status": "completed", "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
            {"type": "function_call", "call_id": "call_b", "name": "f", "arguments": "{}"}]}
        events = [{"event": "response.created", "data": {"type": "response.created"}},
                  {"event": "response.completed",
                   "data": {"type": "response.completed", "response": answer}}]
        self.assertIs(final_body("openai", {"events": events}), answer)
        self.assertIsNone(final_body("openai", {"events": events[:1]}))
        message = as_message("openai", answer)
        assert message is not None
        self.assertEqual([b["type"] for b in message["content"]], ["thinking", "tool_use"])

    def test_the_envelope_leaves_out_the_models_turn(self) -> None:
        body = completion({"content": None, "tool_calls": []})["body"]
        self.assertEqual(envelope("openai", body)["choices"][0]["message"], {"role": "assistant"})
        parts = gemini([{"text": "x"}])["body"]
        self.assertNotIn("content", envelope("gemini", parts)["candidates"][0])


class ProviderVerdictTest(unittest.TestCase):
    def verdict(self, recorded: Any, live: Any, request: Any = OPENAI) -> tuple[str, list[str]]:
        found = compare_answers(recorded, live, request)
        return found.verdict, list(found.reasons)

    def test_a_tool_call_instead_of_text_is_a_regression_not_api_drift(self) -> None:
        text = completion({"content": "It is sunny."})
        call = completion({"content": None, "tool_calls": [{"id": "call_a", "type": "function",
                           "function": {"name": "get_weather", "arguments": "{}"}}]},
                          "tool_calls")  # fmt: skip
        self.assertEqual(self.verdict(text, call), ("regression", [
            "regression: finish reason stop -> tool_calls",
            "regression: a tool is called now: get_weather"]))  # fmt: skip

    def test_a_truncation_and_a_new_envelope_field(self) -> None:
        before = gemini([{"text": "A long story."}])
        after = gemini([{"text": "A long"}], "MAX_TOKENS", modelStatus={"stage": "GA"})
        self.assertEqual(self.verdict(before, after, GEMINI), ("api drift", [
            "api drift: new field modelStatus (object)",
            "regression: truncated by the token limit (finish reason STOP -> MAX_TOKENS)",
            "benign: other wording in block 0 (text)"]))  # fmt: skip

    def test_only_usage_and_ids_differ_is_identical(self) -> None:
        before = completion({"content": "Hi."})
        after = copy.deepcopy(before)
        after["body"]["usage"]["completion_tokens"] = 9
        after["body"]["id"] = "chatcmpl-other"
        self.assertEqual(self.verdict(before, after), ("identical", []))

    def test_embeddings_by_count_and_dimensions(self) -> None:
        def vectors(*sizes: int) -> dict[str, Any]:
            data = [{"object": "embedding", "index": i, "embedding": [0.5] * n}
                    for i, n in enumerate(sizes)]
            return {"status": 200, "headers": {"content-type": "application/json"},
                    "body": {"object": "list", "data": data, "model": "e"}}

        request = {**OPENAI, "path": "/v1/embeddings"}
        self.assertEqual(self.verdict(vectors(8, 8), vectors(4, 4), request),
                         ("regression", ["regression: embedding dimensions 8 -> 4"]))
        self.assertEqual(self.verdict(vectors(8), vectors(8, 8), request),
                         ("regression", ["regression: 1 embeddings -> 2"]))

    def test_gemini_errors_are_told_apart_by_their_status_name(self) -> None:
        def error(status: str) -> dict[str, Any]:
            return {"status": 400, "headers": {"content-type": "application/json"},
                    "body": {"error": {"code": 400, "message": "m", "status": status}}}

        self.assertEqual(self.verdict(error("INVALID_ARGUMENT"), error("FAILED_PRECONDITION"),
                                      GEMINI),
                         ("regression", ["regression: error 400 INVALID_ARGUMENT -> error 400 "
                                         "FAILED_PRECONDITION"]))  # fmt: skip


class ModelInPathTest(unittest.TestCase):
    def test_model_is_asked_in_a_gemini_path_and_in_an_openai_body(self) -> None:
        def model_for(old: str) -> str:
            return {"gemini-2.5-flash": "gemini-2.5-pro", "gpt-4o-mini": "gpt-4.1"}.get(old, old)

        asked = asked_request(GEMINI, model_for)
        self.assertEqual(asked["path"], "/v1beta/models/gemini-2.5-pro:generateContent")
        self.assertEqual(describe_change(GEMINI, asked),
                         "model gemini-2.5-flash -> gemini-2.5-pro")
        chat = {**OPENAI, "body": {"model": "gpt-4o-mini", "messages": []}}
        self.assertEqual(asked_request(chat, model_for)["body"]["model"], "gpt-4.1")
        anthropic = {"method": "POST", "path": "/v1/models/claude:x", "body": {}}
        self.assertIs(asked_request(anthropic, model_for), anthropic)  # no provider: no path
        # The fixture's own request is left as it is.
        self.assertEqual(GEMINI["path"], "/v1beta/models/gemini-2.5-flash:generateContent")


class RenderTest(unittest.TestCase):
    """``vcr_kit show``'s lines for what the recorded fixtures of the CLI tests lack: an
    error answer, a Responses request answering a function call, a tool result."""

    def test_an_openai_error_and_a_gemini_error(self) -> None:
        error = {"error": {"message": "Bad model.", "type": "invalid_request_error"}}
        doc = {"kind": "http", "request": OPENAI,
               "response": {"status": 404, "body": error}}  # fmt: skip
        self.assertEqual(render(doc)[-2:],
                         ["status 404", "error invalid_request_error: Bad model."])
        gemini_error = {"error": {"code": 400, "message": "No.", "status": "INVALID_ARGUMENT"}}
        doc = {"kind": "http", "request": GEMINI,
               "response": {"status": 400, "body": gemini_error}}  # fmt: skip
        self.assertEqual(render(doc)[1], "provider: Google Gemini")
        self.assertEqual(render(doc)[-1], "error INVALID_ARGUMENT: No.")

    def test_tool_results_in_requests(self) -> None:
        responses = {**OPENAI, "path": "/v1/responses", "body": {
            "model": "m", "previous_response_id": "resp_vcr1",
            "input": [{"type": "function_call_output", "call_id": "call_a", "output": "21C"}]}}
        chat = {**OPENAI, "body": {"model": "m", "messages": [
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_a", "type":
             "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_a", "content": "21C"}]}}
        gemini = {**GEMINI, "body": {"contents": [{"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"t": 21}}}]}]}}
        lines = [render({"kind": "http", "request": r, "response": {"status": 200, "body": {}}})
                 for r in (responses, chat, gemini)]  # fmt: skip
        self.assertIn("previous_response_id: resp_vcr1", lines[0])
        self.assertIn("[tool: result for call_a] 21C", lines[0])
        self.assertIn("[assistant calls get_weather (call_a)] {}", lines[1])
        self.assertIn("[tool: result for call_a] 21C", lines[1])
        self.assertIn('[user: result for get_weather] {"t": 21}', lines[2])

    def test_a_gemini_embedding(self) -> None:
        request = {**GEMINI, "path": "/v1beta/models/text-embedding-004:embedContent",
                   "body": {"content": {"parts": [{"text": "one"}]}, "taskType": "X"}}
        answer = {"status": 200, "body": {"embedding": {"values": [0.1, 0.2, 0.3]}}}
        lines = render({"kind": "http", "request": request, "response": answer})
        self.assertEqual(lines[4:], ['parameters: taskType=X', "[embed] one", "--- answer",
                                     "status 200", "embeddings: 1 of 3 dimensions (vectors not "
                                     "shown)"])  # fmt: skip
