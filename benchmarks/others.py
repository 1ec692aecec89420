"""vcr_kit, vcrpy and cassetter replaying the same calls, against the same floor.

Every tool records its cassette first against ``tests/support/servers/loopback_server.py`` (a fake
Anthropic API on 127.0.0.1 speaking the real wire format); the server is then shut and
every tool replays offline. The floor is the SDK parsing the very bytes the server
answered, from an in-memory ``MockTransport``. All sides run in the same process,
interleaved, median of several rounds.

vcrpy and cassetter match on method, URI and body (the request's content is what tells
one call from another, as vcr_kit's keys do); vcrpy may play an answer again
(``allow_playback_repeats``), as a test run calling the same thing twice needs. Loading
a cassette happens before the clock starts: these rows are the cost of one call.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import replay

import vcr_kit
from vcr_kit._core import ids as _ids

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.servers.loopback_server import LoopbackServer  # noqa: E402

http: Any = replay.http
COUNT = 20  # distinct questions in each cassette
MATCH = ["method", "uri", "body"]


def interleaved(runners: list[Callable[[], float]], rounds: int) -> list[float]:
    """Each runner's median over ``rounds``, the runners taking turns (after a warm-up
    run each), so a noisy machine slows every side alike."""
    for run in runners:
        run()
    samples: list[list[float]] = [[] for _ in runners]
    for _ in range(rounds):
        for slot, run in zip(samples, runners, strict=True):
            slot.append(run())
    return [statistics.median(s) for s in samples]


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def vcrpy_status() -> str | None:
    """None when vcrpy can be measured here, else why not."""
    if version("vcrpy") is None:
        return "not installed: vcrpy rows need `pip install -e .[bench]`"
    lib = http.__name__
    from vcr import patch

    if lib == "httpx2" and not hasattr(patch.CassettePatcherBuilder, "_httpx2"):
        return f"vcrpy {version('vcrpy')} does not patch httpx2 (anthropic {anthropic.__version__})"
    return None


def cassetter_status() -> str | None:
    if version("cassetter") is None:
        # Kept out of the bench extra: its pytest plugin and pytest-recording's both add
        # --record-mode. tox -e bench installs it.
        return "not installed (`pip install cassetter`, or `tox -e bench`)"
    try:
        from cassetter.intercept import _registry
    except ImportError as error:  # pragma: no cover - a broken install
        return f"not importable: {error}"
    if _registry._INTERCEPTOR_MAP.get(http.__name__) is None:
        return f"cassetter {version('cassetter')} does not patch {http.__name__}"
    return None


def tools() -> dict[str, str | None]:
    """tool -> None when measured, else the reason it is not."""
    return {"vcrpy": vcrpy_status(), "cassetter": cassetter_status()}


def label(tool: str) -> str:
    return f"{tool} {version(tool)}"


@contextlib.contextmanager
def cassette(tool: str, path: str, mode: str) -> Iterator[None]:
    if tool == "vcrpy":
        import vcr

        with vcr.use_cassette(path, record_mode=mode, match_on=MATCH,
                              allow_playback_repeats=True):
            yield
    else:
        import cassetter

        with cassetter.use_cassette(path, record_mode=mode, match_on=MATCH):  # type: ignore[arg-type]
            yield


def per_call(turns: int, calls: int, rounds: int) -> dict[str, float]:
    """label -> median seconds per call: "floor", "vcr_kit", then each measured tool."""
    replay.HISTORY[:] = replay.history(turns)
    measured = [tool for tool, why in tools().items() if why is None]
    with tempfile.TemporaryDirectory() as folder:
        bodies: dict[str, bytes] = {}
        with LoopbackServer() as server:
            url = server.url
            plain = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)
            stack = contextlib.ExitStack()
            stack.enter_context(plain)  # its sockets close with the server
            for i in range(COUNT):
                raw = plain.messages.with_raw_response.create(
                    model=replay.MODEL, max_tokens=64,
                    messages=[*replay.HISTORY, {"role": "user", "content": replay.prompt(i)}],
                )
                bodies[replay.prompt(i)] = raw.http_response.content
            recorder = stack.enter_context(vcr_kit.client(
                mode="record", fixtures_dir=f"{folder}/vcr_kit", api_key="bench", base_url=url,
                max_retries=0,
            ))
            for i in range(COUNT):
                replay.call(recorder, i)
            for tool in measured:
                with cassette(tool, f"{folder}/{tool}.yaml", "once"):
                    for i in range(COUNT):
                        replay.call(plain, i)
            stack.close()
        # The server is gone: everything below replays offline.
        _ids.forget()
        replay.settle()  # every tool's cassette is as old as vcr_kit's files
        floor = anthropic.Anthropic(
            api_key="bench", base_url=url,
            http_client=anthropic.DefaultHttpxClient(transport=replay.mock_transport(bodies)),
        )
        clients = {
            "floor": floor,
            "vcr_kit": vcr_kit.client(mode="replay", fixtures_dir=f"{folder}/vcr_kit",
                                      api_key="bench", base_url=url, max_retries=0),
        }
        offline = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0)

        def timed(name: str) -> Callable[[], float]:
            def run() -> float:
                with contextlib.ExitStack() as stack:
                    if name in clients:
                        client = clients[name]
                    else:
                        stack.enter_context(cassette(name, f"{folder}/{name}.yaml", "none"))
                        client = offline
                    start = time.perf_counter()
                    for k in range(calls):
                        replay.call(client, k % COUNT)
                    return (time.perf_counter() - start) / calls

            return run

        names = [*clients, *measured]
        medians = interleaved([timed(name) for name in names], rounds)
    return dict(zip(names, medians, strict=True))
