"""What ``unused`` prints stays short: one line for the run it is based on, one line
counting the later runs that were not complete (``--all-runs`` lists them), from run
records as test runs leave them."""

from __future__ import annotations

import json
import os
import unittest
from pathlib import Path

import pytest

from tests.support.helpers.cli_support import cli
from tests.support.helpers.env import temp_dir, working_dir

pytestmark = pytest.mark.inprocess

NAMES = ["post-v1-messages-0000000000a1.json", "post-v1-messages-0000000000b1.json"]


def write_run(fixtures: Path, number: int, complete: bool, why: str) -> None:
    record = {
        "run": f"run-{number:02d}", "pid": 1, "started": 1000.0 + number * 10,
        "finished": 1005.0 + number * 10, "runner": "pytest", "command": f"pytest -k t{number}",
        "complete": complete, "why": why, "hard": not complete, "used": NAMES,
        "tests": {}, "test_files": {},
    }  # fmt: skip
    (fixtures / ".runs" / record["run"]).mkdir(parents=True)
    (fixtures / ".runs" / record["run"] / "1.json").write_text(json.dumps(record))


class FifteenRunsTest(unittest.TestCase):
    def test_fifteen_runs_are_said_in_three_lines(self) -> None:
        root = temp_dir(self)
        fixtures = root / "fixtures"
        fixtures.mkdir()
        for name in NAMES:
            (fixtures / name).write_text("{}", encoding="utf-8")
            os.utime(fixtures / name, (1.0, 1.0))
        write_run(fixtures, 0, True, "every one of the 2 collected tests passed")
        for number in range(1, 15):
            write_run(fixtures, number, False, "-k was given; 1 test was deselected")
        with working_dir(root):
            status, out, err = cli("unused")
        self.assertEqual((status, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual(len(lines), 3, out)
        self.assertEqual(lines[0], "vcr_kit: 0 of 2 fixtures unused by the last complete run")
        self.assertRegex(lines[1], r"^vcr_kit: based on run run-00, finished [-\d: ]+, "
                                   r"pytest -k t0: complete \(every one of the 2 collected "
                                   r"tests passed\)$")  # fmt: skip
        self.assertEqual(lines[2], "vcr_kit: 14 later runs not complete, so only what they used "
                                   "is kept (vcr_kit unused --all-runs lists them)")  # fmt: skip

        with working_dir(root):
            status, out, err = cli("unused", "--all-runs")
        lines = out.splitlines()
        self.assertEqual((status, err, len(lines)), (0, "", 16), out)
        self.assertRegex(lines[15], r"^vcr_kit: not complete, so only what it used is kept: run "
                                    r"run-14, finished [-\d: ]+, pytest -k t14 \(-k was given; "
                                    r"1 test was deselected\)$")  # fmt: skip


if __name__ == "__main__":
    unittest.main()
