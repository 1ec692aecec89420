"""On a miss, the error points at the nearest recorded fixture and shows what differs."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

import vcr_kit
from tests.support.helpers.env import patch_env, temp_dir

pytestmark = pytest.mark.inprocess

ADVICE = "Re-run the tests with VCR_RECORD=1, then commit the result."


class NearMissTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self)

    def record(self, value: dict[str, object], result: int) -> Path:
        with vcr_kit.fixture(value, "calc", mode="auto", fixtures_dir=self.folder) as f:
            f.play(lambda: result)
        return f.path

    def test_the_miss_names_the_nearest_fixture_and_the_difference(self) -> None:
        nearest = self.record({"q": "alpha", "n": 1}, 1)
        self.record({"q": "beta", "n": 1}, 2)
        self.record({"q": "gamma", "n": 3}, 3)

        with vcr_kit.fixture(
            {"q": "alphb", "n": 1}, "calc", mode="replay", fixtures_dir=self.folder
        ) as f:
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                f.play(lambda: 0)

        lines = str(caught.exception).splitlines()
        self.assertEqual(
            lines[0],
            f"Fixture missing: {f.path}. {ADVICE}",
        )
        self.assertEqual(lines[1], f"Nearest recorded fixture: {nearest}.")
        self.assertEqual(lines[2], "What differs:")
        self.assertIn('-  "q": "alpha"', lines)
        self.assertIn('+  "q": "alphb"', lines)
        self.assertEqual(caught.exception.path, f.path)

    def test_a_long_string_shows_where_it_differs_with_context(self) -> None:
        head, tail = "You are an agent. " * 300, " Be brief." * 100
        self.record({"system": head + "Current branch: main" + tail}, 1)
        with vcr_kit.fixture({"system": head + "Current branch: feature/x" + tail}, "calc",
                             mode="replay", fixtures_dir=self.folder) as f:  # fmt: skip
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                f.play(lambda: 0)
        lines = str(caught.exception).splitlines()
        for mark, branch in (("-", "main"), ("+", "feature/x")):
            with self.subTest(mark=mark):
                (line,) = [line for line in lines if line.startswith(mark + '  "system": "(')]
                # The key, what was left out, 60 characters before the difference, and
                # as much after as makes the line 200 characters (the notes aside).
                shown = (head + "Current branch: ")[-60:] + branch + tail
                shown = shown[: 200 - len('-  "system": "')]
                left = len(head) + len("Current branch: ") - 60
                right = len(head + "Current branch: " + branch + tail + '"') - left - len(shown)
                self.assertEqual(
                    line,
                    f'{mark}  "system": "({left} characters) ...{shown}... '
                    f"({right} more characters)",
                )

    def test_a_difference_near_the_end_shows_the_end(self) -> None:
        self.record({"q": "x" * 1000 + "alpha"}, 1)
        with vcr_kit.fixture({"q": "x" * 1000 + "omega"}, "calc", mode="replay",
                             fixtures_dir=self.folder) as f:  # fmt: skip
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                f.play(lambda: 0)
        lines = str(caught.exception).splitlines()
        self.assertIn('-  "q": "(815 characters) ...' + "x" * 185 + 'alpha"', lines)
        self.assertIn('+  "q": "(815 characters) ...' + "x" * 185 + 'omega"', lines)

    def test_no_hint_when_nothing_of_the_family_was_recorded(self) -> None:
        self.record({"q": "alpha"}, 1)
        with vcr_kit.fixture({"q": 1}, "other", mode="replay", fixtures_dir=self.folder) as f:
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                f.play(lambda: 0)
        self.assertEqual(
            str(caught.exception),
            f"Fixture missing: {f.path}. {ADVICE}",
        )

    def test_a_corrupt_neighbour_does_not_hide_the_miss(self) -> None:
        (self.folder / "calc-000000000000.json").write_text("{torn", encoding="utf-8")
        with vcr_kit.fixture({"q": 1}, "calc", mode="replay", fixtures_dir=self.folder) as f:
            with self.assertRaises(vcr_kit.FixtureMissingError) as caught:
                f.play(lambda: 0)
        self.assertTrue(str(caught.exception).startswith("Fixture missing: "))


if __name__ == "__main__":
    unittest.main()
