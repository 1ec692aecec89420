"""The test tiers: what each test needs to run, one marker per test.

A tier says what a test costs and needs, so that each tox env runs the tests it should
(``tox.ini``): the fast tier (``tox -e fast``) runs ``inprocess`` alone; the matrix envs
(four interpreters, three older SDK releases) run ``inprocess`` and the slower tests
marked ``matrix``; py311 runs every tier but ``node`` and ``clouds``; the clients env
runs those two. A test with no tier, or with two, stops the collection: nothing can
fall between the envs.

``inprocess`` is kept honest at run time: an audit hook fails any process start made
while an ``inprocess`` test runs, naming the test and the command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import pytest

TIERS = {
    "inprocess": "runs in the test process and starts no process (the fast tier)",
    "child": "starts a child process: a pytest, unittest, CLI, script or proxy run",
    "node": "runs Node clients (Claude Code, @anthropic-ai/sdk, claude-agent-sdk)",
    "clouds": "drives the cloud SDK clients (Bedrock, Vertex, Foundry, AWS, Google)",
    "load": "load, crash and SIGKILL tests: many processes at once",
}
MATRIX = "its outcome can depend on the interpreter or the SDK release: the matrix envs run it"
#: Not a tier either: a test that drives the OpenAI or Gemini SDK. Its outcome depends on
#: their releases, not on the Anthropic SDK's: py311 and py313 run it on the newest,
#: sdk-0.125 on the oldest supported (on httpx); py310, py312, sdk-0.93 and sdk-1.0
#: leave it out (CI's time: tox.ini).
PROVIDERS = "drives the OpenAI or Gemini SDK: py311, py313 and sdk-0.125 run it"

_PROCESS_EVENTS = frozenset(
    {
        *("subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec"),
        *("os.spawn", "os.system"),
    }
)


def register(config: pytest.Config) -> None:
    for name, meaning in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    config.addinivalue_line("markers", f"matrix: {MATRIX}")
    config.addinivalue_line("markers", f"providers: {PROVIDERS}")


def tier_of(item: pytest.Item) -> list[str]:
    return [name for name in TIERS if item.get_closest_marker(name) is not None]


def check_collected(items: Sequence[pytest.Item]) -> None:
    wrong = []
    for item in items:
        tiers = tier_of(item)
        if len(tiers) != 1:
            found = ", ".join(tiers) if tiers else "none"
            wrong.append(f"  {item.nodeid} (tiers: {found})")
    if wrong:
        raise pytest.UsageError(
            "each test needs exactly one tier marker ("
            + ", ".join(TIERS)
            + "; see tests/tiers.py): add `pytestmark = pytest.mark.<tier>` to the file, "
            "or mark the class or function:\n" + "\n".join(wrong)
        )


class InProcessGuard:
    """Fails a process start made while an ``inprocess`` test runs (setup, call or teardown)."""

    def __init__(self) -> None:
        self.running: str | None = None
        sys.addaudithook(self._audit)

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.running is not None and event in _PROCESS_EVENTS:
            test, self.running = self.running, None  # one failure per start, not a cascade
            command = args[1] if event == "subprocess.Popen" and len(args) > 1 else args[:1]
            raise RuntimeError(
                f"{test} is marked inprocess but starts a process ({event}: {command!r}); "
                "mark it child (or node, clouds, load)"
            )

    def enter(self, item: pytest.Item) -> None:
        self.running = item.nodeid if tier_of(item) == ["inprocess"] else None

    def leave(self) -> None:
        self.running = None
