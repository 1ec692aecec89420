"""Replay cost per ``messages.create`` call, as a ratio to the SDK's own parsing.

Baseline: the real SDK parsing the same response bytes from an in-memory
``httpx2.MockTransport`` (no network, no vcr_kit). Measured: ``vcr_kit.client()``
replaying from a folder of 10, 100 and 1000 recorded fixtures. Both run in the
same process, interleaved, median of several rounds, so a noisy machine moves
both sides alike. Prints one line per folder size; the target is <= 1.2x, flat.

    python benchmarks/replay.py [--calls 300] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import anthropic

import vcr_kit
from vcr_kit._core import ids as _ids
from vcr_kit._core.httplib import sdk_library
from vcr_kit._store.cache import RACY_SECONDS

#: httpx2, or httpx under anthropic 0.x: whatever the installed SDK sends with.
http: Any = sdk_library()

MODEL = "claude-opus-4-7"


def prompt(i: int) -> str:
    return f"Benchmark question number {i}: what is {i} squared?"


def answer_body(text: str, i: int) -> bytes:
    message = {
        "id": f"msg_01bench{i:06d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": f"Echo: {text} " + "lorem ipsum " * 20}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 20 + i % 7, "output_tokens": 48, "service_tier": "standard"},
    }
    return json.dumps(message).encode()


def mock_transport(bodies: dict[str, bytes]) -> Any:
    def handle(request: Any) -> Any:
        text = json.loads(request.content)["messages"][-1]["content"]
        return http.Response(
            200,
            headers={"content-type": "application/json", "request-id": "req_bench"},
            content=bodies[text],
        )

    return http.MockTransport(handle)


#: Earlier turns sent before each question (``--history``): agents send the whole
#: conversation every call, so the request is usually much larger than the answer.
HISTORY: list[dict[str, Any]] = []


def history(turns: int) -> list[dict[str, Any]]:
    said = "Here is some earlier context about the project and its many files. " * 4
    return [
        {"role": role, "content": f"Turn {n} ({role}): {said}"}
        for n in range(turns)
        for role in ("user", "assistant")
    ]


def settle() -> None:
    """Wait out the fixture cache's racy window: a file is trusted by its ``stat`` only
    once read ``RACY_SECONDS`` after its last change, and read again on every replay
    until then. A suite replays files committed long before; fixtures recorded a moment
    ago by the benchmark itself would be measured with a read per call."""
    time.sleep(RACY_SECONDS + 0.2)


def call(client: anthropic.Anthropic, i: int) -> Any:
    return client.messages.create(
        model=MODEL,
        max_tokens=64,
        messages=[*HISTORY, {"role": "user", "content": prompt(i)}],
    )


def time_calls(client: anthropic.Anthropic, count: int, calls: int) -> float:
    start = time.perf_counter()
    for k in range(calls):
        call(client, k % count)
    return (time.perf_counter() - start) / calls


def measure(count: int, calls: int, rounds: int) -> tuple[float, float]:
    bodies = {prompt(i): answer_body(prompt(i), i) for i in range(count)}
    with tempfile.TemporaryDirectory() as folder:
        # Record the fixtures through vcr_kit itself, with the mock as "the API".
        recorder = vcr_kit.VCRTransport(
            mode="record", fixtures_dir=folder, live=mock_transport(bodies)
        )
        with anthropic.Anthropic(
            api_key="bench", http_client=anthropic.DefaultHttpxClient(transport=recorder)
        ) as recording:
            for i in range(count):
                call(recording, i)
        # A replay run records nothing: forget the live ids this setup's recording gave,
        # as a fresh process would not have them.
        _ids.forget()
        settle()
        baseline = anthropic.Anthropic(
            api_key="bench",
            http_client=anthropic.DefaultHttpxClient(transport=mock_transport(bodies)),
        )
        replaying = vcr_kit.client(mode="replay", fixtures_dir=folder, api_key="bench")
        runners: list[tuple[list[float], Callable[[], float]]] = [
            (base := [], lambda: time_calls(baseline, count, calls)),
            (vcr := [], lambda: time_calls(replaying, count, calls)),
        ]
        for runner in runners:  # warm-up: imports, caches, first fixture reads
            runner[1]()
        for _ in range(rounds):
            for samples, run in runners:
                samples.append(run())
        baseline.close()
        replaying.close()
    return statistics.median(base), statistics.median(vcr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--history", type=int, default=0, help="earlier turns in each request")
    args = parser.parse_args(argv)
    os.environ["VCR_REPORT"] = "0"
    HISTORY[:] = history(args.history)
    request_bytes = len(json.dumps([*HISTORY, {"role": "user", "content": prompt(0)}]))
    print(
        f"anthropic {anthropic.__version__}, Python {sys.version.split()[0]}, "
        f"{args.history} earlier turns ({request_bytes} bytes of messages)"
    )
    print(f"{'fixtures':>8}  {'SDK alone':>10}  {'vcr_kit':>10}  ratio")
    for size in (int(s) for s in args.sizes.split(",")):
        base, vcr = measure(size, args.calls, args.rounds)
        print(f"{size:>8}  {base * 1e6:>8.0f}us  {vcr * 1e6:>8.0f}us  {vcr / base:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
