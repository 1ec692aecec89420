"""Every OpenAI call shape vcr_kit must record and replay, as code under test makes them.

``run_sync(client, tag)`` and ``await run_async(client, tag)`` make each call with an
``openai.OpenAI`` / ``openai.AsyncOpenAI`` the caller built, and return what the code
observed: texts, tool calls, usage, vectors, model ids; ids only as their shapes (they
are fresh on every answer, live or replayed). ``tag`` goes into every prompt, so the
sync and async runs (and each test) have their own fixtures. Recording and replaying
must observe the same.

The cases: Chat Completions plain, streamed (``stream=True`` with a usage chunk, and
the ``chat.completions.stream()`` helper) and with a tool whose result goes back by
``tool_call_id``; Responses plain, streamed (``responses.stream()``), chained by
``previous_response_id``, and a function call answered by ``call_id``; Embeddings;
Models.
"""

from __future__ import annotations

import re
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.responses import FunctionToolParam

__all__ = ["CASES", "MODEL", "run_async", "run_sync"]

MODEL = "gpt-5-mini"
EMBEDDING_MODEL = "text-embedding-3-small"
CASES = (
    "chat",
    "chat_stream",
    "chat_stream_helper",
    "chat_tools",
    "responses",
    "responses_stream",
    "responses_chain",
    "responses_function",
    "embeddings",
    "models",
)
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
_ID_SHAPES = {
    "chatcmpl": re.compile(r"chatcmpl-[A-Za-z0-9_-]+"),
    "resp": re.compile(r"resp_[A-Za-z0-9_-]+"),
    "msg": re.compile(r"msg_[A-Za-z0-9_-]+"),
    "fc": re.compile(r"fc_[A-Za-z0-9_-]+"),
    "call": re.compile(r"call_[A-Za-z0-9_-]+"),
}


def _shape(kind: str, value: str | None) -> str:
    """``kind`` when ``value`` has that id's shape, else what it was (the test then fails)."""
    return kind if value is not None and _ID_SHAPES[kind].fullmatch(value) else f"bad:{value}"


def _user(text: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "user", "content": text}]


def _usage(usage: Any) -> Any:
    return None if usage is None else usage.to_dict(mode="json")


def _chat_tool_messages(tag: str, asked: Any) -> list[ChatCompletionMessageParam]:
    (call,) = asked.choices[0].message.tool_calls
    return [
        *_user(f"{tag}: what is the weather in Lyon?"),
        {"role": "assistant", "tool_calls": [call.to_dict()]},
        {"role": "tool", "tool_call_id": call.id, "content": "12 C and rain"},
    ]


def run_sync(client: openai.OpenAI, tag: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    chat = client.chat.completions.create(model=MODEL, messages=_user(f"{tag}: hello"))
    seen["chat"] = [
        _shape("chatcmpl", chat.id),
        chat.choices[0].message.content,
        chat.choices[0].finish_reason,
        _usage(chat.usage),
    ]
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=_user(f"{tag}: stream"),
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    seen["chat_stream"] = [
        "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices),
        _usage(chunks[-1].usage),
    ]
    with client.chat.completions.stream(model=MODEL, messages=_user(f"{tag}: helper")) as stream:
        deltas = [event.delta for event in stream if event.type == "content.delta"]
        final = stream.get_final_completion()
    seen["chat_stream_helper"] = [deltas, final.choices[0].message.content]
    asked = client.chat.completions.create(
        model=MODEL, messages=_user(f"{tag}: what is the weather in Lyon?"), tools=[WEATHER]
    )
    (call,) = asked.choices[0].message.tool_calls or []
    answered = client.chat.completions.create(
        model=MODEL, messages=_chat_tool_messages(tag, asked), tools=[WEATHER]
    )
    seen["chat_tools"] = [
        _shape("call", call.id),
        call.function.arguments,  # type: ignore[union-attr]
        answered.choices[0].message.content,
    ]
    response = client.responses.create(model=MODEL, input=f"{tag}: hi")
    seen["responses"] = [
        _shape("resp", response.id),
        _shape("msg", response.output[0].id),
        response.output_text,
        _usage(response.usage),
    ]
    with client.responses.stream(model=MODEL, input=f"{tag}: streamed") as streamed:
        text = [e.delta for e in streamed if e.type == "response.output_text.delta"]
        final_response = streamed.get_final_response()
    seen["responses_stream"] = [text, final_response.output_text, _usage(final_response.usage)]
    first = client.responses.create(model=MODEL, input=f"{tag}: one")
    second = client.responses.create(model=MODEL, input="two", previous_response_id=first.id)
    third = client.responses.create(model=MODEL, input="three", previous_response_id=second.id)
    seen["responses_chain"] = [second.output_text, third.output_text]
    function = client.responses.create(
        model=MODEL, input=f"{tag}: weather in Rome", tools=[WEATHER_FUNCTION]
    )
    fc = function.output[0]
    assert fc.type == "function_call"
    result = client.responses.create(
        model=MODEL,
        previous_response_id=function.id,
        input=[{"type": "function_call_output", "call_id": fc.call_id, "output": "sunny"}],
    )
    seen["responses_function"] = [
        _shape("fc", fc.id),
        _shape("call", fc.call_id),
        fc.arguments,
        result.output_text,
    ]
    vectors = client.embeddings.create(model=EMBEDDING_MODEL, input=[f"{tag}: a", f"{tag}: b"])
    seen["embeddings"] = [[item.embedding for item in vectors.data], _usage(vectors.usage)]
    seen["models"] = [model.id for model in client.models.list()]
    return seen


async def run_async(client: openai.AsyncOpenAI, tag: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    chat = await client.chat.completions.create(model=MODEL, messages=_user(f"{tag}: hello"))
    seen["chat"] = [
        _shape("chatcmpl", chat.id),
        chat.choices[0].message.content,
        chat.choices[0].finish_reason,
        _usage(chat.usage),
    ]
    chunks = [
        chunk
        async for chunk in await client.chat.completions.create(
            model=MODEL,
            messages=_user(f"{tag}: stream"),
            stream=True,
            stream_options={"include_usage": True},
        )
    ]
    seen["chat_stream"] = [
        "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices),
        _usage(chunks[-1].usage),
    ]
    async with client.chat.completions.stream(
        model=MODEL, messages=_user(f"{tag}: helper")
    ) as stream:
        deltas = [event.delta async for event in stream if event.type == "content.delta"]
        final = await stream.get_final_completion()
    seen["chat_stream_helper"] = [deltas, final.choices[0].message.content]
    asked = await client.chat.completions.create(
        model=MODEL, messages=_user(f"{tag}: what is the weather in Lyon?"), tools=[WEATHER]
    )
    (call,) = asked.choices[0].message.tool_calls or []
    answered = await client.chat.completions.create(
        model=MODEL, messages=_chat_tool_messages(tag, asked), tools=[WEATHER]
    )
    seen["chat_tools"] = [
        _shape("call", call.id),
        call.function.arguments,  # type: ignore[union-attr]
        answered.choices[0].message.content,
    ]
    response = await client.responses.create(model=MODEL, input=f"{tag}: hi")
    seen["responses"] = [
        _shape("resp", response.id),
        _shape("msg", response.output[0].id),
        response.output_text,
        _usage(response.usage),
    ]
    async with client.responses.stream(model=MODEL, input=f"{tag}: streamed") as streamed:
        text = [e.delta async for e in streamed if e.type == "response.output_text.delta"]
        final_response = await streamed.get_final_response()
    seen["responses_stream"] = [text, final_response.output_text, _usage(final_response.usage)]
    first = await client.responses.create(model=MODEL, input=f"{tag}: one")
    second = await client.responses.create(model=MODEL, input="two", previous_response_id=first.id)
    third = await client.responses.create(
        model=MODEL, input="three", previous_response_id=second.id
    )
    seen["responses_chain"] = [second.output_text, third.output_text]
    function = await client.responses.create(
        model=MODEL, input=f"{tag}: weather in Rome", tools=[WEATHER_FUNCTION]
    )
    fc = function.output[0]
    assert fc.type == "function_call"
    result = await client.responses.create(
        model=MODEL,
        previous_response_id=function.id,
        input=[{"type": "function_call_output", "call_id": fc.call_id, "output": "sunny"}],
    )
    seen["responses_function"] = [
        _shape("fc", fc.id),
        _shape("call", fc.call_id),
        fc.arguments,
        result.output_text,
    ]
    vectors = await client.embeddings.create(
        model=EMBEDDING_MODEL, input=[f"{tag}: a", f"{tag}: b"]
    )
    seen["embeddings"] = [[item.embedding for item in vectors.data], _usage(vectors.usage)]
    seen["models"] = [model.id async for model in client.models.list()]
    return seen
