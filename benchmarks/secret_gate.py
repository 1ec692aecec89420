"""What the secret gate costs on a large request: ``scan_request`` (the check before a
paid call; every write runs the same scan) on about a megabyte of prose, of a base64
image, of code and of tool ids, and on a typical request of a few kilobytes.

Best of five per large request, the mean of a thousand for the small one. Not a test:
it prints numbers to compare two checkouts (``PYTHONPATH=<checkout> python ...``).

    python benchmarks/secret_gate.py
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
import time
from pathlib import Path
from typing import Any

from vcr_kit._store.secrets import scan_request

WORDS = ["the", "model", "answer", "tool", "result", "a", "of", "and", "request", "claude"]
HEADER_KEY = [("the x-api-key header", "sk-ant-api03-" + "Z" * 80)]


def request(content: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": content}]
    body = {"model": "claude-opus-4-7", "max_tokens": 10, "messages": messages}
    return {"method": "POST", "path": "/v1/messages", "body": body}


def cases(rng: random.Random) -> dict[str, dict[str, Any]]:
    prose = " ".join(rng.choice(WORDS) for _ in range(200_000))
    image = base64.b64encode(rng.randbytes(750_000)).decode()
    lines = (f"def f_{i}(arg_{i}): return compute_{i}(arg_{i}) + {i}" for i in range(10_000))
    code = "\n".join(lines)
    alphabet = string.ascii_letters + string.digits
    ids = " ".join("toolu_01" + "".join(rng.choices(alphabet, k=22)) for _ in range(20_000))
    source = {"type": "base64", "media_type": "image/png", "data": image}
    return {
        "prose": request(prose),
        "base64 image": request([{"type": "image", "source": source}]),
        "code": request(code),
        "tool ids": request(ids),
    }


def main() -> None:
    rng = random.Random(1)
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-api03-" + "Q" * 80
    path = Path("bench.json")
    for name, value in cases(rng).items():
        size = len(json.dumps(value).encode())
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            scan_request(value, path, HEADER_KEY)
            best = min(best, time.perf_counter() - start)
        rate = size / best / 1e6
        print(f"{name:14} {size / 1e6:5.2f} MB  {best * 1000:7.1f} ms  ({rate:6.1f} MB/s)")
    small = request("Summarise: " + " ".join(rng.choice(WORDS) for _ in range(800)))
    start = time.perf_counter()
    for _ in range(1000):
        scan_request(small, path, HEADER_KEY)
    size = len(json.dumps(small).encode())
    print(f"typical request, {size / 1e3:.1f} KB: {time.perf_counter() - start:.3f} ms a scan")


if __name__ == "__main__":
    main()
