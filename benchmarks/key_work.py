"""How much of vcr_kit's per-call extra is the key's own work, through the SDK.

A fixture's name is the SHA1 of the request's canonical JSON, so every replay parses the
request body, writes it canonically and hashes it: work that grows with the request and
that no cleverness elsewhere removes. Three clients call ``messages.create`` in turns,
CPU time of this process, best of rounds:

- floor: the SDK parsing the answer from an in-memory ``MockTransport`` (the per-call
  rows' floor: its mock parses the request too, to pick the answer);
- floor + key: the same mock, which first does the key's work on the request (decode,
  orjson's parse, its canonical JSON, SHA1), as vcr_kit's quick look-up does;
- vcr_kit: ``VCRTransport`` replaying the same answers.

The middle row is what the per-call goal leaves for everything else vcr_kit does.
Each cell also gives the part of the call spent inside the transport (wall time, in the
round that gave the best total): the rest is the SDK's own work, the same for every
client, which the transport's work can still slow (it takes the processor's caches).

    python benchmarks/key_work.py [--turns 0,10,50] [--rounds 9] [--calls 200]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import anthropic
import replay

import vcr_kit
from vcr_kit._core import ids as _ids

http: Any = replay.http
COUNT = 20  # distinct questions, asked in turn


def key_work(content: bytes) -> str:
    import orjson

    tree = orjson.loads(content.decode("utf-8"))
    canonical: bytes = orjson.dumps(tree, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha1(canonical, usedforsecurity=False).hexdigest()


def clients(folder: str) -> dict[str, anthropic.Anthropic]:
    bodies = {replay.prompt(i): replay.answer_body(replay.prompt(i), i) for i in range(COUNT)}
    floor = replay.mock_transport(bodies)

    def with_key(request: Any) -> Any:
        key_work(request.content)
        return floor.handle_request(request)

    recorder = vcr_kit.VCRTransport(mode="record", fixtures_dir=folder, live=floor)
    with anthropic.Anthropic(
        api_key="bench", http_client=anthropic.DefaultHttpxClient(transport=recorder)
    ) as recording:
        for i in range(COUNT):
            replay.call(recording, i)
    _ids.forget()  # as a fresh replaying process would be
    replay.settle()
    transports = {
        "floor": floor,
        "floor + key": http.MockTransport(with_key),
        "vcr_kit": vcr_kit.VCRTransport(mode="replay", fixtures_dir=folder),
    }
    return {
        name: anthropic.Anthropic(
            api_key="bench",
            http_client=anthropic.DefaultHttpxClient(transport=Inside(transport)),
        )
        for name, transport in transports.items()
    }


class Inside(http.BaseTransport):
    """``transport``, adding up the time spent inside it."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.seconds = 0.0

    def handle_request(self, request: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.transport.handle_request(request)
        finally:
            self.seconds += time.perf_counter() - start


Timed = tuple[float, float]  # seconds per call: all of it, and inside the transport


def best_per_call(runs: dict[str, Callable[[], Timed]], rounds: int) -> dict[str, Timed]:
    best = dict.fromkeys(runs, (float("inf"), 0.0))
    for run in runs.values():  # warm-up
        run()
    for _ in range(rounds):  # in turns, so a busy moment slows every side
        for name, run in runs.items():
            best[name] = min(best[name], run())
    return best


def measure(turns: int, rounds: int, calls: int) -> tuple[dict[str, Timed], int]:
    replay.HISTORY[:] = replay.history(turns)
    with tempfile.TemporaryDirectory() as folder:
        by_name = clients(folder)

        def timed(client: anthropic.Anthropic) -> Callable[[], Timed]:
            inside: Inside = client._client._transport

            def run() -> Timed:
                inside.seconds = 0.0
                start = time.process_time()
                for k in range(calls):
                    replay.call(client, k % COUNT)
                return (time.process_time() - start) / calls, inside.seconds / calls

            return run

        best = best_per_call({name: timed(c) for name, c in by_name.items()}, rounds)
        for client in by_name.values():
            client.close()
    size = len(json.dumps([*replay.HISTORY, {"role": "user", "content": replay.prompt(0)}]))
    return best, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", default="0,10,50")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    os.environ["VCR_REPORT"] = "0"
    print(f"anthropic {anthropic.__version__}, Python {sys.version.split()[0]}; "
          "CPU time per call through the SDK, best of rounds")
    print(f"{'turns':>5}  {'request':>8}  {'floor':>18}  {'floor + key':>24}  "
          f"{'vcr_kit':>24}")
    for turns in (int(t) for t in args.turns.split(",")):
        best, size = measure(turns, args.rounds, args.calls)
        floor = best["floor"][0]
        cells = [f"{total * 1e6:>6.0f}us (in {inside * 1e6:>4.0f}us)"
                 + ("" if name == "floor" else f" {total / floor:.2f}x")
                 for name, (total, inside) in best.items()]
        print(f"{turns:>5}  {size // 1024:>6}KB  {cells[0]:>18}  {cells[1]:>24}  {cells[2]:>24}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
