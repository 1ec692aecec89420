"""Whole-suite replay time, as a ratio to the same suite on an in-memory mock transport.

Generates a project of N tests (default 200) whose code under test builds its own
``anthropic.Anthropic()`` (or ``AsyncAnthropic()``) for every call, as real code does,
records its fixtures once, then times whole test commands, interleaved, median of
several rounds:

- floor: the same tests as plain ``unittest.TestCase`` / pytest functions, the SDK
  handed an in-memory ``MockTransport`` answering the same bytes (no vcr_kit);
- vcr_kit: ``VCRTestCase`` (unittest) or ``@pytest.mark.vcr`` (pytest) replaying;
- vcrpy / pytest-recording: not measured yet (see ``vcrpy_note``).

    python benchmarks/suite.py [--tests 200] [--rounds 5] [--runners unittest,pytest,async]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODEL = "claude-opus-4-7"

#: The code under test: builds its own client per call, as application code does.
APP = '''
import json
import anthropic
from anthropic import _base_client

#: The SDK's HTTP library: httpx2 (anthropic >= 1.0) or httpx (0.x).
lib = getattr(_base_client, "httpx2", None) or _base_client.httpx

MODEL = "{model}"


def answer(i):
    message = {{
        "id": f"msg_01suite{{i:06d}}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{{"type": "text", "text": f"Answer {{i}}: " + "lorem ipsum " * 20}}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {{"input_tokens": 20, "output_tokens": 48}},
    }}
    return json.dumps(message).encode()


def ask(i, **client_options):
    client = anthropic.Anthropic(**client_options)
    reply = client.messages.create(
        model=MODEL, max_tokens=64, messages=[{{"role": "user", "content": f"Question {{i}}"}}]
    )
    return reply.content[0].text


async def aask(i, **client_options):
    client = anthropic.AsyncAnthropic(**client_options)
    reply = await client.messages.create(
        model=MODEL, max_tokens=64, messages=[{{"role": "user", "content": f"Question {{i}}"}}]
    )
    return reply.content[0].text


def mock_options(lib):
    def handle(request):
        i = int(json.loads(request.content)["messages"][-1]["content"].split()[-1])
        return lib.Response(
            200, headers={{"content-type": "application/json", "request-id": "req_x"}},
            content=answer(i),
        )

    return {{"api_key": "bench", "http_client": anthropic.DefaultHttpxClient(
        transport=lib.MockTransport(handle))}}


def async_mock_options(lib):
    async def handle(request):
        i = int(json.loads(request.content)["messages"][-1]["content"].split()[-1])
        return lib.Response(
            200, headers={{"content-type": "application/json", "request-id": "req_x"}},
            content=answer(i),
        )

    return {{"api_key": "bench", "http_client": anthropic.DefaultAsyncHttpxClient(
        transport=lib.MockTransport(handle))}}
'''

UNITTEST_FLOOR = """
import unittest
from app import ask, lib, mock_options


class T(unittest.TestCase):
{tests}
"""
UNITTEST_TEST_FLOOR = """    def test_{i}(self):
        self.assertTrue(ask({i}, **mock_options(lib)).startswith("Answer {i}:"))
"""

UNITTEST_VCR = """
import unittest
from vcr_kit import VCRTestCase
from app import ask


class T(VCRTestCase):
    vcr_mode = "replay"
{tests}
"""
UNITTEST_TEST_VCR = """    def test_{i}(self):
        self.assertTrue(ask({i}).startswith("Answer {i}:"))
"""

ASYNC_FLOOR = """
import unittest
from app import aask, async_mock_options, lib


class T(unittest.IsolatedAsyncioTestCase):
{tests}
"""
ASYNC_TEST_FLOOR = """    async def test_{i}(self):
        self.assertTrue((await aask({i}, **async_mock_options(lib))).startswith("Answer {i}:"))
"""
ASYNC_VCR = """
import unittest
from vcr_kit import VCRMixin
from app import aask


class T(VCRMixin, unittest.IsolatedAsyncioTestCase):
    vcr_mode = "replay"
{tests}
"""
ASYNC_TEST_VCR = """    async def test_{i}(self):
        self.assertTrue((await aask({i})).startswith("Answer {i}:"))
"""

PYTEST_FLOOR = """
from app import ask, lib, mock_options
{tests}
"""
PYTEST_TEST_FLOOR = """
def test_{i}():
    assert ask({i}, **mock_options(lib)).startswith("Answer {i}:")
"""
PYTEST_VCR = """
import pytest
from app import ask
{tests}
"""
PYTEST_TEST_VCR = """
@pytest.mark.vcr(mode="replay")
def test_{i}():
    assert ask({i}).startswith("Answer {i}:")
"""

def _write(folder: Path, name: str, head: str, one: str, count: int) -> None:
    tests = "".join(one.format(i=i) for i in range(count))
    (folder / name).write_text(textwrap.dedent(head).format(tests=tests), encoding="utf-8")


def make_project(folder: Path, count: int) -> None:
    (folder / "app.py").write_text(APP.format(model=MODEL), encoding="utf-8")
    _write(folder, "test_u_floor.py", UNITTEST_FLOOR, UNITTEST_TEST_FLOOR, count)
    _write(folder, "test_u_vcr.py", UNITTEST_VCR, UNITTEST_TEST_VCR, count)
    _write(folder, "test_a_floor.py", ASYNC_FLOOR, ASYNC_TEST_FLOOR, count)
    _write(folder, "test_a_vcr.py", ASYNC_VCR, ASYNC_TEST_VCR, count)
    _write(folder, "test_p_floor.py", PYTEST_FLOOR, PYTEST_TEST_FLOOR, count)
    _write(folder, "test_p_vcr.py", PYTEST_VCR, PYTEST_TEST_VCR, count)
    record_fixtures(folder, count)


def record_fixtures(folder: Path, count: int) -> None:
    """Record every test's fixture once, through vcr_kit with the mock as "the API"."""
    code = f"""
import sys
sys.path.insert(0, {str(folder)!r})
import anthropic, vcr_kit
import app
from vcr_kit._httplib import sdk_library
lib = sdk_library()
options = app.mock_options(lib)
live = options["http_client"]._transport
recorder = vcr_kit.VCRTransport(mode="record", fixtures_dir={str(folder / "fixtures")!r}, live=live)
for i in range({count}):
    app.ask(i, api_key="bench", http_client=anthropic.DefaultHttpxClient(transport=recorder))
"""
    subprocess.run([sys.executable, "-c", code], check=True, env=_env(folder))


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VCR_", "ANTHROPIC_"))}
    env.update(
        VCR_REPORT="0",
        VCR_FIXTURES_DIR=str(folder / "fixtures"),
        PYTHONPATH=str(folder),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("CI", None)
    return env


def commands(runners: list[str]) -> dict[str, list[tuple[str, list[str]]]]:
    """runner -> [(label, argv)], the floor first."""
    py = sys.executable
    unit = [py, "-m", "unittest", "-q"]
    pyt = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    table = {
        "unittest": [("floor", [*unit, "test_u_floor"]), ("vcr_kit", [*unit, "test_u_vcr"])],
        "async": [("floor", [*unit, "test_a_floor"]), ("vcr_kit", [*unit, "test_a_vcr"])],
        "pytest": [
            ("floor", [*pyt, "-p", "no:vcr_kit", "test_p_floor.py"]),
            ("vcr_kit", [*pyt, "test_p_vcr.py"]),
        ],
    }
    return {name: table[name] for name in runners}


def time_command(argv: list[str], folder: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=folder, env=_env(folder), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def run(count: int, rounds: int, runners: list[str]) -> dict[str, dict[str, float]]:
    """runner -> label -> median seconds."""
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_project(folder, count)
        for runner, argvs in commands(runners).items():
            samples: dict[str, list[float]] = {label: [] for label, _ in argvs}
            for _label, argv in argvs:  # warm-up: byte code, file cache
                time_command(argv, folder)
            for _ in range(rounds):
                for label, argv in argvs:
                    samples[label].append(time_command(argv, folder))
            results[runner] = {label: statistics.median(s) for label, s in samples.items()}
    return results


def vcrpy_note() -> str:
    """What the suite table says about vcrpy (not measured side by side yet)."""
    if importlib.util.find_spec("vcr") is None:
        return "vcrpy: not installed, not measured"
    return (
        "vcrpy: installed (it patches httpx and httpx2) but not yet measured side by side: "
        "its cassettes need a recording run against a live server"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runners", default="unittest,pytest,async")
    args = parser.parse_args(argv)
    results = run(args.tests, args.rounds, args.runners.split(","))
    print(json.dumps(results) if os.environ.get("VCR_BENCH_JSON") else "", end="")
    print(f"{'runner':>9}  {'floor':>8}  {'vcr_kit':>8}  ratio")
    for runner, by_label in results.items():
        floor, vcr = by_label["floor"], by_label["vcr_kit"]
        print(f"{runner:>9}  {floor:>7.2f}s  {vcr:>7.2f}s  {vcr / floor:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
