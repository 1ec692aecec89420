"""Drive the real ``openai`` SDK against :mod:`tests.support.servers.openai_server`.

These tests prove the fake speaks OpenAI's wire format: the SDK's own parser (with
``_strict_response_validation``, which validates every answer against the SDK's
types) accepts every kind of answer, its stream helpers assemble the streams, and its
error classes come out of the error bodies, for the sync, async and Azure clients.
"""

from __future__ import annotations

import base64
import json
import struct
import time
import unittest
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.responses import FunctionToolParam

from tests.support.helpers.openai_releases import status_error_texts
from tests.support.servers.openai_server import (
    REPLAY_STAND_IN_KEY,
    SECRET_TEXT,
    OpenAIServer,
    embedding_of,
)

pytestmark = [pytest.mark.inprocess, pytest.mark.providers]

MODEL = "gpt-5-mini"
KEY = "sk-proj-loopback-test-key-0000"
WEATHER: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}
WEATHER_FUNCTION: FunctionToolParam = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    "strict": False,
}


def user(text: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "user", "content": text}]


class ServerTestCase(unittest.TestCase):
    """One server and one strict sync client per class (building clients costs more than
    the tests); the request log is cleared before each test."""

    server: OpenAIServer
    client: openai.OpenAI

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = OpenAIServer().start()
        cls.addClassCleanup(cls.server.stop)
        cls.client = openai.OpenAI(**cls.client_options())
        cls.addClassCleanup(cls.client.close)

    @classmethod
    def client_options(cls, **kwargs: Any) -> dict[str, Any]:
        options: dict[str, Any] = {
            "api_key": KEY,
            "base_url": cls.server.base_url,
            "max_retries": 0,
            "_strict_response_validation": True,
        }
        return {**options, **kwargs}

    def setUp(self) -> None:
        self.server.reset_log()

    def make_client(self, **kwargs: Any) -> openai.OpenAI:
        """The class's client with other options; it shares the class client's connections."""
        return self.client.with_options(**kwargs)

    def assertErrorMessage(self, error: openai.APIStatusError, message: str) -> None:
        """The error body's message is ``message`` and the SDK's text carries it (as the
        release renders it: the message alone, or the whole body before)."""
        assert isinstance(error.body, dict)
        self.assertEqual(error.body["message"], message)
        self.assertIn(error.message, status_error_texts(error, message))

    def raw(self, path: str, body: object | None = None, **headers: str) -> tuple[int, str, str]:
        """(status, content-type, body text) of one request made without the SDK."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server.url + path, data=data, headers=headers)
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.headers["content-type"], answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers["content-type"], error.read().decode()


class ChatCompletionsTest(ServerTestCase):
    def test_a_plain_answer_has_the_api_envelope_and_fresh_ids(self) -> None:
        first = self.client.chat.completions.create(model=MODEL, messages=user("hello"))
        second = self.client.chat.completions.create(model=MODEL, messages=user("hello"))
        self.assertEqual(first.choices[0].message.content, "Echo: hello")
        self.assertEqual(first.choices[0].finish_reason, "stop")
        self.assertEqual((first.object, first.model), ("chat.completion", MODEL))
        self.assertRegex(first.id, r"^chatcmpl-[A-Za-z0-9]{29}$")
        self.assertRegex(first.system_fingerprint or "", r"^fp_[0-9a-f]{10}$")
        self.assertLessEqual(abs(first.created - time.time()), 5)
        self.assertRegex(first._request_id or "", r"^req_[0-9a-f]{32}$")
        self.assertNotEqual(first.id, second.id)
        self.assertEqual(first.choices, second.choices)
        self.assertEqual(first.usage, second.usage)

    def test_usage_carries_cached_and_reasoning_tokens(self) -> None:
        plain = self.client.chat.completions.create(model=MODEL, messages=user("hello"))
        assert plain.usage is not None
        assert plain.usage.prompt_tokens_details is not None
        self.assertEqual(plain.usage.prompt_tokens_details.cached_tokens, 0)
        self.assertEqual(plain.usage.total_tokens, plain.usage.prompt_tokens + 2)
        cached = self.client.chat.completions.create(model=MODEL, messages=user("[[cache]] hi"))
        assert cached.usage is not None
        assert cached.usage.completion_tokens_details is not None
        assert cached.usage.prompt_tokens_details is not None
        self.assertEqual(cached.usage.prompt_tokens_details.cached_tokens, 1920)
        self.assertEqual(cached.usage.completion_tokens_details.reasoning_tokens, 192)
        reasoned = self.client.chat.completions.create(
            model=MODEL, messages=user("hello"), reasoning_effort="low"
        )
        assert reasoned.usage is not None
        assert reasoned.usage.completion_tokens_details is not None
        self.assertEqual(reasoned.usage.completion_tokens_details.reasoning_tokens, 64)
        self.assertEqual(reasoned.usage.completion_tokens, 2 + 64)

    def test_a_stream_delivers_the_same_text_and_a_final_usage_chunk(self) -> None:
        plain = self.client.chat.completions.create(model=MODEL, messages=user("hello there"))
        chunks = list(
            self.client.chat.completions.create(
                model=MODEL,
                messages=user("hello there"),
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        self.assertEqual(text, "Echo: hello there")
        self.assertEqual(len({chunk.id for chunk in chunks}), 1)
        self.assertEqual(chunks[-2].choices[0].finish_reason, "stop")
        self.assertEqual((chunks[-1].choices, chunks[-1].usage), ([], plain.usage))
        self.assertTrue(all(chunk.usage is None for chunk in chunks[:-1]))

    def test_the_stream_helper_assembles_a_completion(self) -> None:
        with self.client.chat.completions.stream(model=MODEL, messages=user("hi you")) as stream:
            deltas = [event.delta for event in stream if event.type == "content.delta"]
            final = stream.get_final_completion()
        self.assertEqual("".join(deltas), "Echo: hi you")
        self.assertEqual(final.choices[0].message.content, "Echo: hi you")

    def test_a_tool_call_round_trip_quotes_the_tool_result(self) -> None:
        messages = user("What is the weather in Lyon?")
        asked = self.client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER])
        self.assertEqual(asked.choices[0].finish_reason, "tool_calls")
        self.assertIsNone(asked.choices[0].message.content)
        (call,) = asked.choices[0].message.tool_calls or []
        assert call.type == "function"
        self.assertRegex(call.id, r"^call_[A-Za-z0-9]{24}$")
        self.assertEqual(
            (call.function.name, call.function.arguments), ("get_weather", '{"location":"Lyon"}')
        )
        messages = [
            *messages,
            {"role": "assistant", "tool_calls": [call.to_dict()]},  # type: ignore[list-item]
            {"role": "tool", "tool_call_id": call.id, "content": "12 C and rain"},
        ]
        answered = self.client.chat.completions.create(
            model=MODEL, messages=messages, tools=[WEATHER]
        )
        self.assertEqual(answered.choices[0].message.content, "The tool said: 12 C and rain")

    def test_a_tool_message_must_answer_an_earlier_call(self) -> None:
        messages: list[ChatCompletionMessageParam] = [
            *user("weather?"),
            {"role": "tool", "tool_call_id": "call_madeup", "content": "12 C"},
        ]
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.chat.completions.create(model=MODEL, messages=messages)
        self.assertErrorMessage(
            caught.exception,
            "Invalid parameter: messages with role 'tool' must be a response "
            "to a preceeding message with 'tool_calls'.",
        )
        self.assertEqual(caught.exception.param, "messages.[1].role")

    def test_the_stream_helper_assembles_tool_calls(self) -> None:
        text = 'go [[tool:lookup {"q": "x y"}]]'
        with self.client.chat.completions.stream(
            model=MODEL, messages=user(text), tools=[WEATHER]
        ) as stream:
            final = stream.get_final_completion()
        (call,) = final.choices[0].message.tool_calls or []
        self.assertEqual((call.function.name, call.function.arguments), ("lookup", '{"q":"x y"}'))
        self.assertTrue(call.id.startswith("call_"))

    def test_the_wire_stream_ends_with_done_and_pads_chunks(self) -> None:
        body = {"model": MODEL, "messages": user("hi"), "stream": True}
        status, kind, text = self.raw("/v1/chat/completions", body, authorization=f"Bearer {KEY}")
        self.assertEqual((status, kind), (200, "text/event-stream; charset=utf-8"))
        self.assertTrue(text.endswith("data: [DONE]\n\n"))
        chunks = [json.loads(line[6:]) for line in text.split("\n\n") if line.startswith("data: {")]
        self.assertTrue(all(chunk["obfuscation"] for chunk in chunks))
        body["stream_options"] = {"include_obfuscation": False}
        _, _, text = self.raw("/v1/chat/completions", body, authorization=f"Bearer {KEY}")
        self.assertNotIn("obfuscation", text)


class ResponsesTest(ServerTestCase):
    def test_a_plain_response_has_its_items_and_usage(self) -> None:
        response = self.client.responses.create(model=MODEL, input="hi there")
        self.assertEqual(response.output_text, "Echo: hi there")
        self.assertRegex(response.id, r"^resp_[0-9a-f]{48}$")
        (item,) = response.output
        self.assertEqual((item.type, (item.id or "")[:4]), ("message", "msg_"))
        self.assertEqual(response.status, "completed")
        assert response.usage is not None
        self.assertEqual(response.usage.output_tokens, 3)
        self.assertEqual(response.usage.input_tokens_details.cached_tokens, 0)
        again = self.client.responses.create(model=MODEL, input="hi there")
        self.assertNotEqual((again.id, again.output[0].id), (response.id, item.id))

    def test_reasoning_adds_a_reasoning_item_and_tokens(self) -> None:
        response = self.client.responses.create(
            model=MODEL, input="think", reasoning={"effort": "low", "summary": "auto"}
        )
        self.assertEqual([item.type for item in response.output], ["reasoning", "message"])
        reasoning = response.output[0]
        assert reasoning.type == "reasoning"
        self.assertTrue(reasoning.id.startswith("rs_"))
        self.assertEqual(reasoning.summary[0].text, "Thinking about: think")
        assert response.usage is not None
        self.assertEqual(response.usage.output_tokens_details.reasoning_tokens, 64)

    def test_a_chain_must_name_a_response_given_here(self) -> None:
        first = self.client.responses.create(model=MODEL, input="one")
        second = self.client.responses.create(
            model=MODEL, input="two", previous_response_id=first.id
        )
        self.assertEqual(second.output_text, "Echo: two (turn 2, first: one)")
        self.assertEqual(second.previous_response_id, first.id)
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.responses.create(model=MODEL, input="two", previous_response_id="resp_abc")
        self.assertErrorMessage(caught.exception, "Previous response with id 'resp_abc' not found.")
        self.assertEqual(
            (caught.exception.code, caught.exception.param),
            ("previous_response_not_found", "previous_response_id"),
        )

    def test_a_function_call_round_trip_by_call_id(self) -> None:
        asked = self.client.responses.create(
            model=MODEL, input="weather in Rome", tools=[WEATHER_FUNCTION]
        )
        (call,) = asked.output
        assert call.type == "function_call"
        self.assertTrue((call.id or "").startswith("fc_"))
        self.assertRegex(call.call_id, r"^call_[A-Za-z0-9]{24}$")
        self.assertEqual(call.arguments, '{"location":"Rome"}')
        answered = self.client.responses.create(
            model=MODEL,
            previous_response_id=asked.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}],
        )
        self.assertEqual(answered.output_text, "The tool said: sunny")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.responses.create(
                model=MODEL,
                previous_response_id=asked.id,
                input=[{"type": "function_call_output", "call_id": "call_x", "output": "sunny"}],
            )
        self.assertErrorMessage(
            caught.exception, "No tool call found for function call output with call_id call_x."
        )

    def test_the_stream_helper_assembles_the_response(self) -> None:
        plain = self.client.responses.create(model=MODEL, input="streamed hi")
        with self.client.responses.stream(model=MODEL, input="streamed hi") as stream:
            events = list(stream)
            final = stream.get_final_response()
        deltas = [event.delta for event in events if event.type == "response.output_text.delta"]
        self.assertEqual("".join(deltas), "Echo: streamed hi")
        self.assertEqual(final.output_text, "Echo: streamed hi")
        self.assertEqual(final.usage, plain.usage)
        self.assertEqual(events[0].type, "response.created")
        self.assertEqual(events[-1].type, "response.completed")
        self.assertEqual([e.sequence_number for e in events], list(range(len(events))))

    def test_a_streamed_function_call_and_a_streamed_chain(self) -> None:
        with self.client.responses.stream(
            model=MODEL, input="weather in Oslo", tools=[WEATHER_FUNCTION]
        ) as stream:
            asked = stream.get_final_response()
        (call,) = asked.output
        assert call.type == "function_call"
        self.assertEqual(call.arguments, '{"location":"Oslo"}')
        with self.client.responses.stream(
            model=MODEL,
            previous_response_id=asked.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "-3 C"}],
        ) as stream:
            self.assertEqual(stream.get_final_response().output_text, "The tool said: -3 C")

    def test_the_wire_events_are_typed_and_sequenced(self) -> None:
        body = {"model": MODEL, "input": "hi", "stream": True}
        _, _, text = self.raw("/v1/responses", body, authorization=f"Bearer {KEY}")
        names = [block.split("\n")[0] for block in text.strip().split("\n\n")]
        self.assertEqual(
            names,
            [
                "event: response.created",
                "event: response.in_progress",
                "event: response.output_item.added",
                "event: response.content_part.added",
                "event: response.output_text.delta",
                "event: response.output_text.done",
                "event: response.content_part.done",
                "event: response.output_item.done",
                "event: response.completed",
            ],
        )
        self.assertNotIn("[DONE]", text)

    def test_a_response_stopped_at_the_token_limit_is_incomplete(self) -> None:
        response = self.client.responses.create(model=MODEL, input="[[incomplete]] a long text")
        self.assertEqual(response.status, "incomplete")
        assert response.incomplete_details is not None
        self.assertEqual(response.incomplete_details.reason, "max_output_tokens")
        with self.client.responses.stream(
            model=MODEL, input="[[incomplete]] a long text"
        ) as stream:
            self.assertEqual([e.type for e in stream][-1], "response.incomplete")


class EmbeddingsAndModelsTest(ServerTestCase):
    def test_the_sdk_decodes_the_base64_it_asks_for(self) -> None:
        # Strict validation runs before the SDK decodes base64: production clients are not strict.
        client = openai.OpenAI(**self.client_options(_strict_response_validation=False))
        self.addCleanup(client.close)
        answer = client.embeddings.create(model="text-embedding-3-small", input=["a", "b c"])
        self.assertEqual(
            [item.embedding for item in answer.data], [embedding_of("a"), embedding_of("b c")]
        )
        self.assertEqual((answer.usage.prompt_tokens, answer.usage.total_tokens), (3, 3))
        (sent,) = [request.json() for request in self.server.log]
        self.assertEqual(sent["encoding_format"], "base64")

    def test_floats_when_asked_and_the_wire_base64_is_float32(self) -> None:
        answer = self.client.embeddings.create(
            model="text-embedding-3-small", input="a", encoding_format="float", dimensions=4
        )
        self.assertEqual(answer.data[0].embedding, embedding_of("a", 4))
        body = {"model": "text-embedding-3-small", "input": "a", "encoding_format": "base64"}
        _, _, text = self.raw("/v1/embeddings", body, authorization=f"Bearer {KEY}")
        packed = base64.b64decode(json.loads(text)["data"][0]["embedding"])
        self.assertEqual(list(struct.unpack("<8f", packed)), embedding_of("a"))

    def test_models_list_and_retrieve(self) -> None:
        models = [model.id for model in self.client.models.list()]
        self.assertIn(MODEL, models)
        self.assertEqual(self.client.models.retrieve(MODEL).owned_by, "system")
        with self.assertRaises(openai.NotFoundError):
            self.client.models.retrieve("gpt-unknown")


class CredentialsTest(ServerTestCase):
    def test_no_key_is_a_401(self) -> None:
        status, _, text = self.raw("/v1/models")
        self.assertEqual(status, 401)
        error = json.loads(text)["error"]
        self.assertTrue(error["message"].startswith("You didn't provide an API key."))
        self.assertEqual(
            (error["type"], error["param"], error["code"]), ("invalid_request_error", None, None)
        )

    def test_a_refused_key_is_an_invalid_api_key_401(self) -> None:
        self.server.refused_keys.add("sk-proj-revoked-0000")
        self.addCleanup(self.server.refused_keys.discard, "sk-proj-revoked-0000")
        for key, masked in (
            ("sk-proj-revoked-0000", "sk-*************0000"),
            (REPLAY_STAND_IN_KEY, "vcr**************-key"),
        ):
            with self.assertRaises(openai.AuthenticationError) as caught:
                self.make_client(api_key=key).models.list()
            self.assertEqual(
                caught.exception.body,
                {
                    "message": f"Incorrect API key provided: {masked}. You can find your API key "
                    "at https://platform.openai.com/account/api-keys.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                },
            )

    def test_azure_deployments_take_an_api_key_header_and_an_api_version(self) -> None:
        azure = openai.AzureOpenAI(
            api_key="azure-key-0000",
            azure_endpoint=self.server.url,
            api_version="2024-10-21",
            max_retries=0,
            _strict_response_validation=True,
        )
        self.addCleanup(azure.close)
        answer = azure.chat.completions.create(model="my-deployment", messages=user("az"))
        self.assertEqual(
            (answer.choices[0].message.content, answer.model), ("Echo: az", "my-deployment")
        )
        sent = self.server.log[-1]
        self.assertEqual(sent.path, "/openai/deployments/my-deployment/chat/completions")
        self.assertEqual(
            (sent.query, sent.headers["api-key"]), ("api-version=2024-10-21", "azure-key-0000")
        )
        # openai 1.x also sends the key as a bearer token beside api-key
        self.assertIn(sent.headers.get("authorization"), (None, "Bearer azure-key-0000"))
        status, _, _ = self.raw(
            "/openai/deployments/d/chat/completions", {"messages": user("x")}, **{"api-key": "k"}
        )
        self.assertEqual(status, 404)  # no api-version: Azure knows no such resource

    def test_azure_refuses_a_bad_key_in_its_own_shape(self) -> None:
        azure = openai.AzureOpenAI(
            api_key=REPLAY_STAND_IN_KEY,
            azure_endpoint=self.server.url,
            api_version="2024-10-21",
            max_retries=0,
        )
        self.addCleanup(azure.close)
        with self.assertRaises(openai.AuthenticationError) as caught:
            azure.embeddings.create(model="emb", input="x")
        body = caught.exception.body
        assert isinstance(body, dict)
        self.assertEqual(body["code"], "401")
        self.assertTrue(body["message"].startswith("Access denied due to invalid subscription key"))

    def test_a_gateway_base_path_speaks_the_same_api(self) -> None:
        gateway = self.make_client(api_key="sk-or-v1-0000", base_url=self.server.gateway_url)
        answer = gateway.chat.completions.create(model="openai/gpt-5-mini", messages=user("gw"))
        self.assertEqual(
            (answer.model, answer.choices[0].message.content), ("openai/gpt-5-mini", "Echo: gw")
        )
        self.assertEqual(self.server.log[-1].path, "/api/v1/chat/completions")
        self.assertEqual(self.server.log[-1].headers["authorization"], "Bearer sk-or-v1-0000")


class MarkersTest(ServerTestCase):
    def test_each_error_status_in_openais_shape(self) -> None:
        expected = {
            400: (openai.BadRequestError, "invalid_request_error", "invalid_value"),
            401: (openai.AuthenticationError, "invalid_request_error", "invalid_api_key"),
            403: (
                openai.PermissionDeniedError,
                "request_forbidden",
                "unsupported_country_region_territory",
            ),
            404: (openai.NotFoundError, "invalid_request_error", "model_not_found"),
            429: (openai.RateLimitError, "requests", "rate_limit_exceeded"),
            500: (openai.InternalServerError, "server_error", None),
            503: (openai.InternalServerError, "server_error", None),
        }
        for status, (kind, error_type, code) in expected.items():
            with self.subTest(status=status), self.assertRaises(kind) as caught:
                self.client.chat.completions.create(
                    model=MODEL, messages=user(f"[[error:{status}]]")
                )
            error = caught.exception
            self.assertEqual(
                (error.status_code, error.type, error.code), (status, error_type, code)
            )
            self.assertRegex(error.request_id or "", r"^req_")

    def test_rate_limits_and_server_errors_ask_for_a_quick_retry(self) -> None:
        client = self.make_client(max_retries=1)
        with self.assertRaises(openai.RateLimitError):
            client.responses.create(model=MODEL, input="[[error:429]]")
        self.assertEqual(len(self.server.requests_to("/v1/responses")), 2)

    def test_a_cut_stream_has_no_end(self) -> None:
        body = {"model": MODEL, "messages": user("[[stream-cut]] hi"), "stream": True}
        _, _, text = self.raw("/v1/chat/completions", body, authorization=f"Bearer {KEY}")
        self.assertNotIn("[DONE]", text)
        self.assertIn('"content":"Echo: [["', text)
        with self.assertRaises(RuntimeError) as caught:
            with self.client.responses.stream(model=MODEL, input="[[stream-cut]] hi") as stream:
                stream.get_final_response()
        self.assertEqual(str(caught.exception), "Didn't receive a `response.completed` event.")

    def test_a_stream_error_breaks_the_chat_stream(self) -> None:
        with self.assertRaises(openai.APIError) as caught:
            list(
                self.client.chat.completions.create(
                    model=MODEL, messages=user("[[stream-error]] hi"), stream=True
                )
            )
        self.assertEqual(
            caught.exception.message,
            "The server had an error while processing your request. Sorry about that!",
        )
        body = {"model": MODEL, "input": "[[stream-error]] hi", "stream": True}
        _, _, text = self.raw("/v1/responses", body, authorization=f"Bearer {KEY}")
        self.assertTrue(text.strip().split("\n\n")[-1].startswith("event: error\ndata: {"))

    def test_html_truncated_json_and_a_secret(self) -> None:
        status, kind, text = self.raw(
            "/v1/chat/completions",
            {"model": MODEL, "messages": user("[[html]]")},
            authorization=f"Bearer {KEY}",
        )
        self.assertEqual((status, kind), (200, "text/html; charset=utf-8"))
        self.assertTrue(text.startswith("<!DOCTYPE html>"))
        with self.assertRaises(json.JSONDecodeError):
            self.client.chat.completions.create(model=MODEL, messages=user("[[truncated-json]]"))
        answer = self.client.responses.create(model=MODEL, input="[[secret]]")
        self.assertEqual(answer.output_text, SECRET_TEXT)
        self.assertRegex(SECRET_TEXT, r"sk-proj-[A-Za-z0-9_-]{40,}")

    def test_headers_a_recorder_must_drop_are_sent(self) -> None:
        raw = self.client.chat.completions.with_raw_response.create(
            model=MODEL, messages=user("hi")
        )
        for name in ("openai-organization", "openai-project", "set-cookie", "x-request-id"):
            self.assertIn(name, raw.headers)


@pytest.mark.inprocess
class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.server = OpenAIServer().start()
        self.addCleanup(self.server.stop)

    async def test_the_async_clients_parse_every_kind_of_answer(self) -> None:
        client = openai.AsyncOpenAI(
            api_key=KEY,
            base_url=self.server.base_url,
            max_retries=0,
            _strict_response_validation=True,
        )
        async with client:
            chat = await client.chat.completions.create(model=MODEL, messages=user("a1"))
            self.assertEqual(chat.choices[0].message.content, "Echo: a1")
            async with client.chat.completions.stream(
                model=MODEL, messages=user("a2")
            ) as chat_stream:
                final_chat = await chat_stream.get_final_completion()
            self.assertEqual(final_chat.choices[0].message.content, "Echo: a2")
            first = await client.responses.create(model=MODEL, input="a3")
            async with client.responses.stream(
                model=MODEL, input="a4", previous_response_id=first.id
            ) as stream:
                final = await stream.get_final_response()
            self.assertEqual(final.output_text, "Echo: a4 (turn 2, first: a3)")
            models = [model.id async for model in client.models.list()]
            self.assertIn(MODEL, models)
        loose = openai.AsyncOpenAI(api_key=KEY, base_url=self.server.base_url, max_retries=0)
        async with loose:
            vectors = await loose.embeddings.create(model="text-embedding-3-small", input="a")
        self.assertEqual(vectors.data[0].embedding, embedding_of("a"))

    async def test_the_async_azure_client(self) -> None:
        azure = openai.AsyncAzureOpenAI(
            api_key="azure-key-0000",
            azure_endpoint=self.server.url,
            api_version="2024-10-21",
            max_retries=0,
        )
        async with azure:
            chunks = await azure.chat.completions.create(
                model="dep", messages=user("az"), stream=True
            )
            text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
        self.assertEqual(text, "Echo: az")
