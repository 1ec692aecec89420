"""Drive the real ``google-genai`` SDK against :mod:`tests.support.servers.gemini_server`.

These tests prove the fake speaks the Gemini Developer API's wire format well enough
that the SDK parses every kind of answer with its own code: plain, function calling,
thinking, streamed (SSE), embeddings, model listing and errors, through the sync client
(httpx2) and the async one (aiohttp, which google-genai prefers when it is installed).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import typing
import unittest
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any
from unittest import mock

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from tests.support.helpers.gemini_releases import API_VERSION, http_library
from tests.support.servers.gemini_server import (
    API_KEY_INVALID_MESSAGE,
    EMBEDDING_DIMENSIONS,
    UNREGISTERED_CALLER_MESSAGE,
    GeminiServer,
)

#: google-genai subclasses aiohttp's ClientSession for its async client, which aiohttp
#: warns against: the SDK's affair, not the server's.
AIOHTTP_SUBCLASS_WARNING = "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
pytestmark = [
    pytest.mark.inprocess,
    pytest.mark.filterwarnings(AIOHTTP_SUBCLASS_WARNING),
    pytest.mark.providers,
]

MODEL = "gemini-2.5-flash"
EMBEDDER = "gemini-embedding-001"
API_KEY = "AIzaSyTest0000000000000000000000000000"
#: The shape Google gives its API keys (the secrets gate looks for it).
GOOGLE_KEY_SHAPE = re.compile(r"AIza[0-9A-Za-z_-]{35}")
WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="Current weather at a place.",
            parameters_json_schema={
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        )
    ]
)
PLAIN = types.GenerateContentConfig()
#: The SDK's default is no retry; these make a retry quick.
QUICK_RETRY = types.HttpRetryOptions(attempts=2, initial_delay=0.01, jitter=0.0)


_SHARED: list[tuple[GeminiServer, genai.Client]] = []


def _shared() -> tuple[GeminiServer, genai.Client]:
    if not _SHARED:
        server = GeminiServer().start()
        client = genai.Client(api_key=API_KEY, http_options=types.HttpOptions(base_url=server.url))
        _SHARED.append((server, client))
    return _SHARED[0]


def tearDownModule() -> None:
    for server, client in _SHARED:
        client.close()
        server.stop()
    _SHARED.clear()


def weather_config() -> types.GenerateContentConfig:
    # Automatic function calling off: the test plays the caller's part itself.
    return types.GenerateContentConfig(
        tools=[WEATHER],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


class GeminiServerTestCase(unittest.TestCase):
    """One server and one client for the module: building a client costs about 0.4 s
    (its TLS contexts), more than all the requests of a test."""

    server: GeminiServer
    client: genai.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.server, cls.client = _shared()

    def setUp(self) -> None:
        self.server.reset_log()
        self.server.refused_keys.clear()

    def generate(self, text: str, config: types.GenerateContentConfig = PLAIN) -> Any:
        return self.client.models.generate_content(model=MODEL, contents=text, config=config)

    def stream(self, text: str) -> Iterator[types.GenerateContentResponse]:
        return self.client.models.generate_content_stream(model=MODEL, contents=text)

    def last_body(self) -> Any:
        return self.server.log[-1].json()


class GenerateTest(GeminiServerTestCase):
    def test_plain_answer_echoes_with_usage_model_version_and_a_response_id(self) -> None:
        response = self.generate("hello there")

        self.assertEqual(response.text, "Echo: hello there")
        (candidate,) = response.candidates
        self.assertEqual(candidate.finish_reason, types.FinishReason.STOP)
        self.assertEqual(candidate.content.role, "model")
        self.assertEqual(response.model_version, MODEL)
        self.assertRegex(response.response_id, r"^[A-Za-z0-9_-]{23}$")
        usage = response.usage_metadata
        sent = {"contents": self.last_body()["contents"]}
        prompt = len(json.dumps(sent, sort_keys=True, separators=(",", ":")).encode()) // 4
        self.assertEqual(usage.prompt_token_count, prompt)
        self.assertEqual(usage.candidates_token_count, 3)
        self.assertEqual(usage.total_token_count, prompt + 3)
        self.assertIsNone(usage.cached_content_token_count)  # Google leaves zeros out
        self.assertIsNone(usage.thoughts_token_count)

    def test_the_sdk_sends_the_key_header_to_v1(self) -> None:
        self.generate("where to")

        (request,) = self.server.log
        path = f"/{API_VERSION}/models/{MODEL}:generateContent"
        self.assertEqual((request.method, request.path), ("POST", path))
        self.assertEqual(request.query, "")
        self.assertEqual(request.headers["x-goog-api-key"], API_KEY)

    def test_response_ids_are_fresh_but_the_content_is_not(self) -> None:
        first, second = self.generate("same question"), self.generate("same question")

        self.assertNotEqual(first.response_id, second.response_id)
        self.assertEqual(self.server.response_ids[-2:], [first.response_id, second.response_id])
        without_id = {"exclude": {"response_id", "sdk_http_response"}}
        self.assertEqual(first.model_dump(**without_id), second.model_dump(**without_id))

    def test_function_call_then_function_response_gets_the_final_answer(self) -> None:
        question = types.Content(
            role="user", parts=[types.Part(text="What's the weather in Tokyo?")]
        )
        first = self.client.models.generate_content(
            model=MODEL, contents=[question], config=weather_config()
        )

        (call,) = first.function_calls
        self.assertEqual((call.name, call.args), ("get_weather", {"location": "Tokyo"}))
        self.assertEqual(first.usage_metadata.candidates_token_count, 10)
        reply = types.Part.from_function_response(name=call.name, response={"result": "18C, sunny"})
        answer = self.client.models.generate_content(
            model=MODEL,
            contents=[
                question,
                first.candidates[0].content,
                types.Content(role="user", parts=[reply]),
            ],
            config=weather_config(),
        )

        self.assertEqual(answer.text, 'The tool said: {"result":"18C, sunny"}')
        self.assertIsNone(answer.function_calls)
        sent = self.last_body()["contents"][1]["parts"][0]
        self.assertEqual(
            sent, {"functionCall": {"args": {"location": "Tokyo"}, "name": "get_weather"}}
        )

    def test_automatic_function_calling_runs_the_python_function(self) -> None:
        def get_weather(location: str) -> str:
            """Current weather at a place."""
            return f"18C in {location}"

        # Real types, not this module's postponed (string) annotations, which google-genai
        # 2.x's automatic function calling passes to isinstance() as they are.
        get_weather.__annotations__ = typing.get_type_hints(get_weather)
        config = types.GenerateContentConfig(tools=[get_weather])
        response = self.generate("How is the weather in Oslo?", config)

        self.assertEqual(response.text, 'The tool said: {"result":"18C in Oslo"}')
        self.assertEqual(len(self.server.log), 2)

    def test_tool_marker_names_the_call(self) -> None:
        response = self.generate('go [[tool:lookup {"q": "x"}]]', weather_config())

        (call,) = response.function_calls
        self.assertEqual((call.name, call.args), ("lookup", {"q": "x"}))

    def test_thinking_counts_thoughts_and_shows_them_when_asked(self) -> None:
        thinking = types.ThinkingConfig(thinking_budget=256, include_thoughts=True)
        response = self.generate(
            "ponder this", types.GenerateContentConfig(thinking_config=thinking)
        )

        thought, answer = response.candidates[0].content.parts
        self.assertTrue(thought.thought)
        self.assertEqual(thought.text, "Thinking about: ponder this")
        self.assertEqual(answer.text, "Echo: ponder this")
        usage = response.usage_metadata
        self.assertEqual(usage.thoughts_token_count, 32)
        self.assertEqual(
            usage.total_token_count,
            usage.prompt_token_count + usage.candidates_token_count + usage.thoughts_token_count,
        )

    def test_a_thinking_model_signs_its_function_calls(self) -> None:
        config = weather_config()
        config.thinking_config = types.ThinkingConfig(thinking_budget=128)
        response = self.generate("weather in Rome", config)

        part = response.candidates[0].content.parts[0]
        self.assertIsNotNone(part.function_call)
        self.assertIsInstance(part.thought_signature, bytes)
        self.assertEqual(len(part.thought_signature), 32)

    def test_cache_marker_fills_cached_and_thought_counts(self) -> None:
        usage = self.generate("cached [[cache]]").usage_metadata

        self.assertEqual(usage.prompt_token_count, 1200)
        self.assertEqual(usage.cached_content_token_count, 1024)
        self.assertEqual(usage.thoughts_token_count, 64)
        self.assertEqual(usage.total_token_count, 1200 + usage.candidates_token_count + 64)

    def test_secret_marker_answers_with_a_google_key_shape(self) -> None:
        self.assertRegex(self.generate("tell me [[secret]]").text, GOOGLE_KEY_SHAPE)

    def test_count_tokens_and_the_model_list(self) -> None:
        counted = self.client.models.count_tokens(model=MODEL, contents="count me")
        names = [model.name for model in self.client.models.list()]
        one = self.client.models.get(model=EMBEDDER)

        self.assertGreater(counted.total_tokens, 0)
        self.assertIn(f"models/{MODEL}", names)
        self.assertEqual(one.name, f"models/{EMBEDDER}")

    def test_base_url_from_the_environment_variable(self) -> None:
        with mock.patch.dict(os.environ, {"GOOGLE_GEMINI_BASE_URL": self.server.url}):
            client = genai.Client(api_key=API_KEY)
        self.addCleanup(client.close)

        self.assertEqual(
            client.models.generate_content(model=MODEL, contents="env").text, "Echo: env"
        )


class StreamTest(GeminiServerTestCase):
    def test_stream_is_sse_chunks_and_only_the_last_finishes(self) -> None:
        chunks = list(self.stream("hello streaming world"))

        self.assertEqual(
            "".join(chunk.text or "" for chunk in chunks), "Echo: hello streaming world"
        )
        self.assertGreater(len(chunks), 2)
        finishes = [chunk.candidates[0].finish_reason for chunk in chunks]
        self.assertEqual(finishes, [None] * (len(chunks) - 1) + [types.FinishReason.STOP])
        self.assertEqual(len({chunk.response_id for chunk in chunks}), 1)
        self.assertIsNone(chunks[0].usage_metadata.candidates_token_count)
        plain = self.generate("hello streaming world").usage_metadata
        self.assertEqual(chunks[-1].usage_metadata, plain)
        request = self.server.log[0]
        self.assertEqual(request.path, f"/{API_VERSION}/models/{MODEL}:streamGenerateContent")
        self.assertEqual(request.query, "alt=sse")

    def test_the_wire_is_crlf_framed_data_events(self) -> None:
        url = f"{self.server.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse&key={API_KEY}"
        body = {"contents": [{"role": "user", "parts": [{"text": "raw"}]}]}
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request) as answer:
            raw = answer.read().decode()
            self.assertEqual(answer.headers["content-type"], "text/event-stream")

        events = raw.split("\r\n\r\n")
        self.assertEqual(events[-1], "")
        self.assertTrue(all(event.startswith("data: {") for event in events[:-1]))
        last = json.loads(events[-2].removeprefix("data: "))
        self.assertEqual(last["candidates"][0]["finishReason"], "STOP")
        self.assertEqual(
            sorted(last["usageMetadata"]),
            [
                "candidatesTokenCount",
                "promptTokenCount",
                "promptTokensDetails",
                "totalTokenCount",
            ],
        )

    def test_cut_stream_ends_cleanly_without_a_finish_reason(self) -> None:
        chunks = list(self.stream("x [[stream-cut]] long text"))

        self.assertTrue(chunks)
        self.assertTrue(all(chunk.candidates[0].finish_reason is None for chunk in chunks))

    def test_dropped_stream_breaks_the_body(self) -> None:
        with self.assertRaisesRegex(http_library.RemoteProtocolError, "incomplete chunked read"):
            list(self.stream("x [[stream-drop]] long text"))

    def test_stream_error_chunk_raises_the_api_error(self) -> None:
        seen: list[str | None] = []
        with self.assertRaises(errors.ServerError) as raised:
            for chunk in self.stream("x [[stream-error:500]]"):
                seen.append(chunk.text)

        self.assertEqual(seen, ["Echo: x "])
        self.assertEqual((raised.exception.code, raised.exception.status), (500, "INTERNAL"))


class EmbedTest(GeminiServerTestCase):
    def test_the_sdk_embeds_through_batch_embed_contents(self) -> None:
        config = types.EmbedContentConfig(output_dimensionality=4)
        response = self.client.models.embed_content(
            model=EMBEDDER, contents=["a", "b"], config=config
        )

        first, second = response.embeddings
        self.assertEqual(len(first.values), 4)
        self.assertNotEqual(first.values, second.values)
        (request,) = self.server.log
        self.assertEqual(request.path, f"/{API_VERSION}/models/{EMBEDDER}:batchEmbedContents")
        again = self.client.models.embed_content(model=EMBEDDER, contents="a", config=config)
        self.assertEqual(again.embeddings[0].values, first.values)

    def test_default_dimension(self) -> None:
        response = self.client.models.embed_content(model=EMBEDDER, contents="plain")

        self.assertEqual(len(response.embeddings[0].values), EMBEDDING_DIMENSIONS)

    def test_embed_content_endpoint_answers_one_embedding(self) -> None:
        answer = post(
            self.server,
            f"/v1beta/models/{EMBEDDER}:embedContent",
            {
                "content": {"parts": [{"text": "a"}]},
                "outputDimensionality": 4,
            },
        )
        batch = self.client.models.embed_content(
            model=EMBEDDER, contents="a", config=types.EmbedContentConfig(output_dimensionality=4)
        )

        self.assertEqual(answer["embedding"]["values"], batch.embeddings[0].values)


def post(server: GeminiServer, path: str, body: object, key: str | None = API_KEY) -> Any:
    query = f"?key={key}" if key else ""
    request = urllib.request.Request(
        f"{server.url}{path}{query}", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read())


class CredentialsAndErrorsTest(GeminiServerTestCase):
    def test_key_in_the_query_is_accepted(self) -> None:
        body = {"contents": [{"parts": [{"text": "by query"}]}]}
        answer = post(self.server, f"/v1beta/models/{MODEL}:generateContent", body)

        self.assertEqual(answer["candidates"][0]["content"]["parts"], [{"text": "Echo: by query"}])

    def test_no_key_is_403_permission_denied(self) -> None:
        with self.assertRaises(urllib.error.HTTPError) as raised:
            post(self.server, f"/v1beta/models/{MODEL}:generateContent", {"contents": []}, key=None)

        self.assertEqual(raised.exception.code, 403)
        self.assertEqual(
            json.loads(raised.exception.read()),
            {
                "error": {
                    "code": 403,
                    "message": UNREGISTERED_CALLER_MESSAGE,
                    "status": "PERMISSION_DENIED",
                }
            },
        )

    def test_refused_key_is_400_api_key_invalid(self) -> None:
        self.server.refused_keys.add(API_KEY)
        with self.assertRaises(errors.ClientError) as raised:
            self.generate("hello")

        error = raised.exception
        self.assertEqual(
            (error.code, error.status, error.message),
            (400, "INVALID_ARGUMENT", API_KEY_INVALID_MESSAGE),
        )
        info = error.details["error"]["details"][0]
        self.assertEqual((info["reason"], info["domain"]), ("API_KEY_INVALID", "googleapis.com"))

    def test_error_markers_give_google_error_shapes(self) -> None:
        expected = {
            400: (errors.ClientError, "INVALID_ARGUMENT"),
            403: (errors.ClientError, "PERMISSION_DENIED"),
            404: (errors.ClientError, "NOT_FOUND"),
            429: (errors.ClientError, "RESOURCE_EXHAUSTED"),
            500: (errors.ServerError, "INTERNAL"),
            503: (errors.ServerError, "UNAVAILABLE"),
        }
        for code, (kind, status) in expected.items():
            with self.subTest(code=code), self.assertRaises(kind) as raised:
                self.generate(f"fail [[error:{code}]]")
            self.assertEqual((raised.exception.code, raised.exception.status), (code, status))

    def test_unknown_model_is_404(self) -> None:
        with self.assertRaises(errors.ClientError) as raised:
            self.client.models.generate_content(model="no-such-model", contents="hi")

        self.assertEqual(raised.exception.code, 404)
        self.assertIn(
            "models/no-such-model is not found for API version v1", raised.exception.message
        )

    def test_unavailable_once_is_retried_when_the_caller_asks(self) -> None:
        config = types.GenerateContentConfig(
            http_options=types.HttpOptions(retry_options=QUICK_RETRY)
        )
        response = self.generate("again [[unavailable-once]]", config)

        self.assertEqual(response.text, "Echo: again [[unavailable-once]]")
        self.assertEqual(len(self.server.log), 2)

    def test_html_and_truncated_json_fail_to_parse(self) -> None:
        for marker, message in (
            ("[[html]]", "Expecting value"),
            ("[[truncated-json]]", "Unterminated"),
        ):
            with self.subTest(marker=marker), self.assertRaisesRegex(json.JSONDecodeError, message):
                self.generate(f"page {marker}")


class AsyncTest(GeminiServerTestCase):
    """``client.aio`` goes through aiohttp when it is installed (it is in the test env)."""

    def run_async(self, work: Any) -> Any:
        return asyncio.run(work)

    def test_async_generate_stream_embed_and_errors(self) -> None:
        models = self.client.aio.models

        async def scenario() -> dict[str, Any]:
            plain = await models.generate_content(model=MODEL, contents="hello async")
            stream: AsyncIterator[
                types.GenerateContentResponse
            ] = await models.generate_content_stream(model=MODEL, contents="hello async stream")
            chunks = [chunk async for chunk in stream]
            embedded = await models.embed_content(model=EMBEDDER, contents=["a", "b"])
            try:
                await models.generate_content(model=MODEL, contents="[[error:429]]")
            except errors.ClientError as error:
                refused = (error.code, error.status)
            dropped = await models.generate_content_stream(
                model=MODEL, contents="[[stream-drop]] long text"
            )
            try:
                async for _ in dropped:
                    pass
            except aiohttp.ClientPayloadError as error:
                broken = type(error).__name__
            await self.client.aio.aclose()
            return {
                "plain": plain,
                "chunks": chunks,
                "embedded": embedded,
                "refused": refused,
                "broken": broken,
            }

        got = self.run_async(scenario())

        self.assertEqual(got["plain"].text, "Echo: hello async")
        self.assertEqual(got["plain"].model_version, MODEL)
        self.assertEqual("".join(chunk.text for chunk in got["chunks"]), "Echo: hello async stream")
        self.assertEqual(got["chunks"][-1].candidates[0].finish_reason, types.FinishReason.STOP)
        self.assertEqual(
            [len(e.values) for e in got["embedded"].embeddings], [EMBEDDING_DIMENSIONS] * 2
        )
        self.assertEqual(got["refused"], (429, "RESOURCE_EXHAUSTED"))
        self.assertEqual(got["broken"], "ClientPayloadError")
