"""The run summary's switch, and the benchmark script's output (a smoke run)."""

from __future__ import annotations

import contextlib
import io
import sys
import unittest

import pytest

from tests.support.helpers.env import environ_without_vcr, patch_env, run_captured, temp_dir
from tests.support.helpers.paths import ROOT
from vcr_kit._ledger import journal as _journal
from vcr_kit._ledger import summary as _report


@pytest.mark.inprocess
class SummaryTest(unittest.TestCase):
    def summary_printed(self) -> str:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            _report.print_summary()
        return err.getvalue()

    def test_vcr_report_0_silences_the_summary_and_1_prints_it(self) -> None:
        folder = temp_dir(self)
        (folder / "a-000000000000.json").write_text("{}", encoding="utf-8")
        _journal.add(_journal.Event.REPLAYED, folder / "a-000000000000.json", 0.5)

        # Printed as by a process that is no xdist worker (a worker leaves it to its
        # controller), whether or not this suite runs under xdist.
        patch_env(self, VCR_REPORT="0", PYTEST_XDIST_WORKER="")
        self.assertEqual(self.summary_printed(), "")
        patch_env(self, VCR_REPORT="1")
        line = self.summary_printed()
        self.assertRegex(
            line,
            # live: other tests may have had answers not recorded, each with its reason;
            # faults: other tests may have had faults injected
            r"^vcr_kit: \d+ replayed, \d+ recorded, \d+ missing(, \d+ live \(not recorded.*?\))?"
            r"(, \d+ faults? injected)?; "
            r"\$\d+\.\d{4} of API calls replayed, \$\d+\.\d{4} recorded(; .+/ \(\d+ files\))+"
            # other tests in this process may have re-recorded a fixture
            r"(; answer changed: .+)?\n$",
        )
        self.assertIn(f"{folder}/ (1 files)", line)


@pytest.mark.child
class BenchmarkTest(unittest.TestCase):
    def test_the_benchmark_prints_one_ratio_per_folder_size(self) -> None:
        env = environ_without_vcr()
        done = run_captured(
            [
                sys.executable,
                "benchmarks/replay.py",
                "--calls",
                "5",
                "--rounds",
                "1",
                "--sizes",
                "3,6",
            ],
            cwd=ROOT,
            env=env,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertRegex(
            lines[0], r"^anthropic \S+, Python \S+, 0 earlier turns \(\d+ bytes of messages\)$"
        )
        self.assertEqual(lines[1].split(), ["fixtures", "SDK", "alone", "vcr_kit", "ratio"])
        for line, size in zip(lines[2:], (3, 6), strict=True):
            self.assertRegex(line, rf"^\s+{size}\s+\d+us\s+\d+us\s+\d+\.\d\dx$")

    def test_the_transport_benchmark_prints_both_sides_and_the_extra_per_length(self) -> None:
        done = run_captured(
            [sys.executable, "benchmarks/transport.py", "--turns", "0,2", "--rounds", "1"],
            cwd=ROOT,
            env=environ_without_vcr(),
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertRegex(
            lines[0], r"^anthropic \S+, Python \S+; CPU time per call, best of rounds$"
        )
        self.assertEqual(lines[1].split(), ["turns", "request", "floor", "vcr_kit", "extra"])
        for line, turns in zip(lines[2:], (0, 2), strict=True):
            self.assertRegex(line, rf"^\s+{turns}\s+\d+KB\s+[\d.]+us\s+[\d.]+us\s+-?[\d.]+us$")
        self.assertEqual(len(lines), 4)

    def test_the_key_work_benchmark_prints_the_three_clients_per_length(self) -> None:
        done = run_captured(
            [
                sys.executable,
                "benchmarks/key_work.py",
                "--turns",
                "0,2",
                "--rounds",
                "1",
                "--calls",
                "5",
            ],
            cwd=ROOT,
            env=environ_without_vcr(),
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertRegex(
            lines[0],
            r"^anthropic \S+, Python \S+; CPU time per call through the SDK, best of "
            r"rounds$",
        )
        self.assertEqual(
            lines[1].split(), ["turns", "request", "floor", "floor", "+", "key", "vcr_kit"]
        )
        cell = r"\d+us \(in\s+\d+us\)"  # the call, and its time inside the transport
        for line, turns in zip(lines[2:], (0, 2), strict=True):
            self.assertRegex(
                line,
                rf"^\s+{turns}\s+\d+KB\s+{cell}\s+{cell} \d\.\d\dx\s+{cell} \d\.\d\dx$",
            )
        self.assertEqual(len(lines), 4)


if __name__ == "__main__":
    unittest.main()
