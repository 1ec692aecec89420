"""Peak memory while vcr_kit replays or records one large answer, as a multiple of its size.

For each size (1, 20 and 100 MB by default) a ``messages.create`` answer whose text is
that large is recorded through ``VCRTransport`` (the "API" an in-memory transport
answering with bytes made beforehand), then replayed. Measured with ``tracemalloc``:
the peak of what vcr_kit allocates between the SDK handing it the request and it
handing back the response, bytes included (the answer's own bytes as the response
holds them count; the mock's prepared bytes do not). The SDK's own parse of the answer
comes after and is the same with or without vcr_kit: it is shown as its own row, for
scale.

    python benchmarks/memory.py [--sizes 1,20,100]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from typing import Any

import replay

import vcr_kit
from vcr_kit._core import ids as _ids

http: Any = replay.http
MB = 1024 * 1024


def answer(size: int) -> bytes:
    message = {
        "id": "msg_01memory", "type": "message", "role": "assistant", "model": replay.MODEL,
        "content": [{"type": "text", "text": ("lorem ipsum " * (size // 12 + 1))[:size]}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 48},
    }
    return json.dumps(message).encode()


def request() -> Any:
    body = json.dumps({
        "max_tokens": 64, "model": replay.MODEL,
        "messages": [{"role": "user", "content": "a long answer, please"}],
    }).encode()
    return http.Request(
        "POST", "https://api.anthropic.com/v1/messages", content=body,
        headers={"content-type": "application/json", "x-api-key": "bench"},
    )


def peak(run: Callable[[], Any]) -> int:
    """The most memory allocated at once while ``run`` ran (its result kept alive)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = run()
        _current, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return top


def measure(size_mb: int) -> dict[str, float]:
    """row -> peak / answer size: "record", "replay", "SDK parse" (for scale)."""
    body = answer(size_mb * MB)
    size = len(body)
    mock = http.MockTransport(
        lambda r: http.Response(200, headers={"content-type": "application/json"}, content=body)
    )
    with tempfile.TemporaryDirectory() as folder:
        recorder = vcr_kit.VCRTransport(mode="record", fixtures_dir=folder, live=mock)

        def record() -> Any:
            response = recorder.handle_request(request())
            response.read()
            return response

        recorded = peak(record)
        _ids.forget()
        replayer = vcr_kit.VCRTransport(mode="replay", fixtures_dir=folder)

        def replay_once() -> Any:
            response = replayer.handle_request(request())
            response.read()
            return response

        replay_once()  # warm: what is kept per process is then in place, as in a run
        replayed = peak(replay_once)
        response = replayer.handle_request(request())
        response.read()
        parsed = peak(lambda: json.loads(response.content))
    return {"record": recorded / size, "replay": replayed / size, "SDK parse": parsed / size}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1,20,100", help="answer sizes in MB")
    args = parser.parse_args(argv)
    os.environ["VCR_REPORT"] = "0"
    for size in (int(s) for s in args.sizes.split(",")):
        ratios = measure(size)
        print(f"{size:>4} MB  " + "  ".join(f"{k}: {v:.2f}x" for k, v in ratios.items()))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
