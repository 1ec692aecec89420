"""The tiers hold (``tests/tiers.py``): a test with no tier, or two, stops the collection
with a message naming it; an ``inprocess`` test that starts a process fails, naming the
test and the command; a tier on the class or the function counts as on the file. Each
case is a real pytest run with this suite's own hooks, in a temporary project."""

from __future__ import annotations

import os
import textwrap
import unittest

import pytest

from tests.support.helpers.env import environ_without_vcr, temp_dir
from tests.support.helpers.forked_runs import driver
from tests.support.helpers.paths import ROOT

pytestmark = pytest.mark.child


CONFTEST = "from tests.conftest import *  # noqa: F403\n"


class TiersTest(unittest.TestCase):
    def run_pytest(self, source: str) -> tuple[int, str]:
        project = temp_dir(self)
        (project / "conftest.py").write_text(CONFTEST)
        (project / "test_sample.py").write_text(textwrap.dedent(source))
        (project / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n")
        env = {**environ_without_vcr(), "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "error"}
        done = driver().run("pytest", ["-q", "-p", "no:vcr_kit", "-p", "no:cacheprovider"],
                            cwd=project, env=env, timeout=120)  # fmt: skip
        return done.returncode, done.stdout + done.stderr

    def test_a_test_with_no_tier_or_two_stops_the_collection(self) -> None:
        status, out = self.run_pytest(
            """
            import pytest

            def test_none():
                pass

            @pytest.mark.inprocess
            @pytest.mark.child
            def test_two():
                pass

            @pytest.mark.inprocess
            def test_one():
                pass
            """
        )
        self.assertEqual(status, pytest.ExitCode.USAGE_ERROR, out)
        self.assertIn(
            "each test needs exactly one tier marker (inprocess, child, node, clouds, load", out
        )
        self.assertIn("test_sample.py::test_none (tiers: none)", out)
        self.assertIn("test_sample.py::test_two (tiers: inprocess, child)", out)
        self.assertNotIn("test_one (tiers", out)

    def test_an_inprocess_test_that_starts_a_process_fails_and_a_child_test_may(self) -> None:
        status, out = self.run_pytest(
            """
            import subprocess
            import unittest

            import pytest

            pytestmark = pytest.mark.inprocess

            def test_starts_one():
                subprocess.run(["true"], check=False)

            @pytest.mark.inprocess
            class StillInProcessTest(unittest.TestCase):
                def test_pure(self):
                    self.assertEqual(1 + 1, 2)
            """
        )
        self.assertEqual(status, pytest.ExitCode.TESTS_FAILED, out)
        self.assertIn(
            "RuntimeError: test_sample.py::test_starts_one is marked inprocess but starts a "
            "process (subprocess.Popen: ['true']); mark it child (or node, clouds, load)",
            out,
        )
        self.assertIn("1 failed, 1 passed", out)

    def test_a_child_test_starts_processes_freely(self) -> None:
        status, out = self.run_pytest(
            """
            import subprocess

            import pytest

            @pytest.mark.child
            def test_starts_one():
                subprocess.run(["true"], check=True)
            """
        )
        self.assertEqual(status, pytest.ExitCode.OK, out)
        self.assertIn("1 passed", out)


if os.name != "posix":  # `true` is a POSIX command
    del TiersTest
