"""``vcr_kit._engine.steps``: one body, driven blocking or awaiting, behaves the same."""

from __future__ import annotations

import asyncio
import unittest
from collections.abc import Callable
from typing import Any

import pytest

from vcr_kit._engine.steps import Pause, Steps, once, run_awaiting, run_blocking

pytestmark = pytest.mark.inprocess


def sync_thunk(value: Any) -> Callable[[], Any]:
    def thunk() -> Any:
        if isinstance(value, BaseException):
            raise value
        return value

    return thunk


def async_thunk(value: Any) -> Callable[[], Any]:
    async def thunk() -> Any:
        await asyncio.sleep(0)
        return sync_thunk(value)()

    return thunk


def body(make: Callable[[Any], Callable[[], Any]], log: list[str]) -> Steps[str]:
    """A call, a pause, a call that fails and is handled, a lock-like finally."""
    try:
        first = yield make("answer")
        yield Pause(0.001)
        try:
            yield make(ValueError("boom"))
        except ValueError as exc:
            log.append(f"handled {exc}")
        second = yield from once(make("again"))
        return f"{first} {second}"
    finally:
        log.append("released")


def failing(make: Callable[[Any], Callable[[], Any]], log: list[str]) -> Steps[None]:
    try:
        yield make(KeyError("unhandled"))
    finally:
        log.append("released")


class StepsTest(unittest.TestCase):
    def test_both_drivers_give_the_same_result_and_the_same_story(self) -> None:
        blocking: list[str] = []
        awaiting: list[str] = []
        self.assertEqual(run_blocking(body(sync_thunk, blocking)), "answer again")
        self.assertEqual(asyncio.run(run_awaiting(body(async_thunk, awaiting))), "answer again")
        self.assertEqual(blocking, ["handled boom", "released"])
        self.assertEqual(awaiting, blocking)

    def test_an_unhandled_error_reaches_the_caller_after_the_body_cleaned_up(self) -> None:
        for name, run in (
            ("blocking", lambda log: run_blocking(failing(sync_thunk, log))),
            ("awaiting", lambda log: asyncio.run(run_awaiting(failing(async_thunk, log)))),
        ):
            with self.subTest(driver=name):
                log: list[str] = []
                with self.assertRaises(KeyError) as caught:
                    run(log)
                self.assertEqual(caught.exception.args, ("unhandled",))
                self.assertEqual(log, ["released"])

    def test_a_body_that_never_yields_returns_at_once(self) -> None:
        def replay() -> Steps[int]:
            return 42
            yield  # a generator that returns before its first step (the replay path)

        self.assertEqual(run_blocking(replay()), 42)
        self.assertEqual(asyncio.run(run_awaiting(replay())), 42)


if __name__ == "__main__":
    unittest.main()
