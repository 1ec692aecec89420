"""Time ``status``, ``check`` and ``unused`` over a folder of 5,000 real-shaped fixtures.

The fixtures are copies of real ones (recorded by the SDK over the loopback server
in this process), each with a different prompt, so every file is a distinct valid
fixture of realistic size; a complete run record that used half of them is written
beside them. Prints seconds per thousand fixtures for each command.

    python benchmarks/cli.py [--count 5000]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vcr_kit._cli import main
from vcr_kit._core.fixture_names import http_name
from vcr_kit._ledger import runs as _runrecord
from vcr_kit._store.files import serialize_document


def seed_fixtures(folder: Path) -> list[dict[str, object]]:
    import vcr_kit
    from tests.support.servers.loopback_server import LoopbackServer

    with LoopbackServer() as server, vcr_kit.client(
        base_url=server.url, api_key="sk-ant-test-bench", fixtures_dir=folder, max_retries=0
    ) as client:
        messages = [{"role": "user", "content": "A benchmark question."}]
        client.messages.create(model="claude-opus-4-7", max_tokens=64, messages=messages)
        with client.messages.stream(
            model="claude-opus-4-7", max_tokens=64, messages=messages
        ) as stream:
            stream.get_final_message()
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def fill(folder: Path, seeds: list[dict[str, object]], count: int) -> list[str]:
    names = []
    for i in range(count):
        doc = copy.deepcopy(seeds[i % len(seeds)])
        request = doc["request"]
        assert isinstance(request, dict)
        request["body"]["messages"][0]["content"] = f"Benchmark question number {i}."
        name = http_name(request["method"], request["path"], request)
        (folder / name).write_bytes(serialize_document(doc))
        names.append(name)
    return names


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    return time.perf_counter() - start


def run(count: int) -> None:
    with tempfile.TemporaryDirectory() as seed_dir, tempfile.TemporaryDirectory() as bench:
        seeds = seed_fixtures(Path(seed_dir))
        folder = Path(bench)
        names = fill(folder, seeds, count)
        for name in names[::2]:
            _runrecord.note("replayed", folder / name)
        _runrecord.set_verdict(True, "benchmark")
        _runrecord.flush()
        print(f"{count} fixtures, {sum(p.stat().st_size for p in folder.glob('*.json'))} bytes")
        for command in ("status", "check", "unused"):
            seconds = timed([command, str(folder)])
            print(f"{command:<8} {seconds:6.2f} s  {seconds / count * 1000:6.3f} s per thousand")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=5000)
    run(parser.parse_args().count)
