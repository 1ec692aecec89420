"""``PATCHES.made_once``: the seams' wrappers are made once per what they wrap."""

from __future__ import annotations

import threading
import unittest
from collections.abc import Callable

import pytest

from vcr_kit._seams.patches import PATCHES

made_once = PATCHES.made_once

pytestmark = pytest.mark.inprocess


def wrapper_of(function: Callable[[], int], label: str) -> Callable[[], str]:
    return lambda: f"{label}: {function()}"


def other_wrapper_of(function: Callable[[], int], label: str) -> Callable[[], str]:
    return wrapper_of(function, label)


def one() -> int:
    return 1


def two() -> int:
    return 2


class MadeOnceTest(unittest.TestCase):
    def test_the_same_arguments_give_the_same_object(self) -> None:
        first = made_once(wrapper_of, one, "a")
        self.assertIs(made_once(wrapper_of, one, "a"), first)
        self.assertEqual(first(), "a: 1")

    def test_other_arguments_or_another_maker_give_another(self) -> None:
        made = made_once(wrapper_of, one, "b")
        self.assertIsNot(made_once(wrapper_of, two, "b"), made)
        self.assertIsNot(made_once(wrapper_of, one, "c"), made)
        self.assertIsNot(made_once(other_wrapper_of, one, "b"), made)
        self.assertEqual(made_once(wrapper_of, two, "b")(), "b: 2")

    def test_threads_that_race_get_one_object(self) -> None:
        barrier = threading.Barrier(8)
        got: list[object] = []

        def make(tag: str) -> object:
            return object()

        def race() -> None:
            barrier.wait()
            got.append(made_once(make, "raced"))

        threads = [threading.Thread(target=race) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(len({id(made) for made in got}), 1)


if __name__ == "__main__":
    unittest.main()
