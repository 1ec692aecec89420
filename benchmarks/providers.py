"""Replay cost per call for each provider, as a ratio to that provider's own SDK
parsing the same answer.

For Anthropic (``messages.create``), OpenAI (``chat.completions.create``) and Gemini
(``models.generate_content``): the baseline is the real SDK reading the answer from an
in-memory ``httpx2.MockTransport`` (no network, no vcr_kit); measured is the same SDK
replaying through ``vcr_kit.VCRTransport`` from a folder of recorded fixtures. The two
run in one process, interleaved, median of several rounds. The promise: a provider's
ratio is no worse than Anthropic's.

    python benchmarks/providers.py [--calls 200] [--rounds 7] [--fixtures 20]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import others
import replay

import vcr_kit
from vcr_kit._core import ids as _ids

http: Any = replay.http
TEXT = "Echo: a benchmark answer " + "lorem ipsum " * 20


def _anthropic_answer(i: int) -> dict[str, Any]:
    return json.loads(replay.answer_body(replay.prompt(i), i))


def _openai_answer(i: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-bench{i:020d}",
        "object": "chat.completion",
        "created": 1764720000 + i,
        "model": "gpt-5.1",
        "system_fingerprint": "fp_bench01",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"{TEXT} {i}", "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 20 + i % 7, "completion_tokens": 48, "total_tokens": 70},
    }


def _gemini_answer(i: int) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": f"{TEXT} {i}"}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 20 + i % 7,
            "candidatesTokenCount": 48,
            "totalTokenCount": 70,
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": f"bench{i:017d}",
    }


def _mock(answer: Callable[[int], dict[str, Any]], index_of: Callable[[Any], int]) -> Any:
    def handle(request: Any) -> Any:
        body = json.dumps(answer(index_of(json.loads(request.content)))).encode()
        return http.Response(200, headers={"content-type": "application/json"}, content=body)

    return http.MockTransport(handle)


def _number(text: str) -> int:
    return int(text.rsplit(" ", 1)[-1])


class Provider:
    """One SDK: how to build its client on a transport, and one call."""

    def __init__(
        self,
        name: str,
        build: Callable[[Any], Any],
        call: Callable[[Any, int], Any],
        answer: Callable[[int], dict[str, Any]],
        index_of: Callable[[Any], int],
    ) -> None:
        self.name, self.build, self.call = name, build, call
        self.answer, self.index_of = answer, index_of


def providers() -> list[Provider]:
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    return [
        Provider(
            "Anthropic messages.create",
            lambda t: anthropic.Anthropic(
                api_key="bench", http_client=anthropic.DefaultHttpxClient(transport=t)
            ),
            lambda c, i: c.messages.create(
                model=replay.MODEL,
                max_tokens=64,
                messages=[{"role": "user", "content": f"question {i}"}],
            ),
            _anthropic_answer,
            lambda body: _number(body["messages"][-1]["content"]),
        ),
        Provider(
            "OpenAI chat.completions.create",
            lambda t: openai.OpenAI(
                api_key="bench", http_client=openai.DefaultHttpxClient(transport=t)
            ),
            lambda c, i: c.chat.completions.create(
                model="gpt-5.1", messages=[{"role": "user", "content": f"question {i}"}]
            ),
            _openai_answer,
            lambda body: _number(body["messages"][-1]["content"]),
        ),
        Provider(
            "Gemini models.generate_content",
            lambda t: genai.Client(
                api_key="bench",
                http_options=types.HttpOptions(httpx_client=http.Client(transport=t)),
            ),
            lambda c, i: c.models.generate_content(
                model="gemini-2.5-flash", contents=f"question {i}"
            ),
            _gemini_answer,
            lambda body: _number(body["contents"][-1]["parts"][0]["text"]),
        ),
    ]


def measure(provider: Provider, fixtures: int, calls: int, rounds: int) -> tuple[float, float]:
    mock = _mock(provider.answer, provider.index_of)
    with tempfile.TemporaryDirectory() as folder:
        recording = provider.build(
            vcr_kit.VCRTransport(mode="record", fixtures_dir=folder, live=mock)
        )
        for i in range(fixtures):
            provider.call(recording, i)
        _ids.forget()  # a replay run starts with no live ids, as a fresh process does
        replay.settle()
        baseline = provider.build(mock)
        replaying = provider.build(vcr_kit.VCRTransport(mode="replay", fixtures_dir=folder))

        def timed(client: Any) -> Callable[[], float]:
            def run() -> float:
                start = time.perf_counter()
                for k in range(calls):
                    provider.call(client, k % fixtures)
                return (time.perf_counter() - start) / calls

            return run

        base, vcr = others.interleaved([timed(baseline), timed(replaying)], rounds)
    return base, vcr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--fixtures", type=int, default=20)
    args = parser.parse_args(argv)
    os.environ["VCR_REPORT"] = "0"
    print(f"Python {sys.version.split()[0]}; per call, SDK alone vs vcr_kit replay")
    print(f"{'call':<32}  {'SDK alone':>10}  {'vcr_kit':>10}  ratio")
    for provider in providers():
        base, vcr = measure(provider, args.fixtures, args.calls, args.rounds)
        print(f"{provider.name:<32}  {base * 1e6:>8.0f}us  {vcr * 1e6:>8.0f}us  {vcr / base:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
