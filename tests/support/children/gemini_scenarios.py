"""The Gemini calls vcr_kit must record and replay, as production code makes them.

Each scenario builds its own ``genai.Client()`` from the environment (``GEMINI_API_KEY``
or ``GOOGLE_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``), as code under test does, and returns
what it observed as JSON values: texts, function calls, finish reasons, usage, vectors.
``responseId``s are kept apart (``ids``): the API gives a new one for every answer, and
so does a replay.

The cases: a plain ``generate_content``; a function-calling round trip (the call, then
the ``functionResponse`` and the final answer); ``generate_content_stream``;
``embed_content`` of two texts. ``run_sync`` drives them through the sync client
(httpx2), ``run_async`` through ``client.aio`` (aiohttp when installed), with prompts of
their own so that neither run's fixtures answer the other's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from google import genai
from google.genai import types

__all__ = ["EMBEDDER", "MODEL", "PROMPT", "observe", "run_async", "run_sync", "without_ids"]

MODEL = "gemini-2.5-flash"
EMBEDDER = "gemini-embedding-001"
PROMPT = "Say hello to the Gemini suite."
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
#: The caller plays the function's part itself (automatic function calling off).
TOOLS = types.GenerateContentConfig(
    tools=[WEATHER], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
)
EMBED = types.EmbedContentConfig(output_dimensionality=8)
TOOL_RESULT = {"result": "18 C and sunny"}


def _usage(response: types.GenerateContentResponse) -> dict[str, Any]:
    usage = response.usage_metadata
    return usage.model_dump(mode="json", exclude_none=True) if usage else {}


def _answer(response: types.GenerateContentResponse) -> dict[str, Any]:
    candidate = (response.candidates or [types.Candidate()])[0]
    calls = [{"name": call.name, "args": call.args} for call in response.function_calls or []]
    return {
        "text": response.text if not calls else None,
        "calls": calls,
        "finish": str(candidate.finish_reason),
        "model": response.model_version,
        "usage": _usage(response),
        "id": response.response_id,
    }


def _question(suffix: str) -> types.Content:
    return types.Content(
        role="user", parts=[types.Part(text=f"What's the weather in Oslo?{suffix}")]
    )


def _reply(question: types.Content, first: types.GenerateContentResponse) -> list[types.Content]:
    (call,) = first.function_calls or []
    part = types.Part.from_function_response(name=call.name or "", response=TOOL_RESULT)
    said = (first.candidates or [types.Candidate()])[0].content or types.Content()
    return [question, said, types.Content(role="user", parts=[part])]


def _stream(chunks: list[types.GenerateContentResponse]) -> dict[str, Any]:
    return {
        "text": "".join(chunk.text or "" for chunk in chunks),
        "chunks": len(chunks),
        "finishes": [
            str((chunk.candidates or [types.Candidate()])[0].finish_reason) for chunk in chunks
        ],
        "usage": _usage(chunks[-1]),
        "ids": sorted({chunk.response_id for chunk in chunks if chunk.response_id}),
    }


def _vectors(response: types.EmbedContentResponse) -> list[list[float]]:
    return [list(embedding.values or []) for embedding in response.embeddings or []]


def run_sync(suffix: str = "") -> dict[str, Any]:
    """Every case through a sync client the code builds itself."""
    client = genai.Client()
    try:
        models = client.models
        plain = models.generate_content(model=MODEL, contents=PROMPT + suffix)
        question = _question(suffix)
        first = models.generate_content(model=MODEL, contents=[question], config=TOOLS)
        final = models.generate_content(model=MODEL, contents=_reply(question, first), config=TOOLS)
        chunks = list(
            models.generate_content_stream(model=MODEL, contents=f"Stream a greeting.{suffix}")
        )
        embedded = models.embed_content(
            model=EMBEDDER, contents=[f"alpha{suffix}", "beta"], config=EMBED
        )
    finally:
        client.close()
    return {
        "plain": _answer(plain),
        "call": _answer(first),
        "final": _answer(final),
        "stream": _stream(chunks),
        "embed": _vectors(embedded),
    }


async def _run_async(suffix: str) -> dict[str, Any]:
    client = genai.Client()
    models = client.aio.models
    try:
        plain = await models.generate_content(model=MODEL, contents=PROMPT + suffix)
        question = _question(suffix)
        first = await models.generate_content(model=MODEL, contents=[question], config=TOOLS)
        final = await models.generate_content(
            model=MODEL, contents=_reply(question, first), config=TOOLS
        )
        stream = await models.generate_content_stream(
            model=MODEL, contents=f"Stream a greeting.{suffix}"
        )
        chunks = [chunk async for chunk in stream]
        embedded = await models.embed_content(
            model=EMBEDDER, contents=[f"alpha{suffix}", "beta"], config=EMBED
        )
    finally:
        await client.aio.aclose()
        client.close()
    return {
        "plain": _answer(plain),
        "call": _answer(first),
        "final": _answer(final),
        "stream": _stream(chunks),
        "embed": _vectors(embedded),
    }


def run_async(suffix: str = " (async)") -> dict[str, Any]:
    """Every case through ``client.aio``, on a loop of its own."""
    return asyncio.run(_run_async(suffix))


def without_ids(observed: Any) -> Any:
    """``observed`` less the response ids (new for every answer, live or replayed)."""
    if isinstance(observed, dict):
        return {
            key: without_ids(value) for key, value in observed.items() if key not in ("id", "ids")
        }
    if isinstance(observed, list):
        return [without_ids(value) for value in observed]
    return observed


def observe() -> dict[str, Any]:
    """Both runs, sync then async."""
    return {"sync": run_sync(), "async": run_async()}
