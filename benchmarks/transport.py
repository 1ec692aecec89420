"""vcr_kit's own cost per replayed call, without the SDK around it.

Both sides are handed the very requests the SDK built (captured while recording):
the floor's ``MockTransport`` (parse the request, build a ``Response``, as the per-call
rows' floor does) and ``VCRTransport`` replaying. CPU time of this process, best of
several rounds in turns: interference only ever adds time, so the best round is the
firmest figure on a shared machine. Prints, per conversation length, both times and
vcr_kit's extra time per call.

    python benchmarks/transport.py [--turns 0,10,50,200] [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

import anthropic
import replay

import vcr_kit
from vcr_kit._core import ids as _ids

http: Any = replay.http
COUNT = 20  # distinct requests, each replayed in turn


def captured_requests(folder: str) -> list[Any]:
    """The SDK's requests for ``COUNT`` questions, recorded into ``folder`` on the way."""
    bodies = {replay.prompt(i): replay.answer_body(replay.prompt(i), i) for i in range(COUNT)}
    mock = replay.mock_transport(bodies)
    seen: list[Any] = []

    def keep(request: Any) -> Any:
        seen.append(request)
        return mock.handle_request(request)

    recorder = vcr_kit.VCRTransport(mode="record", fixtures_dir=folder,
                                    live=http.MockTransport(keep))
    with anthropic.Anthropic(
        api_key="bench", http_client=anthropic.DefaultHttpxClient(transport=recorder)
    ) as client:
        for i in range(COUNT):
            replay.call(client, i)
    return seen


def best_per_call(transport: Any, requests: list[Any], rounds: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(repeat):
            for request in requests:
                transport.handle_request(request).read()
        best = min(best, (time.process_time() - start) / (repeat * len(requests)))
    return best


def measure(turns: int, rounds: int) -> tuple[float, float, int]:
    replay.HISTORY[:] = replay.history(turns)
    with tempfile.TemporaryDirectory() as folder:
        requests = captured_requests(folder)
        bodies = {replay.prompt(i): replay.answer_body(replay.prompt(i), i) for i in range(COUNT)}
        floor = replay.mock_transport(bodies)
        _ids.forget()  # as a fresh replaying process would be
        replay.settle()
        vcr = vcr_kit.VCRTransport(mode="replay", fixtures_dir=folder)
        repeat = max(1, 200 // (1 + turns // 10))
        for side in (floor, vcr):  # warm-up: imports, caches, first fixture reads
            best_per_call(side, requests, 1, 1)
        floors, vcrs = [], []
        for _ in range(rounds):  # in turns, so a busy moment slows both sides
            floors.append(best_per_call(floor, requests, 1, repeat))
            vcrs.append(best_per_call(vcr, requests, 1, repeat))
        return min(floors), min(vcrs), len(requests[0].content)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", default="0,10,50,200")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    os.environ["VCR_REPORT"] = "0"
    print(f"anthropic {anthropic.__version__}, Python {sys.version.split()[0]}; "
          "CPU time per call, best of rounds")
    print(f"{'turns':>5}  {'request':>8}  {'floor':>8}  {'vcr_kit':>8}  extra")
    for turns in (int(t) for t in args.turns.split(",")):
        floor, vcr, size = measure(turns, args.rounds)
        print(f"{turns:>5}  {size // 1024:>6}KB  {floor * 1e6:>6.1f}us  {vcr * 1e6:>6.1f}us  "
              f"{(vcr - floor) * 1e6:>5.1f}us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
