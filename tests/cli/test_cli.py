"""``python -m vcr_kit check``: every problem a committed fixture can have, one line each."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import unittest

import pytest

import vcr_kit
from tests.support.helpers.env import patch_env, temp_dir
from tests.support.helpers.paths import ROOT
from vcr_kit._cli import main
from vcr_kit._core.fixture_names import fixture_name

pytestmark = pytest.mark.child


class CheckTest(unittest.TestCase):
    def setUp(self) -> None:
        patch_env(self, VCR_REPORT="0")
        self.folder = temp_dir(self)

    def run_check(self, *argv: str) -> tuple[int, list[str]]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(["check", *argv])
        return status, out.getvalue().splitlines()

    def test_a_clean_folder_passes(self) -> None:
        with vcr_kit.fixture({"q": 1}, "good", mode="record", fixtures_dir=self.folder) as f:
            f.play(lambda: {"answer": 42})
        self.assertEqual(
            self.run_check(str(self.folder)), (0, ["vcr_kit: 1 fixtures checked, 0 problems"])
        )

    def test_each_problem_is_named_with_its_file(self) -> None:
        with vcr_kit.fixture({"q": 1}, "good", mode="record", fixtures_dir=self.folder) as f:
            f.play(lambda: {"answer": 42})
        torn = self.folder / "torn-000000000000.json"
        torn.write_text('{"vcr_kit_format": 1, "resp', encoding="utf-8")
        leaky = self.folder / "sub" / fixture_name({}, "leaky")  # named for its request
        leaky.parent.mkdir()
        key = "sk-ant-api03-" + "x" * 40
        leaky.write_text(
            '{"vcr_kit_format": 1, "kind": "generic", "request": {}, "response": "' + key + '"}',
            encoding="utf-8",
        )
        empty = self.folder / "bare-000000000000.json"
        empty.write_text('{"vcr_kit_format": 1, "kind": "generic"}', encoding="utf-8")

        status, lines = self.run_check(str(self.folder))

        self.assertEqual(status, 1)
        self.assertEqual(
            lines,
            [
                f"{empty}: request: missing (it names the fixture and shows a miss's diff)",
                f"{empty}: response: missing",
                f"{leaky}: contains an Anthropic key (sk-ant-...) at response; "
                "remove it and record again",
                f"{torn}: Fixture {torn} is not valid JSON: Unterminated string starting at line 1 "
                "column 23 (char 22). Delete it, or re-record it with VCR_MODE=record.",
                "vcr_kit: 4 fixtures checked, 4 problems",
            ],
        )
        self.assertNotIn(key, "\n".join(lines))

    def test_the_committed_fixtures_of_this_project_pass_as_a_module(self) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "vcr_kit", "check"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            env={k: v for k, v in os.environ.items() if k != "VCR_FIXTURES_DIR"},
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stdout, r"^vcr_kit: \d+ fixtures checked, 0 problems\n$")


if __name__ == "__main__":
    unittest.main()
