"""Whole-suite replay time, as a ratio to the same suite on an in-memory mock transport.

Generates a project of N tests (default 200) whose code under test builds its own
``anthropic.Anthropic()`` (or ``AsyncAnthropic()``) for every call, as real code does,
records its fixtures once, then times whole test commands, interleaved, median of
several rounds:

- floor: the same tests as plain ``unittest.TestCase`` / pytest functions, the SDK
  handed an in-memory ``MockTransport`` answering the same bytes (no vcr_kit);
- vcr_kit: ``VCRTestCase`` (unittest) or ``@pytest.mark.vcr`` (pytest) replaying;
- pytest-recording (vcrpy) and cassetter, where installed: the same pytest tests under
  their own ``@pytest.mark.vcr``, the code under test building a plain
  ``anthropic.Anthropic()`` (key and base URL from the environment); their cassettes are
  recorded first against ``tests/support/servers/loopback_server.py``, then replayed with
  the server shut and ``--record-mode=none``.

Every pytest command blocks the plugins it does not measure (``-p no:...``): vcr_kit,
pytest-recording and cassetter each claim ``@pytest.mark.vcr``, and the last two both
add ``--record-mode``.

    python benchmarks/suite.py [--tests 200] [--rounds 5] [--runners unittest,pytest,async]
"""

from __future__ import annotations

import argparse
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

#: pytest-recording and cassetter: the loopback server answers "Echo: <question>".
PYTEST_OTHER = PYTEST_VCR
PYTEST_TEST_OTHER = """
@pytest.mark.vcr
def test_{i}():
    assert ask({i}).endswith("Question {i}")
"""

#: label -> (test file, the pytest plugin it needs)
OTHERS = {"pytest-recording": ("test_p_vcrpy.py", "recording"),
          "cassetter": ("test_p_cassetter.py", "cassetter")}
PLUGINS = ("vcr_kit", "recording", "cassetter")


def others() -> list[str]:
    """The other tools measurable here (see ``others.tools``)."""
    import others as tools_module

    status = tools_module.tools()
    found = []
    if status["vcrpy"] is None and tools_module.version("pytest-recording"):
        found.append("pytest-recording")
    if status["cassetter"] is None:
        found.append("cassetter")
    return found


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
    for name in others():
        _write(folder, OTHERS[name][0], PYTEST_OTHER, PYTEST_TEST_OTHER, count)
    record_others(folder, others())


def _pytest(keep: str | None) -> list[str]:
    """pytest with every cassette plugin but ``keep`` blocked."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    for plugin in PLUGINS:
        if plugin != keep:
            argv += ["-p", f"no:{plugin}"]
    return argv


def record_others(folder: Path, names: list[str]) -> None:
    """Record the other tools' cassettes against the loopback server, then shut it."""
    if not names:
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.support.servers.loopback_server import LoopbackServer

    with LoopbackServer() as server:
        (folder / "base_url").write_text(server.url, encoding="utf-8")
        for name in names:
            test_file, plugin = OTHERS[name]
            # The code under test never closes the client it builds: recording over real
            # sockets leaves them to the garbage collector (tox runs with warnings as errors).
            argv = [*_pytest(plugin), "-W", "ignore::ResourceWarning", "--record-mode=once",
                    test_file]
            env = {**_other_env(folder), "PYTHONWARNINGS": "ignore::ResourceWarning"}
            time_command(argv, folder, env)


def record_fixtures(folder: Path, count: int) -> None:
    """Record every test's fixture once, through vcr_kit with the mock as "the API"."""
    code = f"""
import sys
sys.path.insert(0, {str(folder)!r})
import anthropic, vcr_kit
import app
from vcr_kit._core.httplib import sdk_library
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


def _other_env(folder: Path) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": (folder / "base_url").read_text(encoding="utf-8")}


Command = tuple[str, list[str], bool]  # label, argv, whether it talks to the loopback URL


def commands(runners: list[str]) -> dict[str, list[Command]]:
    """runner -> [(label, argv, other)], the floor first."""
    unit = [sys.executable, "-m", "unittest", "-q"]
    pytest_rows: list[Command] = [
        ("floor", [*_pytest(None), "test_p_floor.py"], False),
        ("vcr_kit", [*_pytest("vcr_kit"), "test_p_vcr.py"], False),
    ]
    for name in others():
        test_file, plugin = OTHERS[name]
        pytest_rows.append((name, [*_pytest(plugin), "--record-mode=none", test_file], True))
    table: dict[str, list[Command]] = {
        "unittest": [("floor", [*unit, "test_u_floor"], False),
                     ("vcr_kit", [*unit, "test_u_vcr"], False)],
        "async": [("floor", [*unit, "test_a_floor"], False),
                  ("vcr_kit", [*unit, "test_a_vcr"], False)],
        "pytest": pytest_rows,
    }
    return {name: table[name] for name in runners}


def time_command(argv: list[str], folder: Path, extra: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=folder, env={**_env(folder), **(extra or {})},
        capture_output=True, text=True, check=False,
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
            samples: dict[str, list[float]] = {label: [] for label, _, _ in argvs}
            extra = {label: _other_env(folder) if other else None for label, _, other in argvs}
            for label, argv, _other in argvs:  # warm-up: byte code, file cache
                time_command(argv, folder, extra[label])
            for _ in range(rounds):
                for label, argv, _other in argvs:
                    samples[label].append(time_command(argv, folder, extra[label]))
            results[runner] = {label: statistics.median(s) for label, s in samples.items()}
    return results


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
        for name in OTHERS:
            if name in by_label:
                print(f"{'':>9}  {name}: {by_label[name]:.2f}s, {by_label[name] / floor:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
