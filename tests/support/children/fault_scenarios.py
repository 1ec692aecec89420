"""Code under test meeting injected faults: what the real SDK does with each.

Each scenario is a plain ``anthropic`` client built by the code under test, inside
a vcr_kit session (as under ``@pytest.mark.vcr``) and a ``vcr_kit.faults(...)``
block, and returns what the code observed (texts, exception classes, request ids,
the waits the SDK logged) with what the journal and the plan counted. The mode
comes from the environment: record against the loopback server, then replay with
no network (``unshare -n``)::

    python tests/support/children/fault_scenarios.py --fixtures DIR --out FILE [--base-url URL]

Kept free of ``tests`` imports: it runs as a script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic

import vcr_kit
from vcr_kit._integrations.session import vcr_session

MODEL = "claude-opus-4-7"
HELLO = [{"role": "user", "content": "Say hello to the fault suite."}]
STORY = [{"role": "user", "content": "Tell a short story about retries."}]
_RETRY_LOG = re.compile(r"Retrying request to \S+ in ([0-9.]+) seconds")

Observed = dict[str, Any]


class _Waits(logging.Handler):
    """The back-off waits the SDK logs before each retry."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seconds: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = _RETRY_LOG.search(record.getMessage())
        if found:
            self.seconds.append(round(float(found.group(1)), 3))


@contextmanager
def _logged_waits() -> Iterator[_Waits]:
    logger = logging.getLogger("anthropic._base_client")
    handler, level = _Waits(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _error(exc: BaseException) -> Observed:
    body = getattr(exc, "body", None)
    return {
        "class": type(exc).__name__,
        "module": type(exc).__module__.split(".")[0],
        "classes": [c.__name__ for c in type(exc).__mro__],
        "status": getattr(exc, "status_code", None),
        "request_id": getattr(exc, "request_id", None),
        "error_type": (body.get("error") or {}).get("type") if isinstance(body, dict) else None,
    }


class Scenarios:
    def __init__(self, base_url: str | None, fixtures: Path) -> None:
        self.base_url = base_url
        self.fixtures = fixtures

    def client(self, **options: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.base_url, **options)

    def run(self, spec: str, body: Callable[[], Observed]) -> Observed:
        with vcr_session(fixtures_dir=self.fixtures) as journal, vcr_kit.faults(spec) as plan:
            try:
                seen = body()
            except anthropic.APIError as exc:
                seen = {"error": _error(exc)}
            except Exception as exc:  # a transport library's own error from a stream
                seen = {"error": _error(exc)}
        seen["faults"] = plan.count
        seen["injected_ids"] = [i.request_id for i in plan.injected]
        seen["journal"] = {"faults": journal.faults, "replays": journal.replays}
        return seen

    def retries_absorb_two_overloads(self) -> Observed:
        def body() -> Observed:
            with _logged_waits() as waits:
                message = self.client().messages.create(model=MODEL, max_tokens=32, messages=HELLO)
            return {"text": message.content[0].text, "waits": waits.seconds}

        return self.run("overloaded:0.01*2", body)

    def no_retries_surface_the_overload(self) -> Observed:
        def body() -> Observed:
            self.client(max_retries=0).messages.create(model=MODEL, max_tokens=32, messages=HELLO)
            return {}

        return self.run("overloaded", body)

    def rate_limit_retry_after(self) -> Observed:
        def body() -> Observed:
            with _logged_waits() as waits:
                message = self.client().messages.create(model=MODEL, max_tokens=32, messages=HELLO)
            return {"text": message.content[0].text, "waits": waits.seconds}

        return self.run("rate_limit:0.05*2", body)

    def _story(self, **options: Any) -> Observed:
        events: list[str] = []
        try:
            with self.client(**options).messages.stream(
                model=MODEL, max_tokens=64, messages=STORY
            ) as stream:
                for event in stream:
                    events.append(event.type)
                text = stream.get_final_message().content[0].text
        except Exception as exc:
            return {"events": events, "error": _error(exc)}
        return {"events": events, "text": text}

    def stream_cut(self) -> Observed:
        return self.run("cut_after:3", lambda: self._story(max_retries=0))

    def stream_error_event(self) -> Observed:
        return self.run("error_after:3", lambda: self._story(max_retries=0))

    def slow_first_token(self) -> Observed:
        return self.run("slow_first:30", lambda: self._story(max_retries=0, timeout=0.2))

    def slow_first_then_retry(self) -> Observed:
        return self.run("slow_first:30", lambda: self._story(max_retries=1, timeout=1.0))

    def async_retries(self) -> Observed:
        async def call() -> str:
            async with anthropic.AsyncAnthropic(base_url=self.base_url) as client:
                message = await client.messages.create(model=MODEL, max_tokens=32, messages=HELLO)
            return str(message.content[0].text)

        return self.run("server_error:0.01,reset", lambda: {"text": asyncio.run(call())})


NAMES = (
    "retries_absorb_two_overloads",
    "no_retries_surface_the_overload",
    "rate_limit_retry_after",
    "stream_cut",
    "stream_error_event",
    "slow_first_token",
    "slow_first_then_retry",
    "async_retries",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the fault scenarios; write what was seen.")
    parser.add_argument("--fixtures", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base-url")
    args = parser.parse_args(argv)
    scenarios = Scenarios(args.base_url, args.fixtures)
    result = {name: getattr(scenarios, name)() for name in NAMES}
    result["sdk"] = anthropic.__version__
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
