"""A child of ``vcr_kit run`` that calls OpenAI and Gemini as production code does: each
client built from the environment ``run`` gives it (base URLs at the proxy's prefixes,
a key or vcr_kit's stand-in). Prints what it observed as JSON on stdout.

Runs as a script (``tests`` is not importable): the standard library and the two SDKs.
With ``ASK_MISSING`` set it also makes one call of each provider that was never
recorded, and prints the error its SDK raised.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import openai
from google import genai
from google.genai import errors

OPENAI_MODEL = "gpt-5.4-mini"  # priced: an unpriced model warns, an error under -W error
GEMINI_MODEL = "gemini-2.5-flash"
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}
VARIABLES = ("OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "OPENAI_API_KEY", "GEMINI_API_KEY")


def tool_round_trip(client: openai.OpenAI) -> dict[str, Any]:
    """A streamed tool call, answered by its id: the id must be the fixture's, recording
    and replaying alike, or the answer's key differs."""
    asked: list[Any] = [{"role": "user", "content": "proxy: what is the weather in Lyon?"}]
    stream = client.chat.completions.create(
        model=OPENAI_MODEL, messages=asked, tools=[WEATHER], stream=True
    )
    call_id, name, arguments = "", "", ""
    for chunk in stream:
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call_id = call.id or call_id
            name = (call.function and call.function.name) or name
            arguments += (call.function and call.function.arguments) or ""
    answered = client.chat.completions.create(
        model=OPENAI_MODEL,
        messages=[
            *asked,
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": "sunny, 21 C"},
        ],
    )
    return {"id": call_id, "name": name, "answer": answered.choices[0].message.content}


def main() -> None:
    seen: dict[str, Any] = {"env": {name: os.environ.get(name) for name in VARIABLES}}
    chat = openai.OpenAI(max_retries=0)
    gemini = genai.Client()
    reply = chat.chat.completions.create(
        model=OPENAI_MODEL, messages=[{"role": "user", "content": "proxy: hello"}]
    )
    seen["chat"] = reply.choices[0].message.content
    seen["tool"] = tool_round_trip(chat)
    first = chat.responses.create(model=OPENAI_MODEL, input="proxy: remember seven")
    second = chat.responses.create(
        model=OPENAI_MODEL, input="proxy: which number?", previous_response_id=first.id
    )
    seen["chain"] = second.output_text
    events = chat.responses.create(model=OPENAI_MODEL, input="proxy: stream it", stream=True)
    seen["responses stream"] = [event.type for event in events][-1]
    seen["models"] = sorted(model.id for model in chat.models.list())[:2]
    seen["gemini"] = gemini.models.generate_content(model=GEMINI_MODEL, contents="proxy: hi").text
    chunks = gemini.models.generate_content_stream(
        model=GEMINI_MODEL, contents="proxy: tell a story of a few sentences"
    )
    seen["gemini stream"] = "".join(chunk.text or "" for chunk in chunks)
    if os.environ.get("ASK_MISSING"):
        try:
            chat.embeddings.create(model="text-embedding-3-small", input="never recorded")
        except openai.APIStatusError as error:
            seen["openai miss"] = [type(error).__name__, error.status_code, error.message]
        try:
            gemini.models.generate_content(model=GEMINI_MODEL, contents="never recorded")
        except errors.APIError as error:
            seen["gemini miss"] = [type(error).__name__, error.code, error.status, error.message]
    chat.close()
    gemini.close()
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
